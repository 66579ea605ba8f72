// Owns the payments feature: payment requests, the payment list, the control-plane simulations and
// the jobs that move payments and payment requests on the clock.
import type { Feature } from '../../feature.js';
import { paymentControlHandlers } from './control.js';
import { paymentHandlers } from './handlers.js';
import { EXPIRE_JOB, runExpireJob } from './payment-requests.js';
import { CHARGEBACK_JOB, PROCESS_JOB, runChargebackJob, runProcessJob, runSettleJob, SETTLE_JOB } from './payments.js';

export const paymentsFeature: Feature = {
  name: 'payments',
  handlers: paymentHandlers,
  control: paymentControlHandlers,
  install(deps) {
    deps.scheduler.register(PROCESS_JOB, (account, job) => runProcessJob(deps, account, String(job.payload.payment_id)));
    deps.scheduler.register(SETTLE_JOB, (account, job) => runSettleJob(deps, account, String(job.payload.payment_id)));
    deps.scheduler.register(CHARGEBACK_JOB, (account, job) => runChargebackJob(deps, account, String(job.payload.payment_id)));
    deps.scheduler.register(EXPIRE_JOB, (account, job) => runExpireJob(account, String(job.payload.payment_request_id)));
  },
};
