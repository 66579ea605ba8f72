// Token lifetime (issue 10 item 1): access and checkout tokens live in real time (`sb.time.now`), never
// on the account clock; --token-ttl shortens them; POST /_sandbox/tokens/expire expires an account's
// tokens at once. Real time is moved by hand, never slept.
import { describe, expect, it } from '@jest/globals';
import { setup, type TestSandbox } from './helpers.js';

const DAY = 86_400;

async function invoiceFor(sb: TestSandbox, token: string): Promise<{ customer: string; invoice: string }> {
  const api = sb.as(token);
  const customer = (await api.post('/customers', { name: 'Token Test Ltd' }).expect(201)).body.id as string;
  const due = new Date(sb.time.now + 30 * DAY * 1000).toISOString().slice(0, 10);
  const invoice = (await api.post('/invoices', { customer_id: customer, due_date: due, line_items: [{ description: 'Work', quantity: 1, amount: 100 }] }).expect(201)).body.id as string;
  return { customer, invoice };
}

async function checkoutTokenFor(sb: TestSandbox, token: string): Promise<{ token: string; expires_at: number }> {
  const { customer, invoice } = await invoiceFor(sb, token);
  const res = await sb.as(token).post('/checkout-auth/init', { customer_id: customer, invoice_id: invoice });
  expect(res.status).toBe(200);
  return res.body;
}

describe('tokens live in real time', () => {
  it('keeps the first token through a 31-day clock advance: the API, the control plane, and an invoice going overdue', async () => {
    const sb = await setup();
    const token = await sb.token();
    const { invoice } = await invoiceFor(sb, token);
    const advanced = await sb.advance(31 * DAY, token);
    expect(advanced.status).toBe(200);
    expect(Date.parse(advanced.body.now) - sb.time.now).toBe(31 * DAY * 1000);
    // The same token, a month later on the account clock: the invoice it made is now overdue.
    const read = await sb.as(token).get(`/invoices/${invoice}`);
    expect(read.status).toBe(200);
    expect(read.body.status).toBe('OVERDUE');
    expect((await sb.http.get('/_sandbox/clock').set('Authorization', `Bearer ${token}`)).body.now).toBe(advanced.body.now);
    expect((await sb.as(token).post('/customers', { name: 'Still Works Ltd' })).status).toBe(201);
  });

  it('expires a token after expires_in seconds of real time, however far the clock moved, with the spec\'s 401', async () => {
    const sb = await setup();
    const token = await sb.token();
    await sb.advance(90 * DAY, token).expect(200);
    sb.time.now += 3599 * 1000;
    expect((await sb.as(token).get('/customers')).status).toBe(200);
    sb.time.now += 1000;
    const expired = await sb.as(token).get('/customers');
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ code: 'unauthorized', message: 'The access token has expired.', validation_errors: {} });
    const control = await sb.http.get('/_sandbox/clock').set('Authorization', `Bearer ${token}`);
    expect(control.status).toBe(401);
    expect((await sb.as(await sb.token()).get('/customers')).status).toBe(200);
  });

  it('--token-ttl shortens expires_in and the token\'s life (access and checkout tokens)', async () => {
    const sb = await setup({ tokenTtl: 120 });
    const res = await sb.http.post('/oauth/token').auth('sandbox_client_id', 'sandbox_client_secret').type('form').send({ grant_type: 'client_credentials' });
    expect(res.body.expires_in).toBe(120);
    const token = res.body.access_token as string;
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    expect(claims.exp - claims.iat).toBe(120);
    expect(claims.iat).toBe(Math.floor(sb.time.now / 1000));
    const checkout = await checkoutTokenFor(sb, token);
    expect(checkout.expires_at).toBe(Math.floor(sb.time.now / 1000) + 120);
    sb.time.now += 119 * 1000;
    expect((await sb.as(token).get('/customers')).status).toBe(200);
    expect((await sb.http.get('/checkout/invoice').set('Authorization', `Bearer ${checkout.token}`)).status).toBe(200);
    sb.time.now += 1000;
    expect((await sb.as(token).get('/customers')).status).toBe(401);
    const expiredCheckout = await sb.http.get('/checkout/invoice').set('Authorization', `Bearer ${checkout.token}`);
    expect(expiredCheckout.status).toBe(401);
    expect(expiredCheckout.body.message).toBe('The access token has expired.');
  });

  it('gives checkout tokens a real-time expires_at that a clock advance does not reach', async () => {
    const sb = await setup();
    const token = await sb.token();
    const checkout = await checkoutTokenFor(sb, token);
    expect(checkout.expires_at).toBe(Math.floor(sb.time.now / 1000) + 3600);
    await sb.advance(7 * DAY, token).expect(200);
    expect((await sb.http.get('/checkout/invoice').set('Authorization', `Bearer ${checkout.token}`)).status).toBe(200);
  });
});

describe('POST /_sandbox/tokens/expire', () => {
  it('expires every access and checkout token of the calling account now; new tokens work; other accounts are untouched', async () => {
    const sb = await setup();
    const first = await sb.token();
    const second = await sb.token();
    const checkout = await checkoutTokenFor(sb, first);
    const demo = await sb.token('demo');
    const partner = (await sb.http.post('/_sandbox/partners').send({ name: 'Other' }).expect(201)).body;
    const other = await sb.token('production', partner.credentials.production);

    const res = await sb.http.post('/_sandbox/tokens/expire').set('Authorization', `Bearer ${first}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ partner_id: 'ptn_default', environment: 'production', expired_at: new Date(sb.time.now).toISOString() });

    for (const token of [first, second]) {
      const refused = await sb.as(token).get('/customers');
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ code: 'unauthorized', message: 'The access token has expired.', validation_errors: {} });
      expect((await sb.http.get('/_sandbox/clock').set('Authorization', `Bearer ${token}`)).status).toBe(401);
    }
    expect((await sb.http.get('/checkout/invoice').set('Authorization', `Bearer ${checkout.token}`)).status).toBe(401);
    // In the same instant of real time, a new token works: the expiry is not a time cut-off.
    const renewed = await sb.token();
    expect((await sb.as(renewed).get('/customers')).body.data).toHaveLength(1);
    expect((await sb.as(demo, 'demo').get('/customers')).status).toBe(200);
    expect((await sb.as(other).get('/customers')).status).toBe(200);
  });

  it('without a token acts on the default production account, and refuses an already expired token with 401', async () => {
    const sb = await setup();
    const token = await sb.token();
    expect((await sb.http.post('/_sandbox/tokens/expire')).status).toBe(200);
    expect((await sb.as(token).get('/customers')).status).toBe(401);
    expect((await sb.http.post('/_sandbox/tokens/expire').set('Authorization', `Bearer ${token}`)).status).toBe(401);
  });

  it('keeps the expiry across a restart on the same data file', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'tokens-'));
    try {
      const file = join(dir, 'data.json');
      const first = await setup({ dataFile: file, seed: 't' });
      const token = await first.token();
      await first.http.post('/_sandbox/tokens/expire').expect(200);
      await first.deps.store.close();
      const second = await setup({ dataFile: file });
      expect((await second.as(token).get('/customers')).status).toBe(401);
      expect((await second.as(await second.token()).get('/customers')).status).toBe(200);
      await second.deps.store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
