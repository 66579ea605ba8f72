// Owns vendor payments (funding attempts of bills): the payment state table, the lifecycle on the
// account clock (hold, waiting_pay_date, ready, processing, succeeded or failed per payment_speed),
// idempotent initiation, retry, cancel, and the test account numbers whose payments fail.
import type { Deps } from '../../deps.js';
import { ApiError, Errors, invalidFields } from '../../http/errors.js';
import type { JobData } from '../../store/store.js';
import { defineCollection, type Account } from '../../store/store.js';
import { defineIdempotencyKeys } from '../../store/idempotency.js';
import { canTransition, defineMachine, transition } from '../machine.js';
import { billMachine, bills, getBill, moveBill, perItem, SYSTEM, type Bill, type BulkResult, MAX_BULK_IDS } from '../bills/bills.js';
import { getVendor, vendors, type Vendor } from '../vendors/vendors.js';
import { calendarDate, startOfCalendarDate } from '../dates.js';

export type PaymentSpeed = 'standard' | 'next_day' | 'same_day' | 'instant';
export type VendorPaymentStatus = 'hold' | 'waiting_pay_date' | 'ready' | 'processing' | 'succeeded' | 'failed' | 'canceled';
export type HoldReason = 'vendor_inactive' | 'missing_bank_account';

export interface VendorPayment {
  id: string;
  bill_id: string;
  vendor_id: string;
  status: VendorPaymentStatus;
  payment_speed: PaymentSpeed;
  attempt_number: number;
  payment_method_id: string | null;
  failure_reason: string | null;
  estimated_arrival_date: string | null;
  hold_until: string | null;
  hold_reason: HoldReason | null;
  sent_at: string | null;
  created_at: string;
  updated_at: string;
  /** The one due job this payment waits for; jobs with another id are stale and ignored. */
  job_id: string | null;
  /** Decided when the payment is sent, from the vendor's account number (see TEST_ACCOUNT_FAILURES). */
  fails_with: string | null;
}

export const vendorPayments = defineCollection<VendorPayment>('vendor_payments', ['bill_id', 'vendor_id']);

export const vendorPaymentMachine = defineMachine({
  resource: 'vendor payment',
  states: ['hold', 'waiting_pay_date', 'ready', 'processing', 'succeeded', 'failed', 'canceled'] as const,
  events: ['hold', 'release', 'reschedule', 'due', 'send', 'settle', 'fail', 'cancel'] as const,
  internal: ['hold', 'release', 'reschedule', 'due', 'send', 'settle', 'fail'],
  table: {
    hold: { hold: 'hold', release: 'waiting_pay_date', reschedule: 'hold', fail: 'failed', cancel: 'canceled' },
    waiting_pay_date: { hold: 'hold', reschedule: 'waiting_pay_date', due: 'ready', fail: 'failed', cancel: 'canceled' },
    ready: { hold: 'hold', reschedule: 'waiting_pay_date', send: 'processing', fail: 'failed', cancel: 'canceled' },
    processing: { settle: 'succeeded', fail: 'failed' },
    succeeded: {},
    failed: {},
    canceled: {},
  },
});
type PaymentEvent = (typeof vendorPaymentMachine.events)[number];

const OPEN: ReadonlySet<VendorPaymentStatus> = new Set(['hold', 'waiting_pay_date', 'ready']);
const IN_FLIGHT: ReadonlySet<VendorPaymentStatus> = new Set(['hold', 'waiting_pay_date', 'ready', 'processing']);

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Sandbox choice: a ready payment is sent (processing) in the next run, this long after it became ready. */
export const SEND_DELAY_MS = 10 * MINUTE;

/** Sandbox choice: time from sent (processing) to settled (succeeded, or failed for a test account number). */
export const SETTLEMENT_MS: Record<PaymentSpeed, number> = {
  standard: 3 * DAY,
  next_day: 1 * DAY,
  same_day: 4 * HOUR,
  instant: 1 * MINUTE,
};

/** Test values: vendor account numbers whose payments fail at settlement, with the failure_reason given. */
export const TEST_ACCOUNT_FAILURES: Record<string, string> = {
  '000000000002': 'account_closed',
  '000000000003': 'no_account',
  '000000000004': 'invalid_account_number',
  '000000000016': 'account_frozen',
};

export const JOBS = { due: 'vendor_payment.due', send: 'vendor_payment.send', settle: 'vendor_payment.settle' } as const;

export function vendorPaymentView(payment: VendorPayment) {
  return {
    id: payment.id,
    bill_id: payment.bill_id,
    status: payment.status,
    hold_reason: payment.hold_reason,
    created_at: payment.created_at,
    updated_at: payment.updated_at,
    payment_speed: payment.payment_speed,
    attempt_number: payment.attempt_number,
    payment_method_id: payment.payment_method_id,
    failure_reason: payment.failure_reason,
    estimated_arrival_date: payment.estimated_arrival_date,
    hold_until: payment.hold_until,
    sent_at: payment.sent_at,
  };
}

/** The bill's payments (funding attempts), oldest first. */
export function paymentsOfBill(account: Account, bill: Bill): VendorPayment[] {
  return [...vendorPayments(account).newest({ field: 'bill_id', value: bill.id })].reverse();
}

/** Payments of the bill not yet sent (hold, waiting_pay_date, ready). */
export function openPaymentsOf(account: Account, bill: Bill): VendorPayment[] {
  return paymentsOfBill(account, bill).filter((p) => OPEN.has(p.status));
}

function move(account: Account, payment: VendorPayment, event: PaymentEvent, changes: Partial<VendorPayment> = {}): VendorPayment {
  const status = transition(vendorPaymentMachine, payment.status, event);
  return vendorPayments(account).update(payment.id, { ...changes, status, updated_at: account.clock.iso() });
}


function estimatedArrival(account: Account, bill: Bill, speed: PaymentSpeed): string {
  const sendAt = Math.max(bill.pay_date ? startOfCalendarDate(bill.pay_date) : 0, account.clock.nowMs()) + SEND_DELAY_MS;
  return calendarDate(sendAt + SETTLEMENT_MS[speed]);
}

function holdReason(vendor: Vendor): HoldReason | null {
  if (vendor.status !== 'active') return 'vendor_inactive';
  if (!vendor.bank_account) return 'missing_bank_account';
  return null;
}

/**
 * Bring an unsent payment to where it belongs now: hold while the vendor is inactive or has no bank
 * account; else waiting_pay_date before the pay date, ready from it (sent SEND_DELAY_MS later).
 */
function place(deps: Deps, account: Account, payment: VendorPayment, bill: Bill): VendorPayment {
  const vendor = getVendor(account, payment.vendor_id);
  const reason = holdReason(vendor);
  const estimate = estimatedArrival(account, bill, payment.payment_speed);
  if (reason) {
    return move(account, payment, 'hold', { hold_reason: reason, hold_until: null, job_id: null, estimated_arrival_date: estimate });
  }
  let current = payment;
  if (current.status === 'hold') current = move(account, current, 'release');
  else if (current.status === 'ready') current = move(account, current, 'reschedule');
  const common = { hold_reason: null, payment_method_id: vendor.bank_account?.payment_method_id ?? current.payment_method_id, estimated_arrival_date: estimate };
  if (bill.pay_date && bill.pay_date > account.clock.today()) {
    const job = deps.scheduler.schedule(account, JOBS.due, startOfCalendarDate(bill.pay_date), { payment_id: current.id });
    return move(account, current, 'reschedule', { ...common, hold_until: bill.pay_date, job_id: job.id });
  }
  const job = deps.scheduler.schedule(account, JOBS.send, account.clock.nowMs() + SEND_DELAY_MS, { payment_id: current.id });
  return move(account, current, 'due', { ...common, hold_until: null, job_id: job.id });
}

// ---- initiation ----------------------------------------------------------------------------------

export interface PaymentItem {
  bill_id: string;
  payment_method_id?: string;
  payment_speed?: PaymentSpeed;
}

export interface InitiateResult {
  bill_id: string;
  success: boolean;
  payment_id: string | null;
  error_reason: string | null;
}

const initiationKeys = defineIdempotencyKeys<InitiateResult[]>('vendor_payment_idempotency');

/** What makes two initiations the same request: the items, with their defaults filled in. */
function normalItems(items: PaymentItem[]): unknown {
  return items.map((i) => [i.bill_id, i.payment_method_id ?? null, i.payment_speed ?? 'standard']);
}

/**
 * Start one payment per item. The same idempotency_key with the same items answers the first
 * answer again and pays nothing twice; with other items it is refused (409 idempotency_key_reused).
 */
export function initiateVendorPayments(deps: Deps, account: Account, input: { idempotency_key: string; items: PaymentItem[] }): { results: InitiateResult[] } {
  const keys = initiationKeys(account);
  const request = normalItems(input.items);
  const prior = keys.replay(input.idempotency_key, request, 'idempotency_key');
  if (prior) return { results: prior };
  if (input.items.length > MAX_BULK_IDS) throw invalidFields({ items: `must hold at most ${MAX_BULK_IDS} items (got ${input.items.length})` });
  const missing: Record<string, string> = {};
  input.items.forEach((item, i) => {
    const bill = bills(account).get(item.bill_id);
    if (bill && !bill.pay_date) missing[`items[${i}].bill_id`] = `bill ${bill.id} has no pay_date`;
  });
  if (Object.keys(missing).length) throw new ApiError(Errors.missingPayDate, { validation_errors: missing });
  const seen = new Set<string>();
  const results = input.items.map((item): InitiateResult => {
    const { value: payment, error_reason } = perItem(() => {
      if (seen.has(item.bill_id)) throw new ApiError(Errors.conflict, { message: 'The bill appears more than once in this request.' });
      seen.add(item.bill_id);
      return startVendorPayment(deps, account, item);
    });
    return { bill_id: item.bill_id, success: error_reason === null, payment_id: payment?.id ?? null, error_reason };
  });
  // Only answers that did something are remembered: a refused request (422, 400) may be sent again.
  keys.remember(input.idempotency_key, request, results);
  return { results };
}

/** One item: checks first (each throws an ApiError whose message becomes the error_reason), then create. */
function startVendorPayment(deps: Deps, account: Account, item: PaymentItem): VendorPayment {
  const bill = bills(account).get(item.bill_id);
  if (!bill) throw new ApiError(Errors.notFound, { message: 'Bill not found' });
  transition(billMachine, bill.status, 'pay');
  // OCR bills start at 0 until their amount is set: nothing to pay yet.
  if (!(bill.amount > 0)) throw new ApiError(Errors.unprocessable, { message: 'The bill amount is 0; set it with PATCH /bills/{id} before paying.' });
  requireNoPaymentInFlight(paymentsOfBill(account, bill));
  const vendor = getVendor(account, bill.vendor_id);
  if (item.payment_method_id !== undefined && item.payment_method_id !== vendor.bank_account?.payment_method_id) {
    throw new ApiError(Errors.unprocessable, { message: `Payment method ${item.payment_method_id} is not the bank account of vendor ${vendor.id}.` });
  }
  return createAttempt(deps, account, bill, item.payment_speed ?? 'standard', lastAttempt(account, bill) + 1);
}

/** 409 while one of the bill's payments is still in flight (not yet succeeded, failed or canceled). */
function requireNoPaymentInFlight(payments: VendorPayment[]): void {
  const open = payments.find((p) => IN_FLIGHT.has(p.status));
  if (open) throw new ApiError(Errors.conflict, { message: `The bill already has a vendor payment in progress (${open.id}, ${open.status}).`, validation_errors: { bill_id: 'has a payment in progress' } });
}

function lastAttempt(account: Account, bill: Bill): number {
  return paymentsOfBill(account, bill).reduce((max, p) => Math.max(max, p.attempt_number), 0);
}

function createAttempt(deps: Deps, account: Account, bill: Bill, speed: PaymentSpeed, attempt: number): VendorPayment {
  const now = account.clock.iso();
  const vendor = getVendor(account, bill.vendor_id);
  const payment: VendorPayment = {
    id: account.newId('vp'),
    bill_id: bill.id,
    vendor_id: bill.vendor_id,
    // Every attempt starts held; place() moves it to where it belongs at once.
    status: 'hold',
    payment_speed: speed,
    attempt_number: attempt,
    payment_method_id: vendor.bank_account?.payment_method_id ?? null,
    failure_reason: null,
    estimated_arrival_date: null,
    hold_until: null,
    hold_reason: null,
    sent_at: null,
    created_at: now,
    updated_at: now,
    job_id: null,
    fails_with: null,
  };
  vendorPayments(account).insert(payment);
  bills(account).update(bill.id, { updated_at: now });
  return place(deps, account, payment, bill);
}

// ---- retry, cancel, fail -------------------------------------------------------------------------

/** A new attempt (attempt_number + 1, same speed) after the bill's last failed one. */
export function retryVendorPayment(deps: Deps, account: Account, billId: string): VendorPayment {
  const bill = getBill(account, billId);
  const payments = paymentsOfBill(account, bill);
  requireNoPaymentInFlight(payments);
  const failed = [...payments].reverse().find((p) => p.status === 'failed');
  if (!failed) throw new ApiError(Errors.conflict, { message: `Bill ${billId} has no failed vendor payment to retry.`, validation_errors: { bill_id: 'has no failed payment' } });
  transition(billMachine, bill.status, 'retry');
  return createAttempt(deps, account, bill, failed.payment_speed, lastAttempt(account, bill) + 1);
}

export function cancelVendorPayment(account: Account, billId: string, paymentId: string): VendorPayment {
  const bill = getBill(account, billId);
  const payment = vendorPayments(account).get(paymentId);
  if (!payment || payment.bill_id !== bill.id) throw new ApiError(Errors.notFound, { message: `No vendor payment with id ${paymentId} for bill ${billId}.` });
  return cancel(account, payment);
}

function cancel(account: Account, payment: VendorPayment): VendorPayment {
  return move(account, payment, 'cancel', { job_id: null, hold_until: null });
}

export function bulkCancelVendorPayments(account: Account, items: Array<{ bill_id: string; payment_id: string }>): { results: BulkResult[] } {
  if (items.length > MAX_BULK_IDS) throw invalidFields({ items: `must hold at most ${MAX_BULK_IDS} items (got ${items.length})` });
  return {
    results: items.map((item): BulkResult => {
      const { error_reason } = perItem(() => cancelVendorPayment(account, item.bill_id, item.payment_id));
      return { bill_id: item.bill_id, success: error_reason === null, error_reason };
    }),
  };
}

/** Cancel the bill's unsent payments (the bill is being deleted or rejected). */
export function cancelOpenPayments(_deps: Deps, account: Account, bill: Bill): void {
  for (const payment of openPaymentsOf(account, bill)) cancel(account, payment);
}

/** The bill's pay date changed: its unsent payments follow it. */
export function reschedulePayments(deps: Deps, account: Account, bill: Bill): void {
  for (const payment of openPaymentsOf(account, bill)) place(deps, account, payment, bill);
}

/** Fail a payment now (control plane): the bill becomes failed. */
export function failVendorPayment(account: Account, paymentId: string, reason: string): VendorPayment {
  const payment = vendorPayments(account).require(paymentId, 'vendor payment');
  transition(vendorPaymentMachine, payment.status, 'fail');
  const bill = getBill(account, payment.bill_id);
  if (canTransition(billMachine, bill.status, 'fail')) moveBill(account, bill, 'fail', SYSTEM, reason);
  return move(account, payment, 'fail', { failure_reason: reason, job_id: null });
}

// ---- the vendor's side: deactivation, reactivation, new bank account -------------------------------

function unsentPaymentsOfVendor(account: Account, vendorId: string): VendorPayment[] {
  return [...vendorPayments(account).newest({ field: 'vendor_id', value: vendorId })].filter((p) => OPEN.has(p.status));
}

export function vendorHasPaymentInProcessing(account: Account, vendorId: string): boolean {
  for (const p of vendorPayments(account).newest({ field: 'vendor_id', value: vendorId })) if (p.status === 'processing') return true;
  return false;
}

/** Re-place every unsent payment of the vendor: held ones are released once nothing holds them. */
export function replaceVendorPayments(deps: Deps, account: Account, vendorId: string, { onlyHeld = false } = {}): void {
  const payments = unsentPaymentsOfVendor(account, vendorId).filter((p) => !onlyHeld || p.status === 'hold');
  for (const payment of payments) place(deps, account, payment, getBill(account, payment.bill_id));
}

// ---- due jobs ------------------------------------------------------------------------------------

function current(account: Account, job: JobData): VendorPayment | undefined {
  const payment = vendorPayments(account).get(String(job.payload.payment_id));
  return payment && payment.job_id === job.id ? payment : undefined;
}

export function registerVendorPaymentJobs(deps: Deps): void {
  deps.scheduler.register(JOBS.due, (account, job) => {
    const payment = current(account, job);
    if (!payment) return;
    const next = deps.scheduler.schedule(account, JOBS.send, account.clock.nowMs() + SEND_DELAY_MS, { payment_id: payment.id });
    move(account, payment, 'due', { hold_until: null, job_id: next.id });
  });
  deps.scheduler.register(JOBS.send, (account, job) => {
    const payment = current(account, job);
    if (!payment) return;
    const bill = getBill(account, payment.bill_id);
    const vendor = vendors(account).get(payment.vendor_id);
    const sentAt = account.clock.iso();
    const now = Date.parse(sentAt);
    const settle = deps.scheduler.schedule(account, JOBS.settle, now + SETTLEMENT_MS[payment.payment_speed], { payment_id: payment.id });
    moveBill(account, bill, 'process');
    move(account, payment, 'send', {
      sent_at: sentAt,
      estimated_arrival_date: calendarDate(now + SETTLEMENT_MS[payment.payment_speed]),
      fails_with: TEST_ACCOUNT_FAILURES[vendor?.bank_account?.account_number ?? ''] ?? null,
      job_id: settle.id,
    });
  });
  deps.scheduler.register(JOBS.settle, (account, job) => {
    const payment = current(account, job);
    if (!payment) return;
    const bill = getBill(account, payment.bill_id);
    if (payment.fails_with) {
      moveBill(account, bill, 'fail', SYSTEM, payment.fails_with);
      move(account, payment, 'fail', { failure_reason: payment.fails_with, job_id: null });
    } else {
      moveBill(account, bill, 'settle');
      move(account, payment, 'settle', { job_id: null });
    }
  });
}

