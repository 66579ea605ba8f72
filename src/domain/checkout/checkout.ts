// Owns checkout tokens (scoped to one customer and one invoice, living --token-ttl real seconds), the
// card-form credentials, the partner theme, the built-in address book, and idempotent checkout payments.
import { createHash } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { ApiError, Errors, invalidFields } from '../../errors.js';
import type { Principal } from '../../http/context.js';
import type { Account } from '../../store/store.js';
import { defineIdempotencyKeys } from '../../store/idempotency.js';
import { CHECKOUT_AUDIENCE } from '../../auth/security.js';
import { tokenGeneration } from '../../auth/tokens.js';
import { getCustomer } from '../customers/customers.js';
import { getInvoice } from '../invoices/invoices.js';
import { parseIsoInstant } from '../dates.js';
import type { MethodKind } from '../payments/money.js';
import { payInvoice } from '../payments/payments.js';
import type { Payment } from '../payments/records.js';

export async function issueCheckoutToken(deps: Deps, account: Account, principal: Principal, input: { customer_id: string; invoice_id?: string }) {
  // The real service answers a missing invoice_id with 400 "invalid invoice id".
  if (!input.invoice_id) throw invalidFields({ invoice_id: 'is required' }, 'Invalid invoice id.');
  getCustomer(account, input.customer_id);
  const invoice = getInvoice(account, input.invoice_id);
  if (invoice.customer_id !== input.customer_id) throw invalidFields({ invoice_id: 'is not an invoice of this customer' }, 'Invalid invoice id.');
  // Real time, as access tokens: a moved account clock never expires a token.
  const now = deps.realNow();
  const expiresAt = Math.floor(now / 1000) + deps.tokens.ttlSeconds;
  const token = await deps.tokens.signFor(CHECKOUT_AUDIENCE, {
    partner_id: account.partnerId,
    client_id: principal.client_id,
    customer_id: input.customer_id,
    invoice_id: input.invoice_id,
    environment: account.environment,
    gen: tokenGeneration(account),
  }, now, expiresAt);
  // Signed for the account as it was when the request began: a reset meanwhile removed the invoice.
  account.assertCurrent();
  return { token, expires_at: expiresAt };
}

function sandboxId(prefix: string, account: Account): string {
  return `${prefix}_sandbox_${createHash('sha256').update(`${prefix}|${account.partnerId}`).digest('hex').slice(0, 12)}`;
}

/** Sandbox values of the card-tokenization provider's app and team ids, stable per partner. */
export function cardFormCredentials(account: Account) {
  return { app_id: sandboxId('app', account), team_id: sandboxId('team', account) };
}

export function theme(deps: Deps, account: Account) {
  return { partner_name: deps.store.data.partners[account.partnerId]?.name ?? 'Sandbox partner', theme: { color: '#1f6feb', logo_url: null } };
}

export interface BookAddress {
  id: string;
  street_address: string;
  subpremise?: string;
  city: string;
  state: string;
  state_code: string;
  postal_code: string;
  country: string;
  country_code: string;
}

// Sandbox choice: autocomplete answers from this small built-in list instead of a maps provider.
export const ADDRESS_BOOK: BookAddress[] = [
  { id: 'addr_us_001', street_address: '100 Main St', subpremise: 'Suite 200', city: 'Springfield', state: 'Illinois', state_code: 'IL', postal_code: '62701', country: 'United States', country_code: 'US' },
  { id: 'addr_us_002', street_address: '1 Market St', city: 'San Francisco', state: 'California', state_code: 'CA', postal_code: '94105', country: 'United States', country_code: 'US' },
  { id: 'addr_us_003', street_address: '350 Fifth Ave', city: 'New York', state: 'New York', state_code: 'NY', postal_code: '10118', country: 'United States', country_code: 'US' },
  { id: 'addr_us_004', street_address: '600 Congress Ave', city: 'Austin', state: 'Texas', state_code: 'TX', postal_code: '78701', country: 'United States', country_code: 'US' },
  { id: 'addr_ca_001', street_address: '100 King St W', city: 'Toronto', state: 'Ontario', state_code: 'ON', postal_code: 'M5X 1A9', country: 'Canada', country_code: 'CA' },
  { id: 'addr_ca_002', street_address: '1000 Rue De La Gauchetiere O', city: 'Montreal', state: 'Quebec', state_code: 'QC', postal_code: 'H3B 4W5', country: 'Canada', country_code: 'CA' },
];

function describeAddress(a: BookAddress): string {
  return `${a.street_address}${a.subpremise ? ` ${a.subpremise}` : ''}, ${a.city}, ${a.state_code} ${a.postal_code}, ${a.country_code === 'US' ? 'USA' : a.country}`;
}

export function suggest(input: { q: string; country?: string }) {
  const words = input.q.toLowerCase().split(/\s+/).filter(Boolean);
  const suggestions = ADDRESS_BOOK
    .filter((a) => !input.country || a.country_code.toLowerCase() === input.country.toLowerCase())
    .filter((a) => words.every((w) => describeAddress(a).toLowerCase().includes(w)))
    .map((a) => ({ id: a.id, description: describeAddress(a) }));
  return { suggestions };
}

export function addressDetails(id: string) {
  const found = ADDRESS_BOOK.find((a) => a.id === id);
  if (!found) throw new ApiError(Errors.notFound, { message: `No address suggestion with id ${id}.` });
  const { id: _id, subpremise = null, ...address } = found;
  return { ...address, subpremise };
}

export interface CheckoutPaymentInput {
  amount: string;
  customer_id?: string;
  invoice_id?: string;
  payment_date?: string;
  payment_method: MethodKind;
  payment_method_id?: string;
}

interface CheckoutAnswer { status: number; body: unknown }

const checkoutKeys = defineIdempotencyKeys<CheckoutAnswer>('checkout_idempotency');

/** Pay the token's invoice; an Idempotency-Key replays the first answer, or 409 with another body. */
export function checkoutPay(deps: Deps, account: Account, principal: Principal, input: CheckoutPaymentInput, key: string | undefined): CheckoutAnswer {
  // A key is scoped to the token's invoice: two invoices may use the same key.
  const scoped = key ? `${principal.invoice_id}|${key}` : undefined;
  const seen = scoped ? checkoutKeys(account).replay(scoped, input, 'Idempotency-Key') : undefined;
  if (seen) return seen;
  const mismatch: Record<string, string> = {};
  if (input.customer_id !== undefined && input.customer_id !== principal.customer_id) mismatch.customer_id = 'is not the checkout token\'s customer';
  if (input.invoice_id !== undefined && input.invoice_id !== principal.invoice_id) mismatch.invoice_id = 'is not the checkout token\'s invoice';
  if (Object.keys(mismatch).length) throw new ApiError(Errors.forbidden, { message: 'A checkout token may only pay its own invoice.', validation_errors: mismatch });
  if (input.payment_method !== 'manual' && !input.payment_method_id) throw invalidFields({ payment_method_id: `is required when payment_method is ${input.payment_method}` });
  if (input.payment_date !== undefined && parseIsoInstant(input.payment_date) === undefined) throw invalidFields({ payment_date: 'must be an ISO 8601 date or date-time that exists' });
  const payment = payInvoice(deps, account, principal.invoice_id as string, {
    payment_method_id: input.payment_method === 'manual' ? undefined : input.payment_method_id,
    amount: Number(input.amount),
    payment_method: input.payment_method,
    source: 'checkout',
  });
  const body = { status: payment.status, message: outcomeMessage(payment), payment_id: payment.id };
  if (scoped) checkoutKeys(account).remember(scoped, input, { status: 201, body });
  return { status: 201, body };
}

function outcomeMessage(payment: Payment): string {
  if (payment.status === 'failed') return `Payment failed: ${payment.failure_reason}`;
  return 'Payment submitted; it settles on the sandbox clock';
}
