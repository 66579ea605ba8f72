// Owns POST /_sandbox/accounting/sync: objects created as if synced from an external accounting
// integration. Each kind checks its items against the API's own create schema and rules; nothing is
// created unless every item passes. Later kinds may reference earlier items of the same sync.
import type { SandboxApp } from '../app.js';
import type { RequestContext } from '../http/context.js';
import { ApiError, invalidFields } from '../errors.js';
import { validationErrors } from '../http/openapi.js';
import { checkCustomerInput, createCustomer, customerView, type CustomerInput } from '../domain/customers/customers.js';
import { createVendor, checkVendorInput, vendorKey, vendorView, type VendorInput } from '../domain/vendors/vendors.js';
import { billView, checkBillInput, createBill, type BillInput } from '../domain/bills/bills.js';
import { checkInvoiceInput, createInvoice, invoiceView, type InvoiceInput } from '../domain/invoices/invoices.js';
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
  /** Throw a 400 (or 422) naming `kind[i].field` for any item that the create operation would refuse. */
  check(ctx: RequestContext, items: unknown[], refs: SyncRefs): void;
  /** Create one item; answers its id (for references) and its view. */
  create(ctx: RequestContext, item: unknown, refs: SyncRefs): { id: string; view: unknown };
}

/** Check sync items against the request body schema of an API operation. */
function checkAgainst(ctx: RequestContext, kind: string, operationId: string, method: string, path: string, items: unknown[]): void {
  // Requests reach handlers only through createApp's app, whose locals carry the API router.
  const api = (ctx.req.app as SandboxApp).locals.api.backendFor();
  const errors: Record<string, string> = {};
  items.forEach((item, i) => {
    const result = api.validateRequest({ method, path, headers: { 'content-type': 'application/json' }, body: item as object, query: {} }, operationId);
    for (const [field, message] of Object.entries(validationErrors(result.errors))) errors[`${kind}[${i}].${field}`] = message;
  });
  if (Object.keys(errors).length) throw invalidFields(errors);
}

/**
 * A kind whose items name a parent (an invoice its customer, a bill its vendor), which may be an
 * earlier item of the same sync: checked against its operation's schema and rules, created with the
 * reference resolved to the parent's new id.
 */
function childSyncer<I extends object>(spec: {
  kind: SyncKind;
  operationId: string;
  path: string;
  parent: { field: keyof I & string; kind: 'customers' | 'vendors' };
  check: (ctx: RequestContext, input: I, parentInSync: boolean) => void;
  create: (ctx: RequestContext, input: I) => { id: string; view: unknown };
}): Syncer {
  const { field, kind } = spec.parent;
  return {
    check: (ctx, items, refs) => {
      checkAgainst(ctx, spec.kind, spec.operationId, 'POST', spec.path, items);
      items.forEach((item, i) => prefixed(`${spec.kind}[${i}].`, () => {
        const input = item as I;
        spec.check(ctx, input, isReference(input[field], kind, refs, field));
      }));
    },
    create: (ctx, item, refs) => {
      const input = item as I;
      return spec.create(ctx, { ...input, [field]: resolved(String(input[field]), refs) });
    },
  };
}

/**
 * A kind that names no parent (customers, vendors): checked against its operation's schema and
 * create rules, and one field must differ between the items of the sync (the create rule only
 * knows the objects stored before it).
 */
function checkParentItems<I extends object>(ctx: RequestContext, items: unknown[], spec: {
  kind: SyncKind;
  operationId: string;
  path: string;
  check: (account: RequestContext['account'], input: I) => void;
  unique: { field: string; key: (input: I) => string | undefined; noun: string };
}): void {
  checkAgainst(ctx, spec.kind, spec.operationId, 'POST', spec.path, items);
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const input = item as I;
    prefixed(`${spec.kind}[${i}].`, () => spec.check(ctx.account, input));
    const key = spec.unique.key(input);
    if (key === undefined || key === '') return;
    if (seen.has(key)) throw invalidFields({ [`${spec.kind}[${i}].${spec.unique.field}`]: `is used by another ${spec.unique.noun} of this sync` });
    seen.add(key);
  });
}

const syncers: Record<SyncKind, Syncer> = {
  customers: {
    check: (ctx, items) => checkParentItems<CustomerInput>(ctx, items, {
      kind: 'customers', operationId: 'createCustomer', path: '/customers', check: checkCustomerInput,
      unique: { field: 'external_id', key: (input) => input.external_id, noun: 'customer' },
    }),
    create: (ctx, item) => {
      const input = item as CustomerInput;
      const customer = createCustomer(ctx.deps, ctx.account, { ...input, customer_integration_id: input.customer_integration_id ?? ctx.account.newId('acc') });
      return { id: customer.id, view: customerView(customer) };
    },
  },
  // Synced invoices (source accounting_integration) are the only ones that accept a PDF upload.
  invoices: childSyncer<InvoiceInput>({
    kind: 'invoices', operationId: 'createInvoice', path: '/invoices', parent: { field: 'customer_id', kind: 'customers' },
    check: (ctx, input, customerInSync) => checkInvoiceInput(ctx.account, input, { customerInSync }),
    create: (ctx, input) => {
      const invoice = createInvoice(ctx.deps, ctx.account, input, { source: 'accounting_integration' });
      autopay(ctx.deps, ctx.account, invoice);
      return { id: invoice.id, view: invoiceView(invoice) };
    },
  }),
  vendors: {
    check: (ctx, items) => checkParentItems<VendorInput>(ctx, items, {
      kind: 'vendors', operationId: 'createVendor', path: '/vendors', check: checkVendorInput,
      unique: { field: 'tax_id', key: (input) => vendorKey(input.tax_id), noun: 'vendor' },
    }),
    create: (ctx, item) => {
      const vendor = createVendor(ctx.deps, ctx.account, item as VendorInput, { origin: 'accounting_integration' });
      return { id: vendor.id, view: vendorView(vendor) };
    },
  },
  bills: childSyncer<BillInput>({
    kind: 'bills', operationId: 'createBill', path: '/bills', parent: { field: 'vendor_id', kind: 'vendors' },
    check: (ctx, input, vendorInSync) => checkBillInput(ctx.account, input, { vendorInSync }),
    create: (ctx, input) => {
      const bill = createBill(ctx.deps, ctx.account, input, { source: 'accounting_integration' });
      return { id: bill.id, view: billView(ctx.account, bill) };
    },
  }),
};

/**
 * Check every item of every kind first, so a bad one changes nothing; then create kind by kind in
 * SYNC_ORDER, resolving references to items created before.
 */
export function runSync(ctx: RequestContext, body: Partial<Record<SyncKind, unknown[]>>): Record<SyncKind, unknown[]> {
  const refs: SyncRefs = {
    counts: { customers: 0, invoices: 0, vendors: 0, bills: 0 },
    created: { customers: [], invoices: [], vendors: [], bills: [] },
  };
  for (const kind of SYNC_ORDER) refs.counts[kind] = body[kind]?.length ?? 0;
  for (const kind of SYNC_ORDER) syncers[kind].check(ctx, body[kind] ?? [], refs);
  const result: Record<SyncKind, unknown[]> = { customers: [], invoices: [], vendors: [], bills: [] };
  for (const kind of SYNC_ORDER) {
    for (const item of body[kind] ?? []) {
      const { id, view } = syncers[kind].create(ctx, item, refs);
      refs.created[kind].push(id);
      result[kind].push(view);
    }
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
