// Owns POST /_sandbox/events: a registry of builders, one per topic, that fire the event as the real
// operation would: from the named object's current state, else the account's most recent object of
// that kind, else realistic related objects made through the domain functions.
import type { Faker } from '@faker-js/faker';
import type { Deps } from '../deps.js';
import { eventLog, type EventRecord, type Topic } from '../events/events.js';
import { ApiError, Errors } from '../errors.js';
import type { Account } from '../store/store.js';
import { createCustomer, customerEventData, customers, getCustomer, type Customer } from '../domain/customers/customers.js';
import { createInvoice, getInvoice, invoiceEventData, invoices, type Invoice } from '../domain/invoices/invoices.js';
import { addCardMethod, paymentMethodEventData, paymentMethods, type PaymentMethodRecord } from '../domain/payment-methods/payment-methods.js';
import { autopay, payInvoice, paymentEventData, runProcessJob, runSettleJob } from '../domain/payments/payments.js';
import { payments, type Payment } from '../domain/payments/records.js';
import { payoutEventData, payouts, PAYOUT_FAILURE_REASON, type Payout } from '../domain/payouts/payouts.js';
import { addDays, calendarDate } from '../domain/dates.js';

export interface Fired {
  entity_id: string;
  data: Record<string, unknown>;
}

/** Answers what to record, or the event a domain function already recorded while making the object. */
export type EventBuilder = (deps: Deps, account: Account, entityId: string | undefined) => Fired | EventRecord;

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

function newest<T>(items: IterableIterator<T>): T | undefined {
  const next = items.next();
  return next.done ? undefined : next.value;
}

/** The event of `topic` most recently recorded for `entityId` (made by a domain function just now). */
function recordedFor(account: Account, topic: Topic, entityId: string): EventRecord | undefined {
  for (const event of eventLog(account).newest({ field: 'topic', value: topic })) {
    if (event.entity_id === entityId) return event;
    return undefined;
  }
  return undefined;
}

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

/** The named customer, the most recent one, or a new one (whose own customer_created is recorded). */
function customerFor(deps: Deps, account: Account, entityId: string | undefined): { customer: Customer; made: boolean } {
  if (entityId) return { customer: getCustomer(account, entityId), made: false };
  const latest = newest(customers(account).newest());
  return latest ? { customer: latest, made: false } : { customer: fakeCustomer(deps, account), made: true };
}

/** The most recent active customer (invoices and methods need one), or a new one. */
function activeCustomer(deps: Deps, account: Account): Customer {
  for (const customer of customers(account).newest()) if (customer.status === 'active') return customer;
  return fakeCustomer(deps, account);
}

function fakeCard(deps: Deps, account: Account, customer: Customer): PaymentMethodRecord {
  return addCardMethod(deps, account, customer.id, { card_provider_token: 'tok_visa', custom_name: 'Company card', provider: 'evervault' });
}

function fakeInvoice(deps: Deps, account: Account, customer: Customer): Invoice {
  const faker = fakerFor(account);
  const quantity = faker.number.int({ min: 1, max: 5 });
  const amount = faker.number.int({ min: 20, max: 900 });
  const invoice = createInvoice(deps, account, {
    customer_id: customer.id,
    due_date: calendarDate(addDays(account.clock.nowMs(), 30)),
    line_items: [{ description: faker.commerce.productName(), quantity, amount }],
  });
  autopay(deps, account, invoice);
  return invoice;
}

function invoiceFor(deps: Deps, account: Account, entityId: string | undefined): { invoice: Invoice; made: boolean } {
  if (entityId) return { invoice: getInvoice(account, entityId), made: false };
  const latest = newest(invoices(account).newest());
  return latest ? { invoice: latest, made: false } : { invoice: fakeInvoice(deps, account, activeCustomer(deps, account)), made: true };
}

function methodFor(deps: Deps, account: Account, entityId: string | undefined): { method: PaymentMethodRecord; made: boolean } {
  if (entityId) return { method: paymentMethods(account).require(entityId, 'payment method'), made: false };
  const latest = newest(paymentMethods(account).newest());
  return latest ? { method: latest, made: false } : { method: fakeCard(deps, account, activeCustomer(deps, account)), made: true };
}

/** A customer paying by card with autopay: creating the invoice charges the card (a pending payment). */
function fakePayment(deps: Deps, account: Account): Payment {
  const customer = activeCustomer(deps, account);
  if (!customer.default_payment_method_id) fakeCard(deps, account, customer);
  const invoice = fakeInvoice(deps, account, customer);
  return newest(payments(account).newest({ field: 'invoice_id', value: invoice.id }))
    ?? payInvoice(deps, account, invoice.id, { source: 'sandbox' });
}

function paymentFor(deps: Deps, account: Account, entityId: string | undefined): Payment {
  if (entityId) return payments(account).require(entityId, 'payment');
  return newest(payments(account).newest()) ?? fakePayment(deps, account);
}

/**
 * A payout needs a settled payment: the new payment's processing and settlement run now instead of on
 * the clock (their due jobs then find nothing to do), recording payment_succeeded, invoice_paid and
 * payout_scheduled as settlement does.
 */
function payoutFor(deps: Deps, account: Account, entityId: string | undefined): { payout: Payout; made: boolean } {
  if (entityId) return { payout: payouts(account).require(entityId, 'payout'), made: false };
  const latest = newest(payouts(account).newest());
  if (latest) return { payout: latest, made: false };
  const payment = fakePayment(deps, account);
  runProcessJob(deps, account, payment.id);
  runSettleJob(deps, account, payment.id);
  return { payout: payouts(account).require(String(payments(account).require(payment.id).payout_id), 'payout'), made: true };
}

/** The event a domain function recorded for the object it just made, else the object's current state. */
function madeOrCurrent(account: Account, topic: Topic, made: boolean, fired: Fired): Fired | EventRecord {
  return (made && recordedFor(account, topic, fired.entity_id)) || fired;
}

/** The default method change of a customer as it stands: its previous default from the last such event. */
function defaultChange(account: Account, customer: Customer): Fired {
  let previous: string | null = null;
  for (const event of eventLog(account).newest({ field: 'topic', value: 'default_payment_method_changed' })) {
    if (event.entity_id !== customer.id) continue;
    if (event.data.payment_method_id === customer.default_payment_method_id) previous = (event.data.previous_payment_method_id as string | null) ?? null;
    break;
  }
  return { entity_id: customer.id, data: { customer_id: customer.id, payment_method_id: customer.default_payment_method_id, previous_payment_method_id: previous } };
}

function paymentData(payment: Payment, extra: Record<string, unknown> = {}): Fired {
  const { failure_reason: _f, chargeback_reason: _c, ...base } = paymentEventData(payment);
  return { entity_id: payment.id, data: { ...base, ...extra } };
}

export const builders: Partial<Record<Topic, EventBuilder>> = {
  customer_created(deps, account, entityId) {
    const { customer, made } = customerFor(deps, account, entityId);
    return madeOrCurrent(account, 'customer_created', made, { entity_id: customer.id, data: customerEventData(customer) });
  },
  customer_updated(deps, account, entityId) {
    const { customer } = customerFor(deps, account, entityId);
    // Nothing changed: the event re-states the customer as it is now.
    return { entity_id: customer.id, data: { ...customerEventData(customer), changed_fields: [] } };
  },
  customer_archived(deps, account, entityId) {
    const { customer } = customerFor(deps, account, entityId);
    return { entity_id: customer.id, data: customerEventData(customer) };
  },
  invoice_created(deps, account, entityId) {
    const { invoice, made } = invoiceFor(deps, account, entityId);
    return madeOrCurrent(account, 'invoice_created', made, { entity_id: invoice.id, data: invoiceEventData(invoice) });
  },
  invoice_updated(deps, account, entityId) {
    const { invoice } = invoiceFor(deps, account, entityId);
    return { entity_id: invoice.id, data: invoiceEventData(invoice) };
  },
  invoice_archived(deps, account, entityId) {
    const { invoice } = invoiceFor(deps, account, entityId);
    return { entity_id: invoice.id, data: invoiceEventData(invoice) };
  },
  invoice_paid(deps, account, entityId) {
    // Without entity_id: the invoice of the most recent invoice payment, else the most recent invoice.
    let invoice: Invoice | undefined;
    if (!entityId) {
      for (const payment of payments(account).newest()) {
        if (payment.invoice_id) { invoice = invoices(account).get(payment.invoice_id); break; }
      }
    }
    invoice ??= invoiceFor(deps, account, entityId).invoice;
    // The payment that paid it: its most recent succeeded payment, else its most recent one, else a
    // manual payment made now (it then settles on the clock like any payment).
    let payment: Payment | undefined;
    for (const candidate of payments(account).newest({ field: 'invoice_id', value: invoice.id })) {
      payment ??= candidate;
      if (candidate.status === 'succeeded') { payment = candidate; break; }
    }
    if (!payment && invoice.status === 'ARCHIVED') {
      throw new ApiError(Errors.conflict, {
        message: `Invoice ${invoice.id} is archived and has no payment, so it cannot have been paid; restore it or name a paid invoice.`,
        validation_errors: { entity_id: 'is an archived invoice without payments' },
      });
    }
    payment ??= payInvoice(deps, account, invoice.id, { source: 'sandbox', payment_method: 'manual' });
    const paidAt = invoice.paid_at ?? payment.settled_at ?? account.clock.iso();
    return { entity_id: invoice.id, data: { ...invoiceEventData(invoice), payment_id: payment.id, paid_at: paidAt } };
  },
  payment_method_added(deps, account, entityId) {
    const { method, made } = methodFor(deps, account, entityId);
    return madeOrCurrent(account, 'payment_method_added', made, { entity_id: method.id, data: paymentMethodEventData(account, method) });
  },
  payment_method_deleted(deps, account, entityId) {
    const { method } = methodFor(deps, account, entityId);
    return { entity_id: method.id, data: paymentMethodEventData(account, method) };
  },
  default_payment_method_changed(deps, account, entityId) {
    // The entity is the customer, as when the default changes through the API.
    const customer = entityId ? getCustomer(account, entityId) : activeCustomer(deps, account);
    if (!customer.default_payment_method_id) {
      fakeCard(deps, account, customer); // the first method becomes the default and records this topic itself
      return recordedFor(account, 'default_payment_method_changed', customer.id) ?? defaultChange(account, customer);
    }
    return defaultChange(account, customer);
  },
  payment_succeeded: (deps, account, entityId) => paymentData(paymentFor(deps, account, entityId)),
  payment_failed(deps, account, entityId) {
    const payment = paymentFor(deps, account, entityId);
    return paymentData(payment, { failure_reason: payment.failure_reason ?? payment.planned_failure ?? 'card_declined' });
  },
  payment_refunded(deps, account, entityId) {
    const payment = paymentFor(deps, account, entityId);
    return paymentData(payment, { refund_amount: payment.refunded_amount || payment.amount });
  },
  payment_chargeback(deps, account, entityId) {
    const payment = paymentFor(deps, account, entityId);
    return paymentData(payment, { chargeback_reason: payment.chargeback_reason ?? 'fraudulent' });
  },
  payout_scheduled(deps, account, entityId) {
    const { payout, made } = payoutFor(deps, account, entityId);
    return madeOrCurrent(account, 'payout_scheduled', made, { entity_id: payout.id, data: payoutEventData(payout) });
  },
  payout_processing(deps, account, entityId) {
    const { payout } = payoutFor(deps, account, entityId);
    return { entity_id: payout.id, data: payoutEventData(payout) };
  },
  payout_paid(deps, account, entityId) {
    const { payout } = payoutFor(deps, account, entityId);
    return { entity_id: payout.id, data: payoutEventData(payout) };
  },
  payout_failed(deps, account, entityId) {
    const { payout } = payoutFor(deps, account, entityId);
    return { entity_id: payout.id, data: { ...payoutEventData(payout), failure_reason: payout.failure_reason ?? PAYOUT_FAILURE_REASON } };
  },
};

/** Fire `topic`; 501 naming the topic when no builder exists for it yet. */
export function fireEvent(deps: Deps, account: Account, topic: Topic, entityId: string | undefined): EventRecord {
  const build = builders[topic];
  if (!build) throw new ApiError(Errors.notImplemented, { message: `Firing ${topic} is not implemented by the sandbox yet.` });
  const built = build(deps, account, entityId);
  if ('idempotency_key' in built) return built;
  return deps.events.record(account, topic, built.entity_id, built.data);
}
