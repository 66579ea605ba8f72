// Owns the payouts feature: reconciliation operations and the payout jobs on the clock.
import type { Feature } from '../../feature.js';
import { payoutHandlers } from './handlers.js';
import { PAYOUT_PROCESS_JOB, PAYOUT_SETTLE_JOB, runPayoutProcessJob, runPayoutSettleJob } from './payouts.js';

export const payoutsFeature: Feature = {
  name: 'payouts',
  handlers: payoutHandlers,
  install(deps) {
    deps.scheduler.register(PAYOUT_PROCESS_JOB, (account, job) => runPayoutProcessJob(deps, account, String(job.payload.payout_id)));
    deps.scheduler.register(PAYOUT_SETTLE_JOB, (account, job) => runPayoutSettleJob(deps, account, String(job.payload.payout_id)));
  },
};
