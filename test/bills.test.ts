// Bills end to end: create, read, patch (line items append/replace), the state table walked pair by
// pair over HTTP, status history, filters, include_deleted, bulk operations and pay dates.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { billMachine } from '../src/domain/bills/bills.js';
import { transition } from '../src/domain/machine.js';
import { ApiError } from '../src/errors.js';
import { Payables } from './payables-helpers.js';

let p: Payables;

beforeEach(async () => {
  p = await Payables.start();
});

const LINE = { name: 'Paper', description: 'A4, 10 boxes', quantity: 10, unit_price: 12.5, unit_type: 'box', tax: 0 };

describe('bills', () => {
  it('creates a draft bill with sequenced line items and reads it back with its history', async () => {
    const v = await p.vendor();
    const res = await p.api.post('/bills', { vendor_id: v.id, amount: 250, number: 'INV-7', description: 'Paper', issue_date: '2026-03-01', due_date: '2026-03-31', line_items: [LINE, { name: 'Toner', quantity: 1, unit_price: 125, total: 125, expense_account_id: 'gl_6100' }] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ vendor_id: v.id, amount: 250, number: 'INV-7', status: 'draft', source: 'manual', pay_date: null, vendor_payments: [] });
    expect(res.body.line_items).toEqual([
      { sequence: 1, name: 'Paper', description: 'A4, 10 boxes', quantity: 10, unit_price: 12.5, unit_type: 'box', tax: 0, total: 125, expense_account_id: null },
      { sequence: 2, name: 'Toner', description: null, quantity: 1, unit_price: 125, unit_type: null, tax: null, total: 125, expense_account_id: 'gl_6100' },
    ]);
    expect(res.body.last_status).toEqual({ created_at: res.body.created_at, status: 'draft', reason: null, user_id: 'sandbox_client_id' });
    expect(res.body).not.toHaveProperty('status_history');
    const got = await p.api.get(`/bills/${res.body.id}`);
    expect(got.body.status_history).toEqual([res.body.last_status]);
    expect((await p.api.get('/bills/bill_nope')).status).toBe(404);
  });

  it('creates straight into needs_approval when status says so', async () => {
    const v = await p.vendor();
    const res = await p.api.post('/bills', { vendor_id: v.id, amount: 10, status: 'needs_approval' });
    expect(res.body.status).toBe('needs_approval');
    expect((await p.api.get(`/bills/${res.body.id}`)).body.status_history.map((e: { status: string }) => e.status)).toEqual(['needs_approval']);
  });

  it.each([
    [{ amount: 10 }, 400, 'vendor_id'],
    [{ vendor_id: 'V', amount: -5 }, 400, 'amount'],
    [{ vendor_id: 'V', amount: 0 }, 400, 'amount'],
    [{ vendor_id: 'V', amount: 1.234 }, 400, 'amount'],
    [{ vendor_id: 'V', amount: 10, due_date: '2026-02-30' }, 400, 'due_date'],
    [{ vendor_id: 'V', amount: 10, issue_date: '2026-03-10', due_date: '2026-03-01' }, 400, 'due_date'],
    [{ vendor_id: 'V', amount: 10, status: 'paid' }, 400, 'status'],
    [{ vendor_id: 'V', amount: 10, line_items: [{ name: 'x', sequence: 1 }] }, 400, 'line_items[0].sequence'],
    [{ vendor_id: 'V', amount: 10, line_items: [{ name: 'x', quantity: -1 }] }, 400, 'line_items[0].quantity'],
    [{ vendor_id: 'ven_unknown', amount: 10 }, 422, 'vendor_id'],
  ])('refuses %j with %i naming %s and stores nothing', async (body, status, field) => {
    const v = await p.vendor();
    const res = await p.api.post('/bills', JSON.parse(JSON.stringify(body).replace('"V"', JSON.stringify(v.id))));
    expect(res.status).toBe(status);
    expect(res.body.validation_errors).toHaveProperty([field]);
    expect((await p.api.get('/bills?include_deleted=true')).body.data).toEqual([]);
  });

  it('patches fields and line items: append by default, replace when asked', async () => {
    const v = await p.vendor();
    const v2 = await p.vendor();
    const bill = await p.bill(v.id, { line_items: [LINE] });
    const appended = await p.api.patch(`/bills/${bill.id}`, { amount: 300, description: 'More', line_items: { items: [{ name: 'Pens', quantity: 2, unit_price: 1.5 }] } });
    expect(appended.status).toBe(200);
    expect(appended.body).toMatchObject({ amount: 300, description: 'More' });
    expect(appended.body.line_items.map((l: { sequence: number; name: string; total: number }) => [l.sequence, l.name, l.total])).toEqual([[1, 'Paper', 125], [2, 'Pens', 3]]);
    const replaced = await p.api.patch(`/bills/${bill.id}`, { vendor_id: v2.id, line_items: { items: [{ name: 'Desk', total: 300 }], replace: true } });
    expect(replaced.body.vendor_id).toBe(v2.id);
    expect(replaced.body.line_items).toEqual([expect.objectContaining({ sequence: 1, name: 'Desk', total: 300 })]);
    expect((await p.api.get(`/bills?vendor_id=${v2.id}`)).body.data.map((b: { id: string }) => b.id)).toEqual([bill.id]);
    expect((await p.api.get(`/bills?vendor_id=${v.id}`)).body.data).toEqual([]);
    const bad = await p.api.patch(`/bills/${bill.id}`, { line_items: { replace: true } });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty(['line_items.items']);
    const unknown = await p.api.patch(`/bills/${bill.id}`, { vendor_id: 'ven_x' });
    expect(unknown.status).toBe(422);
    expect((await p.api.get(`/bills/${bill.id}`)).body).toMatchObject({ vendor_id: v2.id, amount: 300 });
    expect((await p.api.patch('/bills/bill_nope', { amount: 1 })).status).toBe(404);
  });

  it('rejects with a reason kept in the status history, with the caller as user_id', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id);
    await p.api.post(`/bills/${bill.id}/submit`).expect(200, { bill_id: bill.id, success: true });
    const rejected = await p.api.post(`/bills/${bill.id}/reject`, { reason: 'Wrong amount' });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toEqual({ bill_id: bill.id });
    const got = (await p.api.get(`/bills/${bill.id}`)).body;
    expect(got.status).toBe('draft');
    expect(got.last_status).toMatchObject({ status: 'draft', reason: 'Wrong amount', user_id: 'sandbox_client_id' });
    expect(got.status_history.map((e: { status: string }) => e.status)).toEqual(['draft', 'needs_approval', 'draft']);
    const again = await p.api.post(`/bills/${bill.id}/reject`, { reason: 'x' });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('draft');
    expect((await p.api.post(`/bills/${bill.id}/reject`, { reason: 5 })).status).toBe(400);
  });

  it('soft deletes: hidden from lists unless include_deleted; status=deleted lists them', async () => {
    const v = await p.vendor();
    const kept = await p.bill(v.id);
    const gone = await p.bill(v.id);
    await p.api.delete(`/bills/${gone.id}`).expect(200, { bill_id: gone.id, success: true });
    const ids = async (q: string) => (await p.api.get(`/bills${q}`)).body.data.map((b: { id: string }) => b.id);
    expect(await ids('')).toEqual([kept.id]);
    expect(await ids('?include_deleted=true')).toEqual([gone.id, kept.id]);
    expect(await ids('?status=deleted')).toEqual([gone.id]);
    expect((await p.api.get(`/bills/${gone.id}`)).body.status).toBe('deleted');
    expect((await p.api.delete('/bills/bill_nope')).status).toBe(404);
  });

  it('filters by vendor_id, status, bill_number and source', async () => {
    const a = await p.vendor();
    const b = await p.vendor();
    const b1 = await p.bill(a.id, { number: 'N-1' });
    const b2 = await p.bill(b.id, { number: 'N-2', status: 'needs_approval' });
    const synced = await p.sb.http.post('/_sandbox/accounting/sync').send({ bills: [{ vendor_id: b.id, amount: 5, number: 'N-3' }] });
    expect(synced.status).toBe(201);
    expect(synced.body.bills[0]).toMatchObject({ source: 'accounting_integration', status: 'draft' });
    const ids = async (q: string) => (await p.api.get(`/bills?${q}`)).body.data.map((x: { id: string }) => x.id);
    expect(await ids(`vendor_id=${a.id}`)).toEqual([b1.id]);
    expect(await ids('status=needs_approval')).toEqual([b2.id]);
    expect(await ids('bill_number=N-1')).toEqual([b1.id]);
    expect(await ids('source=accounting_integration')).toEqual([synced.body.bills[0].id]);
    expect(await ids(`vendor_id=${b.id}&source=manual`)).toEqual([b2.id]);
    expect((await p.api.get('/bills?status=open')).status).toBe(400);
    // The status filter walks a status index: it must follow bills as they move.
    await p.api.post(`/bills/${b1.id}/submit`).expect(200);
    expect(await ids('status=needs_approval')).toEqual([b2.id, b1.id]);
    expect(await ids('status=draft')).toEqual([synced.body.bills[0].id]);
    await p.api.post(`/bills/${b2.id}/reject`, { reason: 'wrong amount' }).expect(200);
    expect(await ids('status=needs_approval')).toEqual([b1.id]);
    expect(await ids('status=draft')).toEqual([synced.body.bills[0].id, b2.id]);
    const page = await p.api.get('/bills?limit=2');
    expect(page.body.data).toHaveLength(2);
    expect(page.body.has_next_page).toBe(true);
    const next = await p.api.get(`/bills?limit=2&after=${page.body.end_cursor}`);
    expect(next.body.data.map((x: { id: string }) => x.id)).toEqual([b1.id]);
  });

  it('refuses a sync batch with an unknown vendor and creates nothing', async () => {
    const v = await p.vendor();
    const res = await p.sb.http.post('/_sandbox/accounting/sync').send({ bills: [{ vendor_id: v.id, amount: 5 }, { vendor_id: 'ven_nope', amount: 5 }] });
    expect(res.status).toBe(422);
    expect(res.body.validation_errors).toHaveProperty(['bills[1].vendor_id']);
    expect((await p.api.get('/bills')).body.data).toEqual([]);
  });
});

describe('bulk operations', () => {
  it('bulk-submit answers one result per id, unknown and non-draft ids failing with a reason', async () => {
    const v = await p.vendor();
    const draft = await p.bill(v.id);
    const waiting = await p.bill(v.id, { status: 'needs_approval' });
    const res = await p.api.post('/bills/bulk-submit', { bill_ids: [draft.id, 'bill_unknown', waiting.id, draft.id] });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      { bill_id: draft.id, success: true, error_reason: null },
      { bill_id: 'bill_unknown', success: false, error_reason: 'Bill not found' },
      // Only moves a partner can ask for are named (not the sandbox's own process, settle, fail).
      { bill_id: waiting.id, success: false, error_reason: 'Cannot submit a bill whose status is needs_approval; allowed: reject, delete, edit, set_pay_date, pay.' },
      { bill_id: draft.id, success: false, error_reason: expect.stringContaining('needs_approval') },
    ]);
    expect(await p.status(draft.id)).toBe('needs_approval');
    expect((await p.api.get(`/bills/${waiting.id}`)).body.status_history).toHaveLength(1);
  });

  it('bulk-delete deletes what it may and refuses processing and paid bills per item', async () => {
    const processing = await p.billIn('processing');
    const v = await p.vendor();
    const draft = await p.bill(v.id);
    const res = await p.api.post('/bills/bulk-delete', { bill_ids: [draft.id, processing.id, 'bill_x'] });
    expect(res.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, false]);
    expect(res.body.results[1].error_reason).toContain('processing');
    expect(await p.status(draft.id)).toBe('deleted');
    expect(await p.status(processing.id)).toBe('processing');
  });

  it.each(['/bills/bulk-submit', '/bills/bulk-delete'])('%s refuses more than 100 ids, and none, with 400 changing nothing', async (path) => {
    const v = await p.vendor();
    const bill = await p.bill(v.id);
    const many = await p.api.post(path, { bill_ids: [bill.id, ...Array.from({ length: 100 }, (_, i) => `bill_${i}`)] });
    expect(many.status).toBe(400);
    expect(many.body.validation_errors).toHaveProperty('bill_ids');
    expect(await p.status(bill.id)).toBe('draft');
    const none = await p.api.post(path, { bill_ids: [] });
    expect(none.status).toBe(400);
    const exactly = await p.api.post(path, { bill_ids: [bill.id, ...Array.from({ length: 99 }, (_, i) => `bill_${i}`)] });
    expect(exactly.status).toBe(200);
    expect(exactly.body.results).toHaveLength(100);
  });
});

describe('pay date', () => {
  it('sets a pay date of today or later on the account clock', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id);
    const today = await p.clockToday();
    expect((await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: today })).body).toEqual({ bill_id: bill.id });
    expect((await p.api.get(`/bills/${bill.id}`)).body.pay_date).toBe(today);
    await p.advance(3 * 86400);
    const past = await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: today });
    expect(past.status).toBe(400);
    expect(past.body.validation_errors).toHaveProperty('pay_date');
    for (const bad of ['2026-13-01', '03/15/2026', '2026-03-15T00:00:00Z', '']) {
      const res = await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: bad });
      expect(res.status).toBe(400);
      expect(res.body.validation_errors).toHaveProperty('pay_date');
    }
    expect((await p.api.post(`/bills/${bill.id}/pay-date`, {})).status).toBe(400);
    expect((await p.api.get(`/bills/${bill.id}`)).body.pay_date).toBe(today);
    expect((await p.api.post('/bills/bill_nope/pay-date', { pay_date: '2030-01-01' })).status).toBe(404);
  });

  it('answers 409 for a bill that cannot take a pay date, before looking at the date', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id);
    await p.api.delete(`/bills/${bill.id}`).expect(200);
    const res = await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: '2020-01-01' });
    expect(res.status).toBe(409);
    expect(res.body.validation_errors).toEqual({ status: 'is deleted' });
    expect((await p.api.get(`/bills/${bill.id}`)).body.pay_date).toBeNull();
  });
});

// The spec's table plus the moves it leaves open; any change to the table must change this too.
const EXPECTED_TABLE = {
  draft: { submit: 'needs_approval', delete: 'deleted', edit: 'draft', set_pay_date: 'draft' },
  needs_approval: { reject: 'draft', delete: 'deleted', edit: 'needs_approval', set_pay_date: 'needs_approval', pay: 'needs_approval', process: 'processing', fail: 'failed' },
  processing: { settle: 'paid', fail: 'failed' },
  paid: {},
  deleted: { delete: 'deleted' },
  failed: { delete: 'deleted', edit: 'failed', retry: 'failed', process: 'processing', fail: 'failed' },
};

describe('the bill state table', () => {
  it('is the documented table', () => {
    expect(billMachine.table).toEqual(EXPECTED_TABLE);
  });

  // Every pair, including the payment-driven events (process, settle, fail) that the vendor payment
  // tests drive over HTTP: allowed pairs move as the table says, the rest are 409 naming the state.
  const pairs = billMachine.states.flatMap((s) => billMachine.events.map((e) => [s, e] as const));
  it.each(pairs)('%s + %s', (state, event) => {
    const next = (EXPECTED_TABLE[state] as Record<string, string>)[event];
    if (next) {
      expect(transition(billMachine, state, event)).toBe(next);
    } else {
      let error: unknown;
      try { transition(billMachine, state, event); } catch (e) { error = e; }
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(409);
      expect((error as ApiError).code).toBe('invalid_state');
      expect((error as ApiError).message).toContain(`status is ${state}`);
    }
  });

  type Fire = (p: Payables, bill: { id: string; vendor_id: string }) => Promise<{ status: number; refused: boolean; body: any }>;
  const http = (res: { status: number; body: any }) => ({ status: res.status, refused: res.status === 409, body: res.body });
  const fire: Record<string, Fire> = {
    submit: async (p, b) => http(await p.api.post(`/bills/${b.id}/submit`)),
    reject: async (p, b) => http(await p.api.post(`/bills/${b.id}/reject`, { reason: 'walk' })),
    delete: async (p, b) => http(await p.api.delete(`/bills/${b.id}`)),
    edit: async (p, b) => http(await p.api.patch(`/bills/${b.id}`, { description: 'edited' })),
    set_pay_date: async (p, b) => http(await p.api.post(`/bills/${b.id}/pay-date`, { pay_date: '2099-01-01' })),
    retry: async (p, b) => http(await p.api.post(`/vendor-payments/${b.id}/retry`)),
    pay: async (p, b) => {
      // A bill without pay_date is a 422 for the whole request; give those one where the table allows it.
      const res = await p.api.post('/vendor-payments', { idempotency_key: `walk-${b.id}`, items: [{ bill_id: b.id }] });
      if (res.status === 422) return { status: 422, refused: true, body: res.body };
      return { status: res.status, refused: !res.body.results[0].success, body: res.body };
    },
  };
  // process, settle and fail are driven by the bill's vendor payment: the vendor-payment tests walk them.
  const states = Object.keys(EXPECTED_TABLE) as Array<keyof typeof EXPECTED_TABLE>;

  it.each(states)('walks every API event from %s', async (state) => {
    for (const event of Object.keys(fire)) {
      const bill = await p.billIn(state);
      if (event === 'pay' && (state === 'draft' || state === 'needs_approval')) {
        await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: await p.clockToday() }).expect(200);
      }
      const before = (await p.api.get(`/bills/${bill.id}`)).body;
      const outcome = await fire[event](p, bill);
      const next = (EXPECTED_TABLE[state] as Record<string, string>)[event];
      const after = (await p.api.get(`/bills/${bill.id}`)).body;
      if (next) {
        expect([state, event, outcome.status, outcome.refused]).toEqual([state, event, 200, false]);
        expect([state, event, after.status]).toEqual([state, event, next]);
      } else {
        expect([state, event, outcome.refused]).toEqual([state, event, true]);
        if (outcome.status === 409) expect(outcome.body.code).toBe('invalid_state');
        expect([state, event, after.status, after.status_history.length]).toEqual([state, event, state, before.status_history.length]);
      }
    }
  });
});
