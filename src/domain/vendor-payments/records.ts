// Owns the vendor payment records: their state table, the collection, the view, and how an unsent
// payment follows its bill and vendor (hold, waiting_pay_date, ready) or is canceled. Below bills and
// vendor-payments.ts: bills read and cancel their payments through it without importing the
// initiation, retry and job code that itself needs bills.
import type { Deps } from '../../deps.js';
import { defineCollection, type Account } from '../../store/store.js';
import { applyTransition, defineMachine } from '../machine.js';
import type { Bill } from '../bills/bills.js';
import { getVendor, type Vendor } from '../vendors/vendors.js';
import { calendarDate, startOfCalendarDate } from '../dates.js';
import { DAY_MS as DAY, HOUR_MS as HOUR, MINUTE_MS as MINUTE } from '../../clock/durations.js';

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

export const OPEN: ReadonlySet<VendorPaymentStatus> = new Set(['hold', 'waiting_pay_date', 'ready']);
export const IN_FLIGHT: ReadonlySet<VendorPaymentStatus> = new Set(['hold', 'waiting_pay_date', 'ready', 'processing']);


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

export function move(account: Account, payment: VendorPayment, event: PaymentEvent, changes: Partial<VendorPayment> = {}): VendorPayment {
  return applyTransition(vendorPaymentMachine, vendorPayments(account), payment, event, account.clock.iso(), changes);
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
export function place(deps: Deps, account: Account, payment: VendorPayment, bill: Bill): VendorPayment {
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

export function cancel(account: Account, payment: VendorPayment): VendorPayment {
  return move(account, payment, 'cancel', { job_id: null, hold_until: null });
}

/** Cancel the bill's unsent payments (the bill is being deleted or rejected). */
export function cancelOpenPayments(_deps: Deps, account: Account, bill: Bill): void {
  for (const payment of openPaymentsOf(account, bill)) cancel(account, payment);
}

/** The bill's pay date changed: its unsent payments follow it. */
export function reschedulePayments(deps: Deps, account: Account, bill: Bill): void {
  for (const payment of openPaymentsOf(account, bill)) place(deps, account, payment, bill);
}
