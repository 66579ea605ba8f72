// Owns the hosted pages a person opens in a browser: the invoice payment link, the payment-request
// checkout, and the signed invoice PDF file. Plain server-rendered HTML with small forms; every state
// change goes through the same domain functions (and events) as the API.
import type { Express, Request, Response } from 'express';
import type { Deps } from '../deps.js';
import type { Feature } from '../feature.js';
import { ApiError, Errors, invalidFields } from '../errors.js';
import type { Account } from '../store/store.js';
import { verifyLink } from './signed-links.js';
import { customers } from '../domain/customers/customers.js';
import { amountDue, getInvoice, isPayable, type Invoice } from '../domain/invoices/invoices.js';
import { invoicePdfBytes } from '../domain/invoices/pdf.js';
import {
  addBankMethod, addCardMethod, cardFromToken, listMethods, testValueFailure, type PaymentMethodRecord,
} from '../domain/payment-methods/payment-methods.js';
import { money } from '../domain/payments/money.js';
import { payableAmount, payInvoice, refuseUnpayable } from '../domain/payments/payments.js';
import { payments } from '../domain/payments/records.js';
import { expireIfDue, movePaymentRequest, paymentRequests, payPaymentRequest, type PaymentRequest } from '../domain/payments/payment-requests.js';

const esc = (value: string | number | boolean | null | undefined) => String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>
body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
table{width:100%;border-collapse:collapse}td,th{padding:.3rem;border-bottom:1px solid #ddd;text-align:left}
.status{display:inline-block;padding:.1rem .5rem;border-radius:.3rem;background:#eef}.error{color:#b00020}
fieldset{margin:1rem 0}label{display:block;margin:.3rem 0}button{padding:.5rem 1rem;margin-right:.5rem}
</style></head><body><p><small>billing-sandbox hosted page</small></p>${body}</body></html>`;
}

function sendPage(res: Response, status: number, title: string, body: string): void {
  res.status(status).type('html').setHeader('Cache-Control', 'no-store').send(layout(title, body));
}

function errorPage(res: Response, deps: Deps, error: unknown): void {
  if (error instanceof ApiError) {
    sendPage(res, error.status, 'Error', `<h1>${error.status === 403 ? 'Link not valid' : 'Something went wrong'}</h1><p class="error" id="error">${esc(error.message)}</p>`);
    return;
  }
  deps.log.error({ err: error }, 'hosted page failed');
  sendPage(res, 500, 'Error', '<h1>Something went wrong</h1><p class="error" id="error">An unexpected error occurred.</p>');
}

/** Run a page handler with the account of its signed link; errors become an HTML page. */
function page(deps: Deps, handler: (account: Account, req: Request, res: Response) => Promise<void> | void) {
  return async (req: Request, res: Response) => {
    try {
      // A repeated query parameter arrives as an array: such a link is not one the sandbox signed.
      if (['account', 'exp', 'sig'].some((k) => typeof req.query[k] !== 'string')) throw new ApiError(Errors.linkForbidden);
      const account = verifyLink(deps, req);
      // One unit of work per page request, as for the API: a page that throws leaves the account as it found it.
      await account.transaction(() => handler(account, req, res));
    } catch (error) {
      errorPage(res, deps, error);
    }
  };
}

/** New-instrument choices; the card is pre-selected when nothing else is. */
function instrumentFields(cardChecked: boolean): string {
  return `<label><input type="radio" name="method" value="card"${cardChecked ? ' checked' : ''}> Test card, provider token:
  <input name="card_provider_token" value="tok_visa" aria-label="Card token"></label>
<label><input type="radio" name="method" value="bank"> US bank account: routing
  <input name="routing_number" value="011000015" size="9" aria-label="Routing number"> account
  <input name="account_number" value="000123456789" size="17" aria-label="Account number"></label>`;
}

function methodLabel(m: PaymentMethodRecord): string {
  return m.type === 'card' ? `${m.brand} ending ${m.last4} (exp ${m.exp_month}/${m.exp_year})` : `${m.bank_name ?? 'Bank account'} ending ${m.account_last4}`;
}

function invoicePage(deps: Deps, account: Account, invoice: Invoice, notice: string): string {
  const customer = customers(account).get(invoice.customer_id);
  const due = amountDue(invoice);
  const rows = invoice.line_items.map((l) => `<tr><td>${esc(l.description ?? '-')}</td><td>${l.quantity}</td><td>${money(l.amount)}</td><td>${money(l.total)}</td></tr>`).join('');
  const methods = customer ? listMethods(account, customer.id) : [];
  const saved = methods.map((m) => `<label><input type="radio" name="method" value="saved:${esc(m.id)}"${m.id === customer?.default_payment_method_id ? ' checked' : ''}> Saved: ${esc(methodLabel(m))}</label>`).join('');
  const form = isPayable(invoice) ? `<form method="post"><fieldset><legend>Pay with</legend>${saved}${instrumentFields(!customer?.default_payment_method_id)}</fieldset>
<button type="submit" id="pay">Pay ${money(due)}</button></form>` : '';
  return `<h1>Invoice ${esc(invoice.invoice_number)}</h1>
<p>Billed to ${esc(customer?.name ?? invoice.customer_id)} &middot; due ${esc(invoice.due_date)} &middot; status <span class="status" id="status">${esc(invoice.status)}</span></p>
${notice}<table><thead><tr><th>Description</th><th>Qty</th><th>Unit</th><th>Amount</th></tr></thead><tbody>${rows}</tbody></table>
<p>Total <strong id="total">${money(invoice.total)}</strong> &middot; amount due <strong id="amount-due">${money(due)}</strong></p>${form}`;
}

/** The `?payment=` result line, only for a payment of this invoice (another's id shows nothing). */
function paymentNotice(account: Account, invoice: Invoice, paymentId: unknown): string {
  const payment = typeof paymentId === 'string' ? payments(account).get(paymentId) : undefined;
  if (!payment || payment.invoice_id !== invoice.id) return '';
  const text = payment.status === 'failed' ? `Payment ${payment.id} failed: ${payment.failure_reason}` : `Payment ${payment.id} is ${payment.status}.`;
  return `<p id="payment" class="${payment.status === 'failed' ? 'error' : ''}">${esc(text)}</p>`;
}

/** The posted form with only single string values (a repeated field is dropped, not trusted). */
/** A payment that failed with an instrument entered on the page: the attempt is rolled back, and the page says why. */
class DeclinedInstrument extends Error {
  constructor(readonly reason: string) {
    super(`payment failed: ${reason}`);
  }
}

function formOf(req: Request): Record<string, string> {
  const body = (req.body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
}

/** A method chosen or entered on a page: a saved one, or a new card or bank account saved to the customer. */
function methodFromForm(deps: Deps, account: Account, customerId: string, form: Record<string, string>): string {
  const choice = form.method ?? '';
  if (choice.startsWith('saved:')) return choice.slice('saved:'.length);
  if (choice === 'card') return addCardMethod(deps, account, customerId, { card_provider_token: form.card_provider_token ?? '' }).id;
  if (choice === 'bank') {
    checkBankFields(form);
    return addBankMethod(deps, account, customerId, { account_data_type: 'us', us_account_data: { account_number: form.account_number, routing_number: form.routing_number } }).id;
  }
  throw invalidFields({ method: 'is required' }, 'Choose how to pay.');
}

function checkBankFields(form: Record<string, string>): void {
  if (!/^[0-9]{4,17}$/.test(form.account_number ?? '') || !/^[0-9]{9}$/.test(form.routing_number ?? '')) {
    throw invalidFields({ account_number: 'must be 4-17 digits', routing_number: 'must be 9 digits' }, 'The account number must be 4-17 digits and the routing number 9 digits.');
  }
}

function requestPage(request: PaymentRequest, notice: string): string {
  const form = request.status === 'pending' ? `<form method="post"><fieldset><legend>Pay with</legend>${instrumentFields(true)}</fieldset>
<button type="submit" name="action" value="pay" id="pay">Pay ${money(request.amount)}</button>
<button type="submit" name="action" value="cancel" id="cancel">Cancel</button></form>` : '';
  return `<h1>Payment of ${money(request.amount)} ${esc(request.currency)}</h1>
<p>Reference ${esc(request.reference_id ?? '-')} &middot; status <span class="status" id="status">${esc(request.status)}</span> &middot; expires ${esc(request.expires_at)}</p>${notice}${form}`;
}

function returnUrl(request: PaymentRequest, status: string): string {
  const url = new URL(request.redirect_url);
  url.searchParams.set('payment_request_id', request.id);
  url.searchParams.set('status', status);
  if (request.reference_id) url.searchParams.set('reference_id', request.reference_id);
  return url.toString();
}

function hostedRoutes(app: Express, deps: Deps): void {
  app.get('/hosted/files/invoices/:file', page(deps, async (account, req, res) => {
    const id = /^(.+)\.pdf$/.exec(String(req.params.file))?.[1] ?? '';
    const invoice = getInvoice(account, id);
    const bytes = await invoicePdfBytes(deps, account, invoice);
    res.status(200).type('application/pdf').setHeader('Content-Disposition', `inline; filename="${invoice.invoice_number}.pdf"`).send(bytes);
  }));

  app.get('/hosted/invoices/:id/pay', page(deps, (account, req, res) => {
    const invoice = getInvoice(account, String(req.params.id));
    sendPage(res, 200, `Invoice ${invoice.invoice_number}`, invoicePage(deps, account, invoice, paymentNotice(account, invoice, req.query.payment)));
  }));

  app.post('/hosted/invoices/:id/pay', page(deps, (account, req, res) => {
    const invoice = getInvoice(account, String(req.params.id));
    const form = formOf(req);
    try {
      // A savepoint: a payment refused, or failed with a card or bank account entered on this page,
      // keeps nothing of the attempt (a hosted checkout never saves an instrument whose payment failed,
      // nor makes it the default, as the next autopay would fail on it).
      const payment = account.transaction(() => {
        refuseUnpayable(invoice);
        payableAmount(invoice);
        const methodId = methodFromForm(deps, account, invoice.customer_id, form);
        const paid = payInvoice(deps, account, invoice.id, { payment_method_id: methodId, source: 'hosted_page' });
        if (paid.status === 'failed' && !(form.method ?? '').startsWith('saved:')) throw new DeclinedInstrument(paid.failure_reason ?? 'payment_failed');
        return paid;
      });
      // Post/redirect/get: reloading the result page does not pay twice.
      const back = new URL(req.originalUrl, 'http://x');
      back.searchParams.set('payment', payment.id);
      res.redirect(303, `${back.pathname}${back.search}`);
    } catch (error) {
      if (error instanceof DeclinedInstrument) {
        sendPage(res, 402, `Invoice ${invoice.invoice_number}`, invoicePage(deps, account, invoice, `<p class="error" id="error">Payment failed: ${esc(error.reason)}. The ${form.method === 'bank' ? 'bank account' : 'card'} was not saved.</p>`));
        return;
      }
      if (!(error instanceof ApiError)) throw error;
      sendPage(res, error.status, `Invoice ${invoice.invoice_number}`, invoicePage(deps, account, invoice, `<p class="error" id="error">${esc(error.message)}</p>`));
    }
  }));

  // A request past expires_at is shown and refused as expired even before its due job has run.
  app.get('/hosted/payment-requests/:id', page(deps, (account, req, res) => {
    const request = expireIfDue(account, paymentRequests(account).require(String(req.params.id), 'payment request'));
    sendPage(res, 200, 'Payment', requestPage(request, ''));
  }));

  app.post('/hosted/payment-requests/:id', page(deps, (account, req, res) => {
    const request = expireIfDue(account, paymentRequests(account).require(String(req.params.id), 'payment request'));
    const form = formOf(req);
    try {
      if (form.action === 'cancel') {
        account.transaction(() => movePaymentRequest(account, request, 'cancel'));
        res.redirect(303, returnUrl(request, 'cancelled'));
        return;
      }
      if (form.method !== 'card' && form.method !== 'bank') throw invalidFields({ method: 'must be card or bank' }, 'Choose how to pay.');
      // A savepoint: a refused payment keeps nothing of the attempt (the page then shows why).
      const payment = account.transaction(() => {
        let failure: string | null;
        if (form.method === 'bank') {
          checkBankFields(form);
          failure = testValueFailure({ account_number: form.account_number });
        } else {
          failure = testValueFailure({ last4: cardFromToken(account, form.card_provider_token || 'tok_visa').last4 });
        }
        return payPaymentRequest(deps, account, request.id, { kind: form.method === 'bank' ? 'standard_ach' : 'card', failure });
      });
      if (payment.status === 'failed') {
        sendPage(res, 402, 'Payment', requestPage(request, `<p class="error" id="error">Payment failed: ${esc(payment.failure_reason)}</p>`));
        return;
      }
      res.redirect(303, returnUrl(request, 'paid'));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      sendPage(res, error.status, 'Payment', requestPage(request, `<p class="error" id="error">${esc(error.message)}</p>`));
    }
  }));
}

export const hostedFeature: Feature = { name: 'hosted-pages', routes: hostedRoutes };
