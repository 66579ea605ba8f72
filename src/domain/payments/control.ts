// Owns the control-plane simulations of the money paths: pay an invoice as its customer, fail a
// payment in flight, refund, open a chargeback, expire a payment request.
import { ok, type ControlHandlers } from '../../http/context.js';
import { movePaymentRequest, paymentRequests, paymentRequestView } from './payment-requests.js';
import { chargebackPayment, failPayment, payInvoice, paymentView, refundPayment } from './payments.js';
import { payments } from './records.js';

export const paymentControlHandlers = {
  sandboxPayInvoice: ({ deps, account, params, body }) =>
    ok(paymentView(payInvoice(deps, account, params.id, { payment_method_id: body?.payment_method_id, amount: body?.amount, source: 'sandbox' }))),
  sandboxFailPayment: ({ deps, account, params, body }) =>
    ok(paymentView(failPayment(deps, account, payments(account).require(params.id, 'payment'), body?.reason ?? 'generic_decline'))),
  sandboxRefundPayment: ({ deps, account, params, body }) => ok(paymentView(refundPayment(deps, account, params.id, body?.amount))),
  sandboxChargebackPayment: ({ deps, account, params, body }) => ok(paymentView(chargebackPayment(deps, account, params.id, body?.reason))),
  sandboxExpirePaymentRequest: ({ deps, account, params, origin }) => {
    const request = paymentRequests(account).require(params.id, 'payment request');
    return ok(paymentRequestView(deps, account, origin, movePaymentRequest(account, request, 'expire')));
  },
} satisfies ControlHandlers;
