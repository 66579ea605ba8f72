// Owns the payment-method operations of a customer: each a short story over payment-methods.ts.
import { created, ok, type ApiHandlers } from '../../http/context.js';
import {
  addBankMethod, addCardMethod, deleteMethod, feeQuote, getMethod, listMethods, paymentMethodView, setDefaultMethod, submitCvv,
} from './payment-methods.js';

export const paymentMethodHandlers = {
  listPaymentMethods: ({ account, params }) => ok({ data: listMethods(account, params.id).map((method) => paymentMethodView(account, method)) }),
  getPaymentMethod: ({ account, params }) => ok(paymentMethodView(account, getMethod(account, params.id, params.method_id))),
  deletePaymentMethod: ({ deps, account, params }) => {
    deleteMethod(deps, account, params.id, params.method_id);
    return created({ response: 'Payment method deleted' });
  },
  setDefaultPaymentMethod: ({ deps, account, params }) => {
    const changed = setDefaultMethod(deps, account, params.id, params.method_id);
    return created({ response: changed ? 'Default payment method updated' : 'Payment method is already the default' });
  },
  createCardPaymentMethod: ({ deps, account, params, body }) => created({ id: addCardMethod(deps, account, params.id, body).id }),
  createBankPaymentMethod: ({ deps, account, params, body }) => created({ id: addBankMethod(deps, account, params.id, body).id }),
  submitCardCvv: ({ account, params, body }) => {
    submitCvv(account, params.id, params.card_id, body);
    return created({ success: true });
  },
  getPaymentMethodFees: ({ account, params, body }) => ok(feeQuote(getMethod(account, params.id, params.card_id), Number(body.amount))),
} satisfies ApiHandlers;
