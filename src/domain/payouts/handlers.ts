// Owns the payout operations: list with its filters, get, and a payout's transactions.
import { ok, type ApiHandlers, type Handler } from '../../http/context.js';
import { EMPTY_PAGE, pageParams, timeWindow } from '../../http/pagination.js';
import { invoices } from '../invoices/invoices.js';
import { payouts, payoutTransactionsView, payoutView, type Payout } from './payouts.js';

const listPayouts: Handler<'listPayouts'> = ({ account, query }) => {
  const createdIn = timeWindow(query.start_date, query.end_date);
  // An invoice's payouts are among its customer's: walk that index only.
  let customerId: string | undefined = query.customer_id;
  if (query.invoice_id) {
    const invoice = invoices(account).get(query.invoice_id);
    if (!invoice || (customerId && customerId !== invoice.customer_id)) return ok(EMPTY_PAGE);
    customerId = invoice.customer_id;
  }
  const filter = (p: Payout) =>
    (!createdIn || createdIn(p.created_at)) && (!query.status || p.status === query.status) &&
    (!query.invoice_id || p.entries.some((e) => e.invoice_id === query.invoice_id));
  const page = payouts(account).page({ ...pageParams(query), filter, where: customerId ? { field: 'customer_id', value: customerId } : undefined });
  return ok({ ...page, data: page.data.map(payoutView) });
};

export const payoutHandlers = {
  listPayouts,
  getPayout: ({ account, params }) => ok(payoutView(payouts(account).require(params.id, 'payout'))),
  listPayoutTransactions: ({ account, params }) => ok(payoutTransactionsView(payouts(account).require(params.id, 'payout'))),
} satisfies ApiHandlers;
