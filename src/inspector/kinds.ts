// Owns what the web inspector knows of each kind of object: its collection (the same indexed
// collection the API reads), the documented view the API answers for it, the fields a search looks
// in, its status and its transition table. Adding a kind to the inspector is one entry here.
import type { Deps } from '../deps.js';
import type { Machine } from '../domain/machine.js';
import { billMachine, bills, billView, type Bill } from '../domain/bills/bills.js';
import { customerMachine, customers, customerView, type Customer } from '../domain/customers/customers.js';
import { invoiceMachine, invoices, invoiceView, type Invoice } from '../domain/invoices/invoices.js';
import { paymentMethods, paymentMethodView, type PaymentMethodRecord } from '../domain/payment-methods/payment-methods.js';
import { paymentRequestMachine, paymentRequests, paymentRequestView, type PaymentRequest } from '../domain/payments/payment-requests.js';
import { paymentMachine, paymentView } from '../domain/payments/payments.js';
import { payments, type Payment } from '../domain/payments/records.js';
import { payoutMachine, payouts, payoutView, type Payout } from '../domain/payouts/payouts.js';
import { vendorPaymentMachine, vendorPayments, vendorPaymentView, type VendorPayment } from '../domain/vendor-payments/records.js';
import { vendorMachine, vendors, vendorView, type Vendor } from '../domain/vendors/vendors.js';
import type { Account } from '../store/store.js';
import type { Collection } from '../store/collection.js';
import { subscriptions, subscriptionView, type Subscription } from '../webhooks/subscriptions.js';

export interface ViewContext {
  deps: Deps;
  account: Account;
  /** Origin of the links some views carry (payment requests' hosted page). */
  origin: string;
}

export interface ObjectKind<T extends { id: string }> {
  /** The kind as the inspector's paths name it, e.g. `payment_methods`. */
  name: string;
  /** Singular, for people: "payment method". */
  label: string;
  collection(account: Account): Collection<T>;
  /** The object as the API documents it (never a stored secret). */
  view(ctx: ViewContext, item: T): unknown;
  /** Stored fields a search looks in (case-insensitive substring); the id always. */
  searchFields: ReadonlyArray<keyof T & string>;
  /** The object's status, or null when the kind has none. */
  status(item: T): string | null;
  /** Its transition table, when its status changes through one. */
  machine?: Machine<string, string>;
  /** Stored status history, when the kind keeps one (else the inspector shows the object's events). */
  history?(item: T): ReadonlyArray<{ at: string; status: string; reason: string | null }>;
  /** Objects the partner never sees (the CLI's forwarder subscriptions) are not listed either. */
  hidden?(item: T): boolean;
  /** The collection has an index on `status`, so a status filter walks only its own objects. */
  statusIndexed?: boolean;
}

function kind<T extends { id: string }>(definition: ObjectKind<T>): ObjectKind<{ id: string }> {
  // One list holds kinds of different item types; each kind's functions are only ever given items
  // read from its own collection, so widening T to { id: string } is safe though TS cannot see it.
  return definition as unknown as ObjectKind<{ id: string }>;
}

const byStatus = (item: { status: string }) => item.status;
const asMachine = (machine: unknown) => machine as Machine<string, string>;

/** Every kind the inspector shows, in the order of its menu. */
export const OBJECT_KINDS: ReadonlyArray<ObjectKind<{ id: string }>> = [
  kind<Customer>({
    name: 'customers', label: 'customer', collection: customers, view: (_c, c) => customerView(c),
    searchFields: ['name', 'email', 'external_id', 'legal_name'], status: byStatus, machine: asMachine(customerMachine),
  }),
  kind<Invoice>({
    name: 'invoices', label: 'invoice', collection: invoices, view: (_c, i) => invoiceView(i),
    searchFields: ['invoice_number', 'customer_id', 'memo'], status: byStatus, machine: asMachine(invoiceMachine), statusIndexed: true,
  }),
  kind<PaymentMethodRecord>({
    name: 'payment_methods', label: 'payment method', collection: paymentMethods, view: ({ account }, m) => paymentMethodView(account, m),
    searchFields: ['customer_id', 'type', 'custom_name', 'brand', 'bank_name', 'receiver_name'], status: () => null,
  }),
  kind<PaymentRequest>({
    name: 'payment_requests', label: 'payment request', collection: paymentRequests,
    view: ({ deps, account, origin }, r) => paymentRequestView(deps, account, origin, r),
    searchFields: ['reference_id', 'payment_id'], status: byStatus, machine: asMachine(paymentRequestMachine),
  }),
  kind<Payment>({
    name: 'payments', label: 'payment', collection: payments, view: (_c, p) => paymentView(p),
    searchFields: ['customer_id', 'invoice_id', 'payment_request_id', 'payout_id', 'type'], status: byStatus, machine: asMachine(paymentMachine),
  }),
  kind<Payout>({
    name: 'payouts', label: 'payout', collection: payouts, view: (_c, p) => payoutView(p),
    searchFields: ['customer_id', 'arrival_date'], status: byStatus, machine: asMachine(payoutMachine),
  }),
  kind<Bill>({
    name: 'bills', label: 'bill', collection: bills, view: ({ account }, b) => billView(account, b, { history: true }),
    searchFields: ['number', 'vendor_id', 'description'], status: byStatus, machine: asMachine(billMachine), statusIndexed: true,
    history: (b) => b.status_history.map((h) => ({ at: h.created_at, status: h.status, reason: h.reason })),
  }),
  kind<Vendor>({
    name: 'vendors', label: 'vendor', collection: vendors, view: (_c, v) => vendorView(v),
    searchFields: ['name', 'email', 'category', 'city'], status: byStatus, machine: asMachine(vendorMachine), statusIndexed: true,
  }),
  kind<VendorPayment>({
    name: 'vendor_payments', label: 'vendor payment', collection: vendorPayments, view: (_c, p) => vendorPaymentView(p),
    searchFields: ['bill_id', 'vendor_id', 'payment_speed'], status: byStatus, machine: asMachine(vendorPaymentMachine),
  }),
  kind<Subscription>({
    name: 'webhook_subscriptions', label: 'webhook subscription', collection: subscriptions, view: (_c, s) => subscriptionView(s),
    searchFields: ['topic', 'endpoint_url'], status: (s) => (s.is_active ? 'active' : 'inactive'), hidden: (s) => Boolean(s.forwarder),
  }),
];

export const KIND_NAMES = OBJECT_KINDS.map((k) => k.name);

export function objectKind(name: string): ObjectKind<{ id: string }> | undefined {
  return OBJECT_KINDS.find((k) => k.name === name);
}
