// Owns POST /_sandbox/accounting/sync: objects created as if synced from an external accounting
// integration. Each kind checks its items against the API's own create schema, then each item is made
// by the API's own create function; nothing is created unless every item passes (the request's unit of
// work). Later kinds may reference earlier items of the same sync.
import type { SandboxApp } from '../app.js';
import type { RequestContext } from '../http/context.js';
import { ApiError, invalidFields } from '../errors.js';
import { validationErrors } from '../http/openapi.js';
import { createCustomer, customerView, type CustomerInput } from '../domain/customers/customers.js';
import { createVendor, vendorView, type VendorInput } from '../domain/vendors/vendors.js';
import { billView, createBill, type BillInput } from '../domain/bills/bills.js';
import { createInvoice, invoiceView, type InvoiceInput } from '../domain/invoices/invoices.js';
import { autopay } from '../domain/payments/payments.js';

/** The order kinds are created in: an item may name an item of an earlier kind (see SyncRefs). */
export const SYNC_ORDER = ['customers', 'invoices', 'vendors', 'bills'] as const;
export type SyncKind = (typeof SYNC_ORDER)[number];

/**
 * An invoice's customer_id may be `$customers[N]` and a bill's vendor_id `$vendors[N]`: the Nth
 * customer or vendor of the same sync, whose id does not exist before the sync runs.
 */
const REFERENCE = /^\$(customers|vendors)\[(\d+)\]$/;

export interface SyncRefs {
  /** How many items of each kind the sync holds (for checking references). */
  counts: Record<SyncKind, number>;
  /** Ids created so far, per kind, in item order (for resolving references). */
  created: Record<SyncKind, string[]>;
}

/** Whether `value` references an item of `kind` in this sync; a reference out of range is a 400 naming `field`. */
function isReference(value: unknown, kind: 'customers' | 'vendors', refs: SyncRefs, field: string): boolean {
  const text = typeof value === 'string' ? value : '';
  const match = REFERENCE.exec(text);
  if (!match) return false;
  if (match[1] !== kind || Number(match[2]) >= refs.counts[kind]) {
    throw invalidFields({ [field]: `references ${text}, but this sync has ${refs.counts[kind]} ${kind} (use $${kind}[0] to $${kind}[${Math.max(0, refs.counts[kind] - 1)}])` });
  }
  return true;
}

/** The created id a reference stands for, or the value itself. */
function resolved(value: string, refs: SyncRefs): string {
  const match = REFERENCE.exec(value);
  return match ? refs.created[match[1] as SyncKind][Number(match[2])] : value;
}

export interface Syncer {
  /** Throw a 400 naming `kind[i].field` for any item that the create operation's schema refuses. */
  check(ctx: RequestContext, items: unknown[]): void;
  /** Create one item through the create operation's own function and rules; answers its id (for references) and its view. */
  create(ctx: RequestContext, item: unknown, refs: SyncRefs): { id: string; view: unknown };
}

/** Check sync items against the request body schema of an API operation. */
function checkAgainst(ctx: RequestContext, kind: string, operationId: string, path: string, items: unknown[]): void {
  // Requests reach handlers only through createApp's app, whose locals carry the API router.
  const api = (ctx.req.app as SandboxApp).locals.api.backendFor();
  const errors: Record<string, string> = {};
  items.forEach((item, i) => {
    const result = api.validateRequest({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: item as object, query: {} }, operationId);
    for (const [field, message] of Object.entries(validationErrors(result.errors))) errors[`${kind}[${i}].${field}`] = message;
  });
  if (Object.keys(errors).length) throw invalidFields(errors);
}

/** A kind checked against its create operation's schema, then created item by item with `create`. */
function syncer<I extends object>(kind: SyncKind, operationId: string, path: string, create: (ctx: RequestContext, input: I) => { id: string; view: unknown }): Syncer {
  return {
    check: (ctx, items) => checkAgainst(ctx, kind, operationId, path, items),
    create: (ctx, item) => create(ctx, item as I),
  };
}

/**
 * A kind whose items name a parent (an invoice its customer, a bill its vendor), which may be an
 * earlier item of the same sync: created with the reference resolved to the parent's new id.
 */
function childSyncer<I extends object>(kind: SyncKind, operationId: string, path: string, parent: { field: keyof I & string; kind: 'customers' | 'vendors' }, create: (ctx: RequestContext, input: I) => { id: string; view: unknown }): Syncer {
  return {
    ...syncer(kind, operationId, path, create),
    create: (ctx, item, refs) => {
      const input = item as I;
      const value = input[parent.field];
      if (!isReference(value, parent.kind, refs, parent.field)) return create(ctx, input);
      return create(ctx, { ...input, [parent.field]: resolved(String(value), refs) });
    },
  };
}

const syncers: Record<SyncKind, Syncer> = {
  customers: syncer<CustomerInput>('customers', 'createCustomer', '/customers', (ctx, input) => {
    const customer = createCustomer(ctx.deps, ctx.account, { ...input, customer_integration_id: input.customer_integration_id ?? ctx.account.newId('acc') });
    return { id: customer.id, view: customerView(customer) };
  }),
  // Synced invoices (source accounting_integration) are the only ones that accept a PDF upload.
  invoices: childSyncer<InvoiceInput>('invoices', 'createInvoice', '/invoices', { field: 'customer_id', kind: 'customers' }, (ctx, input) => {
    const invoice = createInvoice(ctx.deps, ctx.account, input, { source: 'accounting_integration' });
    autopay(ctx.deps, ctx.account, invoice);
    return { id: invoice.id, view: invoiceView(invoice) };
  }),
  vendors: syncer<VendorInput>('vendors', 'createVendor', '/vendors', (ctx, input) => {
    const vendor = createVendor(ctx.deps, ctx.account, input, { origin: 'accounting_integration' });
    return { id: vendor.id, view: vendorView(vendor) };
  }),
  bills: childSyncer<BillInput>('bills', 'createBill', '/bills', { field: 'vendor_id', kind: 'vendors' }, (ctx, input) => {
    const bill = createBill(ctx.deps, ctx.account, input, { source: 'accounting_integration' });
    return { id: bill.id, view: billView(ctx.account, bill) };
  }),
};

/**
 * Check every item of every kind against its schema first; then create kind by kind in SYNC_ORDER,
 * resolving references to items created before, each through its create function (the one place its
 * rules live: a second customer with the first one's external_id meets the uniqueness rule). The
 * request is one unit of work (Account.transaction): an item refused halfway leaves nothing created.
 */
export function runSync(ctx: RequestContext, body: Partial<Record<SyncKind, unknown[]>>): Record<SyncKind, unknown[]> {
  const refs: SyncRefs = {
    counts: { customers: 0, invoices: 0, vendors: 0, bills: 0 },
    created: { customers: [], invoices: [], vendors: [], bills: [] },
  };
  for (const kind of SYNC_ORDER) refs.counts[kind] = body[kind]?.length ?? 0;
  for (const kind of SYNC_ORDER) syncers[kind].check(ctx, body[kind] ?? []);
  const result: Record<SyncKind, unknown[]> = { customers: [], invoices: [], vendors: [], bills: [] };
  for (const kind of SYNC_ORDER) {
    (body[kind] ?? []).forEach((item, i) => prefixed(`${kind}[${i}].`, () => {
      const { id, view } = syncers[kind].create(ctx, item, refs);
      refs.created[kind].push(id);
      result[kind].push(view);
    }));
  }
  return result;
}

/** Run a check, naming its fields under the sync item's prefix (vendors[2].tax_id). */
function prefixed(prefix: string, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof ApiError) {
      const fields = Object.fromEntries(Object.entries(error.validationErrors).map(([k, v]) => [`${prefix}${k}`, v]));
      throw new ApiError(error.template, { message: error.message, validation_errors: fields });
    }
    throw error;
  }
}
