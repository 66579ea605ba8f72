// Owns the invoice operations: each a short story over invoices.ts and pdf.ts.
import { created, ok, type ApiHandlers, type Handler } from '../../http/context.js';
import { EMPTY_PAGE, pageParams, timeWindow } from '../../http/pagination.js';
import { signLink } from '../../hosted/signed-links.js';
import type { Account } from '../../store/store.js';
import type { Deps } from '../../deps.js';
import {
  archiveInvoice, createInvoice, findByNumber, getInvoice, invoices, invoiceView, restoreInvoice, type Invoice,
} from './invoices.js';
import { invoicePdfPath, uploadInvoicePdf } from './pdf.js';
import { autopay } from '../payments/payments.js';
import { endOfCalendarDate, isCalendarDate, startOfCalendarDate } from '../dates.js';

/** Sandbox choice: hosted payment links stay valid 30 days (the page always shows the current state). */
export const PAYMENT_LINK_TTL_SECONDS = 30 * 86_400;

function paymentLink(deps: Deps, account: Account, origin: string, invoice: Invoice): string {
  return signLink(deps, account, origin, `/hosted/invoices/${invoice.id}/pay`, PAYMENT_LINK_TTL_SECONDS);
}

export function pdfLink(deps: Deps, account: Account, origin: string, invoice: Invoice): string {
  return signLink(deps, account, origin, invoicePdfPath(invoice));
}

/** A due-date bound: a date covers its whole day; a date-time is compared with 00:00 UTC of the due date. */
function dueBound(value: string | undefined, end: boolean): number | undefined {
  if (!value) return undefined;
  if (!isCalendarDate(value)) return Date.parse(value);
  return end ? endOfCalendarDate(value) : startOfCalendarDate(value);
}

const listInvoices: Handler<'listInvoices'> = ({ account, query }) => {
  if (query.invoice_number) {
    const found = findByNumber(account, query.invoice_number);
    if (!found || (query.customer_id && found.customer_id !== query.customer_id)) return ok(EMPTY_PAGE);
  }
  const createdIn = timeWindow(query.created_at_start, query.created_at_end);
  const [dueFrom, dueTo] = [dueBound(query.due_date_start, false) ?? -Infinity, dueBound(query.due_date_end, true) ?? Infinity];
  const filter = (i: Invoice) => {
    const due = startOfCalendarDate(i.due_date);
    return (!createdIn || createdIn(i.created_at)) && due >= dueFrom && due <= dueTo &&
      (!query.status || i.status === query.status) && (!query.invoice_number || i.invoice_number === query.invoice_number);
  };
  const where = query.customer_id ? { field: 'customer_id', value: String(query.customer_id) }
    : query.status ? { field: 'status', value: String(query.status) } : undefined;
  const page = invoices(account).page({ ...pageParams(query), filter, where });
  return ok({ ...page, data: page.data.map(invoiceView) });
};

export const invoiceHandlers = {
  listInvoices,
  createInvoice: ({ deps, account, body }) => {
    const invoice = createInvoice(deps, account, body, { source: 'api' });
    autopay(deps, account, invoice);
    return created(invoiceView(invoice));
  },
  getInvoice: ({ account, params }) => ok(invoiceView(getInvoice(account, params.id))),
  archiveInvoice: ({ deps, account, params }) => ok(invoiceView(archiveInvoice(deps, account, params.id))),
  restoreInvoice: ({ deps, account, params }) => ok(invoiceView(restoreInvoice(deps, account, params.id))),
  getInvoicePaymentLink: ({ deps, account, params, origin }) => ok({ url: paymentLink(deps, account, origin, getInvoice(account, params.id)) }),
  getInvoicePdfLink: ({ deps, account, params, origin }) => ok({ url: pdfLink(deps, account, origin, getInvoice(account, params.id)) }),
  uploadInvoicePdf: async ({ deps, account, params, body }) => ok(await uploadInvoicePdf(deps, account, params.id, body ?? {})),
} satisfies ApiHandlers;
