// Owns customers' payment methods: cards (details derived deterministically from the provider token),
// bank accounts (only the last four digits are kept), the default method, CVV submission, fee quotes,
// and the payment_method_* event payloads. Magic test values decide how payments with a method end.
import { createHash } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { ApiError, Errors, invalidFields } from '../../errors.js';
import { LIMITS } from '../../limits.js';
import { defineCollection, type Account } from '../../store/store.js';
import { customers, getCustomer } from '../customers/customers.js';
import { decimal, FEES, feeFor, MAX_AMOUNT, type MethodKind } from '../payments/money.js';

export type PaymentMethodType = 'card' | 'ach';

export interface PaymentMethodRecord {
  id: string;
  customer_id: string;
  created_at: string;
  type: PaymentMethodType;
  custom_name: string | null;
  brand: string | null;
  last4: string | null;
  exp_month: string | null;
  exp_year: string | null;
  bank_name: string | null;
  account_last4: string | null;
  account_data_type: 'us' | 'ca' | null;
  subtype: string | null;
  receiver_name: string | null;
  /** null: payments succeed; else the failure_reason every payment with this method ends with. */
  failure: string | null;
  cvv_submitted_at: string | null;
}

export const paymentMethods = defineCollection<PaymentMethodRecord>('payment_methods', ['customer_id']);

// Test values (docs/test-values.md). Card outcomes follow the last four digits, as with the test
// card numbers of card networks; bank outcomes follow the whole account number.
export const CARD_TEST_TOKENS: Record<string, { brand: string; last4: string }> = {
  tok_visa: { brand: 'visa', last4: '4242' },
  tok_mastercard: { brand: 'mastercard', last4: '4444' },
  tok_amex: { brand: 'amex', last4: '8431' },
  tok_discover: { brand: 'discover', last4: '1117' },
  tok_card_declined: { brand: 'visa', last4: '0002' },
  tok_insufficient_funds: { brand: 'visa', last4: '9995' },
};
const CARD_FAILURES: Record<string, string> = { '0002': 'card_declined', '9995': 'insufficient_funds' };
export const BANK_FAILURES: Record<string, string> = {
  '000111111116': 'account_closed',
  '000222222227': 'insufficient_funds',
  '00011116': 'account_closed',
};

/** The failure_reason payments with a test card (by last four) or bank account (by number) end with; null: they succeed. */
export function testValueFailure(instrument: { last4: string } | { account_number: string }): string | null {
  return ('last4' in instrument ? CARD_FAILURES[instrument.last4] : BANK_FAILURES[instrument.account_number]) ?? null;
}

const BRANDS = ['visa', 'mastercard', 'amex', 'discover'];

interface CardDetails { brand: string; last4: string; exp_month: string; exp_year: string }

/** Card details from a provider token: a magic token, the checkout's JSON token, or any other string. */
export function cardFromToken(account: Account, token: string): CardDetails {
  const digest = createHash('sha256').update(token).digest();
  const year = Number(account.clock.today().slice(0, 4));
  const hashed = {
    exp_month: String((digest[0] % 12) + 1).padStart(2, '0'),
    exp_year: String(year + 1 + (digest[1] % 5)),
  };
  const known = CARD_TEST_TOKENS[token];
  if (known) return { ...known, ...hashed };
  if (token.trim().startsWith('{')) return cardFromJsonToken(account, token);
  let last4 = String(digest.readUInt16BE(2) % 10000).padStart(4, '0');
  if (CARD_FAILURES[last4]) last4 = '4242';
  return { brand: BRANDS[digest[4] % BRANDS.length], last4, ...hashed };
}

// The embeddable checkout sends a JSON string of the card form's encrypted fields; the sandbox reads
// the digits at the end of number_secret as the card number's last four (e.g. "ev:num_4000000000000002").
/** A JSON string or number as text; anything else (absent, null, an object) as ''. */
function scalarText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

function cardFromJsonToken(account: Account, token: string): CardDetails {
  let parsed: Record<string, unknown>;
  try {
    // Read as a record of fields: a JSON value that is not an object has none of them (each is then reported missing).
    const value: unknown = JSON.parse(token);
    parsed = value !== null && typeof value === 'object' ? { ...value } : {};
  } catch {
    throw invalidFields({ card_provider_token: 'is not valid JSON' });
  }
  const number = typeof parsed.number_secret === 'string' ? parsed.number_secret : '';
  const month = scalarText(parsed.expiry_month).padStart(2, '0');
  let year = scalarText(parsed.expiry_year);
  if (/^\d{2}$/.test(year)) year = `20${year}`;
  const errors: Record<string, string> = {};
  if (!number) errors['card_provider_token.number_secret'] = 'is required';
  if (!/^(0[1-9]|1[0-2])$/.test(month)) errors['card_provider_token.expiry_month'] = 'must be a month 01-12';
  if (!/^\d{4}$/.test(year)) errors['card_provider_token.expiry_year'] = 'must be a four-digit year';
  if (Object.keys(errors).length) throw invalidFields(errors);
  if (`${year}-${month}` < account.clock.today().slice(0, 7)) throw invalidFields({ 'card_provider_token.expiry_year': 'the card has expired' });
  const digits = /(\d{4})\D*$/.exec(number)?.[1];
  const digest = createHash('sha256').update(number).digest();
  const last4 = digits ?? String(digest.readUInt16BE(0) % 10000).padStart(4, '0');
  const brand = /^\D*3[47]/.test(number.replace(/^ev:[a-z]+_/, '')) ? 'amex' : /^\D*5[1-5]/.test(number.replace(/^ev:[a-z]+_/, '')) ? 'mastercard' : 'visa';
  return { brand, last4, exp_month: month, exp_year: year };
}

function customerAcceptingMethods(account: Account, customerId: string) {
  const customer = getCustomer(account, customerId);
  if (customer.status !== 'active') {
    throw new ApiError(Errors.invalidState400, { message: 'Payment methods cannot be added to an archived customer.', validation_errors: { id: 'customer is archived' } });
  }
}

export interface CardInput {
  card_provider_token: string;
  custom_name?: string;
  provider?: string;
  address?: Record<string, string>;
}

export function addCardMethod(deps: Deps, account: Account, customerId: string, input: CardInput): PaymentMethodRecord {
  customerAcceptingMethods(account, customerId);
  const card = cardFromToken(account, input.card_provider_token);
  return addMethod(deps, account, customerId, {
    type: 'card',
    custom_name: input.custom_name ?? null,
    ...card,
    bank_name: null,
    account_last4: null,
    account_data_type: null,
    subtype: null,
    receiver_name: null,
    failure: testValueFailure({ last4: card.last4 }),
  });
}

export interface BankInput {
  account_data_type: 'us' | 'ca';
  custom_name?: string;
  institution_name?: string;
  receiver_name?: string;
  subtype?: string;
  type?: string;
  us_account_data?: { account_number: string; routing_number: string };
  ca_account_data?: { account_number: string; institution_code: string; transit_number: string };
}

export function addBankMethod(deps: Deps, account: Account, customerId: string, input: BankInput): PaymentMethodRecord {
  customerAcceptingMethods(account, customerId);
  const block = input.account_data_type === 'us' ? input.us_account_data : input.ca_account_data;
  const other = input.account_data_type === 'us' ? 'ca_account_data' : 'us_account_data';
  if (!block || (other === 'ca_account_data' ? input.ca_account_data : input.us_account_data)) {
    const errors: Record<string, string> = {};
    if (!block) errors[`${input.account_data_type}_account_data`] = `is required when account_data_type is ${input.account_data_type}`;
    else errors[other] = `must not be sent when account_data_type is ${input.account_data_type}`;
    throw invalidFields(errors, 'Exactly one of us_account_data and ca_account_data is sent, matching account_data_type.');
  }
  return addMethod(deps, account, customerId, {
    type: 'ach',
    custom_name: input.custom_name ?? null,
    brand: null,
    last4: null,
    exp_month: null,
    exp_year: null,
    bank_name: input.institution_name ?? null,
    account_last4: block.account_number.slice(-4),
    account_data_type: input.account_data_type,
    subtype: input.subtype ?? 'checkings',
    receiver_name: input.receiver_name ?? null,
    // The account number itself is never stored: only its outcome and last four digits.
    failure: testValueFailure({ account_number: block.account_number }),
  });
}

/** The fields a card and a bank account each describe; addMethod gives the rest. */
type MethodDetails = Omit<PaymentMethodRecord, 'id' | 'customer_id' | 'created_at' | 'cvv_submitted_at'>;

/** Store a new method for the customer; the first one becomes the customer's default. */
function addMethod(deps: Deps, account: Account, customerId: string, details: MethodDetails): PaymentMethodRecord {
  const customer = getCustomer(account, customerId);
  // Counting stops at the cap: the cost of a check does not grow with the customer's methods.
  let held = 0;
  for (const _method of paymentMethods(account).newest({ field: 'customer_id', value: customerId })) if (++held >= LIMITS.paymentMethodsPerCustomer) break;
  if (held >= LIMITS.paymentMethodsPerCustomer) {
    throw new ApiError(Errors.unprocessable, {
      message: `A customer holds at most ${LIMITS.paymentMethodsPerCustomer} payment methods: delete one first.`,
      validation_errors: { customer_id: `already holds ${LIMITS.paymentMethodsPerCustomer} payment methods` },
    });
  }
  const first = customer.default_payment_method_id === null;
  const method: PaymentMethodRecord = { id: account.newId('pm'), customer_id: customerId, created_at: account.clock.iso(), ...details, cvv_submitted_at: null };
  const stored = paymentMethods(account).insert(method);
  if (first) customers(account).update(customer.id, { default_payment_method_id: method.id });
  deps.events.record(account, 'payment_method_added', stored.id, paymentMethodEventData(account, stored));
  if (first) {
    deps.events.record(account, 'default_payment_method_changed', customer.id, { customer_id: customer.id, payment_method_id: stored.id, previous_payment_method_id: null });
  }
  return stored;
}

/** The method, if it belongs to the customer (404 otherwise, like an unknown id). */
export function getMethod(account: Account, customerId: string, methodId: string): PaymentMethodRecord {
  getCustomer(account, customerId);
  const method = paymentMethods(account).get(methodId);
  if (!method || method.customer_id !== customerId) throw new ApiError(Errors.notFound, { message: `No payment method with id ${methodId} for this customer.` });
  return method;
}

export function listMethods(account: Account, customerId: string): PaymentMethodRecord[] {
  getCustomer(account, customerId);
  return [...paymentMethods(account).newest({ field: 'customer_id', value: customerId })];
}

export function setDefaultMethod(deps: Deps, account: Account, customerId: string, methodId: string): boolean {
  const method = getMethod(account, customerId, methodId);
  const customer = getCustomer(account, customerId);
  const previous = customer.default_payment_method_id;
  if (previous === method.id) return false;
  customers(account).update(customerId, { default_payment_method_id: method.id });
  deps.events.record(account, 'default_payment_method_changed', customerId, { customer_id: customerId, payment_method_id: method.id, previous_payment_method_id: previous });
  return true;
}

/** Deleting the default leaves the customer without one (default_payment_method_id null). */
export function deleteMethod(deps: Deps, account: Account, customerId: string, methodId: string): PaymentMethodRecord {
  const method = getMethod(account, customerId, methodId);
  const data = paymentMethodEventData(account, method);
  paymentMethods(account).remove(method.id);
  const customer = getCustomer(account, customerId);
  if (customer.default_payment_method_id === method.id) customers(account).update(customerId, { default_payment_method_id: null });
  deps.events.record(account, 'payment_method_deleted', method.id, data);
  return method;
}

export function submitCvv(account: Account, customerId: string, methodId: string, _input: { cvv_secret: string; product_id?: string }): void {
  const method = getMethod(account, customerId, methodId);
  if (method.type !== 'card') throw invalidFields({ card_id: 'is not a card: only cards take a CVV' });
  paymentMethods(account).update(method.id, { cvv_submitted_at: account.clock.iso() });
}

/** The kind a method pays with by default. */
export function defaultKind(method: PaymentMethodRecord): MethodKind {
  return method.type === 'card' ? 'card' : 'standard_ach';
}

export function feeQuote(method: PaymentMethodRecord, amount: number) {
  if (!(amount > 0) || amount > MAX_AMOUNT) throw invalidFields({ amount: `must be more than 0 and at most ${MAX_AMOUNT}` });
  const kind = defaultKind(method);
  const model = FEES[kind];
  return {
    fee_percentage_for_customer: '0.00',
    fee_percentage_for_partner: decimal(model.percent),
    fixed_fee_amount_customer: '0.00',
    fixed_fee_amount_partner: decimal(model.fixed),
    relative_fee_amount_customer: '0.00',
    // The fee is percent x amount + fixed, capped: the relative part is what the cap leaves of it.
    relative_fee_amount_partner: decimal(Math.max(0, feeFor(kind, amount) - model.fixed)),
  };
}

/** Whether the method is its customer's default: the customer's default_payment_method_id says so. */
export function isDefaultMethod(account: Account, method: PaymentMethodRecord): boolean {
  return customers(account).get(method.customer_id)?.default_payment_method_id === method.id;
}

export function paymentMethodView(account: Account, method: PaymentMethodRecord) {
  return {
    id: method.id,
    created_at: method.created_at,
    type: method.type,
    default: isDefaultMethod(account, method),
    custom_name: method.custom_name,
    brand: method.brand,
    last4: method.last4,
    exp_month: method.exp_month,
    exp_year: method.exp_year,
    bank_name: method.bank_name,
    account_last4: method.account_last4,
    account_data_type: method.account_data_type,
  };
}

export function paymentMethodEventData(account: Account, method: PaymentMethodRecord): Record<string, unknown> {
  return { payment_method_id: method.id, customer_id: method.customer_id, type: method.type, default: isDefaultMethod(account, method) };
}
