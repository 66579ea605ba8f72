// Owns the customer and customer-user records, the customer state machine (active <-> archived),
// the uniqueness of external_id within an account, and the customer_* event payloads.
import type { Deps } from '../../deps.js';
import { ApiError, Errors } from '../../errors.js';
import { defineCollection, type Account } from '../../store/store.js';
import { defineMachine, transition } from '../machine.js';
import type { Schema } from '../../schemas.js';
import { withNulls } from '../views.js';

export const ADDRESS_FIELDS = ['street_address', 'sub_premise', 'city', 'state', 'postal_code', 'country'] as const;
export const PATCHABLE_FIELDS = ['name', 'legal_name', 'ein', ...ADDRESS_FIELDS] as const;
export const CREATE_FIELDS = [...PATCHABLE_FIELDS, 'email', 'external_id'] as const;

export type CustomerStatus = Schema<'CustomerStatus'>;

/** The stored customer is exactly the API's Customer. */
export type Customer = Schema<'Customer'> & { default_payment_method_id: string | null };

/** The fields the API shows, in the document's order (a record from an older data file may hold more, or fewer). */
const USER_VIEW_FIELDS = ['id', 'created_at', 'email', 'first_name', 'last_name', 'job_title', 'phone'] as const;
const VIEW_FIELDS = ['id', 'created_at', 'status', ...CREATE_FIELDS, 'default_payment_method_id', 'customer_integration_id'] as const;

/** Users belong to one customer; the API view leaves the owner out. */
export type CustomerUser = Schema<'CustomerUser'> & { customer_id: string };

/** external_id is indexed: it names one customer of the account (the real service keeps external ids unique per partner). */
export const customers = defineCollection<Customer>('customers', ['external_id']);
export const customerUsers = defineCollection<CustomerUser>('customer_users', ['customer_id']);

// The spec lists 400 (not 409) for archive and restore, so an illegal move here answers 400.
export const customerMachine = defineMachine({
  resource: 'customer',
  states: ['active', 'archived'] as const,
  events: ['archive', 'restore'] as const,
  table: { active: { archive: 'archived' }, archived: { restore: 'active' } },
  refusal: Errors.invalidState400,
});


export function getCustomer(account: Account, id: string): Customer {
  return customers(account).require(id, 'customer');
}

export type CustomerInput = Schema<'CustomerCreateInput'> & { customer_integration_id?: string };

/** The rules of a new customer beyond its schema: an external_id names one customer of the account. */
function checkCustomerInput(account: Account, input: CustomerInput): void {
  if (input.external_id !== undefined && customers(account).findBy('external_id', input.external_id)) {
    throw new ApiError(Errors.badRequest, { message: 'This external id is already used', validation_errors: { external_id: 'is already used by another customer' } });
  }
}

export function createCustomer(deps: Deps, account: Account, input: CustomerInput): Customer {
  checkCustomerInput(account, input);
  // One literal, every field of the document in its order: the object holds them all itself (a
  // spread of the input's fields and four more made a second object and kept the four apart, some
  // 40 bytes more for each stored customer), and a field the document adds fails to compile here.
  const customer: Customer = {
    id: account.newId('cus'),
    created_at: account.clock.iso(),
    status: 'active',
    name: input.name ?? null,
    legal_name: input.legal_name ?? null,
    ein: input.ein ?? null,
    street_address: input.street_address ?? null,
    sub_premise: input.sub_premise ?? null,
    city: input.city ?? null,
    state: input.state ?? null,
    postal_code: input.postal_code ?? null,
    country: input.country ?? null,
    email: input.email ?? null,
    external_id: input.external_id ?? null,
    default_payment_method_id: null,
    customer_integration_id: input.customer_integration_id ?? null,
  };
  customers(account).insert(customer);
  deps.events.record(account, 'customer_created', customer.id, customerEventData(customer));
  return customer;
}

export function updateCustomer(deps: Deps, account: Account, id: string, patch: CustomerInput): Customer {
  const customer = getCustomer(account, id);
  const changes = pick(patch, PATCHABLE_FIELDS);
  const changed = Object.keys(changes).filter((k) => customer[k as keyof Customer] !== changes[k as keyof typeof changes]);
  if (!changed.length) return customer;
  customers(account).update(id, changes);
  deps.events.record(account, 'customer_updated', id, { ...customerEventData(customer), changed_fields: changed });
  return customer;
}

export function moveCustomer(deps: Deps, account: Account, id: string, event: 'archive' | 'restore'): Customer {
  const customer = getCustomer(account, id);
  const status = transition(customerMachine, customer.status, event);
  customers(account).update(id, { status });
  if (event === 'archive') deps.events.record(account, 'customer_archived', id, customerEventData(customer));
  else deps.events.record(account, 'customer_updated', id, { ...customerEventData(customer), changed_fields: ['status'] });
  return customer;
}

/** The customer as the API shows it. */
export function customerView(customer: Customer): Schema<'Customer'> {
  return withNulls(customer, VIEW_FIELDS) as Schema<'Customer'>;
}

export function customerEventData(customer: Customer): Record<string, unknown> {
  return {
    customer_id: customer.id,
    external_id: customer.external_id ?? null,
    name: customer.name ?? null,
    email: customer.email ?? null,
    status: customer.status,
  };
}

export function createCustomerUser(account: Account, customerId: string, input: Schema<'CustomerUserCreateInput'>): CustomerUser {
  const customer = getCustomer(account, customerId);
  if (customer.status === 'archived') {
    throw new ApiError(Errors.unprocessable, { message: 'Users cannot be added to an archived customer.', validation_errors: { id: 'customer is archived' } });
  }
  const email = input.email.toLowerCase();
  for (const user of customerUsers(account).newest({ field: 'customer_id', value: customerId })) {
    if (user.email.toLowerCase() === email) {
      throw new ApiError(Errors.unprocessable, { message: 'A user with this email already exists for this customer.', validation_errors: { email: 'is already a user of this customer' } });
    }
  }
  // The create input has no job_title or phone (additionalProperties: false): a new user has neither.
  const user: CustomerUser = { id: account.newId('cu'), customer_id: customerId, created_at: account.clock.iso(), ...pick(input, ['email', 'first_name', 'last_name']) } as CustomerUser;
  return customerUsers(account).insert(user);
}

/** The customer user as the API shows it: the owner is in the path, not the body. */
export function customerUserView(user: CustomerUser): Schema<'CustomerUser'> {
  return withNulls(user, USER_VIEW_FIELDS) as Schema<'CustomerUser'>;
}

export function pick<T extends object, K extends keyof T & string>(source: T | undefined, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  if (!source) return out;
  for (const key of keys) {
    const value = source[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
