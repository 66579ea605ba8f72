// Payouts on the clock: settled payments gather into a daily payout per customer, which processes at
// the 00:00 UTC cut-off and is paid (or fails, for the test value) on its arrival date.
import { describe, expect, it } from '@jest/globals';
import { useSession, type Api, type TestSandbox } from './helpers.js';
import { bank, card, control, customer, events, invoice } from './receivables-helpers.js';

let sb: TestSandbox;
let api: Api;
let token: string;
/** Advance the default account's clock; the session's token keeps working (tokens live in real time). */
const { advance } = useSession((session) => ({ sb, api, token } = session));

async function paidInvoice(cus: string, amount: number) {
  const inv = await invoice(api, cus, { exclude_from_autopay: true, line_items: [{ amount }] });
  const res = await control(sb, token).post(`/invoices/${inv.id}/pay`);
  expect(res.status).toBe(200);
  return { invoice: inv, payment: res.body };
}

describe('payouts', () => {
  it('schedules, processes and pays a payout with fees, arrival_date, transactions and events', async () => {
    const cus = await customer(api);
    await card(api, cus);
    const first = await paidInvoice(cus, 300);
    const second = await paidInvoice(cus, 100);
    await advance(3660); // both settle at 10:01
    const list = await api.get('/payouts');
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const payout = list.body.data[0];
    expect(payout).toMatchObject({
      customer_id: cus, status: 'scheduled', arrival_date: '2026-03-05', sub_total: 400, total: 387.8,
      fees: [{ name: 'Card processing', type: 'method', amount: 12.2, covered_by_customer: false }],
    });
    expect(events(sb, 'payout_scheduled')).toEqual([expect.objectContaining({ entity_id: payout.id, data: { payout_id: payout.id, customer_id: cus, status: 'scheduled', total: 291, arrival_date: '2026-03-05' } })]);
    const txns = await api.get(`/payouts/${payout.id}/transactions`);
    expect(txns.body.payout).toEqual(payout);
    expect(txns.body.transactions).toEqual([
      { id: first.payment.id, description: `Payment for ${first.invoice.invoice_number}`, direction: 'credit', method: 'card', status: 'created', failure_reason: null, sub_total: 300, total: 291 },
      { id: second.payment.id, description: `Payment for ${second.invoice.invoice_number}`, direction: 'credit', method: 'card', status: 'created', failure_reason: null, sub_total: 100, total: 96.8 },
    ]);
    expect((await api.get(`/payments?invoice_id=${first.invoice.id}`)).body.data[0].payout_id).toBe(payout.id);

    await advance(14 * 3600); // 2026-03-03 00:01
    expect((await api.get(`/payouts/${payout.id}`)).body.status).toBe('processing');
    expect(events(sb, 'payout_processing')[0]).toMatchObject({ entity_id: payout.id, timestamp: '2026-03-03T00:00:00.000Z' });
    await advance(2 * 86_400);
    expect((await api.get(`/payouts/${payout.id}`)).body.status).toBe('succeeded');
    expect(events(sb, 'payout_paid')[0]).toMatchObject({ entity_id: payout.id, timestamp: '2026-03-05T00:00:00.000Z', data: { status: 'succeeded', total: 387.8 } });
    expect((await api.get(`/payouts/${payout.id}/transactions`)).body.transactions.map((t: { status: string }) => t.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('debits a refund made after the cut-off from the customer\'s next payout', async () => {
    const cus = await customer(api);
    await card(api, cus);
    const { payment } = await paidInvoice(cus, 300);
    await advance(3660 + 14 * 3600); // settled, then processed at the cut-off
    await control(sb, token).post(`/payments/${payment.id}/refund`, { amount: 50 }).expect(200);
    const list = (await api.get('/payouts')).body.data;
    expect(list.map((p: { status: string }) => p.status)).toEqual(['scheduled', 'processing']);
    const txns = (await api.get(`/payouts/${list[0].id}/transactions`)).body;
    expect(txns.payout).toMatchObject({ sub_total: -50, total: -50, fees: [] });
    expect(txns.transactions).toEqual([expect.objectContaining({ direction: 'debit', sub_total: 50, total: -50, description: `Refund of ${payment.id}` })]);
  });

  it('fails the payout that holds a payment of the test amount 777.77, with payout_failed', async () => {
    const cus = await customer(api);
    await bank(api, cus);
    await paidInvoice(cus, 777.77);
    await advance(60 + 2 * 86_400); // settles 2026-03-04 09:01
    const [payout] = (await api.get('/payouts')).body.data;
    expect(payout).toMatchObject({ status: 'scheduled', arrival_date: '2026-03-07', fees: [{ name: 'ACH processing', amount: 5 }] });
    await advance(3 * 86_400);
    const got = await api.get(`/payouts/${payout.id}/transactions`);
    expect(got.body.payout.status).toBe('failed');
    expect(got.body.transactions[0]).toMatchObject({ status: 'failed', failure_reason: 'bank_account_closed' });
    expect(events(sb, 'payout_failed')[0].data).toMatchObject({ payout_id: payout.id, status: 'failed', failure_reason: 'bank_account_closed' });
    expect(events(sb, 'payout_paid')).toEqual([]);
  });

  it('filters by status, customer, invoice and created window; unknown ids are 404', async () => {
    const a = await customer(api, 'Alpha');
    const b = await customer(api, 'Beta');
    await card(api, a);
    await card(api, b);
    const pa = await paidInvoice(a, 10);
    const pb = await paidInvoice(b, 20);
    await advance(3660);
    const ids = async (q: string) => (await api.get(`/payouts${q}`)).body.data.map((p: { customer_id: string }) => p.customer_id);
    expect(await ids('')).toEqual([b, a]);
    expect(await ids(`?customer_id=${a}`)).toEqual([a]);
    expect(await ids(`?invoice_id=${pb.invoice.id}`)).toEqual([b]);
    expect(await ids(`?invoice_id=${pa.invoice.id}&customer_id=${b}`)).toEqual([]);
    expect(await ids('?status=scheduled')).toEqual([b, a]);
    expect(await ids('?status=succeeded')).toEqual([]);
    expect(await ids('?start_date=2026-03-03T00:00:00Z')).toEqual([]);
    expect(await ids('?end_date=2026-03-03T00:00:00Z')).toEqual([b, a]);
    expect((await api.get('/payouts?status=paid')).status).toBe(400);
    expect((await api.get('/payouts/po_nope')).status).toBe(404);
    expect((await api.get('/payouts/po_nope/transactions')).status).toBe(404);
  });
});
