// Owns the vendor payment operations and their control-plane simulation: short stories over vendor-payments.ts.
import { ok, type ApiHandlers, type ControlHandlers } from '../../http/context.js';
import { submitVendorData } from '../vendors/activation.js';
import { dataRequestView, vendorView } from '../vendors/vendors.js';
import {
  bulkCancelVendorPayments, cancelVendorPayment, failVendorPayment, initiateVendorPayments, retryVendorPayment,
} from './vendor-payments.js';
import { vendorPaymentView } from './records.js';

/** Sandbox choice: the failure_reason of a simulated failure when none is given (an ACH return). */
const DEFAULT_FAILURE_REASON = 'bank_return';

export const vendorPaymentHandlers = {
  createVendorPayments: ({ deps, account, body }) => ok(initiateVendorPayments(deps, account, body)),
  retryVendorPayment: ({ deps, account, params }) => ok({ bill_id: retryVendorPayment(deps, account, params.bill_id).bill_id }),
  cancelVendorPayment: ({ account, body }) => {
    const payment = cancelVendorPayment(account, body.bill_id, body.payment_id);
    return ok({ payment_id: payment.id, status: payment.status });
  },
  bulkCancelVendorPayments: ({ account, body }) => ok(bulkCancelVendorPayments(account, body.items)),
} satisfies ApiHandlers;

export const payablesControl = {
  sandboxSubmitVendorDataRequest: ({ deps, account, params, body }) => {
    const { vendor, request } = submitVendorData(deps, account, params.id, params.request_id, body ?? {});
    return ok({ vendor: vendorView(vendor), data_request: dataRequestView(request) });
  },
  sandboxFailVendorPayment: ({ account, params, body }) =>
    ok(vendorPaymentView(failVendorPayment(account, params.payment_id, body?.failure_reason ?? DEFAULT_FAILURE_REASON))),
} satisfies ControlHandlers;
