// Owns POST /_sandbox/accounting/sync: objects created as if synced from an external accounting
// integration. Each kind checks its items against the API's own create schema, then creates them.
import type { HandlerContext } from '../http/context.js';
import { ApiError, Errors, invalidFields } from '../http/errors.js';
import { validationErrors } from '../http/openapi.js';
import { createCustomer, type CustomerInput } from '../domain/customers/customers.js';
import { createVendor, checkVendorInput, vendorKey, vendorView, type VendorInput } from '../domain/vendors/vendors.js';
import { billView, checkBillInput, createBill, type BillInput } from '../domain/bills/bills.js';
import { createInvoice, invoiceView, type InvoiceInput } from '../domain/invoices/invoices.js';
import { customers } from '../domain/customers/customers.js';

export interface Syncer {
  /** Throw a 400 naming `kind[i].field` for any item that the create operation would refuse. */
  check(ctx: HandlerContext, items: unknown[]): void;
  create(ctx: HandlerContext, item: unknown): unknown;
}

/** Check sync items against the request body schema of an API operation. */
export function checkAgainst(ctx: HandlerContext, kind: string, operationId: string, method: string, path: string, items: unknown[]): void {
  const api = ctx.req.app.locals.api.backendFor();
  const errors: Record<string, string> = {};
  items.forEach((item, i) => {
    const result = api.validateRequest({ method, path, headers: { 'content-type': 'application/json' }, body: item as object, query: {} }, operationId);
    for (const [field, message] of Object.entries(validationErrors(result.errors))) errors[`${kind}[${i}].${field}`] = message;
  });
  if (Object.keys(errors).length) throw invalidFields(errors);
}

export const syncers: Record<string, Syncer> = {
  customers: {
    check: (ctx, items) => checkAgainst(ctx, 'customers', 'createCustomer', 'POST', '/customers', items),
    create: (ctx, item) => {
      const input = item as CustomerInput;
      return createCustomer(ctx.deps, ctx.account, { ...input, customer_integration_id: input.customer_integration_id ?? ctx.account.newId('acc') });
    },
  },
  // Synced invoices (source accounting_integration) are the only ones that accept a PDF upload.
  invoices: {
    check: (ctx, items) => {
      checkAgainst(ctx, 'invoices', 'createInvoice', 'POST', '/invoices', items);
      items.forEach((item, i) => {
        const customerId = (item as InvoiceInput).customer_id;
        const customer = customers(ctx.account).get(customerId);
        if (!customer || customer.status !== 'active') {
          throw new ApiError(Errors.unprocessable, { message: `No active customer with id ${customerId} in this account.`, validation_errors: { [`invoices[${i}].customer_id`]: 'is not an active customer of this account' } });
        }
      });
    },
    create: (ctx, item) => invoiceView(createInvoice(ctx.deps, ctx.account, item as InvoiceInput, { source: 'accounting_integration' })),
  },
  vendors: {
    check: (ctx, items) => {
      checkAgainst(ctx, 'vendors', 'createVendor', 'POST', '/vendors', items);
      const taxIds = new Set<string>();
      items.forEach((item, i) => {
        const input = item as VendorInput;
        prefixed(`vendors[${i}].`, () => checkVendorInput(ctx.account, input));
        const taxId = vendorKey(input.tax_id);
        if (taxId && taxIds.has(taxId)) throw invalidFields({ [`vendors[${i}].tax_id`]: 'is used by another vendor of this sync' });
        if (taxId) taxIds.add(taxId);
      });
    },
    create: (ctx, item) => vendorView(createVendor(ctx.deps, ctx.account, item as VendorInput, { origin: 'accounting_integration' })),
  },
  bills: {
    check: (ctx, items) => {
      checkAgainst(ctx, 'bills', 'createBill', 'POST', '/bills', items);
      items.forEach((item, i) => prefixed(`bills[${i}].`, () => checkBillInput(ctx.account, item as BillInput)));
    },
    create: (ctx, item) => billView(ctx.account, createBill(ctx.deps, ctx.account, item as BillInput, { source: 'accounting_integration' })),
  },
};

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
