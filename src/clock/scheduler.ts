// Owns due work: jobs kept per account in time order, run by advancing the account clock or as
// real time passes. Overdue invoices, settlements, expiries and webhook retries all run through here.
import type { Account, JobData } from '../store/store.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../log.js';
import { LIMITS } from '../limits.js';
import { refusedWrite } from '../errors.js';
import { defineStateValue } from '../store/module-state.js';

export type JobHandler = (account: Account, job: JobData) => Promise<void> | void;

/** A due job that threw: kept on the account so the failure is visible, never retried (see failedJobs). */
export interface FailedJob {
  id: string;
  kind: string;
  /** When the job was due, on the account clock. */
  due_at: string;
  error: string;
  payload: Record<string, unknown>;
}

/** The account's failed due jobs, oldest first, at most LIMITS.failedJobsKept. */
const failedJobState = defineStateValue<FailedJob[]>('failed_jobs', () => [], {
  type: 'array',
  items: {
    type: 'object', required: ['id', 'kind', 'due_at', 'error', 'payload'],
    properties: { id: { type: 'string' }, kind: { type: 'string' }, due_at: { type: 'string' }, error: { type: 'string' }, payload: { type: 'object' } },
  },
});

export function failedJobs(account: Account): readonly FailedJob[] {
  return failedJobState.read(account);
}

function recordFailure(account: Account, job: JobData, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  failedJobState.update(account, (list) => {
    // To the second, as every time the API shows (an ISO string is always YYYY-MM-DDTHH:mm:ss.sssZ here).
    list.push({ id: job.id, kind: job.kind, due_at: `${new Date(job.at).toISOString().slice(0, 19)}Z`, error: message.slice(0, 300), payload: job.payload });
    // One is added at a time, so at most one is over the cap.
    if (list.length > LIMITS.failedJobsKept) list.shift();
  });
}

const MAX_JOBS_PER_RUN = LIMITS.jobsPerRun;

export class Scheduler {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private ticker: NodeJS.Timeout | undefined;

  constructor(private readonly store: Store, private readonly log: Logger) {}

  register(kind: string, handler: JobHandler): void {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} registered twice`);
    this.handlers.set(kind, handler);
  }

  /** Add a job; jobs due at the same time run in the order they were scheduled. */
  schedule(account: Account, kind: string, at: number, payload: Record<string, unknown> = {}): JobData {
    // newId passes the account's wall first: outside a unit of work nothing is scheduled.
    const job: JobData = { id: account.newId('job'), at, kind, payload };
    const jobs = account.data.jobs;
    let lo = 0;
    let hi = jobs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (jobs[mid].at <= at) lo = mid + 1;
      else hi = mid;
    }
    jobs.splice(lo, 0, job);
    // Inverses run newest first, so the job is still in the list when this one runs.
    account.undoable(() => { account.data.jobs.splice(account.data.jobs.indexOf(job), 1); });
    account.changed();
    return job;
  }

  /** Remove the jobs the predicate selects; answers how many. */
  cancel(account: Account, predicate: (job: JobData) => boolean): number {
    const all = account.data.jobs;
    const kept = all.filter((job) => !predicate(job));
    const removed = all.length - kept.length;
    if (!removed) return 0;
    account.writing();
    account.data.jobs = kept;
    account.undoable(() => { account.data.jobs = all; });
    account.changed();
    return removed;
  }

  pending(account: Account): readonly JobData[] {
    return account.data.jobs;
  }

  /**
   * Move the account clock to `targetMs`, running every job due by then in time order; while a job
   * runs, the clock reads the job's due time, so what it writes is stamped when it was due.
   */
  advance(account: Account, targetMs: number): Promise<number> {
    return this.advanceInTurn(account, () => ({ targetMs, done: (ran) => ran }));
  }

  /**
   * An advance planned when this account's turn comes, after any advance before it, so that advances
   * relative to the clock add up: `plan` reads the clock and answers the target (what it throws is
   * the advance's answer, nothing moved), and `done` makes the answer in the same turn, after the
   * last job.
   */
  advanceInTurn<T>(account: Account, plan: () => { targetMs: number; done: (ran: number) => T }): Promise<T> {
    return this.exclusive(account, async () => {
      const { targetMs, done } = plan();
      return done(await this.runUntil(account, targetMs));
    });
  }

  /**
   * Run what is due now, with no one to answer: a run stopped by a refused write (the account was
   * reset, the data file cannot be written) leaves its work due for a later run, and is not an error.
   */
  runInBackground(account: Account): void {
    this.runDue(account).catch((error: unknown) => {
      if (!refusedWrite(error)) this.log.error({ err: error, account: account.id }, 'due work failed');
    });
  }

  /** Run what is due now on the account clock. */
  runDue(account: Account): Promise<number> {
    return this.advance(account, account.clock.nowMs());
  }

  /** Run due work every `intervalMs` of real time, for a sandbox left running. */
  startTicking(intervalMs = 1000): void {
    this.stopTicking();
    this.ticker = setInterval(() => {
      // While the data file cannot be written, due work waits (it stays due, in the file).
      if (this.store.degraded) return;
      for (const account of this.store.allAccounts()) {
        const first = account.data.jobs[0];
        if (first && first.at <= account.clock.nowMs()) this.runInBackground(account);
      }
    }, intervalMs);
    this.ticker.unref();
  }

  stopTicking(): void {
    clearInterval(this.ticker);
    this.ticker = undefined;
  }

  /** Wait for work in progress on every account (used on shutdown). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.locks.values()]);
  }

  /**
   * Run the jobs due by `targetMs`, each in steps of its own units of work: taken off the list with the
   * clock moved to its due time, then run, then (if it threw) its failure recorded. A write that the
   * account or the data file refuses (a reset replaced the account, the file cannot be written) stops
   * the run and is the advance's answer; the job then stays due, in the file, for the next run.
   */
  private async runUntil(account: Account, targetMs: number): Promise<number> {
    let ran = 0;
    while (ran < MAX_JOBS_PER_RUN) {
      const job = account.data.jobs[0];
      if (!job || job.at > targetMs) break;
      account.transaction(() => {
        account.writing();
        account.data.jobs.shift();
        account.clock.moveTo(job.at);
      });
      const handler = this.handlers.get(job.kind);
      if (!handler) {
        this.log.warn({ kind: job.kind }, 'no handler for due job; dropped');
        continue;
      }
      try {
        // One unit of work per job: a job that throws leaves what it wrote undone.
        // Awaited only when it is async: a run of synchronous jobs never yields, so no request sees
        // the clock stopped between two of them.
        const running = account.transaction(() => handler(account, job));
        if (running) await running;
      } catch (error) {
        if (refusedWrite(error)) throw error;
        // Not retried: it would meet the same state and throw again. Kept on the account (GET
        // /_sandbox/clock, the advance's answer) and logged, so the failure is seen, not swallowed.
        this.log.error({ err: error, kind: job.kind, account: account.id }, 'due job failed');
        account.transaction(() => recordFailure(account, job, error));
      }
      ran += 1;
    }
    account.transaction(() => account.clock.moveTo(targetMs));
    return ran;
  }

  /** One run of due work per account at a time; later callers queue behind it. */
  private exclusive<T>(account: Account, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(account.id) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.locks.set(account.id, settled);
    void settled.then(() => {
      if (this.locks.get(account.id) === settled) this.locks.delete(account.id);
    });
    return next;
  }
}
