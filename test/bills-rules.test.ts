// Bill rules that mutation testing (npm run mutate, issue 19) showed no test pinned: the vendor of a
// bill being paid, the amount cap at and past it, a date PATCH checked against the stored other date,
// line-item totals with tax, zero quantities, the vendor-and-status filter, updated_at on moves that
// change nothing, and the bulk cap. Each test names the behaviour; the mutant it kills is in its comment.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { LIMITS } from '../src/limits.js';
import { lowerLimit } from './helpers.js';
import { Payables } from './payables-helpers.js';

let p: Payables;

beforeEach(async () => {
  p = await Payables.start();
});

const MAX = LIMITS.amountMax;
const now = async (): Promise<string> => (await p.sb.http.get('/_sandbox/clock')).body.now;
const ids = (body: { data: Array<{ id: string }> }) => body.data.map((b) => b.id);

describe('the vendor of a bill being paid', () => {
  it('PATCH vendor_id answers 409 while a vendor payment is open, changes nothing, and is allowed once the payment is canceled', async () => {
    const first = await p.vendor();
    const second = await p.vendor();
    const bill = await p.bill(first.id, { status: 'needs_approval' });
    const paymentId = await p.pay(bill.id, 'standard');
    const before = (await p.api.get(`/bills/${bill.id}`)).body;

    const refused = await p.api.patch(`/bills/${bill.id}`, { vendor_id: second.id, amount: 7 });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'invalid_state', validation_errors: { vendor_id: 'cannot change while a payment is in progress' } });
    expect(refused.body.message).toContain('vendor payment in progress');
    expect((await p.api.get(`/bills/${bill.id}`)).body).toEqual(before);

    // Naming the vendor it already has is no change, so it is not refused.
    const same = await p.api.patch(`/bills/${bill.id}`, { vendor_id: first.id, description: 'same vendor' });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ vendor_id: first.id, description: 'same vendor' });

    await p.api.post('/vendor-payments/cancel', { bill_id: bill.id, payment_id: paymentId }).expect(200);
    const moved = await p.api.patch(`/bills/${bill.id}`, { vendor_id: second.id });
    expect(moved.status).toBe(200);
    expect(moved.body.vendor_id).toBe(second.id);
    expect(ids((await p.api.get(`/bills?vendor_id=${second.id}`)).body)).toEqual([bill.id]);
  });
});

describe('the amount cap', () => {
  it('accepts an amount of exactly the maximum on create and on PATCH', async () => {
    const v = await p.vendor();
    const created = await p.api.post('/bills', { vendor_id: v.id, amount: MAX });
    expect(created.status).toBe(201);
    expect(created.body.amount).toBe(MAX);
    const small = await p.bill(v.id, { amount: 1 });
    const patched = await p.api.patch(`/bills/${small.id}`, { amount: MAX });
    expect(patched.status).toBe(200);
    expect((await p.api.get(`/bills/${small.id}`)).body.amount).toBe(MAX);
  });

  it('refuses an amount above the maximum on create and on PATCH with 400 naming amount, storing nothing', async () => {
    const v = await p.vendor();
    const created = await p.api.post('/bills', { vendor_id: v.id, amount: MAX + 0.01 });
    expect(created.status).toBe(400);
    expect(created.body.validation_errors).toHaveProperty('amount');
    expect((await p.api.get('/bills')).body.data).toEqual([]);
    const bill = await p.bill(v.id, { amount: 5 });
    const patched = await p.api.patch(`/bills/${bill.id}`, { amount: MAX + 1 });
    expect(patched.status).toBe(400);
    expect(patched.body.validation_errors).toHaveProperty('amount');
    expect((await p.api.get(`/bills/${bill.id}`)).body.amount).toBe(5);
  });
});

describe('dates checked against the stored other date', () => {
  it('PATCH of only a due_date earlier than the stored issue_date is a 400 naming due_date', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { issue_date: '2026-03-10', due_date: '2026-03-20' });
    const res = await p.api.patch(`/bills/${bill.id}`, { due_date: '2026-03-09' });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({ due_date: 'must not be before issue_date' });
    expect((await p.api.get(`/bills/${bill.id}`)).body).toMatchObject({ issue_date: '2026-03-10', due_date: '2026-03-20' });
  });

  it('PATCH of only an issue_date later than the stored due_date is a 400 naming due_date', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { issue_date: '2026-03-10', due_date: '2026-03-20' });
    const res = await p.api.patch(`/bills/${bill.id}`, { issue_date: '2026-03-21' });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({ due_date: 'must not be before issue_date' });
    expect((await p.api.get(`/bills/${bill.id}`)).body).toMatchObject({ issue_date: '2026-03-10', due_date: '2026-03-20' });
  });

  it('accepts equal issue and due dates, on create and on PATCH of either date alone', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { issue_date: '2026-03-10', due_date: '2026-03-10' });
    expect(bill).toMatchObject({ issue_date: '2026-03-10', due_date: '2026-03-10' });
    const later = await p.api.patch(`/bills/${bill.id}`, { due_date: '2026-03-15' });
    expect(later.body).toMatchObject({ issue_date: '2026-03-10', due_date: '2026-03-15' });
    const same = await p.api.patch(`/bills/${bill.id}`, { issue_date: '2026-03-15' });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ issue_date: '2026-03-15', due_date: '2026-03-15' });
    // A bill with only one of the dates is never compared.
    const onlyDue = await p.bill(v.id, { due_date: '2020-01-01' });
    expect((await p.api.patch(`/bills/${onlyDue.id}`, { description: 'x' })).status).toBe(200);
  });
});

describe('line items', () => {
  it('a line item without a total gets quantity x unit_price plus tax, rounded to cents', async () => {
    const v = await p.vendor();
    const res = await p.api.post('/bills', { vendor_id: v.id, amount: 30, line_items: [
      { name: 'Taxed', quantity: 2, unit_price: 10.005, tax: 1.5 },
      { name: 'Given total wins', quantity: 2, unit_price: 10, tax: 1.5, total: 99 },
      { name: 'No price', quantity: 2, tax: 1.5 },
      { name: 'No quantity', unit_price: 3 },
    ] });
    expect(res.status).toBe(201);
    expect(res.body.line_items.map((l: { total: number | null }) => l.total)).toEqual([21.51, 99, null, null]);
    const patched = await p.api.patch(`/bills/${res.body.id}`, { line_items: { items: [{ name: 'More', quantity: 3, unit_price: 2, tax: 0.25 }] } });
    expect(patched.body.line_items.at(-1)).toMatchObject({ sequence: 5, total: 6.25, tax: 0.25 });
  });

  it('accepts zero quantity, unit price and total (only negatives are refused)', async () => {
    const v = await p.vendor();
    const res = await p.api.post('/bills', { vendor_id: v.id, amount: 1, line_items: [{ name: 'Free', quantity: 0, unit_price: 0, total: 0 }, { name: 'Nothing', quantity: 0, unit_price: 5 }] });
    expect(res.status).toBe(201);
    expect(res.body.line_items.map((l: { quantity: number; unit_price: number; total: number }) => [l.quantity, l.unit_price, l.total])).toEqual([[0, 0, 0], [0, 5, 0]]);
    for (const field of ['quantity', 'unit_price', 'total']) {
      const bad = await p.api.post('/bills', { vendor_id: v.id, amount: 1, line_items: [{ name: 'ok' }, { name: 'bad', [field]: -0.01 }] });
      expect(bad.status).toBe(400);
      // The minimum is in the document, so the request validator refuses it before the domain's own check.
      expect(bad.body.validation_errors).toEqual({ [`line_items[1].${field}`]: 'must be at least 0' });
    }
    const bill = await p.bill(v.id);
    const bad = await p.api.patch(`/bills/${bill.id}`, { line_items: { items: [{ name: 'bad', unit_price: -1 }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toEqual({ 'line_items.items[0].unit_price': 'must be at least 0' });
    expect((await p.api.get('/bills')).body.data).toHaveLength(2);
  });
});

describe('listing', () => {
  it('filters by vendor_id and status together', async () => {
    const a = await p.vendor();
    const b = await p.vendor();
    const aDraft = await p.bill(a.id);
    const aWaiting = await p.bill(a.id, { status: 'needs_approval' });
    await p.bill(b.id, { status: 'needs_approval' });
    const aDeleted = await p.bill(a.id);
    await p.api.delete(`/bills/${aDeleted.id}`).expect(200);
    const list = async (q: string) => ids((await p.api.get(`/bills?${q}`)).body);
    expect(await list(`vendor_id=${a.id}&status=needs_approval`)).toEqual([aWaiting.id]);
    expect(await list(`vendor_id=${a.id}&status=draft`)).toEqual([aDraft.id]);
    expect(await list(`vendor_id=${a.id}&status=deleted`)).toEqual([aDeleted.id]);
    expect(await list(`vendor_id=${a.id}`)).toEqual([aWaiting.id, aDraft.id]);
    expect(await list(`vendor_id=${a.id}&include_deleted=true`)).toEqual([aDeleted.id, aWaiting.id, aDraft.id]);
    expect(await list(`vendor_id=${b.id}&status=draft`)).toEqual([]);
  });
});

describe('updated_at', () => {
  it('a move that keeps the status (a pay date, deleting a deleted bill) stamps updated_at and adds no history entry', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id);
    await p.advance(3600);
    await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: '2099-01-01' }).expect(200);
    const dated = (await p.api.get(`/bills/${bill.id}`)).body;
    expect(dated.updated_at).toBe(await now());
    expect(dated.status_history).toHaveLength(1);

    await p.api.delete(`/bills/${bill.id}`).expect(200);
    await p.advance(60);
    await p.api.delete(`/bills/${bill.id}`).expect(200);
    const again = (await p.api.get(`/bills/${bill.id}`)).body;
    expect(again.updated_at).toBe(await now());
    expect(again.status_history.map((e: { status: string }) => e.status)).toEqual(['draft', 'deleted']);
  });

  it('a PATCH that changes nothing keeps updated_at', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id);
    const createdAt = await now();
    await p.advance(60);
    const res = await p.api.patch(`/bills/${bill.id}`, { vendor_id: v.id });
    expect(res.status).toBe(200);
    expect(res.body.updated_at).toBe(createdAt);
    expect((await p.api.get(`/bills/${bill.id}`)).body.updated_at).toBe(createdAt);
    const changed = await p.api.patch(`/bills/${bill.id}`, { description: 'now changed' });
    expect(changed.body.updated_at).toBe(await now());
    expect(changed.body.updated_at).not.toBe(createdAt);
  });
});

describe('bulk cap', () => {
  it(`takes exactly ${LIMITS.bulkItems} ids and refuses ${LIMITS.bulkItems + 1} with 400 naming bill_ids, changing nothing`, async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id);
    const filler = Array.from({ length: LIMITS.bulkItems - 1 }, (_, i) => `bill_none_${i}`);
    const full = await p.api.post('/bills/bulk-delete', { bill_ids: [bill.id, ...filler] });
    expect(full.status).toBe(200);
    expect(full.body.results).toHaveLength(LIMITS.bulkItems);
    expect(full.body.results[0]).toEqual({ bill_id: bill.id, success: true, error_reason: null });
    expect(full.body.results[1]).toEqual({ bill_id: 'bill_none_0', success: false, error_reason: 'Bill not found' });
    const over = await p.api.post('/bills/bulk-submit', { bill_ids: [bill.id, ...filler, 'bill_one_more'] });
    expect(over.status).toBe(400);
    expect(over.body.validation_errors).toHaveProperty('bill_ids');
    expect(await p.status(bill.id)).toBe('deleted');
  });
});

describe('what a refusal says', () => {
  it('names the field with a fixed text for each rule', async () => {
    const v = await p.vendor();
    const refused = async (body: object) => (await p.api.post('/bills', { vendor_id: v.id, ...body })).body;
    expect(await refused({ vendor_id: 'ven_unknown', amount: 5 })).toEqual({ code: 'unknown_vendor', message: 'No vendor with id ven_unknown.', validation_errors: { vendor_id: 'is not a vendor of this account' } });
    expect((await refused({ amount: 0 })).validation_errors).toEqual({ amount: 'must be greater than 0' });
    expect((await refused({ amount: 1.234 })).validation_errors).toEqual({ amount: 'must have at most two decimal places (amounts are dollars and cents)' });
    expect((await refused({ amount: -1.234 })).validation_errors).toEqual({ amount: 'must be greater than 0' });
    expect((await refused({ amount: 10, issue_date: '2026-03-10', due_date: '2026-03-09' })).validation_errors).toEqual({ due_date: 'must not be before issue_date' });
    const bill = await p.bill(v.id);
    const patched = await p.api.patch(`/bills/${bill.id}`, { vendor_id: 'ven_gone' });
    expect(patched.body).toEqual({ code: 'unknown_vendor', message: 'No vendor with id ven_gone.', validation_errors: { vendor_id: 'is not a vendor of this account' } });
    const today = await p.clockToday();
    await p.advance(86_400);
    const past = await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: today });
    expect(past.body.validation_errors).toEqual({ pay_date: `must not be in the past (today is ${await p.clockToday()} on the account clock)` });
    const noDocument = await p.api.get(`/bills/${bill.id}/document`);
    expect(noDocument.body).toMatchObject({ code: 'not_found', message: `Bill ${bill.id} has no document.` });
  });
});

describe('bill records', () => {
  it('have ids bill_..., and an unknown id is a 404 naming the bill', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id);
    expect(bill.id).toMatch(/^bill_/);
    const missing = await p.api.get('/bills/bill_nothing');
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('No bill with id bill_nothing.');
  });

  it('are rejected without a body (the reason is optional) and keep a null reason', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    const res = await p.api.post(`/bills/${bill.id}/reject`);
    expect(res.status).toBe(200);
    const stored = (await p.api.get(`/bills/${bill.id}`)).body;
    expect(stored.status).toBe('draft');
    expect(stored.last_status).toMatchObject({ status: 'draft', reason: null });
  });
});

describe('what a bill keeps of its past', () => {

  it(`the newest LIMITS.billStatusHistory status changes`, async () => {
    lowerLimit('billStatusHistory', 3);
    const v = await p.vendor();
    const bill = await p.bill(v.id); // draft
    for (const move of ['submit', 'reject', 'submit', 'reject']) await p.api.post(`/bills/${bill.id}/${move}`, {}).expect(200);
    const history = (await p.api.get(`/bills/${bill.id}`)).body.status_history as Array<{ status: string }>;
    expect(history.map((h) => h.status)).toEqual(['needs_approval', 'draft', 'needs_approval', 'draft'].slice(-3));
  });

  it(`the newest LIMITS.billVendorPaymentsShown vendor payments`, async () => {
    lowerLimit('billVendorPaymentsShown', 1);
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    const first = await p.pay(bill.id, 'standard', 'k-first');
    await p.api.post('/vendor-payments/cancel', { bill_id: bill.id, payment_id: first }).expect(200);
    const second = await p.pay(bill.id, 'standard', 'k-second');
    const shown = (await p.api.get(`/bills/${bill.id}`)).body.vendor_payments as Array<{ id: string }>;
    expect(shown.map((vp) => vp.id)).toEqual([second]);
  });
});
