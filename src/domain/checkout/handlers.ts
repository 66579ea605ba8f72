// Owns the checkout operations: token issue and card-form credentials (API tokens), and the
// embeddable checkout surface under /checkout (checkout tokens, scoped to one customer and invoice).
import type { Feature } from '../../feature.js';
import { created, ok, type ApiHandlers, type RequestContext } from '../../http/context.js';
import { invoices, invoiceView } from '../invoices/invoices.js';
import { pdfLink } from '../invoices/handlers.js';
import { addBankMethod, addCardMethod, listMethods, paymentMethodView, submitCvv } from '../payment-methods/payment-methods.js';
import { addressDetails, cardFormCredentials, checkoutPay, issueCheckoutToken, suggest, theme } from './checkout.js';

/** The token's own customer and invoice: nothing else is reachable with a checkout token. */
const scope = ({ principal }: RequestContext) => ({ customerId: principal.customer_id as string, invoiceId: principal.invoice_id as string });

const checkoutHandlers = {
  initCheckoutAuth: async ({ deps, account, principal, body }) => ok(await issueCheckoutToken(deps, account, principal, body)),
  getCardFormCredentials: ({ account }) => ok(cardFormCredentials(account)),
  checkoutGetTheme: ({ deps, account }) => ok(theme(deps, account)),
  checkoutGetInvoice: (ctx) => ok(invoiceView(invoices(ctx.account).require(scope(ctx).invoiceId, 'invoice'))),
  checkoutGetInvoicePdfLink: (ctx) => ok({ url: pdfLink(ctx.deps, ctx.account, ctx.origin, invoices(ctx.account).require(scope(ctx).invoiceId, 'invoice')) }),
  checkoutGetCardFormCredentials: ({ account }) => ok(cardFormCredentials(account)),
  checkoutListPaymentMethods: (ctx) => ok({ data: listMethods(ctx.account, scope(ctx).customerId).map((method) => paymentMethodView(ctx.account, method)) }),
  checkoutCreateCardPaymentMethod: (ctx) => created({ id: addCardMethod(ctx.deps, ctx.account, scope(ctx).customerId, ctx.body).id }),
  checkoutCreateBankPaymentMethod: (ctx) => created({ id: addBankMethod(ctx.deps, ctx.account, scope(ctx).customerId, ctx.body).id }),
  checkoutSubmitCvv: (ctx) => {
    submitCvv(ctx.account, scope(ctx).customerId, ctx.params.id, ctx.body);
    return created({ success: true });
  },
  checkoutCreatePayment: (ctx) => {
    const key = ctx.headers['idempotency-key'];
    return checkoutPay(ctx.deps, ctx.account, ctx.principal, ctx.body, typeof key === 'string' ? key : undefined);
  },
  checkoutAddressAutocomplete: ({ body }) => ok(suggest(body)),
  checkoutAddressDetails: ({ body }) => ok(addressDetails(body.id)),
} satisfies ApiHandlers;

export const checkoutFeature: Feature = { name: 'checkout', handlers: checkoutHandlers };
