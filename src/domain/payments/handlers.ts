// Owns the payment-request and payment-list operations: short stories over payments.ts and
// payment-requests.ts.
import { created, ok, type ApiHandlers, type Handler } from '../../http/context.js';
import { pageParams, timeWindow } from '../../http/pagination.js';
import { createPaymentRequest, expireIfDue, paymentRequests, paymentRequestView } from './payment-requests.js';
import { paymentView } from './payments.js';
import { payments, type Payment } from './records.js';

const listPayments: Handler<'listPayments'> = ({ account, query }) => {
  const createdIn = timeWindow(query.created_at_start, query.created_at_end);
  const filter = (p: Payment) =>
    (!createdIn || createdIn(p.created_at)) && (!query.status || p.status === query.status) && (!query.type || p.type === query.type) &&
    (!query.payment_method || p.payment_method === query.payment_method) && (!query.customer_id || p.customer_id === query.customer_id);
  // Walk the narrowest index: the invoice's payments, else the customer's, else all.
  const where = query.invoice_id ? { field: 'invoice_id', value: String(query.invoice_id) }
    : query.customer_id ? { field: 'customer_id', value: String(query.customer_id) } : undefined;
  const page = payments(account).page({ ...pageParams(query), filter, where });
  return ok({ ...page, data: page.data.map(paymentView) });
};

export const paymentHandlers = {
  listPayments,
  createPaymentRequest: ({ deps, account, body, origin }) => created(paymentRequestView(deps, account, origin, createPaymentRequest(deps, account, body ?? {}))),
  // A request past its expires_at reads as expired even before its due job has run.
  getPaymentRequest: ({ deps, account, params, origin }) => ok(paymentRequestView(deps, account, origin, expireIfDue(account, paymentRequests(account).require(params.id, 'payment request')))),
} satisfies ApiHandlers;
