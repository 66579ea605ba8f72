// Owns the parity cases of payables: the bill state table (submit, reject, delete and their 409s),
// pay dates, bulk per-item results, vendor deactivate/reactivate and the masked bank account, and
// (only with --allow-money-movement) initiating and canceling a vendor payment.
import type { CaseContext, ParityCase } from '../case.js';
import type { Exchange } from '../client.js';
import { bill, dayAfter, sharedVendor, US_BANK, unknownIdCase, vendor } from './fixtures.js';

const BILL_TABLE = {
  submit: '| draft | POST /bills/{id}/submit or POST /bills/bulk-submit | | needs_approval | |',
  reject: '| needs_approval | POST /bills/{id}/reject | | draft | a reason string may be given |',
  delete: '| any state except processing and paid | DELETE /bills/{id} or POST /bills/bulk-delete | | deleted | soft delete; listed with include_deleted=true |',
  locked: '| processing or paid | delete or patch | | unchanged | responds 409 |',
  create: '| (none) | POST /bills with status needs_approval | optional at creation | needs_approval | skips draft |',
};
const CONFLICT_409 = '409 | bill operation refused because of the bill\'s state (delete or patch in processing or paid; submit, reject and pay-date conflicts)';
const BULK = 'Bulk operations return 200 with one result per bill; a failed item has success false and an error_reason.';

async function billStatus(t: CaseContext, id: string, expected: string): Promise<Exchange> {
  const read = t.status(await t.api.get(`/bills/${id}`), 200);
  t.check(read.body?.status === expected, `the bill is now ${expected} (got ${read.body?.status})`, read);
  return read;
}

async function draft(t: CaseContext, what: string, extra: Record<string, unknown> = {}) {
  return bill(t, (await sharedVendor(t)).id, what, extra);
}

type BulkResult = { bill_id: string; success: boolean; error_reason?: string };

export const payableCases: ParityCase[] = [
  {
    id: 'bills/create-draft',
    area: 'bills',
    title: 'a bill is created (201) as a manual draft with the fields it was given',
    rule: { section: 'Resources and fields > Bill', quote: '| status | enum | draft, needs_approval, processing, paid, deleted, failed |' },
    gaps: ['Bill create', 'Bill dates'],
    async run(t) {
      const owner = await sharedVendor(t);
      const made = t.status(await t.api.post('/bills', { vendor_id: owner.id, amount: 99.95, number: t.name('create'), description: t.name('create'), issue_date: '2026-01-05', due_date: '2026-02-04' }), 201);
      const body = made.body ?? {};
      t.check(body.status === 'draft' && body.source === 'manual', `the bill is a manual draft (got ${body.status}, ${body.source})`, made);
      t.check(body.vendor_id === owner.id && body.amount === 99.95 && body.number === t.name('create') && body.due_date === '2026-02-04', 'vendor_id, amount, number and due_date come back as sent', made);
    },
  },
  {
    id: 'bills/create-needs-approval',
    area: 'bills',
    title: 'a bill created with status needs_approval skips draft',
    rule: { section: 'States and transitions > Bill', quote: BILL_TABLE.create },
    async run(t) {
      const made = await draft(t, 'create-approval', { status: 'needs_approval' });
      t.check(made.status === 'needs_approval', `the bill is needs_approval (got ${made.status})`);
    },
  },
  {
    id: 'bills/submit-draft',
    area: 'bills',
    title: 'submitting a draft answers {bill_id, success} and moves it to needs_approval',
    rule: { section: 'States and transitions > Bill', quote: BILL_TABLE.submit },
    gaps: ['Status history'],
    async run(t) {
      const made = await draft(t, 'submit');
      const answer = t.status(await t.api.post(`/bills/${made.id}/submit`), 200);
      t.check(answer.body?.bill_id === made.id && answer.body?.success === true, 'the answer is {bill_id, success: true}', answer);
      const after = await billStatus(t, made.id, 'needs_approval');
      t.check(after.body.last_status?.status === 'needs_approval', 'last_status is the needs_approval entry', after);
    },
  },
  {
    id: 'bills/submit-not-draft-409',
    area: 'bills',
    title: 'submitting a bill that is already needs_approval is refused with 409 and changes nothing',
    rule: { section: 'Errors', quote: CONFLICT_409 },
    async run(t) {
      const made = await draft(t, 'submit-twice', { status: 'needs_approval' });
      t.error(await t.api.post(`/bills/${made.id}/submit`), [409]);
      await billStatus(t, made.id, 'needs_approval');
    },
  },
  {
    id: 'bills/reject-needs-approval',
    area: 'bills',
    title: 'rejecting a needs_approval bill with a reason answers {bill_id} and moves it back to draft',
    rule: { section: 'States and transitions > Bill', quote: BILL_TABLE.reject },
    gaps: ['Status history'],
    async run(t) {
      const made = await draft(t, 'reject', { status: 'needs_approval' });
      const reason = t.name('wrong amount');
      const answer = t.status(await t.api.post(`/bills/${made.id}/reject`, { reason }), 200);
      t.check(answer.body?.bill_id === made.id, 'the answer names the bill', answer);
      const after = await billStatus(t, made.id, 'draft');
      t.check(after.body.last_status?.reason === reason, 'last_status carries the reason', after);
    },
  },
  {
    id: 'bills/reject-draft-409',
    area: 'bills',
    title: 'rejecting a draft is refused with 409 and changes nothing',
    rule: { section: 'Errors', quote: CONFLICT_409 },
    async run(t) {
      const made = await draft(t, 'reject-draft');
      t.error(await t.api.post(`/bills/${made.id}/reject`, { reason: 'not ready' }), [409]);
      await billStatus(t, made.id, 'draft');
    },
  },
  {
    id: 'bills/delete-soft',
    area: 'bills',
    title: 'deleting a bill answers {bill_id, success}; it is then deleted and listed only with include_deleted=true',
    rule: { section: 'States and transitions > Bill', quote: BILL_TABLE.delete },
    async run(t) {
      const owner = await sharedVendor(t);
      const made = await draft(t, 'delete');
      const answer = t.status(await t.api.delete(`/bills/${made.id}`), 200);
      t.check(answer.body?.bill_id === made.id && answer.body?.success === true, 'the answer is {bill_id, success: true}', answer);
      await billStatus(t, made.id, 'deleted');
      const number = t.name('delete');
      const hidden = t.status(await t.api.get('/bills', { query: { vendor_id: owner.id, bill_number: number } }), 200);
      t.check(Array.isArray(hidden.body?.data) && !hidden.body.data.some((b: { id: string }) => b.id === made.id), 'the deleted bill is not listed by default', hidden);
      const shown = t.status(await t.api.get('/bills', { query: { vendor_id: owner.id, bill_number: number, include_deleted: true } }), 200);
      t.check(shown.body?.data?.some((b: { id: string }) => b.id === made.id), 'include_deleted=true lists it', shown);
    },
  },
  {
    id: 'bills/delete-needs-approval',
    area: 'bills',
    title: 'a needs_approval bill can be deleted too',
    rule: { section: 'States and transitions > Bill', quote: BILL_TABLE.delete },
    async run(t) {
      const made = await draft(t, 'delete-approval', { status: 'needs_approval' });
      t.status(await t.api.delete(`/bills/${made.id}`), 200);
      await billStatus(t, made.id, 'deleted');
    },
  },
  {
    id: 'bills/deleted-refuses-moves',
    area: 'bills',
    title: 'a deleted bill cannot be submitted, rejected or patched (409); deleting it again is a 200 no-op',
    rule: { section: 'Errors', quote: CONFLICT_409 },
    gaps: ['Deleted bills'],
    async run(t) {
      const made = await draft(t, 'deleted-moves');
      t.status(await t.api.delete(`/bills/${made.id}`), 200);
      t.error(await t.api.post(`/bills/${made.id}/submit`), [409]);
      t.error(await t.api.post(`/bills/${made.id}/reject`, { reason: 'x' }), [409]);
      t.error(await t.api.patch(`/bills/${made.id}`, { amount: 1 }), [409]);
      t.status(await t.api.delete(`/bills/${made.id}`), 200);
      await billStatus(t, made.id, 'deleted');
    },
  },
  {
    id: 'bills/patch-draft',
    area: 'bills',
    title: 'PATCH /bills/{id} changes a draft and answers the bill',
    rule: { section: 'Endpoints > Bills', quote: '| PATCH | /bills/{id} | amount, description, due_date, issue_date, vendor_id, line_items (object: items array of BillLineItem input, replace boolean) | 200 Bill | 400, 404, 409 |' },
    async run(t) {
      const made = await draft(t, 'patch');
      const patched = t.status(await t.api.patch(`/bills/${made.id}`, { amount: 310.4, description: t.name('patched') }), 200);
      t.check(patched.body?.amount === 310.4 && patched.body?.description === t.name('patched'), 'the answer shows the new amount and description', patched);
    },
  },
  {
    id: 'bills/pay-date',
    area: 'bills',
    title: 'POST /bills/{id}/pay-date sets a future pay_date ({bill_id}); a date that is not a date is a 400',
    rule: { section: 'Endpoints > Bills', quote: '| POST | /bills/{id}/pay-date | pay_date (string) | 200 {bill_id} | 400, 404, 409 |' },
    gaps: ['Pay date', 'Bill dates'],
    async run(t) {
      const made = await draft(t, 'pay-date');
      const payDate = dayAfter(made.created_at, 30);
      const answer = t.status(await t.api.post(`/bills/${made.id}/pay-date`, { pay_date: payDate }), 200);
      t.check(answer.body?.bill_id === made.id, 'the answer names the bill', answer);
      const read = t.status(await t.api.get(`/bills/${made.id}`), 200);
      t.check(read.body?.pay_date === payDate, `pay_date is ${payDate} (got ${read.body?.pay_date})`, read);
      t.error(await t.api.post(`/bills/${made.id}/pay-date`, { pay_date: 'next tuesday' }), [400], 'pay_date');
    },
  },
  {
    id: 'bills/pay-date-in-the-past',
    area: 'bills',
    title: 'a pay_date before today is refused with 400',
    rule: { section: 'Endpoints > Bills', quote: '| POST | /bills/{id}/pay-date | pay_date (string) | 200 {bill_id} | 400, 404, 409 |' },
    gaps: ['Pay date'],
    async run(t) {
      const made = await draft(t, 'pay-date-past');
      t.error(await t.api.post(`/bills/${made.id}/pay-date`, { pay_date: dayAfter(made.created_at, -10) }), [400], 'pay_date');
    },
  },
  unknownIdCase('bills', 'bill', 'read, submit, reject and delete', [['GET', ''], ['POST', '/submit'], ['POST', '/reject', { reason: 'x' }], ['DELETE', '']]),
  {
    id: 'bills/locked-bill-409',
    area: 'bills',
    title: 'a processing or paid bill already in the account refuses a PATCH with 409 (its own amount: nothing could change)',
    rule: { section: 'States and transitions > Bill', quote: BILL_TABLE.locked },
    async run(t) {
      // The suite cannot bring a bill to processing without paying it, so it looks for one the account has.
      for (const status of ['processing', 'paid']) {
        const found = t.status(await t.api.get('/bills', { query: { status, limit: 1 } }), 200);
        const locked = found.body?.data?.[0];
        if (!locked) continue;
        t.error(await t.api.patch(`/bills/${locked.id}`, { amount: locked.amount }), [409]);
        return;
      }
      t.skip('the account has no processing or paid bill to try (making one needs a vendor payment to be sent)');
    },
  },
  {
    id: 'bulk/submit-per-item',
    area: 'bulk',
    title: 'bulk-submit answers 200 with one result per bill: success for a draft, success false with error_reason for the others',
    rule: { section: 'Endpoints > Bills', quote: BULK },
    async run(t) {
      const a = await draft(t, 'bulk-submit-draft');
      const b = await draft(t, 'bulk-submit-approval', { status: 'needs_approval' });
      const unknown = t.name('no-such-bill');
      const answer = t.status(await t.api.post('/bills/bulk-submit', { bill_ids: [a.id, b.id, unknown] }), 200);
      const results: BulkResult[] = Array.isArray(answer.body?.results) ? answer.body.results : [];
      t.check(results.length === 3, `one result per bill (got ${results.length})`, answer);
      const of = (id: string) => results.find((r) => r.bill_id === id);
      t.check(of(a.id)?.success === true, 'the draft is submitted', answer);
      for (const id of [b.id, unknown]) {
        t.check(of(id)?.success === false && typeof of(id)?.error_reason === 'string' && of(id)!.error_reason!.length > 0, `${id === unknown ? 'the unknown id' : 'the needs_approval bill'} fails with an error_reason`, answer);
      }
      await billStatus(t, a.id, 'needs_approval');
    },
  },
  {
    id: 'bulk/delete-per-item',
    area: 'bulk',
    title: 'bulk-delete answers 200 with one result per bill; an unknown id fails alone',
    rule: { section: 'Endpoints > Bills', quote: BULK },
    async run(t) {
      const a = await draft(t, 'bulk-delete');
      const unknown = t.name('no-such-bill');
      const answer = t.status(await t.api.post('/bills/bulk-delete', { bill_ids: [a.id, unknown] }), 200);
      const results: BulkResult[] = Array.isArray(answer.body?.results) ? answer.body.results : [];
      t.check(results.find((r) => r.bill_id === a.id)?.success === true, 'the draft is deleted', answer);
      t.check(results.find((r) => r.bill_id === unknown)?.success === false, 'the unknown id fails', answer);
      await billStatus(t, a.id, 'deleted');
    },
  },
  {
    id: 'bulk/results-in-request-order',
    area: 'bulk',
    title: 'bulk results come in the order of bill_ids',
    rule: { section: 'Endpoints > Bills', quote: BULK },
    gaps: ['Bulk operations'],
    async run(t) {
      const ids = [await draft(t, 'bulk-order-1'), await draft(t, 'bulk-order-2')].map((b) => b.id).reverse();
      const answer = t.status(await t.api.post('/bills/bulk-submit', { bill_ids: ids }), 200);
      t.check(JSON.stringify((answer.body?.results ?? []).map((r: BulkResult) => r.bill_id)) === JSON.stringify(ids), 'results[i].bill_id is bill_ids[i]', answer);
    },
  },
  {
    id: 'bulk/invalid-bill-ids',
    area: 'bulk',
    title: 'bill_ids that is not an array, or an empty one, is refused with 400',
    rule: { section: 'Endpoints > Bills', quote: '| POST | /bills/bulk-submit | bill_ids (array of strings) | 200 BulkOperationReply | 400 |' },
    gaps: ['Bulk operations'],
    async run(t) {
      t.error(await t.api.post('/bills/bulk-submit', { bill_ids: 'all' }), [400], 'bill_ids');
      t.error(await t.api.post('/bills/bulk-delete', { bill_ids: [] }), [400], 'bill_ids');
    },
  },
  {
    id: 'vendors/create',
    area: 'vendors',
    title: 'a vendor is created (201) active, origin manual, with the fields it was given',
    rule: { section: 'Resources and fields > Vendor', quote: 'is_active (boolean), origin (enum: manual, ocr, accounting_integration)' },
    async run(t) {
      const made = t.status(await t.api.post('/vendors', { name: t.name('vendor-create'), email: t.email('vendor-create'), category: 'Supplies' }), 201);
      const body = made.body ?? {};
      t.check(body.is_active === true && body.origin === 'manual', `the vendor is active with origin manual (got ${body.is_active}, ${body.origin})`, made);
      t.check(body.name === t.name('vendor-create') && body.category === 'Supplies', 'name and category come back as sent', made);
    },
  },
  {
    id: 'vendors/deactivate-and-reactivate',
    area: 'vendors',
    title: 'deactivate and reactivate answer {vendor_id, affected_bill_count} and flip is_active',
    rule: { section: 'States and transitions > Vendor', quote: '| is_active true | POST /vendors/{id}/deactivate | inactive | returns affected_bill_count |' },
    async run(t) {
      const made = await vendor(t, 'vendor-toggle');
      const off = t.status(await t.api.post(`/vendors/${made.id}/deactivate`), 200);
      t.check(off.body?.vendor_id === made.id && Number.isInteger(off.body?.affected_bill_count), 'deactivate answers vendor_id and an integer affected_bill_count', off);
      const inactive = t.status(await t.api.get(`/vendors/${made.id}`), 200);
      t.check(inactive.body?.is_active === false, 'the vendor is inactive', inactive);
      const on = t.status(await t.api.post(`/vendors/${made.id}/reactivate`), 200);
      t.check(on.body?.vendor_id === made.id && Number.isInteger(on.body?.affected_bill_count), 'reactivate answers vendor_id and an integer affected_bill_count', on);
      const active = t.status(await t.api.get(`/vendors/${made.id}`), 200);
      t.check(active.body?.is_active === true, 'the vendor is active again', active);
    },
  },
  {
    id: 'vendors/repeated-moves-422',
    area: 'vendors',
    title: 'deactivating an inactive vendor or reactivating an active one is refused with 422',
    rule: { section: 'Endpoints > Vendors', quote: '| POST | /vendors/{id}/deactivate | none | 200 {vendor_id, affected_bill_count} | 404, 422 |' },
    gaps: ['Vendor status'],
    async run(t) {
      const made = await vendor(t, 'vendor-twice');
      t.error(await t.api.post(`/vendors/${made.id}/reactivate`), [422]);
      t.status(await t.api.post(`/vendors/${made.id}/deactivate`), 200);
      t.error(await t.api.post(`/vendors/${made.id}/deactivate`), [422]);
    },
  },
  {
    id: 'vendors/affected-bill-count',
    area: 'vendors',
    title: "affected_bill_count counts the vendor's open bills (a draft and a needs_approval bill; not a deleted one)",
    rule: { section: 'States and transitions > Vendor', quote: '| inactive | POST /vendors/{id}/reactivate | active | returns affected_bill_count |' },
    gaps: ['affected_bill_count'],
    async run(t) {
      const made = await vendor(t, 'vendor-bills');
      await bill(t, made.id, 'vendor-bills-draft');
      await bill(t, made.id, 'vendor-bills-approval', { status: 'needs_approval' });
      const gone = await bill(t, made.id, 'vendor-bills-deleted');
      t.status(await t.api.delete(`/bills/${gone.id}`), 200);
      const off = t.status(await t.api.post(`/vendors/${made.id}/deactivate`), 200);
      t.check(off.body?.affected_bill_count === 2, `affected_bill_count is 2 (got ${off.body?.affected_bill_count})`, off);
    },
  },
  {
    id: 'vendors/bank-account-masked',
    area: 'vendors',
    title: 'a vendor bank account reads back masked: account_mask ends with the last four digits and the full number appears nowhere',
    rule: { section: 'Resources and fields > Vendor', quote: 'Vendor bank account (masked): id, account_mask, account_type (enum; value checking appears), bank_name, payment_method_id.' },
    gaps: ['Vendor bank account'],
    async run(t) {
      const made = t.status(await t.api.post('/vendors', { name: t.name('vendor-bank'), bank_account: { ...US_BANK, account_type: 'checking', bank_name: 'Parity Bank' } }), 201);
      t.check(!made.text.includes(US_BANK.account_number), 'the vendor answer does not show the account number', made);
      const account = t.status(await t.api.get(`/vendors/${made.body.id}/bank-account`), 200);
      t.check(typeof account.body?.account_mask === 'string' && account.body.account_mask.endsWith(US_BANK.account_number.slice(-4)), 'account_mask ends with the last four digits', account);
      t.check(!account.text.includes(US_BANK.account_number), 'the full account number appears nowhere in the answer', account);
      t.check(typeof account.body?.payment_method_id === 'string', 'the bank account has a payment_method_id', account);
    },
  },
  unknownIdCase('vendors', 'vendor', 'read, deactivate and reactivate', [['GET', ''], ['POST', '/deactivate'], ['POST', '/reactivate']]),
  {
    id: 'money/vendor-payment-needs-pay-date',
    area: 'money',
    title: 'a vendor payment for a bill without pay_date is refused with 422 (a service that accepted it would send money)',
    rule: { section: 'Errors', quote: 'a vendor payment for a bill without pay_date' },
    gaps: ['422 without pay_date'],
    movesMoney: true,
    async run(t) {
      const { bill: made, methodId } = await payableBill(t, 'pay-no-date');
      const answer = await t.api.post('/vendor-payments', { idempotency_key: t.name('no-pay-date'), items: [{ bill_id: made.id, payment_method_id: methodId, payment_speed: 'standard' }] });
      t.error(answer, [422]);
    },
  },
  {
    id: 'money/vendor-payment-and-cancel',
    area: 'money',
    title: 'a vendor payment for a bill with a pay_date a month ahead is initiated (200, per-item result) and canceled before it is sent',
    rule: { section: 'Endpoints > Vendor payments', quote: '| POST | /vendor-payments/cancel | bill_id, payment_id | 200 {payment_id, status} | |' },
    gaps: ['Paying a bill', 'Canceled payments'],
    movesMoney: true,
    async run(t) {
      const { bill: made, methodId } = await payableBill(t, 'pay-cancel');
      t.status(await t.api.post(`/bills/${made.id}/pay-date`, { pay_date: dayAfter(made.created_at, 30) }), 200);
      const answer = t.status(await t.api.post('/vendor-payments', { idempotency_key: t.name('pay-cancel'), items: [{ bill_id: made.id, payment_method_id: methodId, payment_speed: 'standard' }] }), 200);
      const result = answer.body?.results?.find((r: { bill_id: string }) => r.bill_id === made.id);
      t.check(result?.success === true, 'the payment is initiated', answer);
      const read = t.status(await t.api.get(`/bills/${made.id}`), 200);
      const payment = (read.body?.vendor_payments ?? []).at(-1);
      t.check(typeof payment?.id === 'string', 'the bill lists its vendor payment', read);
      const cancel = t.status(await t.api.post('/vendor-payments/cancel', { bill_id: made.id, payment_id: payment.id }), 200);
      t.check(cancel.body?.payment_id === payment.id && typeof cancel.body?.status === 'string', 'cancel answers {payment_id, status}', cancel);
    },
  },
];

/** A needs_approval bill of a vendor with a bank account, and that account's payment method. */
async function payableBill(t: CaseContext, what: string) {
  const owner = await vendor(t, `${what}-vendor`, { bank_account: { ...US_BANK, account_type: 'checking' } });
  const account = t.status(await t.api.get(`/vendors/${owner.id}/bank-account`), 200);
  const made = await bill(t, owner.id, what, { status: 'needs_approval' });
  return { bill: made, methodId: account.body?.payment_method_id as string };
}
