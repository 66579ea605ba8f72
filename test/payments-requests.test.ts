// Payment requests: create and get, their input rules, expiry on the clock and by simulation, and
// paying or cancelling one on its hosted checkout page (plain form posts here; a browser test exists too).
// Also the hosted invoice payment page's refusals and its ?payment= notice.
import { describe, expect, it } from '@jest/globals';
import { useSession, type Api, type TestSandbox } from './helpers.js';
import { card, control, customer, events, invoice } from './receivables-helpers.js';

let sb: TestSandbox;
let api: Api;
let token: string;
/** Advance the default account's clock; the session's token keeps working (tokens live in real time). */
const { advance } = useSession((session) => ({ sb, api, token } = session));

const VALID = { amount: 49.99, currency: 'USD', redirect_url: 'https://shop.example/thanks', reference_id: 'order-5521' };

function hostedPath(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

describe('payment requests', () => {
  it('creates a pending request with a hosted url that expires 24 hours later, and reads it back', async () => {
    const res = await api.post('/payments/request', VALID);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', amount: 49.99, currency: 'USD', reference_id: 'order-5521', created_at: '2026-03-02T09:00:00.000Z', expires_at: '2026-03-03T09:00:00.000Z', paid_at: null });
    expect(res.body.url).toContain(`/hosted/payment-requests/${res.body.id}?`);
    const got = await api.get(`/payments/request/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: res.body.id, status: 'pending', amount: 49.99 });
    expect((await api.get('/payments/request/preq_nope')).status).toBe(404);
  });

  it.each([
    ['a missing amount', { ...VALID, amount: undefined }, 400, 'amount'],
    ['a missing currency', { ...VALID, currency: undefined }, 400, 'currency'],
    ['a missing redirect_url', { ...VALID, redirect_url: undefined }, 400, 'redirect_url'],
    ['an http redirect_url', { ...VALID, redirect_url: 'http://shop.example/thanks' }, 400, 'redirect_url'],
    ['a currency that is not a three-letter code', { ...VALID, currency: 'US' }, 400, 'currency'],
    ['a negative amount', { ...VALID, amount: -5 }, 422, 'amount'],
    ['a zero amount', { ...VALID, amount: 0 }, 422, 'amount'],
    ['an unsupported currency', { ...VALID, currency: 'EUR' }, 422, 'currency'],
    ['an amount beyond the sandbox limit', { ...VALID, amount: 1e12 }, 422, 'amount'],
  ])('refuses %s and creates nothing', async (_what, body, code, field) => {
    const res = await api.post('/payments/request', JSON.parse(JSON.stringify(body)));
    expect(res.status).toBe(code);
    expect(res.body.validation_errors).toHaveProperty(field);
    expect(sb.deps.scheduler.pending(sb.deps.store.account('ptn_default', 'production'))).toEqual([]);
  });

  it('expires on the clock after 24 hours; a second expiry answers 409', async () => {
    const { body } = await api.post('/payments/request', VALID);
    await advance(24 * 3600 - 1);
    expect((await api.get(`/payments/request/${body.id}`)).body.status).toBe('pending');
    await advance(1);
    expect((await api.get(`/payments/request/${body.id}`)).body.status).toBe('expired');
    const again = await control(sb, token).post(`/payment-requests/${body.id}/expire`);
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('status is expired');
  });

  it('expires at once through the control plane', async () => {
    const { body } = await api.post('/payments/request', VALID);
    const res = await control(sb, token).post(`/payment-requests/${body.id}/expire`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('expired');
    expect((await api.get(`/payments/request/${body.id}`)).body.status).toBe('expired');
    expect((await control(sb, token).post('/payment-requests/preq_nope/expire')).status).toBe(404);
    const page = await sb.http.post(hostedPath(body.url)).type('form').send({ action: 'pay', method: 'card', card_provider_token: 'tok_visa' });
    expect(page.status).toBe(409);
    expect(page.text).toContain('status is expired');
  });
});

describe('the hosted checkout of a payment request', () => {
  it('pays by test card, redirects to redirect_url, and the payment settles on the clock', async () => {
    const { body } = await api.post('/payments/request', VALID);
    const page = await sb.http.get(hostedPath(body.url));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Payment of $49.99 USD');
    const paid = await sb.http.post(hostedPath(body.url)).type('form').send({ action: 'pay', method: 'card', card_provider_token: 'tok_visa' });
    expect(paid.status).toBe(303);
    expect(paid.headers.location).toBe(`https://shop.example/thanks?payment_request_id=${body.id}&status=paid&reference_id=order-5521`);
    const got = (await api.get(`/payments/request/${body.id}`)).body;
    expect(got).toMatchObject({ status: 'paid', paid_at: '2026-03-02T09:00:00.000Z' });
    const [payment] = (await api.get('/payments?type=payment_request')).body.data;
    expect(payment).toMatchObject({ payment_request_id: body.id, amount: 49.99, status: 'pending', payment_method: 'card', customer_id: null, invoice_id: null });
    await advance(3660);
    expect((await api.get('/payments?type=payment_request')).body.data[0].status).toBe('succeeded');
    expect(events(sb, 'payment_succeeded')[0].data).toMatchObject({ payment_request_id: body.id });
    const twice = await sb.http.post(hostedPath(body.url)).type('form').send({ action: 'pay', method: 'card', card_provider_token: 'tok_visa' });
    expect(twice.status).toBe(409);
  });

  it('shows a decline and leaves the request pending; cancel redirects with status=cancelled', async () => {
    const { body } = await api.post('/payments/request', VALID);
    const declined = await sb.http.post(hostedPath(body.url)).type('form').send({ action: 'pay', method: 'card', card_provider_token: 'tok_insufficient_funds' });
    expect(declined.status).toBe(402);
    expect(declined.text).toContain('Payment failed: insufficient_funds');
    expect((await api.get(`/payments/request/${body.id}`)).body.status).toBe('pending');
    expect(events(sb, 'payment_failed')).toHaveLength(1);
    const cancelled = await sb.http.post(hostedPath(body.url)).type('form').send({ action: 'cancel' });
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.location).toContain('status=cancelled');
    expect((await api.get(`/payments/request/${body.id}`)).body.status).toBe('cancelled');
  });

  it('answers odd forms and links with a clear page, never a 500', async () => {
    const { body } = await api.post('/payments/request', VALID);
    const path = hostedPath(body.url);
    expect((await sb.http.get(`${path}&sig=again`)).status).toBe(403);
    const repeated = await sb.http.post(path).type('form').send('action=pay&method=bank&method=card');
    expect(repeated.status).toBe(400);
    expect(repeated.text).toContain('Choose how to pay.');
    const shortAccount = await sb.http.post(path).type('form').send({ action: 'pay', method: 'bank', account_number: '1', routing_number: '011000015' });
    expect(shortAccount.status).toBe(400);
    expect(shortAccount.text).toContain('account number must be 4-17 digits');
    expect((await sb.http.post(path).send({ action: ['pay'], method: 'card' })).status).toBe(303);
    expect((await api.get(`/payments/request/${body.id}`)).body.status).toBe('paid');
  });

  it('answers an invoice payment page without a chosen method with 400 and pays nothing', async () => {
    const cus = (await api.post('/customers', { name: 'Form Buyer' })).body.id;
    const inv = (await api.post('/invoices', { customer_id: cus, exclude_from_autopay: true, line_items: [{ amount: 5 }] })).body;
    const path = hostedPath((await api.get(`/invoices/${inv.id}/payment-link`)).body.url);
    const res = await sb.http.post(path).type('form').send({});
    expect(res.status).toBe(400);
    expect(res.text).toContain('Choose how to pay.');
    const bad = await sb.http.post(path).type('form').send({ method: 'saved:pm_nope' });
    expect(bad.status).toBe(422);
    expect((await api.get('/payments')).body.data).toEqual([]);
    expect((await api.get(`/invoices/${inv.id}`)).body.status).toBe('UPCOMING');
  });

  it('refuses a tampered link with 403 and changes nothing', async () => {
    const { body } = await api.post('/payments/request', VALID);
    const tampered = hostedPath(body.url).replace(/sig=[^&]+/, 'sig=AAAA');
    const res = await sb.http.post(tampered).type('form').send({ action: 'cancel' });
    expect(res.status).toBe(403);
    expect((await api.get(`/payments/request/${body.id}`)).body.status).toBe('pending');
  });
});

describe('expiry when the request is used, before the clock\'s due work runs', () => {
  it('treats now >= expires_at as expired on the page and when paying or cancelling: 409, status expired, nothing paid', async () => {
    const { body } = await api.post('/payments/request', VALID);
    expect((await api.get(`/payments/request/${body.id}`)).body.status).toBe('pending');
    const account = sb.deps.store.account('ptn_default', 'production');
    // Real time moves on; no due work runs (the scheduler is not ticking in tests).
    sb.time.now += 24 * 3600 * 1000 - 1;
    const before = await sb.http.get(hostedPath(body.url));
    expect(before.text).toContain('id="pay"');
    sb.time.now += 1;
    expect(sb.deps.scheduler.pending(account).map((job) => job.kind)).toContain('payment_request.expire');
    // A read through the API sees it expired (a fresh token: a day of real time expired the first).
    const reader = sb.as(await sb.token());
    expect((await reader.get(`/payments/request/${body.id}`)).body.status).toBe('expired');
    const page = await sb.http.get(hostedPath(body.url));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<span class="status" id="status">expired</span>');
    expect(page.text).not.toContain('id="pay"');
    for (const form of [{ action: 'pay', method: 'card', card_provider_token: 'tok_visa' }, { action: 'cancel' }]) {
      const res = await sb.http.post(hostedPath(body.url)).type('form').send(form);
      expect(res.status).toBe(409);
      expect(res.text).toContain('status is expired');
    }
    const fresh = sb.as(await sb.token());
    expect((await fresh.get(`/payments/request/${body.id}`)).body).toMatchObject({ status: 'expired', paid_at: null });
    expect((await fresh.get('/payments')).body.data).toEqual([]);
    // The due job finds it already expired and changes nothing.
    expect((await sb.advance(1)).status).toBe(200);
    expect((await fresh.get(`/payments/request/${body.id}`)).body.status).toBe('expired');
  });
});

describe('the hosted invoice payment page', () => {
  async function linkOf(invoiceId: string): Promise<string> {
    return hostedPath((await api.get(`/invoices/${invoiceId}/payment-link`)).body.url);
  }

  it.each([
    ['a card', { method: 'card', card_provider_token: 'tok_mastercard' }],
    ['a bank account', { method: 'bank', routing_number: '011000015', account_number: '000123456789' }],
  ])('refuses to pay a covered invoice with 409 and does not save %s', async (_what, form) => {
    const cus = await customer(api);
    const pm = await card(api, cus);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    expect((await control(sb, token).post(`/invoices/${inv.id}/pay`)).status).toBe(200);
    const methodsBefore = (await api.get(`/customers/${cus}/payment-methods`)).body.data;
    const eventsBefore = events(sb).length;
    const res = await sb.http.post(await linkOf(inv.id)).type('form').send(form);
    expect(res.status).toBe(409);
    expect(res.text).toContain('Payments in flight already cover the whole invoice.');
    expect((await api.get(`/customers/${cus}/payment-methods`)).body.data).toEqual(methodsBefore);
    expect(methodsBefore.map((m: { id: string }) => m.id)).toEqual([pm]);
    expect(events(sb, 'payment_method_added')).toHaveLength(1);
    expect(events(sb)).toHaveLength(eventsBefore);
    expect((await api.get(`/payments?invoice_id=${inv.id}`)).body.data).toHaveLength(1);
  });

  it('shows a ?payment= notice only for a payment of that invoice', async () => {
    const cus = await customer(api);
    await card(api, cus);
    const mine = await invoice(api, cus, { exclude_from_autopay: true });
    const other = await invoice(api, cus, { exclude_from_autopay: true });
    const paidMine = (await control(sb, token).post(`/invoices/${mine.id}/pay`)).body.id;
    const paidOther = (await control(sb, token).post(`/invoices/${other.id}/pay`)).body.id;
    const own = await sb.http.get(`${await linkOf(mine.id)}&payment=${paidMine}`);
    expect(own.status).toBe(200);
    expect(own.text).toContain(`Payment ${paidMine} is pending.`);
    const foreign = await sb.http.get(`${await linkOf(mine.id)}&payment=${paidOther}`);
    expect(foreign.status).toBe(200);
    expect(foreign.text).not.toContain('id="payment"');
    expect(foreign.text).not.toContain(paidOther);
  });
});
