// The scheduler's own rules (src/clock/scheduler.ts), driven through the clock endpoint with jobs of
// a test kind: jobs due at the same time run in the order they were scheduled, a job of no known
// kind or one that throws does not stop the run, the runaway guard, cancel, one run per account at
// a time, and idle(). The jobs of the features (settlements, due dates, retries) are pinned in
// their own test files.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { LIMITS } from '../src/limits.js';
import type { Account, JobData } from '../src/store/store.js';
import { setup, type TestSandbox } from './helpers.js';

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
const note = (seconds: number, label: string, kind = 'test.note') => sb.deps.scheduler.schedule(account, kind, t0() + seconds * 1000, { label });
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
    expect(sb.deps.scheduler.schedule(account, 'test.note', t0())).toMatchObject({ payload: {} });
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
    sb.deps.scheduler.schedule(account, 'test.runaway', t0() + 1000);
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
    expect(sb.deps.scheduler.cancel(account, (job) => job.payload.label === 'drop')).toBe(2);
    expect(sb.deps.scheduler.cancel(account, (job) => job.payload.label === 'drop')).toBe(0);
    expect(labels(sb.deps.scheduler.pending(account))).toEqual(['keep']);
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
    const idle = sb.deps.scheduler.idle().then(() => done);
    release();
    expect(await idle).toBe(true);
    await run;
  });
});
