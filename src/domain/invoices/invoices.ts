// Owns invoice records, their state machine (status follows the money and the account clock), the
// rules of creation, archive and restore, the overdue job, and the invoice_* event payloads.
import type { Deps } from '../../deps.js';
import { ApiError, Errors, invalidFields } from '../../errors.js';
import { defineCollection, type Account } from '../../store/store.js';
import { customers, type Customer } from '../customers/customers.js';
import { applyTransition, canTransition, defineMachine } from '../machine.js';
import { cents, isCents, MAX_AMOUNT } from '../payments/money.js';
import { addDays, startOfCalendarDate } from '../dates.js';

export type InvoiceStatus = 'UPCOMING' | 'OVERDUE' | 'RECEIVED' | 'PAID' | 'ARCHIVED';
export type InvoiceSource = 'api' | 'accounting_integration';

export interface InvoiceLineItem {
  description: string | null;
  quantity: number;
  amount: number;
  total: number;
}

export interface StoredPdf {
  blob_id: string;
  path: string;
  size: number;
  uploaded_at: string;
}

export interface Invoice {
  id: string;
  created_at: string;
  updated_at: string;
  customer_id: string;
  invoice_number: string;
  status: InvoiceStatus;
  currency: 'USD';
  due_date: string;
  line_items: InvoiceLineItem[];
  sub_total: number;
  total: number;
  memo: string | null;
  last_notification_at: string | null;
  source: InvoiceSource;
  exclude_from_autopay: boolean;
  /** Settled payments so far. */
  amount_paid: number;
  /** Payments in flight (pending or processing). */
  amount_pending: number;
  paid_at: string | null;
  pdf: StoredPdf | null;
}

export interface InvoiceInput {
  customer_id: string;
  due_date?: string;
  exclude_from_autopay?: boolean;
  currency?: 'USD';
  memo?: string;
  line_items: Array<{ description?: string; quantity?: number; amount: number }>;
}

export const invoices = defineCollection<Invoice>('invoices', ['customer_id', 'status', 'invoice_number']);

// The spec names the states but not the moves; these follow the money. Archive of a paid or
// in-flight invoice is refused with 400 (the spec lists 400 for archive and restore).
export const invoiceMachine = defineMachine({
  resource: 'invoice',
  states: ['UPCOMING', 'OVERDUE', 'RECEIVED', 'PAID', 'ARCHIVED'] as const,
  events: ['become_overdue', 'start_payment', 'settle', 'reopen', 'reopen_overdue', 'archive', 'restore', 'restore_overdue'] as const,
  internal: ['become_overdue', 'settle', 'reopen', 'reopen_overdue', 'restore_overdue'],
  table: {
    UPCOMING: { become_overdue: 'OVERDUE', start_payment: 'RECEIVED', archive: 'ARCHIVED' },
    OVERDUE: { start_payment: 'RECEIVED', archive: 'ARCHIVED' },
    RECEIVED: { start_payment: 'RECEIVED', settle: 'PAID', reopen: 'UPCOMING', reopen_overdue: 'OVERDUE' },
    PAID: {},
    ARCHIVED: { restore: 'UPCOMING', restore_overdue: 'OVERDUE' },
  },
  refusal: Errors.invalidState400,
});

export type InvoiceEvent = (typeof invoiceMachine.events)[number];

export const OVERDUE_JOB = 'invoice.overdue';


export function findByNumber(account: Account, number: string): Invoice | undefined {
  return invoices(account).findBy('invoice_number', number);
}

export function getInvoice(account: Account, id: string): Invoice {
  return invoices(account).require(id, 'invoice');
}

/** The due date has passed on the account clock (the day after due_date has begun, UTC). */
function isPastDue(account: Account, invoice: Pick<Invoice, 'due_date'>): boolean {
  return account.clock.today() > invoice.due_date;
}

export function amountDue(invoice: Invoice): number {
  return cents(invoice.total - invoice.amount_paid - invoice.amount_pending);
}

/** A payment may start: the machine allows start_payment and payments in flight leave something due. */
export function isPayable(invoice: Invoice): boolean {
  return canTransition(invoiceMachine, invoice.status, 'start_payment') && amountDue(invoice) > 0;
}

function checkLineItems(items: InvoiceInput['line_items']): InvoiceLineItem[] {
  const errors: Record<string, string> = {};
  const lines = items.map((item, i) => {
    const quantity = item.quantity ?? 1;
    if (!(item.amount > 0)) errors[`line_items[${i}].amount`] = 'must be greater than 0';
    else if (!isCents(item.amount)) errors[`line_items[${i}].amount`] = 'must have at most two decimals (dollars and cents)';
    else if (item.amount * quantity > MAX_AMOUNT) errors[`line_items[${i}].amount`] = `amount x quantity must be at most ${MAX_AMOUNT}`;
    return { description: item.description ?? null, quantity, amount: item.amount, total: cents(item.amount * quantity) };
  });
  if (Object.keys(errors).length) throw invalidFields(errors);
  return lines;
}

function requireActiveCustomer(account: Account, customerId: string): Customer {
  const customer = customers(account).get(customerId);
  if (!customer || customer.status !== 'active') {
    throw new ApiError(Errors.unprocessable, {
      message: customer ? 'The customer is archived.' : `No customer with id ${customerId} in this account.`,
      validation_errors: { customer_id: customer ? 'is archived' : 'does not exist' },
    });
  }
  return customer;
}

/** Currency, line items and total: the checks of create that do not depend on the customer. */
function checkedLines(input: InvoiceInput): { lineItems: InvoiceLineItem[]; subTotal: number } {
  if (input.currency !== undefined && input.currency !== 'USD') throw invalidFields({ currency: 'must be USD' });
  const lineItems = checkLineItems(input.line_items ?? []);
  const subTotal = cents(lineItems.reduce((sum, l) => sum + l.total, 0));
  if (subTotal > MAX_AMOUNT) throw invalidFields({ line_items: `the total must be at most ${MAX_AMOUNT}` });
  return { lineItems, subTotal };
}

export function createInvoice(deps: Deps, account: Account, input: InvoiceInput, options: { source: InvoiceSource } = { source: 'api' }): Invoice {
  const customer = requireActiveCustomer(account, input.customer_id);
  const { lineItems, subTotal } = checkedLines(input);
  const now = account.clock.iso();
  const dueDate = input.due_date ?? account.clock.today();
  const invoice: Invoice = {
    id: account.newId('inv'),
    created_at: now,
    updated_at: now,
    customer_id: customer.id,
    invoice_number: `INV-${String(account.next('invoice_number')).padStart(6, '0')}`,
    status: isPastDue(account, { due_date: dueDate }) ? 'OVERDUE' : 'UPCOMING',
    currency: 'USD',
    due_date: dueDate,
    line_items: lineItems,
    sub_total: subTotal,
    total: subTotal,
    memo: input.memo ?? null,
    last_notification_at: null,
    source: options.source,
    exclude_from_autopay: input.exclude_from_autopay ?? false,
    amount_paid: 0,
    amount_pending: 0,
    paid_at: null,
    pdf: null,
  };
  invoices(account).insert(invoice);
  if (invoice.status === 'UPCOMING') scheduleOverdue(deps, account, invoice);
  deps.events.record(account, 'invoice_created', invoice.id, invoiceEventData(invoice));
  // Every caller then runs autopay (src/domain/payments/payments.ts), which needs this module.
  return invoice;
}

/** The overdue check runs when the day after the due date begins (UTC) on the account clock. */
function scheduleOverdue(deps: Deps, account: Account, invoice: Invoice): void {
  const at = addDays(startOfCalendarDate(invoice.due_date), 1);
  deps.scheduler.schedule(account, OVERDUE_JOB, at, { invoice_id: invoice.id });
}

export function runOverdueJob(deps: Deps, account: Account, invoiceId: string): void {
  const invoice = invoices(account).get(invoiceId);
  if (!invoice || !canTransition(invoiceMachine, invoice.status, 'become_overdue') || !isPastDue(account, invoice)) return;
  moveInvoice(deps, account, invoice, 'become_overdue');
}

/** Apply one machine event, stamp, and emit the matching event (invoice_paid, _archived or _updated). */
export function moveInvoice(deps: Deps, account: Account, invoice: Invoice, event: InvoiceEvent, extra: Partial<Invoice> = {}, paymentId?: string): Invoice {
  const before = invoice.status;
  const { status } = applyTransition(invoiceMachine, invoices(account), invoice, event, account.clock.iso(), extra);
  if (status === 'PAID') {
    deps.events.record(account, 'invoice_paid', invoice.id, { ...invoiceEventData(invoice), payment_id: paymentId ?? '', paid_at: invoice.paid_at ?? account.clock.iso() });
  } else if (status === 'ARCHIVED') {
    deps.events.record(account, 'invoice_archived', invoice.id, invoiceEventData(invoice));
  } else if (status !== before || Object.keys(extra).length) {
    deps.events.record(account, 'invoice_updated', invoice.id, invoiceEventData(invoice));
  }
  return invoice;
}

export function archiveInvoice(deps: Deps, account: Account, id: string): Invoice {
  return moveInvoice(deps, account, getInvoice(account, id), 'archive');
}

/** Back to the status it would have now: UPCOMING, or OVERDUE once the due date has passed. */
export function restoreInvoice(deps: Deps, account: Account, id: string): Invoice {
  const invoice = getInvoice(account, id);
  const overdue = isPastDue(account, invoice);
  moveInvoice(deps, account, invoice, overdue ? 'restore_overdue' : 'restore');
  if (!overdue) scheduleOverdue(deps, account, invoice);
  return invoice;
}

/** The status an unpaid invoice returns to when a payment fails or settles partly. */
export function reopenEvent(account: Account, invoice: Invoice): InvoiceEvent {
  return isPastDue(account, invoice) ? 'reopen_overdue' : 'reopen';
}

export function invoiceView(invoice: Invoice) {
  return {
    id: invoice.id,
    created_at: invoice.created_at,
    customer_id: invoice.customer_id,
    invoice_number: invoice.invoice_number,
    status: invoice.status,
    currency: invoice.currency,
    due_date: invoice.due_date,
    line_items: invoice.line_items,
    sub_total: invoice.sub_total,
    total: invoice.total,
    memo: invoice.memo,
    last_notification_at: invoice.last_notification_at,
    pdf_uploaded: invoice.pdf !== null,
    source: invoice.source,
  };
}

export function invoiceEventData(invoice: Invoice): Record<string, unknown> {
  return {
    invoice_id: invoice.id,
    customer_id: invoice.customer_id,
    invoice_number: invoice.invoice_number,
    status: invoice.status,
    total: invoice.total,
    currency: invoice.currency,
    due_date: invoice.due_date,
  };
}
