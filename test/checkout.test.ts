// Checkout: token issue (claims, expiry, errors), card-form credentials, and the embeddable checkout
// surface with a checkout token scoped to one customer and one invoice.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { setup, type Api, type TestSandbox } from './helpers.js';
import { bank, card, customer, events, invoice } from './receivables-helpers.js';

let sb: TestSandbox;
let api: Api;
let cus: string;
let inv: { id: string; total: number };

beforeEach(async () => {
  sb = await setup();
  api = sb.as(await sb.token());
  cus = await customer(api);
  inv = await invoice(api, cus, { exclude_from_autopay: true });
});

async function checkoutToken(customerId = cus, invoiceId = inv.id): Promise<string> {
  const res = await api.post('/checkout-auth/init', { customer_id: customerId, invoice_id: invoiceId });
  expect(res.status).toBe(200);
  return res.body.token;
}

function checkout(token: string, prefix = '') {
  return {
    get: (path: string) => sb.http.get(`${prefix}/checkout${path}`).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object, headers: Record<string, string> = {}) => sb.http.post(`${prefix}/checkout${path}`).set({ Authorization: `Bearer ${token}`, ...headers }).send(body),
  };
}

describe('POST /checkout-auth/init', () => {
  it('issues a JWT with partner_id, client_id, customer_id, invoice_id and exp one hour ahead; /v1 works too', async () => {
    const res = await api.post('/checkout-auth/init', { customer_id: cus, invoice_id: inv.id });
    expect(res.status).toBe(200);
    const start = Math.floor(sb.time.now / 1000);
    expect(res.body.expires_at).toBe(start + 3600);
    expect(decodeJwt(res.body.token)).toMatchObject({ partner_id: 'ptn_default', client_id: 'sandbox_client_id', customer_id: cus, invoice_id: inv.id, exp: start + 3600, aud: 'checkout' });
    const v1 = await sb.http.post('/v1/checkout-auth/init').set('Authorization', `Bearer ${await sb.token()}`).send({ customer_id: cus, invoice_id: inv.id });
    expect(v1.status).toBe(200);
  });

  it.each([
    ['no invoice_id', () => ({ customer_id: cus }), 400, 'invoice_id'],
    ['no customer_id', () => ({ invoice_id: inv.id }), 400, 'customer_id'],
    ['an unknown customer', () => ({ customer_id: 'cus_nope', invoice_id: inv.id }), 404, null],
    ['an unknown invoice', () => ({ customer_id: cus, invoice_id: 'inv_nope' }), 404, null],
  ])('answers %s with the right error', async (_what, body, code, field) => {
    const res = await api.post('/checkout-auth/init', body());
    expect(res.status).toBe(code);
    if (field) expect(res.body.validation_errors).toHaveProperty(field);
  });

  it('refuses an invoice of another customer with 400', async () => {
    const other = await customer(api, 'Other');
    const res = await api.post('/checkout-auth/init', { customer_id: other, invoice_id: inv.id });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: 'Invalid invoice id.', validation_errors: { invoice_id: expect.any(String) } });
  });

  it('serves card-form credentials to API tokens', async () => {
    const res = await api.get('/card-form/credentials');
    expect(res.status).toBe(200);
    expect(res.body.app_id).toMatch(/^app_sandbox_/);
    expect(res.body.team_id).toMatch(/^team_sandbox_/);
  });
});

describe('token audiences', () => {
  it('API endpoints refuse checkout tokens and the checkout surface refuses API tokens', async () => {
    const ct = await checkoutToken();
    const apiToken = await sb.token();
    for (const res of [
      await sb.http.get('/invoices').set('Authorization', `Bearer ${ct}`),
      await sb.http.get(`/customers/${cus}/payment-methods`).set('Authorization', `Bearer ${ct}`),
      await sb.http.post('/checkout-auth/init').set('Authorization', `Bearer ${ct}`).send({ customer_id: cus, invoice_id: inv.id }),
      await checkout(apiToken).get('/invoice'),
      await checkout(apiToken).get('/payment-methods'),
      await checkout('not-a-token').get('/invoice'),
      await sb.http.get('/checkout/invoice'),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    }
  });

  it('expires checkout tokens after an hour of real time, not on the account clock, and keeps them to their environment', async () => {
    const ct = await checkoutToken();
    expect((await checkout(ct).get('/invoice')).status).toBe(200);
    expect((await checkout(ct, '/demo').get('/invoice')).status).toBe(401);
    await sb.advance(30 * 86_400).expect(200);
    expect((await checkout(ct).get('/invoice')).status).toBe(200);
    sb.time.now += 3600 * 1000;
    const res = await checkout(ct).get('/invoice');
    expect(res.status).toBe(401);
    expect(res.body.message).toContain('expired');
  });
});

describe('the embeddable checkout surface', () => {
  it('shows the theme, the token\'s invoice, its pdf link, credentials and the customer\'s methods only', async () => {
    const other = await customer(api, 'Other');
    await card(api, other);
    const mine = await card(api, cus);
    const c = checkout(await checkoutToken());
    expect((await c.get('/preferences/theme')).body).toEqual({ partner_name: expect.any(String), theme: { color: '#1f6feb', logo_url: null } });
    expect((await c.get('/invoice')).body).toMatchObject({ id: inv.id, total: 300, line_items: [{ description: 'Consulting', quantity: 2, amount: 150, total: 300 }] });
    expect((await c.get('/invoice/pdf-link')).body.url).toContain(`/hosted/files/invoices/${inv.id}.pdf?`);
    expect((await c.get('/card-form/credentials')).body).toEqual((await api.get('/card-form/credentials')).body);
    expect((await c.get('/payment-methods')).body.data.map((m: { id: string }) => m.id)).toEqual([mine]);
  });

  it('adds a card from the checkout JSON token and a bank account to the token\'s customer, and takes a CVV', async () => {
    const c = checkout(await checkoutToken());
    const tokenString = JSON.stringify({ number_secret: 'ev:num_4111111111111111', holder_name_secret: 'ev:name', expiry_month: '04', expiry_year: '2029' });
    const added = await c.post('/payment-methods/card', { card_provider_token: tokenString, provider: 'evervault', address: { street_address: '100 Main St', country_code: 'US' } });
    expect(added.status).toBe(201);
    const bankRes = await c.post('/payment-methods/bank', { account_data_type: 'us', institution_name: 'Bank', receiver_name: 'Acme', subtype: 'savings', type: 'depository', us_account_data: { account_number: '000123456789', routing_number: '011000015' } });
    expect(bankRes.status).toBe(201);
    const methods = (await api.get(`/customers/${cus}/payment-methods`)).body.data;
    expect(methods.map((m: { id: string }) => m.id).sort()).toEqual([added.body.id, bankRes.body.id].sort());
    expect(methods.find((m: { id: string }) => m.id === added.body.id)).toMatchObject({ last4: '1111', exp_month: '04', exp_year: '2029', default: true });
    expect((await c.post(`/payment-methods/${added.body.id}/cvv`, { cvv_secret: 'ev:cvv', provider: 'evervault' })).body).toEqual({ success: true });
    const otherCard = await card(api, await customer(api, 'Other'));
    expect((await c.post(`/payment-methods/${otherCard}/cvv`, { cvv_secret: 'ev:cvv' })).status).toBe(404);
    expect(events(sb, 'payment_method_added').map((e) => e.data.customer_id)).toEqual([cus, cus, expect.any(String)]);
  });

  it('pays the token\'s invoice once per Idempotency-Key; the invoice follows on the clock', async () => {
    const pm = await card(api, cus);
    const c = checkout(await checkoutToken());
    const body = { amount: '300.00', customer_id: cus, invoice_id: inv.id, payment_date: '2026-03-02', payment_method: 'card', payment_method_id: pm };
    const res = await c.post('/payments', body, { 'Idempotency-Key': 'key-1' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', payment_id: expect.stringMatching(/^pay_/) });
    const replay = await c.post('/payments', body, { 'Idempotency-Key': 'key-1' });
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(res.body);
    expect((await c.post('/payments', { ...body, amount: '1.00' }, { 'Idempotency-Key': 'key-1' })).status).toBe(409);
    expect((await api.get('/payments')).body.data).toHaveLength(1);
    expect((await c.get('/invoice')).body.status).toBe('RECEIVED');
    const twice = await c.post('/payments', body, { 'Idempotency-Key': 'key-2' });
    expect(twice.status).toBe(409);
    await sb.advance(3660);
    expect((await c.get('/invoice')).body.status).toBe('PAID');
  });

  it.each([
    ['another invoice', (o: { other: string }) => ({ invoice_id: o.other }), 403, 'invoice_id'],
    ['another customer', (o: { otherCustomer: string }) => ({ customer_id: o.otherCustomer }), 403, 'customer_id'],
    ['no payment_method_id', () => ({ payment_method_id: undefined }), 400, 'payment_method_id'],
    ['a bank method paying as card', (o: { bankPm: string }) => ({ payment_method_id: o.bankPm }), 422, 'payment_method'],
    ['more than is due', () => ({ amount: '300.01' }), 422, 'amount'],
    ['a malformed amount', () => ({ amount: '3,00' }), 400, 'amount'],
    ['an unknown payment_method', () => ({ payment_method: 'cash' }), 400, 'payment_method'],
    ['a payment_date that is not ISO 8601', () => ({ payment_date: 'March 2, 2026' }), 400, 'payment_date'],
    ['a payment_date naming no day', () => ({ payment_date: '2026-02-30' }), 400, 'payment_date'],
  ])('refuses a payment with %s and changes nothing', async (_what, change, code, field) => {
    const pm = await card(api, cus);
    const bankPm = await bank(api, cus);
    const otherCustomer = await customer(api, 'Other');
    const other = (await invoice(api, otherCustomer, { exclude_from_autopay: true })).id;
    const c = checkout(await checkoutToken());
    const body = { amount: '300.00', payment_method: 'card', payment_method_id: pm, ...change({ other, otherCustomer, bankPm } as never) };
    const res = await c.post('/payments', JSON.parse(JSON.stringify(body)));
    expect(res.status).toBe(code);
    expect(res.body.validation_errors).toHaveProperty(field);
    expect((await api.get('/payments')).body.data).toEqual([]);
    expect((await c.get('/invoice')).body.status).toBe('UPCOMING');
  });

  it('settles same-day ACH four hours after processing and a manual payment at processing', async () => {
    const bankPm = await bank(api, cus);
    const c = checkout(await checkoutToken());
    const ach = await c.post('/payments', { amount: '100.00', payment_method: 'same_day_ach', payment_method_id: bankPm });
    expect(ach.status).toBe(201);
    const manual = await c.post('/payments', { amount: '200.00', payment_method: 'manual' });
    expect(manual.status).toBe(201);
    await sb.advance(60);
    const byId = async () => Object.fromEntries((await api.get('/payments')).body.data.map((p: { id: string; status: string }) => [p.id, p.status]));
    expect(await byId()).toEqual({ [ach.body.payment_id]: 'processing', [manual.body.payment_id]: 'succeeded' });
    await sb.advance(4 * 3600);
    expect((await byId())[ach.body.payment_id]).toBe('succeeded');
    expect((await api.get(`/invoices/${inv.id}`)).body.status).toBe('PAID');
  });

  it('suggests addresses from the built-in list and details one; an unknown id is 404', async () => {
    const c = checkout(await checkoutToken());
    const found = await c.post('/address/autocomplete', { q: '100 main', country: 'US', sessiontoken: 's1' });
    expect(found.status).toBe(200);
    expect(found.body.suggestions).toEqual([{ id: 'addr_us_001', description: '100 Main St Suite 200, Springfield, IL 62701, USA' }]);
    expect((await c.post('/address/autocomplete', { q: 'king', country: 'CA' })).body.suggestions).toHaveLength(1);
    const details = await c.post('/address/details', { id: 'addr_us_001', sessiontoken: 's1' });
    expect(details.body).toMatchObject({ street_address: '100 Main St', city: 'Springfield', state_code: 'IL', country_code: 'US' });
    expect((await c.post('/address/details', { id: 'addr_nope' })).status).toBe(404);
    expect((await c.post('/address/autocomplete', {})).status).toBe(400);
  });
});

describe('cross-origin calls from the partner\'s page (CORS)', () => {
  const ORIGIN = 'https://shop.partner.example';

  it.each(['', '/demo', '/v1', '/demo/v1'])('answers a preflight of %s/checkout/... with 204 and the allowed methods and headers', async (prefix) => {
    const res = await sb.http.options(`${prefix}/checkout/payments`)
      .set({ Origin: ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key' });
    expect(res.status).toBe(204);
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key',
      'access-control-max-age': '600',
    });
    expect(res.text).toBe('');
    // A preflight is not a call: nothing is recorded or paid.
    expect((await api.get('/payments')).body.data).toEqual([]);
  });

  it('puts Allow-Origin and Expose-Headers: Retry-After on real checkout answers, errors included', async () => {
    const c = checkout(await checkoutToken());
    const ok = await c.get('/invoice').set('Origin', ORIGIN);
    expect(ok.status).toBe(200);
    expect(ok.body.id).toBe(inv.id);
    const unauthorized = await sb.http.get('/v1/checkout/invoice').set('Origin', ORIGIN);
    const malformed = await sb.http.post('/checkout/payments').set({ Origin: ORIGIN, Authorization: `Bearer ${await checkoutToken()}`, 'Content-Type': 'application/json' }).send('{"amount":');
    expect([unauthorized.status, malformed.status]).toEqual([401, 400]);
    for (const res of [ok, unauthorized, malformed]) {
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-expose-headers']).toBe('Retry-After');
    }
    expect((await api.get('/payments')).body.data).toEqual([]);
  });

  it('leaves the partner API, the token endpoint and /checkout-auth/init without CORS headers', async () => {
    const preflight = await sb.http.options('/invoices').set({ Origin: ORIGIN, 'Access-Control-Request-Method': 'GET' });
    expect(preflight.status).not.toBe(204);
    for (const res of [
      preflight,
      await api.get('/invoices').set('Origin', ORIGIN),
      await api.post('/checkout-auth/init', { customer_id: cus, invoice_id: inv.id }).set('Origin', ORIGIN),
      await sb.http.post('/oauth/token').set('Origin', ORIGIN).type('form').send({ grant_type: 'client_credentials' }),
    ]) {
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});
