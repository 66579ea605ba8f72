// Owns the payables feature's wiring: vendor, bill and vendor payment operations, their
// control-plane simulations, due-job kinds, and the signed download route of bill documents.
import type { Express } from 'express';
import type { Deps } from '../../deps.js';
import type { Feature } from '../../feature.js';
import { ApiError, Errors } from '../../errors.js';
import { asyncMiddleware, errorReply, send } from '../../http/router.js';
import { verifyLink } from '../../hosted/signed-links.js';
import { DATA_REQUEST_EXPIRE_JOB, expireDataRequest } from '../vendors/vendors.js';
import { vendorHandlers } from '../vendors/handlers.js';
import { payablesControl, vendorPaymentHandlers } from '../vendor-payments/handlers.js';
import { registerVendorPaymentJobs } from '../vendor-payments/vendor-payments.js';
import { billHandlers } from './handlers.js';
import { bills } from './bills.js';

function billDocumentRoute(app: Express, deps: Deps): void {
  app.get('/hosted/files/bills/:billId/:filename', asyncMiddleware(async (req, res) => {
    try {
      const account = verifyLink(deps, req);
      const bill = bills(account).get(String(req.params.billId));
      const document = bill?.document;
      if (!document || document.path !== `bills/${String(req.params.billId)}/${String(req.params.filename)}`) throw new ApiError(Errors.notFound, { message: 'No such document.' });
      const bytes = await deps.blobs.get(account, document.blob_id);
      if (!bytes) throw new ApiError(Errors.notFound, { message: 'No such document.' });
      res.setHeader('Content-Type', document.mime_type);
      res.setHeader('Content-Disposition', `inline; filename="${String(req.params.filename)}"`);
      res.setHeader('Cache-Control', 'private, no-store');
      res.status(200).end(bytes);
    } catch (error) {
      send(res, errorReply(error, deps, req));
    }
  }));
}

export const payablesFeature: Feature = {
  name: 'payables',
  handlers: { ...vendorHandlers, ...billHandlers, ...vendorPaymentHandlers },
  control: payablesControl,
  install(deps) {
    registerVendorPaymentJobs(deps);
    deps.scheduler.register(DATA_REQUEST_EXPIRE_JOB, (account, job) => expireDataRequest(account, job.payload));
  },
  routes: billDocumentRoute,
};
