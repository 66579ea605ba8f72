// Owns POST /_sandbox/accounting/sync: objects created as if synced from an external accounting
// integration. Each kind checks its items against the API's own create schema, then creates them.
import type { HandlerContext } from '../http/context.js';
import { invalidFields } from '../http/errors.js';
import { validationErrors } from '../http/openapi.js';
import { createCustomer, type CustomerInput } from '../domain/customers/customers.js';

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
};
