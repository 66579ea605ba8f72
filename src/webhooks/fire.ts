// Owns POST /_sandbox/events: a registry of builders, one per topic, that make the state the topic
// says through the domain's own operations (as the Stripe CLI's fixtures do) and fire the event those
// operations record. Without entity_id a builder makes fresh objects (`invoice_paid`: a customer, a
// card, an invoice, its payment settled now); with one it moves that object (an unpaid invoice is
// paid), restates the event when the object is already in that state, and otherwise refuses (409).
// A last wall checks that the object's state and the fired event agree; the unit of work undoes all.
import type { Faker } from '@faker-js/faker';
import type { Deps } from '../deps.js';
import { eventLog, type EventRecord, type Topic } from '../events/events.js';
import { ApiError, Errors } from '../errors.js';
import type { Account } from '../store/store.js';
import { createCustomer, customerEventData, getCustomer, moveCustomer, updateCustomer, type Customer } from '../domain/customers/customers.js';
import { amountDue, archiveInvoice, createInvoice, getInvoice, invoiceEventData, restoreInvoice, type Invoice } from '../domain/invoices/invoices.js';
import { addCardMethod, deleteMethod, paymentMethodEventData, paymentMethods, setDefaultMethod, type PaymentMethodRecord } from '../domain/payment-methods/payment-methods.js';
import { autopay, chargebackPayment, failPayment, payInvoice, paymentEventData, refundPayment, runProcessJob, runSettleJob } from '../domain/payments/payments.js';
import { payments, type Payment } from '../domain/payments/records.js';
import { FAILING_PAYOUT_AMOUNT, payoutEventData, payouts, runPayoutProcessJob, runPayoutSettleJob, type Payout } from '../domain/payouts/payouts.js';
import { addDays, calendarDate } from '../domain/dates.js';

/** An object a fired event made, for the answer (and the command line) to name. */
export interface Made {
  object: 'customer' | 'payment_method' | 'invoice' | 'payment' | 'payout';
  id: string;
}

/** What one firing works with: the account, and the list of what it made. */
export interface Firing {
  deps: Deps;
  account: Account;
  made: Made[];
}

/**
 * The object the event is about, and its event data as it stands now: used only when no operation
 * of the build recorded the topic's event for it (the object was already in that state: restated).
 */
export interface Target {
  entity_id: string;
  data: () => Record<string, unknown>;
}

export type EventBuilder = (firing: Firing, entityId: string | undefined) => Target;

/** The factories' module, with faker (large): loaded by the first fired event, not at start. */
let factories: typeof import('../fixtures/factories.js') | undefined;

/** Load what firing an event needs; call (and await) before fireEvent. */
export async function loadEventFactories(): Promise<void> {
  factories ??= await import('../fixtures/factories.js');
}

/** Faker seeded from the account's generator, so the same seed makes the same objects. */
export function fakerFor(account: Account): Faker {
  if (!factories) throw new Error('fakerFor is called before loadEventFactories()');
  return factories.numberSeededFaker(account.random.int(0, 2 ** 31 - 1));
}

/** The first item of an iteration (the newest, for a collection's newest()), or undefined. */
function firstOf<T>(items: Iterator<T>): T | undefined {
  const next = items.next();
  return next.done ? undefined : next.value;
}

// ---- making objects (each through the domain, noted in what the firing made) --------------------

export function fakeCustomer(deps: Deps, account: Account): Customer {
  const faker = fakerFor(account);
  const name = faker.company.name();
  return createCustomer(deps, account, {
    name,
    legal_name: `${name} ${faker.helpers.arrayElement(['LLC', 'Inc.', 'Corp.'])}`,
    email: faker.internet.email({ provider: 'example.com' }).toLowerCase(),
    street_address: faker.location.streetAddress(),
    city: faker.location.city(),
    state: faker.location.state({ abbreviated: true }),
    postal_code: faker.location.zipCode('#####'),
    country: 'US',
  });
}

function newCustomer(f: Firing): Customer {
  const customer = fakeCustomer(f.deps, f.account);
  f.made.push({ object: 'customer', id: customer.id });
  return customer;
}

/** A card for the customer (a test token: tok_visa succeeds, tok_card_declined is declined). */
function newCard(f: Firing, customer: Customer, token = 'tok_visa'): PaymentMethodRecord {
  const method = addCardMethod(f.deps, f.account, customer.id, { card_provider_token: token, custom_name: 'Company card', provider: 'evervault' });
  f.made.push({ object: 'payment_method', id: method.id });
  return method;
}

/** An invoice due in 30 days; autopay charges the customer's default card, as every invoice made through the API. */
function newInvoice(f: Firing, customer: Customer, amount?: number): Invoice {
  const faker = fakerFor(f.account);
  const invoice = createInvoice(f.deps, f.account, {
    customer_id: customer.id,
    due_date: calendarDate(addDays(f.account.clock.nowMs(), 30)),
    line_items: [{ description: faker.commerce.productName(), quantity: 1, amount: amount ?? faker.number.int({ min: 20, max: 900 }) }],
  });
  f.made.push({ object: 'invoice', id: invoice.id });
  autopay(f.deps, f.account, invoice);
  for (const payment of payments(f.account).newest({ field: 'invoice_id', value: invoice.id })) f.made.push({ object: 'payment', id: payment.id });
  return invoice;
}

/** A new customer paying a new invoice by card: the card payment autopay made (pending), or a declined one. */
function newCardPayment(f: Firing, { token = 'tok_visa', amount }: { token?: string; amount?: number } = {}): Payment {
  const customer = newCustomer(f);
  newCard(f, customer, token);
  const invoice = newInvoice(f, customer, amount);
  const payment = firstOf(payments(f.account).newest({ field: 'invoice_id', value: invoice.id }));
  if (!payment) throw new Error('autopay made no payment for a customer with a card');
  return payment;
}

/**
 * Submit and settle a pending or processing payment now, instead of on the account clock (its due
 * jobs then find nothing left to do). Settlement records payment_succeeded (or payment_failed for a
 * failing test value), invoice_paid when it pays the invoice off, and the payout it joins.
 */
function settleNow(f: Firing, payment: Payment): void {
  runProcessJob(f.deps, f.account, payment.id);
  runSettleJob(f.deps, f.account, payment.id);
  const payoutId = payments(f.account).require(payment.id, 'payment').payout_id;
  if (payoutId && !f.made.some((m) => m.id === payoutId)) f.made.push({ object: 'payout', id: payoutId });
}

/** A settled (succeeded) card payment of a new customer's new invoice, and the payout it joined. */
function newSucceededPayment(f: Firing, amount?: number): Payment {
  const payment = newCardPayment(f, { amount });
  settleNow(f, payment);
  return payment;
}

/** The payout a new settled payment joined (one per customer per day: a new customer's is new). */
function newPayout(f: Firing, amount?: number): Payout {
  const payment = payments(f.account).require(newSucceededPayment(f, amount).id, 'payment');
  return payouts(f.account).require(String(payment.payout_id), 'payout');
}

// ---- refusals ----------------------------------------------------------------------------------

/** 409: the named object's state does not allow the topic (and nothing was changed). */
function refuse(topic: Topic, id: string, why: string, state: string): never {
  throw new ApiError(Errors.conflict, {
    message: `Cannot fire ${topic} for ${id}: ${why}`,
    validation_errors: { entity_id: `is ${state}` },
  });
}

// ---- event data as an object stands (restated) -------------------------------------------------

/** The default method change of a customer as it stands: its previous default from the last such event. */
function defaultChange(account: Account, customer: Customer): Record<string, unknown> {
  let previous: string | null = null;
  for (const event of eventLog(account).newest({ field: 'topic', value: 'default_payment_method_changed' })) {
    if (event.entity_id !== customer.id) continue;
    if (event.data.payment_method_id === customer.default_payment_method_id) previous = (event.data.previous_payment_method_id as string | null) ?? null;
    break;
  }
  return { customer_id: customer.id, payment_method_id: customer.default_payment_method_id, previous_payment_method_id: previous };
}

function paymentData(payment: Payment, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { failure_reason: _f, chargeback_reason: _c, ...base } = paymentEventData(payment);
  return { ...base, ...extra };
}

/** invoice_paid as it stands: the payment that paid the invoice (its latest succeeded one) and when. */
function invoicePaidData(account: Account, invoice: Invoice): Record<string, unknown> {
  let payment: Payment | undefined;
  for (const candidate of payments(account).newest({ field: 'invoice_id', value: invoice.id })) {
    if (candidate.status === 'succeeded' || candidate.status === 'refunded') { payment = candidate; break; }
  }
  return { ...invoiceEventData(invoice), payment_id: payment?.id ?? '', paid_at: invoice.paid_at ?? payment?.settled_at ?? account.clock.iso() };
}

const restated = (entity_id: string, data: () => Record<string, unknown>): Target => ({ entity_id, data });

// ---- builders --------------------------------------------------------------------------------------

const IN_FLIGHT = new Set(['pending', 'processing']);

export const builders: Partial<Record<Topic, EventBuilder>> = {
  customer_created(f, id) {
    const customer = id ? getCustomer(f.account, id) : newCustomer(f);
    return restated(customer.id, () => customerEventData(customer));
  },
  customer_updated(f, id) {
    if (id) {
      const customer = getCustomer(f.account, id);
      // Nothing changed: the event restates the customer as it is now.
      return restated(customer.id, () => ({ ...customerEventData(customer), changed_fields: [] }));
    }
    const customer = newCustomer(f);
    updateCustomer(f.deps, f.account, customer.id, { name: `${customer.name ?? 'Customer'} (renamed)`, city: fakerFor(f.account).location.city() });
    return restated(customer.id, () => customerEventData(customer));
  },
  customer_archived(f, id) {
    const customer = id ? getCustomer(f.account, id) : newCustomer(f);
    if (customer.status === 'active') moveCustomer(f.deps, f.account, customer.id, 'archive');
    return restated(customer.id, () => customerEventData(customer));
  },
  invoice_created(f, id) {
    const invoice = id ? getInvoice(f.account, id) : newInvoice(f, newCustomer(f));
    return restated(invoice.id, () => invoiceEventData(invoice));
  },
  invoice_updated(f, id) {
    if (id) {
      const invoice = getInvoice(f.account, id);
      return restated(invoice.id, () => invoiceEventData(invoice));
    }
    // An update the API can make without money in flight: archived, then restored (invoice_archived, then invoice_updated).
    const invoice = newInvoice(f, newCustomer(f));
    archiveInvoice(f.deps, f.account, invoice.id);
    restoreInvoice(f.deps, f.account, invoice.id);
    return restated(invoice.id, () => invoiceEventData(invoice));
  },
  invoice_archived(f, id) {
    const invoice = id ? getInvoice(f.account, id) : newInvoice(f, newCustomer(f));
    if (invoice.status === 'RECEIVED' || invoice.status === 'PAID') {
      refuse('invoice_archived', invoice.id, `the invoice is ${invoice.status}: only an unpaid invoice without payments in flight can be archived.`, invoice.status);
    }
    if (invoice.status !== 'ARCHIVED') archiveInvoice(f.deps, f.account, invoice.id);
    return restated(invoice.id, () => invoiceEventData(invoice));
  },
  invoice_paid(f, id) {
    if (!id) {
      const payment = newSucceededPayment(f);
      return restated(String(payment.invoice_id), () => invoicePaidData(f.account, getInvoice(f.account, String(payment.invoice_id))));
    }
    const invoice = getInvoice(f.account, id);
    if (invoice.status === 'ARCHIVED') refuse('invoice_paid', id, 'the invoice is archived: restore it first (POST /invoices/{id}/restore).', 'ARCHIVED');
    if (invoice.status !== 'PAID') {
      const inFlightNow = [...payments(f.account).newest({ field: 'invoice_id', value: invoice.id })].filter((p) => IN_FLIGHT.has(p.status));
      const failing = inFlightNow.find((p) => p.planned_failure);
      if (failing) refuse('invoice_paid', id, `its payment ${failing.id} in flight will fail (${failing.planned_failure}, a test value of its method).`, invoice.status);
      // What is still due, paid by hand; then every payment of it in flight settles now.
      if (amountDue(invoice) > 0) f.made.push({ object: 'payment', id: payInvoice(f.deps, f.account, invoice.id, { source: 'sandbox', payment_method: 'manual' }).id });
      const inFlight = [...payments(f.account).newest({ field: 'invoice_id', value: invoice.id })].filter((p) => IN_FLIGHT.has(p.status)).reverse();
      for (const payment of inFlight) settleNow(f, payment);
    }
    return restated(invoice.id, () => invoicePaidData(f.account, invoice));
  },
  payment_method_added(f, id) {
    const method = id ? paymentMethods(f.account).require(id, 'payment method') : newCard(f, newCustomer(f));
    return restated(method.id, () => paymentMethodEventData(f.account, method));
  },
  payment_method_deleted(f, id) {
    const method = id ? paymentMethods(f.account).require(id, 'payment method') : newCard(f, newCustomer(f));
    deleteMethod(f.deps, f.account, method.customer_id, method.id);
    return restated(method.id, () => paymentMethodEventData(f.account, method));
  },
  default_payment_method_changed(f, id) {
    // The entity is the customer, as when the default changes through the API.
    const customer = id ? getCustomer(f.account, id) : newCustomer(f);
    if (!customer.default_payment_method_id) {
      const newest = firstOf(paymentMethods(f.account).newest({ field: 'customer_id', value: customer.id }));
      if (newest) setDefaultMethod(f.deps, f.account, customer.id, newest.id);
      else if (customer.status === 'active') newCard(f, customer); // the first method becomes the default
      else refuse('default_payment_method_changed', customer.id, 'the customer is archived and has no payment method to make its default.', 'archived without payment methods');
    }
    return restated(customer.id, () => defaultChange(f.account, customer));
  },
  payment_succeeded(f, id) {
    if (!id) {
      const made = newSucceededPayment(f);
      return restated(made.id, () => paymentData(made));
    }
    const payment = payments(f.account).require(id, 'payment');
    if (IN_FLIGHT.has(payment.status)) {
      if (payment.planned_failure) refuse('payment_succeeded', id, `the payment is ${payment.status} and will fail (${payment.planned_failure}, a test value of its method).`, payment.status);
      settleNow(f, payment);
    } else if (payment.status !== 'succeeded') {
      refuse('payment_succeeded', id, `the payment is ${payment.status}.`, payment.status);
    }
    return restated(payment.id, () => paymentData(payment));
  },
  payment_failed(f, id) {
    // A declining test card: the charge autopay makes is refused at once.
    if (!id) {
      const declined = newCardPayment(f, { token: 'tok_card_declined' });
      return restated(declined.id, () => paymentData(declined, { failure_reason: declined.failure_reason }));
    }
    const payment = payments(f.account).require(id, 'payment');
    if (IN_FLIGHT.has(payment.status)) failPayment(f.deps, f.account, payment, payment.planned_failure ?? 'generic_decline');
    else if (payment.status !== 'failed') refuse('payment_failed', id, `the payment is ${payment.status}: only a payment in flight can fail.`, payment.status);
    return restated(payment.id, () => paymentData(payment, { failure_reason: payment.failure_reason }));
  },
  payment_refunded(f, id) {
    const payment = id ? payments(f.account).require(id, 'payment') : newSucceededPayment(f);
    if (payment.status === 'succeeded') refundPayment(f.deps, f.account, payment.id);
    else if (payment.status !== 'refunded') refuse('payment_refunded', payment.id, `the payment is ${payment.status}: only a succeeded payment can be refunded.`, payment.status);
    return restated(payment.id, () => paymentData(payment, { refund_amount: payment.refunded_amount }));
  },
  payment_chargeback(f, id) {
    const payment = id ? payments(f.account).require(id, 'payment') : newSucceededPayment(f);
    if (!payment.chargeback) {
      if (payment.status !== 'succeeded') refuse('payment_chargeback', payment.id, `the payment is ${payment.status}: only a succeeded payment can be disputed.`, payment.status);
      chargebackPayment(f.deps, f.account, payment.id, 'fraudulent');
    }
    return restated(payment.id, () => paymentData(payment, { chargeback_reason: payment.chargeback_reason }));
  },
  payout_scheduled(f, id) {
    const payout = id ? payouts(f.account).require(id, 'payout') : newPayout(f);
    if (payout.status !== 'scheduled') refuse('payout_scheduled', payout.id, `the payout is ${payout.status}.`, payout.status);
    return restated(payout.id, () => payoutEventData(payout));
  },
  payout_processing(f, id) {
    const payout = id ? payouts(f.account).require(id, 'payout') : newPayout(f);
    if (payout.status === 'scheduled') runPayoutProcessJob(f.deps, f.account, payout.id);
    else if (payout.status !== 'processing') refuse('payout_processing', payout.id, `the payout is ${payout.status}.`, payout.status);
    return restated(payout.id, () => payoutEventData(payout));
  },
  payout_paid(f, id) {
    const payout = id ? payouts(f.account).require(id, 'payout') : newPayout(f);
    if (holdsFailingPayment(payout) && payout.status !== 'succeeded') {
      refuse('payout_paid', payout.id, `the payout holds a payment of ${FAILING_PAYOUT_AMOUNT} (the test value of a failing payout): it fails.`, payout.status);
    }
    if (payout.status === 'failed') refuse('payout_paid', payout.id, 'the payout failed.', 'failed');
    runPayout(f, payout);
    return restated(payout.id, () => payoutEventData(payout));
  },
  payout_failed(f, id) {
    const payout = id ? payouts(f.account).require(id, 'payout') : newPayout(f, FAILING_PAYOUT_AMOUNT);
    if (payout.status === 'succeeded') refuse('payout_failed', payout.id, 'the payout was paid.', 'succeeded');
    if (payout.status !== 'failed' && !holdsFailingPayment(payout)) {
      refuse('payout_failed', payout.id, `only a payout that holds a payment of ${FAILING_PAYOUT_AMOUNT} (the test value) fails; this one would be paid.`, payout.status);
    }
    runPayout(f, payout);
    return restated(payout.id, () => ({ ...payoutEventData(payout), failure_reason: payout.failure_reason }));
  },
};

/** Whether the payout holds the test value that makes it fail on its arrival date. */
function holdsFailingPayment(payout: Payout): boolean {
  return payout.entries.some((e) => e.direction === 'credit' && e.sub_total === FAILING_PAYOUT_AMOUNT);
}

/** Process (at the cut-off) and settle (on the arrival date) a payout now, from where it stands. */
function runPayout(f: Firing, payout: Payout): void {
  if (payout.status === 'scheduled') runPayoutProcessJob(f.deps, f.account, payout.id);
  if (payouts(f.account).require(payout.id, 'payout').status === 'processing') runPayoutSettleJob(f.deps, f.account, payout.id);
}

// ---- agreement ------------------------------------------------------------------------------------

/**
 * Why the object's state and the event disagree, or undefined when they agree: the wall every fired
 * event passes (a builder that left, say, a RECEIVED invoice behind an invoice_paid is refused, and
 * its unit of work undone).
 */
export function disagreement(account: Account, event: EventRecord): string | undefined {
  const data = event.data;
  const status = (actual: string, expected: unknown) => (actual === expected ? undefined : `its status is ${actual}, the event says ${String(expected)}`);
  const id = event.entity_id;
  switch (event.topic) {
    case 'customer_created':
    case 'customer_updated':
      return status(getCustomer(account, id).status, data.status);
    case 'customer_archived':
      return status(getCustomer(account, id).status, 'archived') ?? status('archived', data.status);
    case 'invoice_created':
    case 'invoice_updated':
      return status(getInvoice(account, id).status, data.status);
    case 'invoice_paid':
      return status(getInvoice(account, id).status, 'PAID') ?? status('PAID', data.status);
    case 'invoice_archived':
      return status(getInvoice(account, id).status, 'ARCHIVED') ?? status('ARCHIVED', data.status);
    case 'payment_method_added':
      return paymentMethods(account).get(id) ? undefined : 'the payment method does not exist';
    case 'payment_method_deleted':
      return paymentMethods(account).get(id) ? 'the payment method still exists' : undefined;
    case 'default_payment_method_changed': {
      const current = getCustomer(account, id).default_payment_method_id;
      return current && current === data.payment_method_id ? undefined : `the customer's default is ${String(current)}, the event says ${String(data.payment_method_id)}`;
    }
    case 'payment_succeeded':
      return status(payments(account).require(id, 'payment').status, 'succeeded') ?? status('succeeded', data.status);
    case 'payment_failed':
      return status(payments(account).require(id, 'payment').status, 'failed') ?? status('failed', data.status);
    case 'payment_refunded': {
      const payment = payments(account).require(id, 'payment');
      return payment.refunded_amount > 0 && payment.status === data.status ? undefined : `the payment is ${payment.status} with ${payment.refunded_amount} refunded`;
    }
    case 'payment_chargeback': {
      const payment = payments(account).require(id, 'payment');
      return payment.chargeback && payment.status === data.status ? undefined : `the payment is ${payment.status}${payment.chargeback ? ' with a chargeback' : ' without a chargeback'}`;
    }
    case 'payout_scheduled':
    case 'payout_processing':
    case 'payout_paid':
    case 'payout_failed': {
      const expected = { payout_scheduled: 'scheduled', payout_processing: 'processing', payout_paid: 'succeeded', payout_failed: 'failed' }[event.topic];
      return status(payouts(account).require(id, 'payout').status, expected) ?? status(expected, data.status);
    }
  }
}

/** The newest event's id now: what a firing recorded is what comes after it. */
function newestEventId(account: Account): string | undefined {
  return firstOf(eventLog(account).newest())?.id;
}

/** The event of `topic` for `entityId` recorded after `since` (the newest first), if any. */
function recordedSince(account: Account, since: string | undefined, topic: Topic, entityId: string): EventRecord | undefined {
  for (const event of eventLog(account).newest()) {
    if (event.id === since) return undefined;
    if (event.topic === topic && event.entity_id === entityId) return event;
  }
  return undefined;
}

export interface FiredEvent {
  event: EventRecord;
  /** What the firing made, in the order made. */
  made: Made[];
}

/**
 * Fire `topic`: make its state (the event the domain records then is the one fired), or restate it
 * for an object already there; 501 naming a topic without a builder; 409 when the named object's
 * state does not allow it or the state and the event would disagree. Runs inside the caller's unit
 * of work, so a refusal changes nothing.
 */
export function fireEvent(deps: Deps, account: Account, topic: Topic, entityId: string | undefined): FiredEvent {
  const build = builders[topic];
  if (!build) throw new ApiError(Errors.notImplemented, { message: `Firing ${topic} is not implemented by the sandbox yet.` });
  const since = newestEventId(account);
  const firing: Firing = { deps, account, made: [] };
  let target: Target;
  try {
    target = build(firing, entityId);
  } catch (error) {
    // A domain refusal of a move on the named object (its machine's 400 invalid_state, a 409, a 422):
    // the object's state does not allow the topic.
    const ours = error instanceof ApiError && error.message.startsWith(`Cannot fire ${topic} for `);
    if (entityId && !ours && error instanceof ApiError && (error.status === 409 || error.status === 422 || error.code === 'invalid_state') && error.template !== Errors.accountReplaced) {
      throw new ApiError(Errors.conflict, { message: `Cannot fire ${topic} for ${entityId}: ${error.message}`, validation_errors: { entity_id: error.message } });
    }
    throw error;
  }
  const event = recordedSince(account, since, topic, target.entity_id) ?? deps.events.record(account, topic, target.entity_id, target.data());
  const why = disagreement(account, event);
  if (why) {
    throw new ApiError(Errors.conflict, {
      message: `Cannot fire ${topic} for ${target.entity_id}: the object and the event would disagree (${why}).`,
      validation_errors: { entity_id: why },
    });
  }
  return { event, made: firing.made };
}
