// The memory budget at the partner cap, in a process of its own under a fixed heap: 1,000 partners
// (POST /_sandbox/partners) x 2 environments = 2,000 accounts, each with a subscription, each filled
// with rounds of POST /customers (journal entries, events, deliveries, attempts) well past a small
// budget. scripts/memory-budget.mjs does the run and its checks (the budget held, oldest first across
// accounts, the newest of every account readable); this runs it small and reads its verdict. The long
// run is `npm run budget-test`.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { join } from 'node:path';
import { buildCli, childEnv, ROOT, spawnProcess, type BuiltCli } from './cli-harness.js';
import { LIMITS } from '../src/limits.js';

jest.setTimeout(180_000); // about 10 s of work, far longer on a loaded machine

let built: BuiltCli;
beforeAll(() => {
  built = buildCli('memory-budget');
});
afterAll(() => built.remove());

describe('the memory budget at the partner cap (2,000 accounts, a 128 MB heap)', () => {
  it('holds 2,000 filled accounts to a 12 MB budget: never past it, the oldest entries of the process evicted first, the newest of every account readable, and the process alive', async () => {
    const run = spawnProcess(process.execPath, [
      '--max-old-space-size=128', '--expose-gc', join(ROOT, 'scripts', 'memory-budget.mjs'),
      '--dist', join(built.dir, 'dist'), '--partners', String(LIMITS.partnersPerServer), '--rounds', '2', '--budget-mb', '12', '--fields', '2', '--concurrency', '16',
    ], childEnv());
    const code = await run.exit;
    const summary = JSON.parse(run.stdout().trim().split('\n').at(-1) || '{}');
    expect({ code, stderr: run.stderr().slice(0, 2000), failures: summary.failures }).toEqual({ code: 0, stderr: '', failures: [] });
    expect(summary).toMatchObject({ ok: true, accounts: 2 * LIMITS.partnersPerServer, newest_readable: 2 * LIMITS.partnersPerServer });
    expect(summary.peak_counted_mb).toBeLessThanOrEqual(12);
    for (const kind of ['journal', 'events', 'deliveries', 'attempts']) expect(summary.evicted[kind].entries).toBeGreaterThan(0);
    // Round 1 was evicted (its entries beyond each account's newest), round 2 kept: oldest first.
    expect(summary.evicted_through_round).toBeLessThanOrEqual(summary.oldest_kept_round);
    expect(summary.heap_mb.peak_after_gc).toBeLessThan(summary.heap_mb.limit);
  });
});
