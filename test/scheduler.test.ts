// The scheduler's own rules (src/clock/scheduler.ts), driven through the clock endpoint with jobs of
// a test kind: jobs due at the same time run in the order they were scheduled, a job of no known
// kind or one that throws does not stop the run, the runaway guard, cancel, one run per account at
// a time, and idle(). The jobs of the features (settlements, due dates, retries) are pinned in
// their own test files.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failedJobs, Scheduler } from '../src/clock/scheduler.js';
import { storageError } from '../src/store/store.js';
import { LIMITS } from '../src/limits.js';
import { Store, type Account, type JobData } from '../src/store/store.js';
import { setup, START, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
let account: Account;
let seen: string[];

beforeEach(async () => {
  sb = await setup();
  account = sb.deps.store.account('ptn_default', 'production');
  seen = [];
  sb.deps.scheduler.register('test.note', (acc, job) => {
    seen.push(`${String(job.payload.label)}@${(acc.clock.nowMs() - t0()) / 1000}`);
  });
});

const t0 = () => sb.time.now;
const note = (seconds: number, label: string, kind = 'test.note') => account.transaction(() => sb.deps.scheduler.schedule(account, kind, t0() + seconds * 1000, { label }));
const labels = (jobs: readonly JobData[]) => jobs.map((j) => j.payload.label);

async function advance(seconds: number): Promise<number> {
  const res = await sb.advance(seconds);
  expect(res.status).toBe(200);
  return res.body.ran;
}

describe('the scheduler', () => {
  it('keeps jobs in time order, those due at the same time in the order they were scheduled', async () => {
    note(20, 'b1');
    note(10, 'a');
    note(20, 'b2');
    note(30, 'c');
    note(20, 'b3');
    note(5, 'first');
    note(30, 'c2');
    expect(labels(sb.deps.scheduler.pending(account))).toEqual(['first', 'a', 'b1', 'b2', 'b3', 'c', 'c2']);
    expect(await advance(30)).toBe(7);
    expect(seen).toEqual(['first@5', 'a@10', 'b1@20', 'b2@20', 'b3@20', 'c@30', 'c2@30']);
  });

  it('answers the job it scheduled, with an id, the kind, the due time and the payload', () => {
    const job = note(60, 'x');
    expect(job).toEqual({ id: expect.stringMatching(/^job_/), kind: 'test.note', at: t0() + 60_000, payload: { label: 'x' } });
    expect(account.transaction(() => sb.deps.scheduler.schedule(account, 'test.note', t0()))).toMatchObject({ payload: {} });
  });

  it('refuses a kind registered twice', () => {
    expect(() => sb.deps.scheduler.register('test.note', () => undefined)).toThrow('job kind test.note registered twice');
  });

  it('drops a job of no known kind without counting it, and goes on with the rest', async () => {
    note(10, 'orphan', 'test.nobody');
    note(20, 'after');
    expect(await advance(30)).toBe(1);
    expect(seen).toEqual(['after@20']);
    expect(sb.deps.scheduler.pending(account)).toEqual([]);
  });

  it('a job that throws is counted, the next one still runs, and the clock still reaches its target', async () => {
    sb.deps.scheduler.register('test.broken', () => {
      throw new Error('broken job');
    });
    note(10, 'bad', 'test.broken');
    note(20, 'good');
    expect(await advance(30)).toBe(2);
    expect(seen).toEqual(['good@20']);
    expect((await sb.http.get('/_sandbox/clock')).body.offset_seconds).toBe(30);
  });

  it('a job that throws is shown where the clock is read and in the answer of the advance that ran it, and not retried', async () => {
    sb.deps.scheduler.register('test.broken', () => {
      throw new Error('broken job');
    });
    expect((await sb.http.get('/_sandbox/clock')).body.failed_jobs).toEqual([]);
    const bad = note(10, 'bad', 'test.broken');
    const failure = { id: bad.id, kind: 'test.broken', due_at: new Date(t0() + 10_000).toISOString().replace('.000Z', 'Z'), error: 'broken job', payload: { label: 'bad' } };
    const first = await sb.advance(30);
    expect(first.body).toMatchObject({ ran: 1, failed_jobs: [failure] });
    const later = note(40, 'later', 'test.broken');
    note(45, 'fine');
    const second = await sb.advance(30);
    expect(second.body.ran).toBe(2);
    // Only this advance's failure; the clock keeps both, newest first; the first is not run again.
    expect(second.body.failed_jobs).toEqual([{ ...failure, id: later.id, due_at: new Date(t0() + 40_000).toISOString().replace('.000Z', 'Z'), payload: { label: 'later' } }]);
    expect((await sb.http.get('/_sandbox/clock')).body.failed_jobs.map((j: { id: string }) => j.id)).toEqual([later.id, bad.id]);
    expect(seen).toEqual(['fine@45']);
  });

  it(`keeps the ${LIMITS.failedJobsKept} most recent failed jobs`, async () => {
    sb.deps.scheduler.register('test.broken', () => {
      throw new Error('broken job');
    });
    for (let i = 0; i < LIMITS.failedJobsKept + 5; i++) note(1 + i, `bad${i}`, 'test.broken');
    const res = await sb.advance(LIMITS.failedJobsKept + 10);
    expect(res.body.failed_jobs).toHaveLength(LIMITS.failedJobsKept);
    const kept = (await sb.http.get('/_sandbox/clock')).body.failed_jobs;
    expect(kept).toHaveLength(LIMITS.failedJobsKept);
    expect(kept[0].payload.label).toBe(`bad${LIMITS.failedJobsKept + 4}`);
    expect(kept.at(-1).payload.label).toBe('bad5');
  });

  it(`stops a runaway after ${LIMITS.jobsPerRun} jobs in one advance; the rest run on the next`, async () => {
    let runs = 0;
    sb.deps.scheduler.register('test.runaway', (acc) => {
      runs += 1;
      if (runs <= LIMITS.jobsPerRun) sb.deps.scheduler.schedule(acc, 'test.runaway', acc.clock.nowMs());
    });
    account.transaction(() => sb.deps.scheduler.schedule(account, 'test.runaway', t0() + 1000));
    expect(await advance(10)).toBe(LIMITS.jobsPerRun);
    expect(sb.deps.scheduler.pending(account)).toHaveLength(1);
    expect((await sb.http.get('/_sandbox/clock')).body.offset_seconds).toBe(10);
    expect(await advance(1)).toBe(1);
    expect(sb.deps.scheduler.pending(account)).toEqual([]);
  });

  it('cancel removes only the jobs selected and answers how many', () => {
    note(10, 'keep');
    note(20, 'drop');
    note(30, 'drop');
    expect(account.transaction(() => sb.deps.scheduler.cancel(account, (job) => job.payload.label === 'drop'))).toBe(2);
    expect(account.transaction(() => sb.deps.scheduler.cancel(account, (job) => job.payload.label === 'drop'))).toBe(0);
    expect(labels(sb.deps.scheduler.pending(account))).toEqual(['keep']);
  });

  it('undoes what work that throws scheduled or cancelled: the jobs are as they were, in order', () => {
    note(20, 'kept');
    const boom = new Error('the work failed');
    expect(() => account.transaction(() => {
      sb.deps.scheduler.schedule(account, 'test.note', t0() + 10_000, { label: 'first' });
      sb.deps.scheduler.schedule(account, 'test.note', t0() + 30_000, { label: 'last' });
      expect(sb.deps.scheduler.cancel(account, (job) => job.payload.label === 'kept')).toBe(1);
      expect(labels(sb.deps.scheduler.pending(account))).toEqual(['first', 'last']);
      throw boom;
    })).toThrow(boom);
    expect(labels(sb.deps.scheduler.pending(account))).toEqual(['kept']);
  });

  it('a job refused by the wall (a reset, a file that takes no writes) stops the run as its answer, not recorded or logged as failed', async () => {
    sb.deps.scheduler.register('test.refused', () => { throw storageError(); });
    note(10, 'refused', 'test.refused');
    note(20, 'after');
    const error = jest.spyOn(sb.deps.log, 'error');
    await expect(sb.deps.scheduler.runDue(account).then(() => sb.deps.scheduler.advance(account, t0() + 30_000))).rejects.toMatchObject({ code: 'storage_unavailable' });
    expect(failedJobs(account)).toEqual([]);
    expect(error).not.toHaveBeenCalled();
    expect(seen).toEqual([]);
  });

  it('a background run logs what breaks it, except a write the wall refused', async () => {
    const error = jest.spyOn(sb.deps.log, 'error');
    const clock = account.clock;
    const moveTo = clock.moveTo.bind(clock);
    const broken = new Error('the clock broke');
    clock.moveTo = () => { throw broken; };
    sb.deps.scheduler.runInBackground(account);
    await sb.deps.scheduler.idle();
    expect(error).toHaveBeenCalledWith({ err: broken, account: account.id }, 'due work failed');
    error.mockClear();
    clock.moveTo = () => { throw storageError(); };
    sb.deps.scheduler.runInBackground(account);
    await sb.deps.scheduler.idle();
    expect(error).not.toHaveBeenCalled();
    clock.moveTo = moveTo;
  });

  it('runs one advance per account at a time: a second waits for the first, and no job runs twice', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    sb.deps.scheduler.register('test.slow', async (acc, job) => {
      seen.push(`start ${String(job.payload.label)}`);
      await gate;
      seen.push(`end ${String(job.payload.label)}`);
    });
    note(10, 'slow', 'test.slow');
    note(20, 'quick');
    const first = sb.deps.scheduler.advance(account, t0() + 15_000);
    const second = sb.deps.scheduler.advance(account, t0() + 30_000);
    const waiting = sb.deps.scheduler.idle();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['start slow']);
    release();
    expect(await first).toBe(1);
    expect(await second).toBe(1);
    await waiting;
    expect(seen).toEqual(['start slow', 'end slow', 'quick@20']);
    expect(account.clock.nowMs()).toBe(t0() + 30_000);
  });

  /** A job due at 10 s that runs until released, and a wait until `count` advances have reached the scheduler. */
  function gatedJob(): { release: () => void; queued: (count: number) => Promise<void> } {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    sb.deps.scheduler.register('test.slow', async () => { await gate; });
    note(10, 'slow', 'test.slow');
    const advance = jest.spyOn(sb.deps.scheduler, 'advanceInTurn');
    const queued = async (count: number) => {
      while (advance.mock.calls.length < count) await new Promise((resolve) => setImmediate(resolve));
    };
    return { release, queued };
  }

  it('two advances sent together while due work awaits add up: each moves the clock by its own seconds from where the one before left it', async () => {
    const job = gatedJob();
    const first = sb.advance(60).then((res) => res);
    const second = sb.advance(60).then((res) => res);
    // Both requests are in the scheduler before the slow job lets go: the second waits its turn.
    await job.queued(2);
    job.release();
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body.offset_seconds, b.body.offset_seconds].sort((x, y) => x - y)).toEqual([60, 120]);
    expect((await sb.http.get('/_sandbox/clock')).body.offset_seconds).toBe(120);
    expect(account.clock.nowMs()).toBe(t0() + 120_000);
  });

  it('an advance checked in its turn: a `to` that was ahead when sent but is behind once the one before has run is refused, and moves nothing', async () => {
    const job = gatedJob();
    const first = sb.advance(3600).then((res) => res);
    const second = sb.http.post('/_sandbox/clock/advance').send({ to: new Date(t0() + 1800_000).toISOString() }).then((res) => res);
    await job.queued(2);
    job.release();
    const [a, b] = await Promise.all([first, second]);
    expect(a.status).toBe(200);
    expect(a.body.offset_seconds).toBe(3600);
    expect(b.status).toBe(422);
    expect(b.body.validation_errors).toEqual({ to: expect.stringContaining('must not be earlier') });
    expect((await sb.http.get('/_sandbox/clock')).body.offset_seconds).toBe(3600);
  });

  it('idle() waits for work under way on every account', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    let done = false;
    sb.deps.scheduler.register('test.slow', async () => {
      await gate;
      done = true;
    });
    note(10, 'slow', 'test.slow');
    const run = sb.deps.scheduler.advance(account, t0() + 10_000);
    let idled = false;
    const idle = sb.deps.scheduler.idle().then(() => { idled = true; });
    await new Promise((resolve) => setImmediate(resolve));
    expect(idled).toBe(false);
    release();
    await idle;
    expect(done).toBe(true);
    await run;
  });

  it('a run queued behind another still waits for it after the one before both has finished', async () => {
    const gates = new Map<string, () => void>();
    sb.deps.scheduler.register('test.slow', async (_acc, job) => {
      const label = String(job.payload.label);
      seen.push(`start ${label}`);
      await new Promise<void>((resolve) => gates.set(label, resolve));
      seen.push(`end ${label}`);
    });
    note(10, 'A', 'test.slow');
    note(20, 'B', 'test.slow');
    note(30, 'C');
    const a = sb.deps.scheduler.advance(account, t0() + 15_000);
    const b = sb.deps.scheduler.advance(account, t0() + 25_000);
    await new Promise((resolve) => setImmediate(resolve));
    gates.get('A')!();
    await a;
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['start A', 'end A', 'start B']);
    // B is under way; a third run must queue behind it, not start because A's turn is over.
    const c = sb.deps.scheduler.advance(account, t0() + 35_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['start A', 'end A', 'start B']);
    gates.get('B')!();
    expect([await b, await c]).toEqual([1, 1]);
    expect(seen).toEqual(['start A', 'end A', 'start B', 'end B', 'C@30']);
  });

  it('logs a dropped job of no known kind and a job that throws, naming the kind (and the account)', async () => {
    const warn = jest.spyOn(sb.deps.log, 'warn');
    const error = jest.spyOn(sb.deps.log, 'error');
    sb.deps.scheduler.register('test.broken', () => {
      throw new Error('broken job');
    });
    note(10, 'orphan', 'test.nobody');
    note(20, 'bad', 'test.broken');
    await advance(30);
    expect(warn).toHaveBeenCalledWith({ kind: 'test.nobody' }, 'no handler for due job; dropped');
    expect(error).toHaveBeenCalledWith({ err: expect.any(Error), kind: 'test.broken', account: account.id }, 'due job failed');
  });

  it('keeps at most 300 characters of a failed job\'s error, and what was thrown when it is not an Error', async () => {
    sb.deps.scheduler.register('test.long', () => {
      throw new Error('x'.repeat(400));
    });
    sb.deps.scheduler.register('test.string', () => {
      throw 'plain text'; // eslint-disable-line @typescript-eslint/only-throw-error -- what a handler might throw
    });
    note(10, 'long', 'test.long');
    note(20, 'string', 'test.string');
    const errors = (await sb.advance(30)).body.failed_jobs.map((j: { error: string }) => j.error);
    expect(errors).toEqual(['plain text', 'x'.repeat(300)]);
  });
});

describe('the scheduler ticking in real time (a sandbox left running)', () => {
  afterEach(() => {
    sb.deps.scheduler.stopTicking();
    jest.useRealTimers();
  });

  it('runs the jobs due by now on every tick, one due exactly now included, and nothing once stopped', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    note(0, 'now');
    note(5, 'later');
    sb.deps.scheduler.startTicking(1000);
    jest.advanceTimersByTime(999);
    await settle();
    expect(seen).toEqual([]);
    jest.advanceTimersByTime(1);
    await settle();
    expect(seen).toEqual(['now@0']);
    sb.deps.scheduler.stopTicking();
    sb.time.now += 10_000;
    jest.advanceTimersByTime(5000);
    await settle();
    expect(seen).toEqual(['now@0']);
    sb.deps.scheduler.startTicking(1000);
    jest.advanceTimersByTime(1000);
    await settle();
    expect(seen).toEqual(['now@0', 'later@0']); // run late, at the clock's now: it never goes back
  });
});

describe('the scheduler with --data', () => {
  it('writes a cancel that removed jobs (gone after a restart) and nothing for one that removed none', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'scheduler-')), 'sandbox.json');
    const realNow = () => START;
    const store = await Store.open({ file, realNow });
    const scheduler = new Scheduler(store, sb.deps.log);
    const acc = store.account('ptn_default', 'production');
    acc.transaction(() => {
      scheduler.schedule(acc, 'test.note', START + 10_000, { label: 'drop' });
      scheduler.schedule(acc, 'test.note', START + 20_000, { label: 'keep' });
    });
    await store.flush();
    expect(acc.transaction(() => scheduler.cancel(acc, (job) => job.payload.label === 'nothing'))).toBe(0);
    expect(store.pending).toBe(false);
    expect(acc.transaction(() => scheduler.cancel(acc, (job) => job.payload.label === 'drop'))).toBe(1);
    expect(store.pending).toBe(true);
    await store.close();
    const reopened = await Store.open({ file, realNow });
    expect(labels(reopened.account('ptn_default', 'production').data.jobs)).toEqual(['keep']);
    await reopened.close();
  });
});
