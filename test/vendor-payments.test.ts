// Vendor payments end to end: the lifecycle on the clock per payment_speed, test account numbers that
// fail, retry, hold and release, idempotency, per-item results, cancel and bulk-cancel, the
// control-plane failure, and the payment state table.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { ApiError } from '../src/errors.js';
import { transition } from '../src/domain/machine.js';
import { vendorPaymentMachine } from '../src/domain/vendor-payments/records.js';
import { bankAccount, GOOD_ACCOUNT, Payables } from './payables-helpers.js';

let p: Payables;

beforeEach(async () => {
  p = await Payables.start();
});

const DAY = 86400;
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY * 1000).toISOString().slice(0, 10);

async function payment(billId: string) {
  const bill = (await p.api.get(`/bills/${billId}`)).body;
  return { bill, payments: bill.vendor_payments as Array<Record<string, any>>, last: bill.vendor_payments[bill.vendor_payments.length - 1] };
}

/** Seconds from the account clock's now to `iso`. */
async function secondsUntil(iso: string) {
  const now = (await p.sb.http.get('/_sandbox/clock')).body.now;
  return (Date.parse(iso) - Date.parse(now)) / 1000;
}

describe('the vendor payment lifecycle', () => {
  it.each([
    ['standard', 3 * DAY],
    ['next_day', DAY],
    ['same_day', 4 * 3600],
    ['instant', 60],
  ])('%s: waiting_pay_date, ready on the pay date, processing 10 minutes later, succeeded after its settlement time', async (speed, settlement) => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    const payDate = addDays(await p.clockToday(), 2);
    await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: payDate }).expect(200);
    const res = await p.api.post('/vendor-payments', { idempotency_key: 'run-1', items: [{ bill_id: bill.id, payment_speed: speed }] });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([{ bill_id: bill.id, success: true, payment_id: expect.stringMatching(/^vp_/), error_reason: null }]);
    let { last, bill: b } = await payment(bill.id);
    const bank = (await p.api.get(`/vendors/${v.id}/bank-account`)).body;
    expect(last).toMatchObject({ id: res.body.results[0].payment_id, status: 'waiting_pay_date', payment_speed: speed, attempt_number: 1, hold_until: payDate, sent_at: null, failure_reason: null, payment_method_id: bank.payment_method_id });
    expect(b.status).toBe('needs_approval');

    await p.advance(await secondsUntil(`${payDate}T00:00:00Z`) - 1);
    expect((await payment(bill.id)).last.status).toBe('waiting_pay_date');
    await p.advance(1);
    ({ last } = await payment(bill.id));
    expect(last).toMatchObject({ status: 'ready', hold_until: null });

    await p.advance(600);
    ({ last, bill: b } = await payment(bill.id));
    expect(last).toMatchObject({ status: 'processing', sent_at: `${payDate}T00:10:00.000Z` });
    expect(last.estimated_arrival_date).toBe(new Date(Date.parse(`${payDate}T00:10:00Z`) + settlement * 1000).toISOString().slice(0, 10));
    expect(b.status).toBe('processing');
    expect((await p.api.delete(`/bills/${bill.id}`)).status).toBe(409);
    expect((await p.api.patch(`/bills/${bill.id}`, { amount: 5 })).status).toBe(409);

    await p.advance(settlement - 1);
    expect((await payment(bill.id)).last.status).toBe('processing');
    await p.advance(1);
    ({ last, bill: b } = await payment(bill.id));
    expect(last.status).toBe('succeeded');
    expect(b.status).toBe('paid');
    expect(b.status_history.map((e: { status: string }) => e.status)).toEqual(['needs_approval', 'processing', 'paid']);
    expect(b.status_history[2].user_id).toBeNull();
  });

  it('a payment whose pay date is today is ready at once and sent 10 minutes later', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    await p.pay(bill.id, 'same_day');
    expect((await payment(bill.id)).last.status).toBe('ready');
    await p.advance(599);
    expect((await payment(bill.id)).last.status).toBe('ready');
    await p.advance(1);
    expect((await payment(bill.id)).last.status).toBe('processing');
  });

  it('moving the pay date moves a waiting payment with it', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    const today = await p.clockToday();
    await p.pay(bill.id);
    await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: addDays(today, 5) }).expect(200);
    expect((await payment(bill.id)).last).toMatchObject({ status: 'waiting_pay_date', hold_until: addDays(today, 5) });
    await p.advance(3 * DAY);
    expect((await payment(bill.id)).last.status).toBe('waiting_pay_date');
    await p.advance(3 * DAY);
    expect((await payment(bill.id)).last.status).toBe('succeeded');
  });
});

describe('test account numbers and retry', () => {
  it.each([
    ['000000000002', 'account_closed'],
    ['000000000003', 'no_account'],
    ['000000000004', 'invalid_account_number'],
    ['000000000016', 'account_frozen'],
  ])('a vendor account %s makes the payment fail with %s at settlement; the bill fails', async (number, reason) => {
    const v = await p.vendor(number);
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    await p.pay(bill.id, 'next_day');
    await p.advance(600 + DAY - 1);
    expect((await payment(bill.id)).last.status).toBe('processing');
    await p.advance(1);
    const { last, bill: b } = await payment(bill.id);
    expect(last).toMatchObject({ status: 'failed', failure_reason: reason, attempt_number: 1 });
    expect(b.status).toBe('failed');
    expect(b.last_status).toMatchObject({ status: 'failed', reason });
  });

  it('retry makes attempt 2 from the failed one; after the vendor fixes its account it succeeds', async () => {
    const v = await p.vendor('000000000002');
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    await p.pay(bill.id, 'instant');
    await p.advance(660);
    expect((await payment(bill.id)).bill.status).toBe('failed');
    // Retrying without a fix fails again: attempt 2.
    expect((await p.api.post(`/vendor-payments/${bill.id}/retry`)).body).toEqual({ bill_id: bill.id });
    let { payments, bill: b } = await payment(bill.id);
    expect(payments.map((x) => [x.attempt_number, x.status])).toEqual([[1, 'failed'], [2, 'ready']]);
    expect(payments[1].payment_speed).toBe('instant');
    expect(b.status).toBe('failed');
    expect((await p.api.post(`/vendor-payments/${bill.id}/retry`)).status).toBe(409);
    await p.advance(660);
    ({ payments } = await payment(bill.id));
    expect(payments.map((x) => x.status)).toEqual(['failed', 'failed']);
    // The vendor fixes its account; attempt 3 succeeds and the bill is paid.
    await p.api.post(`/vendors/${v.id}/bank-account`, bankAccount(GOOD_ACCOUNT)).expect(200);
    await p.api.post(`/vendor-payments/${bill.id}/retry`).expect(200);
    await p.advance(600);
    expect((await payment(bill.id)).bill.status).toBe('processing');
    await p.advance(60);
    ({ payments, bill: b } = await payment(bill.id));
    expect(payments.map((x) => [x.attempt_number, x.status])).toEqual([[1, 'failed'], [2, 'failed'], [3, 'succeeded']]);
    expect(b.status).toBe('paid');
    expect(b.status_history.map((e: { status: string }) => e.status)).toEqual(['needs_approval', 'processing', 'failed', 'processing', 'failed', 'processing', 'paid']);
  });

  it('retry is refused with 409 when nothing failed, 404 for unknown bills', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    expect((await p.api.post(`/vendor-payments/${bill.id}/retry`)).status).toBe(409);
    await p.pay(bill.id);
    expect((await p.api.post(`/vendor-payments/${bill.id}/retry`)).status).toBe(409);
    await p.advance(660);
    expect((await p.api.post(`/vendor-payments/${bill.id}/retry`)).status).toBe(409);
    expect((await p.api.post('/vendor-payments/bill_nope/retry')).status).toBe(404);
    expect((await payment(bill.id)).payments).toHaveLength(1);
  });

  it('the control plane fails a payment not yet finished; the bill becomes failed; retry follows', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    const id = await p.pay(bill.id, 'standard');
    const failed = await p.sb.http.post(`/_sandbox/vendor-payments/${id}/fail`).send({ failure_reason: 'insufficient_funds' });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ id, status: 'failed', failure_reason: 'insufficient_funds' });
    expect((await payment(bill.id)).bill).toMatchObject({ status: 'failed', last_status: { reason: 'insufficient_funds' } });
    expect((await p.sb.http.post(`/_sandbox/vendor-payments/${id}/fail`).send({})).status).toBe(409);
    expect((await p.sb.http.post('/_sandbox/vendor-payments/vp_nope/fail').send({})).status).toBe(404);
    await p.api.post(`/vendor-payments/${bill.id}/retry`).expect(200);
    const second = (await payment(bill.id)).last;
    await p.advance(600);
    const processing = await p.sb.http.post(`/_sandbox/vendor-payments/${second.id}/fail`).send({});
    expect(processing.body).toMatchObject({ status: 'failed', failure_reason: 'bank_return', attempt_number: 2 });
    expect((await payment(bill.id)).bill.status).toBe('failed');
    await p.advance(4 * DAY);
    expect((await payment(bill.id)).last.status).toBe('failed');
  });
});

describe('hold and release', () => {
  it('a vendor without a bank account holds the payment until one is added', async () => {
    const v = await p.vendor(null);
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    await p.pay(bill.id);
    expect((await payment(bill.id)).last).toMatchObject({ status: 'hold', hold_reason: 'missing_bank_account', payment_method_id: null });
    await p.advance(DAY);
    expect((await payment(bill.id)).last.status).toBe('hold');
    const bank = await p.api.post(`/vendors/${v.id}/bank-account`, bankAccount());
    expect((await payment(bill.id)).last).toMatchObject({ status: 'ready', hold_reason: null, payment_method_id: bank.body.payment_method_id });
    await p.advance(660);
    expect((await payment(bill.id)).bill.status).toBe('paid');
  });

  it('a payment for a bill of an inactive vendor starts on hold and goes out once the vendor is reactivated', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    await p.api.post(`/vendors/${v.id}/deactivate`).expect(200);
    await p.pay(bill.id, 'instant');
    expect((await payment(bill.id)).last).toMatchObject({ status: 'hold', hold_reason: 'vendor_inactive' });
    await p.advance(DAY);
    expect((await payment(bill.id)).bill.status).toBe('needs_approval');
    await p.api.post(`/vendors/${v.id}/reactivate`).expect(200, { vendor_id: v.id, affected_bill_count: 1 });
    await p.advance(660);
    expect((await payment(bill.id)).bill.status).toBe('paid');
  });

  it('a vendor data request submitted with a bank account releases held payments', async () => {
    const v = await p.vendor(null);
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    await p.pay(bill.id);
    const { body: { id } } = await p.api.post(`/vendors/${v.id}/data-request`);
    await p.sb.http.post(`/_sandbox/vendors/${v.id}/data-requests/${id}/submit`).send({ bank_account: bankAccount() }).expect(200);
    expect((await payment(bill.id)).last.status).toBe('ready');
  });

  it('deactivation counts open bills and holds their unsent payments; reactivation releases them', async () => {
    const v = await p.vendor();
    const other = await p.vendor();
    const waiting = await p.bill(v.id, { status: 'needs_approval' });
    await p.bill(v.id);
    const gone = await p.bill(v.id);
    await p.api.delete(`/bills/${gone.id}`).expect(200);
    await p.bill(other.id);
    const today = await p.clockToday();
    await p.pay(waiting.id);
    await p.api.post(`/bills/${waiting.id}/pay-date`, { pay_date: addDays(today, 1) }).expect(200);
    const off = await p.api.post(`/vendors/${v.id}/deactivate`);
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ vendor_id: v.id, affected_bill_count: 2 });
    expect((await p.api.get(`/vendors/${v.id}`)).body.is_active).toBe(false);
    expect((await payment(waiting.id)).last).toMatchObject({ status: 'hold', hold_reason: 'vendor_inactive' });
    await p.advance(2 * DAY);
    expect((await payment(waiting.id)).last.status).toBe('hold');
    const again = await p.api.post(`/vendors/${v.id}/deactivate`);
    expect(again.status).toBe(422);
    expect(again.body.code).toBe('invalid_state');
    const on = await p.api.post(`/vendors/${v.id}/reactivate`);
    expect(on.body).toEqual({ vendor_id: v.id, affected_bill_count: 2 });
    // The pay date has passed: released straight to ready.
    expect((await payment(waiting.id)).last).toMatchObject({ status: 'ready', hold_reason: null });
    expect((await p.api.post(`/vendors/${v.id}/reactivate`)).status).toBe(422);
    expect((await p.api.post('/vendors/ven_nope/deactivate')).status).toBe(404);
  });

  it('deactivation is refused with 422 while a payment of the vendor is processing', async () => {
    const bill = await p.billIn('processing');
    const res = await p.api.post(`/vendors/${bill.vendor_id}/deactivate`);
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('processing');
    expect((await p.api.get(`/vendors/${bill.vendor_id}`)).body.is_active).toBe(true);
    await p.advance(60);
    expect((await p.api.post(`/vendors/${bill.vendor_id}/deactivate`)).body.affected_bill_count).toBe(0);
  });
});

describe('initiating payments', () => {
  it('replays the same idempotency_key and items without paying twice; other items are 409', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: await p.clockToday() }).expect(200);
    const body = { idempotency_key: 'pay-run-1', items: [{ bill_id: bill.id, payment_speed: 'standard' }] };
    const first = await p.api.post('/vendor-payments', body);
    const replay = await p.api.post('/vendor-payments', body);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect((await payment(bill.id)).payments).toHaveLength(1);
    const conflict = await p.api.post('/vendor-payments', { ...body, items: [{ bill_id: bill.id, payment_speed: 'instant' }] });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: 'idempotency_key_reused', validation_errors: { idempotency_key: expect.any(String) } });
    expect((await payment(bill.id)).payments).toHaveLength(1);
    // A new key for the same bill is a new request: refused per item, a payment is already in progress.
    const second = await p.api.post('/vendor-payments', { ...body, idempotency_key: 'pay-run-2' });
    expect(second.body.results[0]).toMatchObject({ success: false, payment_id: null, error_reason: expect.stringContaining('in progress') });
  });

  it.each(['__proto__', 'constructor', 'toString'])('treats the key %s as a plain key: remembered, replayed, and 409 with other items', async (key) => {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: await p.clockToday() }).expect(200);
    const body = { idempotency_key: key, items: [{ bill_id: bill.id }] };
    const first = await p.api.post('/vendor-payments', body).expect(200);
    expect(first.body.results[0]).toMatchObject({ success: true, payment_id: expect.any(String) });
    expect((await p.api.post('/vendor-payments', body).expect(200)).body).toEqual(first.body);
    expect((await payment(bill.id)).payments).toHaveLength(1);
    const other = await p.bill(v.id, { status: 'needs_approval' });
    await p.api.post(`/bills/${other.id}/pay-date`, { pay_date: await p.clockToday() }).expect(200);
    expect((await p.api.post('/vendor-payments', { idempotency_key: key, items: [{ bill_id: other.id }] })).status).toBe(409);
    expect((await payment(other.id)).payments).toHaveLength(0);
  });

  it('answers 422 for the whole request when a bill has no pay_date; nothing is paid and the key stays free', async () => {
    const v = await p.vendor();
    const dated = await p.bill(v.id, { status: 'needs_approval' });
    const undated = await p.bill(v.id, { status: 'needs_approval' });
    await p.api.post(`/bills/${dated.id}/pay-date`, { pay_date: await p.clockToday() }).expect(200);
    const body = { idempotency_key: 'k', items: [{ bill_id: dated.id }, { bill_id: undated.id }] };
    const res = await p.api.post('/vendor-payments', body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'missing_pay_date', validation_errors: { 'items[1].bill_id': expect.stringContaining(undated.id) } });
    expect((await payment(dated.id)).payments).toEqual([]);
    await p.api.post(`/bills/${undated.id}/pay-date`, { pay_date: await p.clockToday() }).expect(200);
    const ok = await p.api.post('/vendor-payments', body);
    expect(ok.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, true]);
  });

  it('answers per item: unknown bills, drafts, repeated bills and foreign payment methods fail alone', async () => {
    const v = await p.vendor();
    const good = await p.bill(v.id, { status: 'needs_approval' });
    const draft = await p.bill(v.id);
    const wrongMethod = await p.bill(v.id, { status: 'needs_approval' });
    for (const b of [good, draft, wrongMethod]) await p.api.post(`/bills/${b.id}/pay-date`, { pay_date: await p.clockToday() }).expect(200);
    const res = await p.api.post('/vendor-payments', {
      idempotency_key: 'mixed',
      items: [{ bill_id: good.id }, { bill_id: 'bill_nope' }, { bill_id: draft.id }, { bill_id: good.id }, { bill_id: wrongMethod.id, payment_method_id: 'pm_other' }],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { success: boolean; error_reason: string | null }) => [r.success, r.error_reason === null])).toEqual([[true, true], [false, false], [false, false], [false, false], [false, false]]);
    expect(res.body.results[1].error_reason).toBe('Bill not found');
    expect(res.body.results[2].error_reason).toContain('draft');
    expect(res.body.results[3].error_reason).toContain('more than once');
    expect(res.body.results[4].error_reason).toContain('pm_other');
    expect((await payment(draft.id)).payments).toEqual([]);
    expect((await payment(wrongMethod.id)).payments).toEqual([]);
    expect((await payment(good.id)).payments).toHaveLength(1);
  });

  it('refuses per item a bill whose amount is 0 (an unread OCR upload)', async () => {
    const scan = await p.api.post('/bills/upload', { content: Buffer.from('%PDF-1.4 unreadable').toString('base64'), content_type: 'application/pdf', filename: 'scan.pdf' });
    const id = scan.body.bill_id;
    await p.api.post(`/bills/${id}/submit`).expect(200);
    await p.api.post(`/bills/${id}/pay-date`, { pay_date: await p.clockToday() }).expect(200);
    const res = await p.api.post('/vendor-payments', { idempotency_key: 'zero', items: [{ bill_id: id }] });
    expect(res.body.results[0]).toMatchObject({ success: false, error_reason: expect.stringContaining('amount is 0') });
    await p.api.patch(`/bills/${id}`, { amount: 12.5 }).expect(200);
    const again = await p.api.post('/vendor-payments', { idempotency_key: 'zero-2', items: [{ bill_id: id }] });
    expect(again.body.results[0].success).toBe(true);
    // The "Unknown vendor" has no bank account: the payment waits on hold for one.
    expect((await payment(id)).last).toMatchObject({ status: 'hold', hold_reason: 'missing_bank_account' });
  });

  it.each([
    [{ items: [{ bill_id: 'b' }] }, 'idempotency_key'],
    [{ idempotency_key: 'k', items: [] }, 'items'],
    [{ idempotency_key: 'k', items: [{ bill_id: 'b', payment_speed: 'warp' }] }, 'items[0].payment_speed'],
    [{ idempotency_key: 'k', items: Array.from({ length: 101 }, (_, i) => ({ bill_id: `b${i}` })) }, 'items'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const res = await p.api.post('/vendor-payments', body);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty([field]);
  });
});

describe('cancel', () => {
  it('cancels a payment before processing and refuses one that is processing', async () => {
    const v = await p.vendor();
    const early = await p.bill(v.id, { status: 'needs_approval' });
    const late = await p.bill(v.id, { status: 'needs_approval' });
    const earlyId = await p.pay(early.id, 'standard');
    const lateId = await p.pay(late.id, 'standard');
    const res = await p.api.post('/vendor-payments/cancel', { bill_id: early.id, payment_id: earlyId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ payment_id: earlyId, status: 'canceled' });
    expect((await payment(early.id)).last.status).toBe('canceled');
    await p.advance(600);
    const refused = await p.api.post('/vendor-payments/cancel', { bill_id: late.id, payment_id: lateId });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('processing');
    await p.advance(3 * DAY);
    // The canceled payment was never sent; the bill can be paid again (attempt 2).
    expect((await payment(early.id)).bill.status).toBe('needs_approval');
    expect((await payment(late.id)).bill.status).toBe('paid');
    const again = await p.api.post('/vendor-payments', { idempotency_key: 'again', items: [{ bill_id: early.id }] });
    expect(again.body.results[0].success).toBe(true);
    expect((await payment(early.id)).last.attempt_number).toBe(2);
  });

  it('answers 404 for unknown bills or payments and for a payment of another bill', async () => {
    const v = await p.vendor();
    const a = await p.bill(v.id, { status: 'needs_approval' });
    const b = await p.bill(v.id, { status: 'needs_approval' });
    const id = await p.pay(a.id);
    expect((await p.api.post('/vendor-payments/cancel', { bill_id: b.id, payment_id: id })).status).toBe(404);
    expect((await p.api.post('/vendor-payments/cancel', { bill_id: 'bill_x', payment_id: id })).status).toBe(404);
    expect((await p.api.post('/vendor-payments/cancel', { bill_id: a.id, payment_id: 'vp_x' })).status).toBe(404);
    expect((await p.api.post('/vendor-payments/cancel', { bill_id: a.id })).status).toBe(400);
    expect((await payment(a.id)).last.status).toBe('ready');
  });

  it('bulk-cancel answers per item', async () => {
    const v = await p.vendor();
    const a = await p.bill(v.id, { status: 'needs_approval' });
    const b = await p.bill(v.id, { status: 'needs_approval' });
    const aId = await p.pay(a.id);
    const bId = await p.pay(b.id);
    await p.api.post('/vendor-payments/cancel', { bill_id: b.id, payment_id: bId }).expect(200);
    const res = await p.api.post('/vendor-payments/bulk-cancel', { items: [{ bill_id: a.id, payment_id: aId }, { bill_id: b.id, payment_id: bId }, { bill_id: 'bill_x', payment_id: 'vp_x' }] });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      { bill_id: a.id, success: true, error_reason: null },
      { bill_id: b.id, success: false, error_reason: expect.stringContaining('canceled') },
      { bill_id: 'bill_x', success: false, error_reason: expect.stringContaining('bill_x') },
    ]);
    expect((await payment(a.id)).last.status).toBe('canceled');
    const many = await p.api.post('/vendor-payments/bulk-cancel', { items: Array.from({ length: 101 }, () => ({ bill_id: a.id, payment_id: aId })) });
    expect(many.status).toBe(400);
  });

  it('deleting or rejecting a bill cancels its unsent payment', async () => {
    const v = await p.vendor();
    const a = await p.bill(v.id, { status: 'needs_approval' });
    const b = await p.bill(v.id, { status: 'needs_approval' });
    await p.pay(a.id);
    await p.pay(b.id);
    await p.api.delete(`/bills/${a.id}`).expect(200);
    await p.api.post(`/bills/${b.id}/reject`, { reason: 'not ours' }).expect(200);
    expect((await payment(a.id)).last.status).toBe('canceled');
    expect((await payment(b.id)).last.status).toBe('canceled');
    await p.advance(DAY);
    expect((await payment(b.id)).bill.status).toBe('draft');
  });
});

// Every (state, event) pair of the vendor payment table: allowed pairs move as the table says,
// the rest are refused with 409 naming the current state and the allowed events.
const EXPECTED_PAYMENT_TABLE = {
  hold: { hold: 'hold', release: 'waiting_pay_date', reschedule: 'hold', fail: 'failed', cancel: 'canceled' },
  waiting_pay_date: { hold: 'hold', reschedule: 'waiting_pay_date', due: 'ready', fail: 'failed', cancel: 'canceled' },
  ready: { hold: 'hold', reschedule: 'waiting_pay_date', send: 'processing', fail: 'failed', cancel: 'canceled' },
  processing: { settle: 'succeeded', fail: 'failed' },
  succeeded: {},
  failed: {},
  canceled: {},
};

describe('the vendor payment state table', () => {
  it('is the documented table', () => {
    expect(vendorPaymentMachine.table).toEqual(EXPECTED_PAYMENT_TABLE);
  });

  const pairs = vendorPaymentMachine.states.flatMap((s) => vendorPaymentMachine.events.map((e) => [s, e] as const));
  it.each(pairs)('%s + %s', (state, event) => {
    const next = (EXPECTED_PAYMENT_TABLE[state] as Record<string, string>)[event];
    if (next) {
      expect(transition(vendorPaymentMachine, state, event)).toBe(next);
    } else {
      let error: unknown;
      try { transition(vendorPaymentMachine, state, event); } catch (e) { error = e; }
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(409);
      expect((error as ApiError).message).toContain(`status is ${state}`);
    }
  });

  // Over HTTP: from each reachable state, the API-triggered events (cancel, fail, hold by deactivation).
  type Reach = () => Promise<{ bill: string; payment: string; vendor: string }>;
  const reach: Record<string, Reach> = {
    hold: async () => { const v = await p.vendor(null); const b = await p.bill(v.id, { status: 'needs_approval' }); return { bill: b.id, payment: await p.pay(b.id), vendor: v.id }; },
    waiting_pay_date: async () => { const v = await p.vendor(); const b = await p.bill(v.id, { status: 'needs_approval' }); const id = await p.pay(b.id); await p.api.post(`/bills/${b.id}/pay-date`, { pay_date: '2099-01-01' }); return { bill: b.id, payment: id, vendor: v.id }; },
    ready: async () => { const v = await p.vendor(); const b = await p.bill(v.id, { status: 'needs_approval' }); return { bill: b.id, payment: await p.pay(b.id), vendor: v.id }; },
    processing: async () => { const b = await p.billIn('processing'); return { bill: b.id, payment: (await payment(b.id)).last.id, vendor: b.vendor_id }; },
    succeeded: async () => { const b = await p.billIn('paid'); return { bill: b.id, payment: (await payment(b.id)).last.id, vendor: b.vendor_id }; },
    failed: async () => { const b = await p.billIn('failed'); return { bill: b.id, payment: (await payment(b.id)).last.id, vendor: b.vendor_id }; },
    canceled: async () => { const r = await reach.ready(); await p.api.post('/vendor-payments/cancel', { bill_id: r.bill, payment_id: r.payment }); return r; },
  };
  const fire: Record<string, (r: { bill: string; payment: string; vendor: string }) => Promise<number>> = {
    cancel: async (r) => (await p.api.post('/vendor-payments/cancel', { bill_id: r.bill, payment_id: r.payment })).status,
    fail: async (r) => (await p.sb.http.post(`/_sandbox/vendor-payments/${r.payment}/fail`).send({})).status,
  };
  it.each(Object.keys(reach))('over HTTP from %s', async (state) => {
    for (const [event, go] of Object.entries(fire)) {
      const r = await reach[state]();
      expect((await payment(r.bill)).last.status).toBe(state);
      const status = await go(r);
      const next = (EXPECTED_PAYMENT_TABLE[state as keyof typeof EXPECTED_PAYMENT_TABLE] as Record<string, string>)[event];
      expect([state, event, status]).toEqual([state, event, next ? 200 : 409]);
      expect([state, event, (await payment(r.bill)).last.status]).toEqual([state, event, next ?? state]);
    }
  });
});
