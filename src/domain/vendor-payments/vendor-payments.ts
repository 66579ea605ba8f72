// Owns what moves vendor payments (funding attempts of bills) beyond their records: idempotent
// initiation, retry, cancel by the partner, the lifecycle jobs on the account clock (ready, sent,
// settled or failed per payment_speed), and a vendor's payments following it. The records, their
// state table and view live in records.ts, which bills read without importing this module.
import type { Deps } from '../../deps.js';
import { ApiError, Errors, invalidFields } from '../../errors.js';
import type { JobData } from '../../store/store.js';
import { type Account } from '../../store/store.js';
import { defineIdempotencyKeys } from '../../store/idempotency.js';
import { canTransition, transition } from '../machine.js';
import { billMachine, bills, getBill, moveBill, perItem, SYSTEM, type Bill, type BulkResult, MAX_BULK_IDS } from '../bills/bills.js';
import { getVendor, vendors } from '../vendors/vendors.js';
import { calendarDate } from '../dates.js';
import {
  cancel, IN_FLIGHT, JOBS, move, OPEN, paymentsOfBill, place, SEND_DELAY_MS, SETTLEMENT_MS, TEST_ACCOUNT_FAILURES,
  vendorPaymentMachine, vendorPayments, type PaymentSpeed, type VendorPayment,
} from './records.js';

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
    const { value: payment, error_reason } = perItem(account, () => {
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

export function bulkCancelVendorPayments(account: Account, items: Array<{ bill_id: string; payment_id: string }>): { results: BulkResult[] } {
  if (items.length > MAX_BULK_IDS) throw invalidFields({ items: `must hold at most ${MAX_BULK_IDS} items (got ${items.length})` });
  return {
    results: items.map((item): BulkResult => {
      const { error_reason } = perItem(account, () => cancelVendorPayment(account, item.bill_id, item.payment_id));
      return { bill_id: item.bill_id, success: error_reason === null, error_reason };
    }),
  };
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

