// Owns the invoices feature: its operations and the overdue job.
import type { Feature } from '../../feature.js';
import { invoiceHandlers } from './handlers.js';
import { OVERDUE_JOB, runOverdueJob } from './invoices.js';

export const invoicesFeature: Feature = {
  name: 'invoices',
  handlers: invoiceHandlers,
  install(deps) {
    deps.scheduler.register(OVERDUE_JOB, (account, job) => runOverdueJob(deps, account, String(job.payload.invoice_id)));
  },
};
