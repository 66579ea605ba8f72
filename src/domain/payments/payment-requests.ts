// Owns payment requests: one-off hosted checkouts with a lifetime on the account clock
// (pending -> paid, expired or cancelled), their input rules, and paying one from its hosted page.
import type { Deps } from '../../deps.js';
import { ApiError, Errors, invalidFields } from '../../errors.js';
import { signLink } from '../../hosted/signed-links.js';
import { defineCollection, type Account } from '../../store/store.js';
import { applyTransition, canTransition, defineMachine, transition } from '../machine.js';
import { cents, isCents, MAX_AMOUNT, type MethodKind } from './money.js';
import { startPayment } from './payments.js';
import type { Payment } from './records.js';

export type PaymentRequestStatus = 'pending' | 'paid' | 'expired' | 'cancelled';

export interface PaymentRequest {
  id: string;
  created_at: string;
  updated_at: string;
  status: PaymentRequestStatus;
  amount: number;
  currency: string;
  reference_id: string | null;
  redirect_url: string;
  expires_at: string;
  paid_at: string | null;
  payment_id: string | null;
}

export const paymentRequests = defineCollection<PaymentRequest>('payment_requests');

export const paymentRequestMachine = defineMachine({
  resource: 'payment request',
  states: ['pending', 'paid', 'expired', 'cancelled'] as const,
  events: ['pay', 'expire', 'cancel'] as const,
  internal: ['expire'],
  table: {
    pending: { pay: 'paid', expire: 'expired', cancel: 'cancelled' },
    paid: {},
    expired: {},
    cancelled: {},
  },
});

/** Sandbox choice: a payment request can be paid for 24 hours. */
export const PAYMENT_REQUEST_LIFETIME_SECONDS = 24 * 3600;
export const EXPIRE_JOB = 'payment_request.expire';
export const SUPPORTED_CURRENCIES = ['USD'];

export interface PaymentRequestInput {
  amount?: number;
  currency?: string;
  redirect_url?: string;
  reference_id?: string;
}

export function createPaymentRequest(deps: Deps, account: Account, input: PaymentRequestInput): PaymentRequest {
  const missing: Record<string, string> = {};
  for (const field of ['amount', 'currency', 'redirect_url'] as const) if (input[field] === undefined) missing[field] = 'is required';
  if (input.redirect_url !== undefined && !isHttpsUrl(input.redirect_url)) missing.redirect_url = 'must be an absolute HTTPS URL';
  if (Object.keys(missing).length) throw invalidFields(missing);
  const amount = input.amount as number;
  const currency = (input.currency as string).toUpperCase();
  if (!(amount > 0) || !isCents(amount) || amount > MAX_AMOUNT) {
    throw new ApiError(Errors.unprocessable, { message: 'The amount must be greater than 0, in dollars and cents.', validation_errors: { amount: `must be greater than 0 and at most ${MAX_AMOUNT}, with at most two decimals` } });
  }
  if (!SUPPORTED_CURRENCIES.includes(currency)) {
    throw new ApiError(Errors.unprocessable, { message: `The currency ${currency} is not supported.`, validation_errors: { currency: `must be one of: ${SUPPORTED_CURRENCIES.join(', ')}` } });
  }
  const now = account.clock.nowMs();
  const request = paymentRequests(account).insert({
    id: account.newId('preq'),
    created_at: new Date(now).toISOString(),
    updated_at: new Date(now).toISOString(),
    status: 'pending',
    amount: cents(amount),
    currency,
    reference_id: input.reference_id ?? null,
    redirect_url: input.redirect_url as string,
    expires_at: new Date(now + PAYMENT_REQUEST_LIFETIME_SECONDS * 1000).toISOString(),
    paid_at: null,
    payment_id: null,
  });
  deps.scheduler.schedule(account, EXPIRE_JOB, now + PAYMENT_REQUEST_LIFETIME_SECONDS * 1000, { payment_request_id: request.id });
  return request;
}

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

export function movePaymentRequest(account: Account, request: PaymentRequest, event: 'pay' | 'expire' | 'cancel', changes: Partial<PaymentRequest> = {}): PaymentRequest {
  return applyTransition(paymentRequestMachine, paymentRequests(account), request, event, account.clock.iso(), changes);
}

export function runExpireJob(account: Account, id: string): void {
  const request = paymentRequests(account).get(id);
  if (request && canTransition(paymentRequestMachine, request.status, 'expire')) movePaymentRequest(account, request, 'expire');
}

/**
 * A pending request whose expires_at has come is expired now, as its due job would (no event either
 * way): real time may pass expires_at before the scheduler runs. Answers the request.
 */
export function expireIfDue(account: Account, request: PaymentRequest): PaymentRequest {
  if (account.clock.nowMs() >= Date.parse(request.expires_at) && canTransition(paymentRequestMachine, request.status, 'expire')) {
    movePaymentRequest(account, request, 'expire');
  }
  return request;
}

/**
 * Pay a pending request from its hosted page. A declined card leaves it pending (the payer may try
 * again); otherwise it is paid at once and the payment goes on the clock. One past its expires_at is
 * expired first, then refused like any expired request (409).
 */
export function payPaymentRequest(deps: Deps, account: Account, id: string, instrument: { kind: MethodKind; failure: string | null }): Payment {
  const request = expireIfDue(account, paymentRequests(account).require(id, 'payment request'));
  transition(paymentRequestMachine, request.status, 'pay');
  const payment = startPayment(deps, account, {
    type: 'payment_request',
    amount: request.amount,
    currency: request.currency,
    customer_id: null,
    invoice_id: null,
    payment_request_id: request.id,
    kind: instrument.kind,
    method_id: null,
    failure: instrument.failure,
    due_date: null,
    source: 'hosted_page',
  });
  if (payment.status !== 'failed') movePaymentRequest(account, request, 'pay', { paid_at: account.clock.iso(), payment_id: payment.id });
  return payment;
}

function paymentRequestPath(request: PaymentRequest): string {
  return `/hosted/payment-requests/${request.id}`;
}

/** The hosted checkout link: signed, valid until the request expires. */
function paymentRequestUrl(deps: Deps, account: Account, origin: string, request: PaymentRequest): string {
  const ttl = Math.max(60, Math.ceil((Date.parse(request.expires_at) - account.clock.nowMs()) / 1000) + 3600);
  return signLink(deps, account, origin, paymentRequestPath(request), ttl);
}

export function paymentRequestView(deps: Deps, account: Account, origin: string, request: PaymentRequest) {
  return {
    id: request.id,
    url: paymentRequestUrl(deps, account, origin, request),
    status: request.status,
    amount: request.amount,
    currency: request.currency,
    reference_id: request.reference_id,
    redirect_url: request.redirect_url,
    created_at: request.created_at,
    expires_at: request.expires_at,
    paid_at: request.paid_at,
  };
}
