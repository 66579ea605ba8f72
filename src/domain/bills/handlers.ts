// Owns the bill operations: each a short story over bills.ts and upload.ts.
import { created, ok, type ApiHandlers, type Handler, type RequestContext } from '../../http/context.js';
import { ApiError, Errors } from '../../errors.js';
import { pageParams } from '../../http/pagination.js';
import { signLink } from '../../hosted/signed-links.js';
import {
  billView, bulk, createBill, deleteBill, getBill, listBills, moveBill, rejectBill, setPayDate, submitBill, updateBill, type Actor,
} from './bills.js';
import { uploadBill } from './upload.js';

export const actorOf = (ctx: RequestContext): Actor => ({ user_id: ctx.principal.client_id });

const listBillsHandler: Handler<'listBills'> = ({ account, query }) => {
  const page = listBills(account, pageParams(query), query);
  return ok({ ...page, data: page.data.map((b) => billView(account, b)) });
};

const getBillDocument: Handler<'getBillDocument'> = ({ deps, account, params, origin }) => {
  const bill = getBill(account, params.id);
  if (!bill.document) throw new ApiError(Errors.notFound, { message: `Bill ${bill.id} has no document.` });
  const download_url = signLink(deps, account, origin, `/hosted/files/${bill.document.path}`);
  return ok({ download_url, filename: bill.document.filename, mime_type: bill.document.mime_type });
};

export const billHandlers = {
  listBills: listBillsHandler,
  createBill: (ctx) => created(billView(ctx.account, createBill(ctx.deps, ctx.account, ctx.body, { source: 'manual', actor: actorOf(ctx) }))),
  getBill: ({ account, params }) => ok(billView(account, getBill(account, params.id), { history: true })),
  updateBill: ({ account, params, body }) => ok(billView(account, updateBill(account, params.id, body ?? {}))),
  deleteBill: (ctx) => ok({ bill_id: deleteBill(ctx.deps, ctx.account, ctx.params.id, actorOf(ctx)).id, success: true }),
  getBillDocument,
  setBillPayDate: (ctx) => ok({ bill_id: setPayDate(ctx.deps, ctx.account, ctx.params.id, ctx.body.pay_date, actorOf(ctx)).id }),
  rejectBill: (ctx) => ok({ bill_id: rejectBill(ctx.deps, ctx.account, ctx.params.id, ctx.body?.reason ?? null, actorOf(ctx)).id }),
  submitBill: (ctx) => ok({ bill_id: submitBill(ctx.account, ctx.params.id, actorOf(ctx)).id, success: true }),
  bulkSubmitBills: (ctx) => ok(bulk(ctx.account, ctx.body.bill_ids, (bill) => moveBill(ctx.account, bill, 'submit', actorOf(ctx)))),
  bulkDeleteBills: (ctx) => ok(bulk(ctx.account, ctx.body.bill_ids, (bill) => deleteBill(ctx.deps, ctx.account, bill.id, actorOf(ctx)))),
  uploadBill: async (ctx) => created(await uploadBill(ctx.deps, ctx.account, ctx.body, actorOf(ctx))),
} satisfies ApiHandlers;
