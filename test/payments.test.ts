// Money movement on the clock: invoice payments from the control plane and autopay, their timings,
// declines and bank returns, the invoice following, refunds, chargebacks and the payment list.
import { describe, expect, it } from '@jest/globals';
import { useSession, type Api, type TestSandbox } from './helpers.js';
import { bank, card, control, customer, events, invoice } from './receivables-helpers.js';

let sb: TestSandbox;
let api: Api;
let token: string;
/** Advance the default account's clock; the session's token keeps working (tokens live in real time). */
const { advance } = useSession((session) => ({ sb, api, token } = session));

async function pay(invoiceId: string, body: object = {}) {
  return control(sb, token).post(`/invoices/${invoiceId}/pay`, body);
}

const status = async (path: string) => (await api.get(path)).body.status;
const payment = async (id: string) => (await api.get('/payments')).body.data.find((p: { id: string }) => p.id === id);

describe('paying an invoice by card', () => {
  it('goes pending -> processing (1 min) -> succeeded (1 h later); the invoice goes RECEIVED then PAID with its events', async () => {
    const cus = await customer(api);
    const pm = await card(api, cus);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const res = await pay(inv.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'pending', amount: 300, invoice_id: inv.id, customer_id: cus, payment_method: 'card', payment_method_id: pm, fees: 9 });
    expect(await status(`/invoices/${inv.id}`)).toBe('RECEIVED');
    expect(events(sb, 'invoice_updated').at(-1)?.data).toMatchObject({ status: 'RECEIVED' });
    await advance(59);
    expect((await payment(res.body.id)).status).toBe('pending');
    await advance(1);
    expect((await payment(res.body.id)).status).toBe('processing');
    await advance(3599);
    expect((await payment(res.body.id)).status).toBe('processing');
    expect(events(sb, 'payment_succeeded')).toEqual([]);
    await advance(1);
    expect((await payment(res.body.id)).status).toBe('succeeded');
    expect(await status(`/invoices/${inv.id}`)).toBe('PAID');
    const [succeeded] = events(sb, 'payment_succeeded');
    expect(succeeded).toMatchObject({ entity_id: res.body.id, timestamp: '2026-03-02T10:01:00.000Z', data: { payment_id: res.body.id, invoice_id: inv.id, status: 'succeeded', amount: 300 } });
    expect(events(sb, 'invoice_paid')[0]).toMatchObject({ entity_id: inv.id, data: { status: 'PAID', payment_id: res.body.id, paid_at: '2026-03-02T10:01:00.000Z' } });
    const again = await pay(inv.id);
    expect(again.status).toBe(409);
    expect((await api.delete(`/invoices/${inv.id}`)).status).toBe(400);
  });

  it('answers a declined test card at once with a failed payment and payment_failed; the invoice stays unpaid', async () => {
    const cus = await customer(api);
    await card(api, cus, 'tok_card_declined');
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const res = await pay(inv.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'failed', failure_reason: 'card_declined' });
    expect(await status(`/invoices/${inv.id}`)).toBe('UPCOMING');
    expect(events(sb, 'payment_failed')[0].data).toMatchObject({ payment_id: res.body.id, failure_reason: 'card_declined', status: 'failed' });
    await advance(86_400);
    expect((await payment(res.body.id)).status).toBe('failed');
    expect(events(sb, 'payment_succeeded')).toEqual([]);
  });

  it('charges at creation (autopay) with the default method unless exclude_from_autopay', async () => {
    const cus = await customer(api);
    const pm = await card(api, cus);
    const auto = await invoice(api, cus);
    expect(auto.status).toBe('RECEIVED');
    const manual = await invoice(api, cus, { exclude_from_autopay: true });
    expect(manual.status).toBe('UPCOMING');
    const list = await api.get(`/payments?invoice_id=${auto.id}`);
    expect(list.body.data).toEqual([expect.objectContaining({ payment_method_id: pm, status: 'pending', type: 'invoice_payment' })]);
    expect((await api.get(`/payments?invoice_id=${manual.id}`)).body.data).toEqual([]);
  });
});

describe('bank payments', () => {
  it('settles standard ACH two days after processing', async () => {
    const cus = await customer(api);
    await bank(api, cus);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const res = await pay(inv.id);
    expect(res.body).toMatchObject({ payment_method: 'standard_ach', fees: 2.4 });
    await advance(60 + 2 * 86_400 - 1);
    expect((await payment(res.body.id)).status).toBe('processing');
    await advance(1);
    expect((await payment(res.body.id)).status).toBe('succeeded');
    expect(await status(`/invoices/${inv.id}`)).toBe('PAID');
  });

  it('returns a payment from the failing test account at settlement; the invoice goes back to OVERDUE when its due date passed', async () => {
    const cus = await customer(api);
    await bank(api, cus, '000111111116');
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const res = await pay(inv.id);
    expect(res.body.status).toBe('pending');
    await advance(60 + 2 * 86_400);
    expect((await payment(res.body.id))).toMatchObject({ status: 'failed', failure_reason: 'account_closed' });
    expect(await status(`/invoices/${inv.id}`)).toBe('OVERDUE');
    expect(events(sb, 'payment_failed')[0].data).toMatchObject({ failure_reason: 'account_closed', payment_method: 'standard_ach' });
    expect(events(sb, 'invoice_updated').at(-1)?.data.status).toBe('OVERDUE');
  });

  it('fails with the insufficient-funds test account too', async () => {
    const cus = await customer(api);
    await bank(api, cus, '000222222227');
    const inv = await invoice(api, cus, { exclude_from_autopay: true, due_date: '2026-03-31' });
    const res = await pay(inv.id);
    await advance(3 * 86_400);
    expect((await payment(res.body.id))).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds' });
    expect(await status(`/invoices/${inv.id}`)).toBe('UPCOMING');
  });
});

describe('partial payments and control-plane simulations', () => {
  it('takes a partial payment: the invoice is RECEIVED, then back to UPCOMING with the rest due, then PAID', async () => {
    const cus = await customer(api);
    await card(api, cus);
    const inv = await invoice(api, cus, { exclude_from_autopay: true, due_date: '2026-03-31' });
    const first = await pay(inv.id, { amount: 100 });
    expect(first.body.amount).toBe(100);
    expect((await pay(inv.id, { amount: 250 })).status).toBe(422);
    await advance(3660);
    expect(await status(`/invoices/${inv.id}`)).toBe('UPCOMING');
    const rest = await pay(inv.id);
    expect(rest.body.amount).toBe(200);
    await advance(3660);
    expect(await status(`/invoices/${inv.id}`)).toBe('PAID');
    expect(events(sb, 'invoice_paid')).toHaveLength(1);
  });

  it.each([
    ['an unknown invoice', 'inv_nope', {}, 404],
    ['a method of another customer', 'INV', { payment_method_id: 'OTHER' }, 422],
    ['a zero amount', 'INV', { amount: 0 }, 400],
    ['an amount above what is due', 'INV', { amount: 300.01 }, 422],
    ['an unknown field', 'INV', { amount: 1, currency: 'USD' }, 400],
  ])('refuses to pay with %s and changes nothing', async (_what, target, body, code) => {
    const cus = await customer(api);
    await card(api, cus);
    const other = await customer(api, 'Other');
    const otherPm = await card(api, other);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const res = await pay(target === 'INV' ? inv.id : target, JSON.parse(JSON.stringify(body).replace('"OTHER"', JSON.stringify(otherPm))));
    expect(res.status).toBe(code);
    expect(await status(`/invoices/${inv.id}`)).toBe('UPCOMING');
    expect((await api.get('/payments')).body.data).toEqual([]);
  });

  it('refuses to pay for a customer without any method with 422', async () => {
    const inv = await invoice(api, await customer(api), { exclude_from_autopay: true });
    const res = await pay(inv.id);
    expect(res.status).toBe(422);
    expect(res.body.validation_errors).toHaveProperty('payment_method_id');
  });

  it('fails a payment in flight on demand; a finished one answers 409', async () => {
    const cus = await customer(api);
    await card(api, cus);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const { body: p } = await pay(inv.id);
    const failed = await control(sb, token).post(`/payments/${p.id}/fail`, { reason: 'do_not_honor' });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: 'failed', failure_reason: 'do_not_honor' });
    expect(await status(`/invoices/${inv.id}`)).toBe('UPCOMING');
    await advance(7200);
    expect((await payment(p.id)).status).toBe('failed');
    expect(events(sb, 'payment_succeeded')).toEqual([]);
    const again = await control(sb, token).post(`/payments/${p.id}/fail`);
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('status is failed');
    expect((await control(sb, token).post('/payments/pay_nope/fail')).status).toBe(404);
  });

  it('refunds partly then fully with payment_refunded; over-refunds answer 422 and unsettled payments 409', async () => {
    const cus = await customer(api);
    await card(api, cus);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const { body: p } = await pay(inv.id);
    expect((await control(sb, token).post(`/payments/${p.id}/refund`)).status).toBe(409);
    await advance(3660);
    const part = await control(sb, token).post(`/payments/${p.id}/refund`, { amount: 100 });
    expect(part.status).toBe(200);
    expect(part.body).toMatchObject({ status: 'succeeded', refunded_amount: 100 });
    const over = await control(sb, token).post(`/payments/${p.id}/refund`, { amount: 250 });
    expect(over.status).toBe(422);
    expect(over.body.validation_errors).toHaveProperty('amount');
    const rest = await control(sb, token).post(`/payments/${p.id}/refund`);
    expect(rest.body).toMatchObject({ status: 'refunded', refunded_amount: 300 });
    expect(events(sb, 'payment_refunded').map((e) => e.data.refund_amount)).toEqual([100, 200]);
    expect((await control(sb, token).post(`/payments/${p.id}/refund`)).status).toBe(409);
    expect((await api.get('/payments?status=refunded')).body.data.map((x: { id: string }) => x.id)).toEqual([p.id]);
  });

  it('opens a chargeback on demand once; the magic amount 666.66 draws one a day after it succeeds', async () => {
    const cus = await customer(api);
    await card(api, cus);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const { body: p } = await pay(inv.id);
    expect((await control(sb, token).post(`/payments/${p.id}/chargeback`)).status).toBe(409);
    await advance(3660);
    const cb = await control(sb, token).post(`/payments/${p.id}/chargeback`, { reason: 'product_not_received' });
    expect(cb.status).toBe(200);
    expect(cb.body).toMatchObject({ chargeback: true, status: 'succeeded' });
    expect(events(sb, 'payment_chargeback')[0].data).toMatchObject({ chargeback_reason: 'product_not_received' });
    expect((await control(sb, token).post(`/payments/${p.id}/chargeback`)).status).toBe(409);

    const magic = await invoice(api, cus, { exclude_from_autopay: true, line_items: [{ amount: 666.66 }] });
    const { body: m } = await pay(magic.id);
    await advance(3660);
    expect((await payment(m.id)).chargeback).toBe(false);
    await advance(86_400);
    expect((await payment(m.id)).chargeback).toBe(true);
    expect(events(sb, 'payment_chargeback')[1]).toMatchObject({ entity_id: m.id, data: { chargeback_reason: 'fraudulent' } });
  });

  it('refuses to refund a charged-back payment with 409 naming the chargeback, and changes nothing', async () => {
    const cus = await customer(api);
    await card(api, cus);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const { body: p } = await pay(inv.id);
    await advance(3660);
    expect((await control(sb, token).post(`/payments/${p.id}/refund`, { amount: 50 })).status).toBe(200);
    expect((await control(sb, token).post(`/payments/${p.id}/chargeback`)).status).toBe(200);
    const before = await payment(p.id);
    const payout = async () => (await api.get(`/payouts/${before.payout_id}`)).body;
    const payoutBefore = await payout();
    expect(payoutBefore.id).toEqual(before.payout_id);
    for (const body of [{}, { amount: 10 }]) {
      const res = await control(sb, token).post(`/payments/${p.id}/refund`, body);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'invalid_state', validation_errors: { chargeback: 'is true' } });
      expect(res.body.message).toContain('chargeback');
    }
    expect(await payment(p.id)).toEqual(before);
    expect(before).toMatchObject({ status: 'succeeded', refunded_amount: 50, chargeback: true });
    expect(await payout()).toEqual(payoutBefore);
    expect(events(sb, 'payment_refunded')).toHaveLength(1);
  });
});

describe('GET /payments', () => {
  it('filters by status, type, customer, invoice, method and created_at', async () => {
    const a = await customer(api, 'Alpha');
    const b = await customer(api, 'Beta');
    await card(api, a);
    await bank(api, b);
    const ia = await invoice(api, a, { exclude_from_autopay: true });
    const ib = await invoice(api, b, { exclude_from_autopay: true });
    const pa = (await pay(ia.id)).body;
    await advance(60);
    const pb = (await pay(ib.id)).body;
    const ids = async (q: string) => (await api.get(`/payments${q}`)).body.data.map((p: { id: string }) => p.id);
    expect(await ids('')).toEqual([pb.id, pa.id]);
    expect(await ids(`?customer_id=${a}`)).toEqual([pa.id]);
    expect(await ids(`?invoice_id=${ib.id}`)).toEqual([pb.id]);
    expect(await ids('?payment_method=standard_ach')).toEqual([pb.id]);
    expect(await ids('?status=processing')).toEqual([pa.id]);
    expect(await ids('?type=payment_request')).toEqual([]);
    expect(await ids(`?created_at_start=${encodeURIComponent(pb.created_at)}`)).toEqual([pb.id]);
    const bad = await api.get('/payments?payment_method=cash');
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty('payment_method');
  });
});
