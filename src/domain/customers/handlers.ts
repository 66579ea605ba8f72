// Owns the customer and customer-user operations: each a short story over customers.ts.
import { created, ok, type ApiHandlers, type Handler } from '../../http/context.js';
import { pageParams, timeWindow } from '../../http/pagination.js';
import {
  createCustomer, createCustomerUser, customerUsers, customerUserView, customerView, customers, getCustomer, moveCustomer, updateCustomer, type Customer,
} from './customers.js';

const listCustomers: Handler<'listCustomers'> = ({ account, query }) => {
  const created = timeWindow(query.created_at_start, query.created_at_end);
  const name = query.company_name?.toLowerCase();
  const filter = (c: Customer) =>
    (!created || created(c.created_at)) &&
    (!name || [c.name, c.legal_name].some((n) => n?.toLowerCase().includes(name)));
  const page = customers(account).page({ ...pageParams(query), filter: created || name ? filter : undefined });
  return ok({ ...page, data: page.data.map(customerView) });
};

const listUsers: Handler<'listCustomerUsers'> = ({ account, params, query }) => {
  getCustomer(account, params.id);
  const page = customerUsers(account).page({ ...pageParams(query), where: { field: 'customer_id', value: params.id } });
  return ok({ ...page, data: page.data.map(customerUserView) });
};

export const customerHandlers = {
  listCustomers,
  createCustomer: ({ deps, account, body }) => created(customerView(createCustomer(deps, account, body ?? {}))),
  getCustomer: ({ account, params }) => ok(customerView(getCustomer(account, params.id))),
  updateCustomer: ({ deps, account, params, body }) => ok(customerView(updateCustomer(deps, account, params.id, body ?? {}))),
  archiveCustomer: ({ deps, account, params }) => ok(customerView(moveCustomer(deps, account, params.id, 'archive'))),
  restoreCustomer: ({ deps, account, params }) => ok(customerView(moveCustomer(deps, account, params.id, 'restore'))),
  listCustomerUsers: listUsers,
  createCustomerUser: ({ account, params, body }) => created(customerUserView(createCustomerUser(account, params.id, body))),
} satisfies ApiHandlers;
