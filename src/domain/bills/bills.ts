// Owns bill records, the bill state table (the spec's, plus the payment-driven moves it leaves open),
// status history, line items with sequence, pay dates and the per-item rules of bulk operations.
import type { Deps } from '../../deps.js';
import { ApiError, Errors, invalidFields } from '../../errors.js';
import type { Page } from '../../store/collection.js';
import { defineCollection, type Account } from '../../store/store.js';
import { defineMachine, transition } from '../machine.js';
import { vendors } from '../vendors/vendors.js';
import { cancelOpenPayments, openPaymentsOf, paymentsOfBill, reschedulePayments, vendorPaymentView } from '../vendor-payments/records.js';
import { LIMITS } from '../../limits.js';

export type BillStatus = 'draft' | 'needs_approval' | 'processing' | 'paid' | 'deleted' | 'failed';
export type BillSource = 'manual' | 'ocr' | 'accounting_integration';

export interface BillStatusEntry {
  created_at: string;
  status: BillStatus;
  reason: string | null;
  user_id: string | null;
}

export interface BillLineItem {
  sequence: number;
  name: string | null;
  description: string | null;
  quantity: number | null;
  unit_price: number | null;
  unit_type: string | null;
  tax: number | null;
  total: number | null;
  expense_account_id: string | null;
}

export type BillLineItemInput = Partial<Omit<BillLineItem, 'sequence'>>;

export interface BillDocumentRecord {
  blob_id: string;
  filename: string;
  mime_type: string;
  path: string;
  size: number;
}

export interface Bill {
  id: string;
  number: string | null;
  vendor_id: string;
  amount: number;
  description: string | null;
  issue_date: string | null;
  due_date: string | null;
  pay_date: string | null;
  created_at: string;
  updated_at: string;
  source: BillSource;
  status: BillStatus;
  status_history: BillStatusEntry[];
  line_items: BillLineItem[];
  document: BillDocumentRecord | null;
}

export const bills = defineCollection<Bill>('bills', ['vendor_id', 'status']);

/** Sandbox choice: bulk operations take at most this many ids (more is a 400). */
export const MAX_BULK_IDS = LIMITS.bulkItems;

/**
 * The spec's table (submit, reject, delete; 409 for delete and patch in processing or paid) plus the
 * moves it leaves open: `pay` (a payment may be initiated), `process`/`settle`/`fail` driven by the
 * bill's vendor payment, `edit` and `set_pay_date` (allowed where the bill can still change), and
 * `retry` (a failed bill may get a new funding attempt).
 */
export const billMachine = defineMachine({
  resource: 'bill',
  states: ['draft', 'needs_approval', 'processing', 'paid', 'deleted', 'failed'] as const,
  events: ['submit', 'reject', 'delete', 'edit', 'set_pay_date', 'pay', 'process', 'settle', 'fail', 'retry'] as const,
  internal: ['process', 'settle', 'fail'],
  table: {
    draft: { submit: 'needs_approval', delete: 'deleted', edit: 'draft', set_pay_date: 'draft' },
    needs_approval: { reject: 'draft', delete: 'deleted', edit: 'needs_approval', set_pay_date: 'needs_approval', pay: 'needs_approval', process: 'processing', fail: 'failed' },
    processing: { settle: 'paid', fail: 'failed' },
    paid: {},
    // Soft delete is allowed "from any state except processing and paid": deleting again is a no-op.
    deleted: { delete: 'deleted' },
    failed: { delete: 'deleted', edit: 'failed', retry: 'failed', process: 'processing', fail: 'failed' },
  },
});
export type BillEvent = (typeof billMachine.events)[number];

export interface Actor {
  user_id: string | null;
}

export const SYSTEM: Actor = { user_id: null };

export function getBill(account: Account, id: string): Bill {
  return bills(account).require(id, 'bill');
}

/** Apply an event; a real status change is appended to the history with its reason and actor. */
export function moveBill(account: Account, bill: Bill, event: BillEvent, actor: Actor = SYSTEM, reason: string | null = null): Bill {
  const status = transition(billMachine, bill.status, event);
  const now = account.clock.iso();
  if (status === bill.status) return bills(account).update(bill.id, { updated_at: now });
  const entry: BillStatusEntry = { created_at: now, status, reason, user_id: actor.user_id };
  // The history keeps its newest LIMITS.billStatusHistory entries (a bill can cycle submit/reject forever).
  const status_history = [...bill.status_history, entry].slice(-LIMITS.billStatusHistory);
  return bills(account).update(bill.id, { status, status_history, updated_at: now });
}

/** The bill as the API shows it; `status_history` (the whole history) only where asked for. */
export function billView(account: Account, bill: Bill, { history = false } = {}) {
  const { status_history } = bill;
  return {
    id: bill.id,
    number: bill.number,
    vendor_id: bill.vendor_id,
    amount: bill.amount,
    description: bill.description,
    issue_date: bill.issue_date,
    due_date: bill.due_date,
    pay_date: bill.pay_date,
    created_at: bill.created_at,
    updated_at: bill.updated_at,
    source: bill.source,
    status: bill.status,
    line_items: bill.line_items,
    last_status: status_history[status_history.length - 1],
    vendor_payments: paymentsOfBill(account, bill).slice(-LIMITS.billVendorPaymentsShown).map(vendorPaymentView),
    ...(history ? { status_history } : {}),
  };
}

export interface BillInput {
  vendor_id: string;
  amount: number;
  number?: string;
  description?: string;
  issue_date?: string;
  due_date?: string;
  status?: 'draft' | 'needs_approval';
  line_items?: BillLineItemInput[];
}

/** Only a vendor that is not there is the spec's 422 unknown_vendor; no other error is turned into it. */
function requireVendor(account: Account, vendorId: string): void {
  if (!vendors(account).get(vendorId)) {
    throw new ApiError(Errors.unknownVendor, { message: `No vendor with id ${vendorId}.`, validation_errors: { vendor_id: 'is not a vendor of this account' } });
  }
}

/**
 * The one rule of a bill's fields that no schema can hold: the due date is not before the issue
 * date. The rest (amount above 0, at most LIMITS.amountMax, in cents; line item quantities, prices and
 * totals not negative) is in the OpenAPI document, which every caller's input passes through first
 * (the API and the accounting sync); fixtures make valid bills.
 */
function checkDates(input: { issue_date?: string | null; due_date?: string | null }): void {
  if (input.issue_date && input.due_date && input.due_date < input.issue_date) throw invalidFields({ due_date: 'must not be before issue_date' });
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export function lineItems(input: BillLineItemInput[] | undefined, firstSequence = 1): BillLineItem[] {
  return (input ?? []).map((item, i) => {
    const computed = item.quantity != null && item.unit_price != null ? round2(item.quantity * item.unit_price + (item.tax ?? 0)) : null;
    return {
      sequence: firstSequence + i,
      name: item.name ?? null,
      description: item.description ?? null,
      quantity: item.quantity ?? null,
      unit_price: item.unit_price ?? null,
      unit_type: item.unit_type ?? null,
      tax: item.tax ?? null,
      // Sandbox choice: a missing total is quantity x unit_price + tax when those are given.
      total: item.total ?? computed,
      expense_account_id: item.expense_account_id ?? null,
    };
  });
}

export function createBill(
  _deps: Deps,
  account: Account,
  input: BillInput,
  { source = 'manual', actor = SYSTEM, skipChecks = false }: { source?: BillSource; actor?: Actor; skipChecks?: boolean } = {},
): Bill {
  requireVendor(account, input.vendor_id);
  if (!skipChecks) checkDates(input);
  const now = account.clock.iso();
  const status: BillStatus = input.status ?? 'draft';
  const bill: Bill = {
    id: account.newId('bill'),
    number: input.number ?? null,
    vendor_id: input.vendor_id,
    amount: input.amount,
    description: input.description ?? null,
    issue_date: input.issue_date ?? null,
    due_date: input.due_date ?? null,
    pay_date: null,
    created_at: now,
    updated_at: now,
    source,
    status,
    status_history: [{ created_at: now, status, reason: null, user_id: actor.user_id }],
    line_items: lineItems(input.line_items),
    document: null,
  };
  return bills(account).insert(bill);
}

export interface BillPatch {
  vendor_id?: string;
  amount?: number;
  description?: string;
  issue_date?: string;
  due_date?: string;
  line_items?: { items: BillLineItemInput[]; replace?: boolean };
}

export function updateBill(account: Account, id: string, patch: BillPatch): Bill {
  const bill = getBill(account, id);
  transition(billMachine, bill.status, 'edit');
  checkDates({ issue_date: patch.issue_date ?? bill.issue_date, due_date: patch.due_date ?? bill.due_date });
  const changes: Partial<Bill> = {};
  if (patch.vendor_id !== undefined && patch.vendor_id !== bill.vendor_id) {
    requireVendor(account, patch.vendor_id);
    // A payment in flight is addressed to the old vendor's bank account.
    if (openPaymentsOf(account, bill).length) {
      throw new ApiError(Errors.conflict, { message: 'The bill has a vendor payment in progress; cancel it before changing the vendor.', validation_errors: { vendor_id: 'cannot change while a payment is in progress' } });
    }
    changes.vendor_id = patch.vendor_id;
  }
  for (const field of ['amount', 'description', 'issue_date', 'due_date'] as const) {
    if (patch[field] !== undefined) (changes as Record<string, unknown>)[field] = patch[field];
  }
  if (patch.line_items) {
    const replace = patch.line_items.replace ?? false;
    const kept = replace ? [] : bill.line_items;
    changes.line_items = [...kept, ...lineItems(patch.line_items.items, kept.length + 1)];
  }
  if (!Object.keys(changes).length) return bill;
  return bills(account).update(id, { ...changes, updated_at: account.clock.iso() });
}

export function submitBill(account: Account, id: string, actor: Actor = SYSTEM): Bill {
  return moveBill(account, getBill(account, id), 'submit', actor);
}

/** needs_approval back to draft with the reason; a payment scheduled for it is canceled. */
export function rejectBill(deps: Deps, account: Account, id: string, reason: string | null, actor: Actor): Bill {
  const bill = getBill(account, id);
  transition(billMachine, bill.status, 'reject');
  cancelOpenPayments(deps, account, bill);
  return moveBill(account, bill, 'reject', actor, reason);
}

/** Soft delete; a payment scheduled for the bill is canceled with it. */
export function deleteBill(deps: Deps, account: Account, id: string, actor: Actor): Bill {
  const bill = getBill(account, id);
  transition(billMachine, bill.status, 'delete');
  cancelOpenPayments(deps, account, bill);
  return moveBill(account, bill, 'delete', actor);
}

/** Set the pay date (YYYY-MM-DD, today or later on the account clock); open payments follow it. */
export function setPayDate(deps: Deps, account: Account, id: string, payDate: string, actor: Actor = SYSTEM): Bill {
  const bill = getBill(account, id);
  // The bill's state first: a paid or processing bill is a 409 whatever date is sent.
  transition(billMachine, bill.status, 'set_pay_date');
  // Its format (a calendar date) is the document's: format date.
  if (payDate < account.clock.today()) throw invalidFields({ pay_date: `must not be in the past (today is ${account.clock.today()} on the account clock)` });
  bills(account).update(id, { pay_date: payDate });
  moveBill(account, bill, 'set_pay_date', actor);
  reschedulePayments(deps, account, bill);
  return bill;
}

export interface BillFilter {
  vendor_id?: string;
  status?: BillStatus;
  bill_number?: string;
  source?: BillSource;
  include_deleted?: boolean;
}

export function listBills(account: Account, page: { limit?: number; after?: string; before?: string }, f: BillFilter): Page<Bill> {
  // Sandbox choice: asking for status=deleted lists deleted bills without include_deleted.
  const includeDeleted = f.include_deleted || f.status === 'deleted';
  const filter = (b: Bill) =>
    (includeDeleted || b.status !== 'deleted') &&
    (!f.status || b.status === f.status) &&
    (!f.bill_number || b.number === f.bill_number) &&
    (!f.source || b.source === f.source);
  // Walk the vendor's bills, or those of the status asked for, rather than every bill.
  const where = f.vendor_id ? { field: 'vendor_id', value: f.vendor_id } : f.status ? { field: 'status', value: f.status } : undefined;
  return bills(account).page({ ...page, filter, where });
}

export interface BulkResult {
  bill_id: string;
  success: boolean;
  error_reason: string | null;
}

/** Run `apply` per id; an item's failure (an ApiError) becomes its error_reason and changes nothing. */
export function bulk(account: Account, ids: string[], apply: (bill: Bill) => void): { results: BulkResult[] } {
  // At most MAX_BULK_IDS: the document's maxItems.
  const results = ids.map((id): BulkResult => {
    const bill = bills(account).get(id);
    if (!bill) return { bill_id: id, success: false, error_reason: 'Bill not found' };
    const { error_reason } = perItem(account, () => apply(bill));
    return { bill_id: id, success: error_reason === null, error_reason };
  });
  return { results };
}

/**
 * One item of a bulk request, as a savepoint of the request's unit of work: an ApiError becomes its
 * error_reason and undoes what the item wrote; any other error is thrown (and the request undone).
 */
export function perItem<T>(account: Account, apply: () => T): { value: T; error_reason: null } | { value: null; error_reason: string } {
  try {
    return { value: account.transaction(apply), error_reason: null };
  } catch (error) {
    if (error instanceof ApiError) return { value: null, error_reason: error.message };
    throw error;
  }
}
