// Owns customer payments (transactions): their state machine and clock (pending -> processing ->
// succeeded or failed), how the invoice and payment request follow, refunds and chargebacks, and
// the payment_* event payloads. Every way of paying (hosted pages, checkout, control plane, autopay)
// goes through payInvoice or startPayment.
import type { Deps } from '../../deps.js';
import { withCapitalArticle } from '../../article.js';
import { ApiError, Errors } from '../../errors.js';
import type { Account } from '../../store/store.js';
import { customers } from '../customers/customers.js';
import { applyTransition, canTransition, defineMachine } from '../machine.js';
import { amountDue, getInvoice, invoiceMachine, invoices, isPayable, moveInvoice, reopenEvent, type Invoice } from '../invoices/invoices.js';
import { defaultKind, paymentMethods, type PaymentMethodRecord } from '../payment-methods/payment-methods.js';
import { addToPayout } from '../payouts/payouts.js';
import { cents, feeFor, isCents, type MethodKind } from './money.js';
import { payments, type Payment, type PaymentSource, type PaymentType } from './records.js';

export const paymentMachine = defineMachine({
  resource: 'payment',
  states: ['pending', 'processing', 'succeeded', 'failed', 'refunded'] as const,
  events: ['process', 'succeed', 'fail', 'refund', 'refund_partial', 'chargeback'] as const,
  internal: ['process', 'succeed', 'fail'],
  table: {
    pending: { process: 'processing', fail: 'failed' },
    processing: { succeed: 'succeeded', fail: 'failed' },
    succeeded: { refund: 'refunded', refund_partial: 'succeeded', chargeback: 'succeeded' },
    failed: {},
    refunded: {},
  },
});

// Sandbox choices (docs/gaps-and-choices.md): a payment is submitted one minute after it is made,
// then settles after a time that depends on how it is paid.
export const PROCESSING_DELAY_SECONDS = 60;
export const SETTLEMENT_SECONDS: Record<MethodKind, number> = {
  card: 3600,
  same_day_ach: 4 * 3600,
  standard_ach: 2 * 86_400,
  manual: 0,
};
/** Test value: a payment of exactly this amount succeeds, then draws a chargeback one day later. */
export const CHARGEBACK_AMOUNT = 666.66;
export const CHARGEBACK_DELAY_SECONDS = 86_400;

export const PROCESS_JOB = 'payment.process';
export const SETTLE_JOB = 'payment.settle';
export const CHARGEBACK_JOB = 'payment.chargeback';

export interface PaymentStart {
  type: PaymentType;
  amount: number;
  currency: string;
  customer_id: string | null;
  invoice_id: string | null;
  payment_request_id: string | null;
  kind: MethodKind;
  method_id: string | null;
  /** The outcome the method's test values decide (null: it succeeds). */
  failure: string | null;
  due_date: string | null;
  source: PaymentSource;
}

/**
 * Make a payment. Card declines are known at once (the payment is failed when answered, like a card
 * authorization); everything else goes on the clock and may still fail at settlement (bank returns).
 */
export function startPayment(deps: Deps, account: Account, start: PaymentStart): Payment {
  const now = account.clock.iso();
  const payment = payments(account).insert({
    id: account.newId('pay'),
    created_at: now,
    updated_at: now,
    type: start.type,
    status: 'pending',
    amount: cents(start.amount),
    currency: start.currency,
    customer_id: start.customer_id,
    invoice_id: start.invoice_id,
    payment_request_id: start.payment_request_id,
    payment_method: start.kind,
    payment_method_id: start.method_id,
    failure_reason: null,
    fees: feeFor(start.kind, start.amount),
    due_date: start.due_date,
    payout_id: null,
    refunded_amount: 0,
    chargeback: false,
    chargeback_reason: null,
    source: start.source,
    planned_failure: start.failure,
    settled_at: null,
  });
  if (start.failure && start.kind === 'card') {
    markFailed(deps, account, payment, start.failure);
    return payment;
  }
  deps.scheduler.schedule(account, PROCESS_JOB, account.clock.nowMs() + PROCESSING_DELAY_SECONDS * 1000, { payment_id: payment.id });
  return payment;
}

export interface PayInvoiceInput {
  payment_method_id?: string;
  amount?: number;
  /** How to pay with the method (card, standard_ach, same_day_ach; manual needs no method). */
  payment_method?: MethodKind;
  source: PaymentSource;
}

/** 409 when no payment may start on the invoice (its status, or payments in flight cover it). */
export function refuseUnpayable(invoice: Invoice): void {
  if (isPayable(invoice)) return;
  throw new ApiError(Errors.conflict, {
    message: canTransition(invoiceMachine, invoice.status, 'start_payment') ? 'Payments in flight already cover the whole invoice.' : `The invoice is ${invoice.status} and cannot be paid.`,
    validation_errors: { status: `is ${invoice.status}` },
  });
}

/** The amount to pay (what is due when none is given); 422 unless it is in cents and within what is due. */
export function payableAmount(invoice: Invoice, amount?: number): number {
  const due = amountDue(invoice);
  const chosen = amount ?? due;
  if (!(chosen > 0) || !isCents(chosen) || chosen > due) {
    throw new ApiError(Errors.unprocessable, {
      message: `The amount must be more than 0, in cents, and at most the amount due (${due.toFixed(2)}).`,
      validation_errors: { amount: `must be more than 0 and at most ${due.toFixed(2)}` },
    });
  }
  return chosen;
}

/** Pay an invoice as its customer: the hosted page, checkout, autopay and the control plane use this. */
/**
 * Autopay (sandbox choice of the spec's exclude_from_autopay): a new invoice is charged at once with
 * its customer's default payment method. Every way of creating an invoice calls it right after
 * createInvoice (here, above invoices, so that invoices.ts does not import payments).
 */
export function autopay(deps: Deps, account: Account, invoice: Invoice): void {
  if (invoice.exclude_from_autopay || !customers(account).get(invoice.customer_id)?.default_payment_method_id) return;
  payInvoice(deps, account, invoice.id, { source: 'autopay' });
}

export function payInvoice(deps: Deps, account: Account, invoiceId: string, input: PayInvoiceInput): Payment {
  const invoice = getInvoice(account, invoiceId);
  refuseUnpayable(invoice);
  const kind = input.payment_method;
  let method: PaymentMethodRecord | null = null;
  if (kind !== 'manual') {
    const methodId = input.payment_method_id ?? customers(account).get(invoice.customer_id)?.default_payment_method_id;
    if (!methodId) {
      throw new ApiError(Errors.unprocessable, { message: 'The customer has no payment method to pay with.', validation_errors: { payment_method_id: 'is required: the customer has no default payment method' } });
    }
    method = paymentMethods(account).get(methodId) ?? null;
    if (!method || method.customer_id !== invoice.customer_id) {
      throw new ApiError(Errors.unprocessable, { message: 'The payment method is not one of the invoice customer\'s methods.', validation_errors: { payment_method_id: 'is not a payment method of the invoice\'s customer' } });
    }
    if (kind && (kind === 'card') !== (method.type === 'card')) {
      throw new ApiError(Errors.unprocessable, { message: `${withCapitalArticle(method.type)} method cannot pay as ${kind}.`, validation_errors: { payment_method: `does not match the method's type (${method.type})` } });
    }
  }
  const amount = payableAmount(invoice, input.amount);
  const payment = startPayment(deps, account, {
    type: 'invoice_payment',
    amount,
    currency: invoice.currency,
    customer_id: invoice.customer_id,
    invoice_id: invoice.id,
    payment_request_id: null,
    kind: kind ?? (method ? defaultKind(method) : 'manual'),
    method_id: method?.id ?? null,
    failure: method?.failure ?? null,
    due_date: invoice.due_date,
    source: input.source,
  });
  if (payment.status !== 'failed') {
    moveInvoice(deps, account, invoice, 'start_payment', { amount_pending: cents(invoice.amount_pending + payment.amount) });
  }
  return payment;
}

function movePayment(account: Account, payment: Payment, event: (typeof paymentMachine.events)[number], changes: Partial<Payment> = {}): Payment {
  return applyTransition(paymentMachine, payments(account), payment, event, account.clock.iso(), changes);
}

export function runProcessJob(deps: Deps, account: Account, paymentId: string): void {
  const payment = payments(account).get(paymentId);
  if (!payment || !canTransition(paymentMachine, payment.status, 'process')) return;
  movePayment(account, payment, 'process');
  deps.scheduler.schedule(account, SETTLE_JOB, account.clock.nowMs() + SETTLEMENT_SECONDS[payment.payment_method] * 1000, { payment_id: payment.id });
}

export function runSettleJob(deps: Deps, account: Account, paymentId: string): void {
  const payment = payments(account).get(paymentId);
  if (!payment || payment.status !== 'processing') return;
  if (payment.planned_failure) failPayment(deps, account, payment, payment.planned_failure);
  else succeedPayment(deps, account, payment);
}

function succeedPayment(deps: Deps, account: Account, payment: Payment): void {
  movePayment(account, payment, 'succeed', { settled_at: account.clock.iso() });
  deps.events.record(account, 'payment_succeeded', payment.id, paymentEventData(payment));
  const invoice = payment.invoice_id ? invoices(account).get(payment.invoice_id) : undefined;
  if (invoice) {
    const paid = cents(invoice.amount_paid + payment.amount);
    const pending = cents(invoice.amount_pending - payment.amount);
    if (paid >= invoice.total) moveInvoice(deps, account, invoice, 'settle', { amount_paid: paid, amount_pending: pending, paid_at: account.clock.iso() }, payment.id);
    else moveInvoice(deps, account, invoice, pending > 0 ? 'start_payment' : reopenEvent(account, invoice), { amount_paid: paid, amount_pending: pending });
  }
  addToPayout(deps, account, payment, { direction: 'credit', amount: payment.amount, fee: payment.fees, id: payment.id, description: describe(account, payment) });
  if (payment.amount === CHARGEBACK_AMOUNT) {
    deps.scheduler.schedule(account, CHARGEBACK_JOB, account.clock.nowMs() + CHARGEBACK_DELAY_SECONDS * 1000, { payment_id: payment.id });
  }
}

/** The payment moves to failed with its reason, and payment_failed is emitted. */
function markFailed(deps: Deps, account: Account, payment: Payment, reason: string): void {
  movePayment(account, payment, 'fail', { failure_reason: reason });
  deps.events.record(account, 'payment_failed', payment.id, paymentEventData(payment));
}

/** A pending or processing payment fails: payment_failed, and the invoice goes back to unpaid. */
export function failPayment(deps: Deps, account: Account, payment: Payment, reason: string): Payment {
  markFailed(deps, account, payment, reason);
  deps.scheduler.cancel(account, (job) => (job.kind === PROCESS_JOB || job.kind === SETTLE_JOB) && job.payload.payment_id === payment.id);
  const invoice = payment.invoice_id ? invoices(account).get(payment.invoice_id) : undefined;
  if (invoice && invoice.status === 'RECEIVED') {
    const pending = cents(invoice.amount_pending - payment.amount);
    moveInvoice(deps, account, invoice, pending > 0 ? 'start_payment' : reopenEvent(account, invoice), { amount_pending: pending });
  }
  return payment;
}

/** Refund all (no amount) or part of a succeeded payment without a chargeback; the refund is debited from a payout. */
export function refundPayment(deps: Deps, account: Account, paymentId: string, amount?: number): Payment {
  const payment = payments(account).require(paymentId, 'payment');
  // The chargeback already debited what was not refunded: a refund now would take it from the partner twice.
  if (payment.chargeback) {
    throw new ApiError(Errors.conflict, {
      message: 'A chargeback was opened on this payment: its money was already returned to the customer, so it cannot be refunded.',
      validation_errors: { chargeback: 'is true' },
    });
  }
  const left = cents(payment.amount - payment.refunded_amount);
  const refund = amount ?? left;
  if (payment.status === 'succeeded' && (!isCents(refund) || refund > left || refund <= 0)) {
    throw new ApiError(Errors.unprocessable, { message: `At most ${left.toFixed(2)} is left to refund.`, validation_errors: { amount: `must be at most ${left.toFixed(2)}, in cents` } });
  }
  const refunded = cents(payment.refunded_amount + refund);
  movePayment(account, payment, refunded >= payment.amount ? 'refund' : 'refund_partial', { refunded_amount: refunded });
  deps.events.record(account, 'payment_refunded', payment.id, { ...paymentEventData(payment), refund_amount: refund });
  addToPayout(deps, account, payment, { direction: 'debit', amount: refund, fee: 0, id: account.newId('rf'), description: `Refund of ${payment.id}` });
  return payment;
}

/** The customer disputes a succeeded payment: what was not refunded is debited from a payout. */
export function chargebackPayment(deps: Deps, account: Account, paymentId: string, reason = 'general'): Payment {
  const payment = payments(account).require(paymentId, 'payment');
  if (payment.chargeback) {
    throw new ApiError(Errors.conflict, { message: 'A chargeback was already opened on this payment.', validation_errors: { chargeback: 'is already true' } });
  }
  movePayment(account, payment, 'chargeback', { chargeback: true, chargeback_reason: reason });
  deps.events.record(account, 'payment_chargeback', payment.id, { ...paymentEventData(payment), chargeback_reason: reason });
  const disputed = cents(payment.amount - payment.refunded_amount);
  if (disputed > 0) addToPayout(deps, account, payment, { direction: 'debit', amount: disputed, fee: 0, id: account.newId('cb'), description: `Chargeback of ${payment.id}` });
  return payment;
}

export function runChargebackJob(deps: Deps, account: Account, paymentId: string): void {
  const payment = payments(account).get(paymentId);
  if (!payment || payment.chargeback || !canTransition(paymentMachine, payment.status, 'chargeback')) return;
  chargebackPayment(deps, account, paymentId, 'fraudulent');
}

function describe(account: Account, payment: Payment): string {
  const invoice: Invoice | undefined = payment.invoice_id ? invoices(account).get(payment.invoice_id) : undefined;
  if (invoice) return `Payment for ${invoice.invoice_number}`;
  return `Payment request ${payment.payment_request_id ?? ''}`.trim();
}

export function paymentView(payment: Payment) {
  return {
    id: payment.id,
    created_at: payment.created_at,
    type: payment.type,
    status: payment.status,
    amount: payment.amount,
    currency: payment.currency,
    customer_id: payment.customer_id,
    invoice_id: payment.invoice_id,
    payment_request_id: payment.payment_request_id,
    payment_method: payment.payment_method,
    payment_method_id: payment.payment_method_id,
    failure_reason: payment.failure_reason,
    fees: payment.fees,
    sub_total: payment.amount,
    total: payment.amount,
    due_date: payment.due_date,
    payout_id: payment.payout_id,
    refunded_amount: payment.refunded_amount,
    chargeback: payment.chargeback,
  };
}

export function paymentEventData(payment: Payment): Record<string, unknown> {
  const data: Record<string, unknown> = {
    payment_id: payment.id,
    customer_id: payment.customer_id,
    invoice_id: payment.invoice_id,
    payment_request_id: payment.payment_request_id,
    amount: payment.amount,
    currency: payment.currency,
    status: payment.status,
    payment_method: payment.payment_method,
    payment_method_id: payment.payment_method_id,
  };
  if (payment.failure_reason) data.failure_reason = payment.failure_reason;
  if (payment.chargeback_reason) data.chargeback_reason = payment.chargeback_reason;
  return data;
}
