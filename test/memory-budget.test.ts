// The process-wide memory budget of the request journal and the webhook history: past it, the oldest
// entries of the whole process go first, whichever account holds them; every account keeps its
// newest; queued deliveries and their events are never evicted; an eviction of persisted history is
// a unit of work of its account, logged like any drop; a reset gives the account's bytes back. The
// 2,000-account run under a fixed heap is test/memory-budget-process.test.ts.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { setup, type TestSandbox } from './helpers.js';
import { MemoryBudget, type Ledger } from '../src/budget/memory-budget.js';
import { startWebhookReceiver, type WebhookReceiver } from '../src/testing/webhook-receiver.js';
import { eventLog } from '../src/events/events.js';
import { attempts, deliveries } from '../src/webhooks/history.js';
import { queuedDeliveries, type WebhookQueue } from '../src/webhooks/queue.js';
import { defaultConfig } from '../src/config.js';
import { LIMITS } from '../src/limits.js';
import type { Account } from '../src/store/store.js';

jest.setTimeout(60_000);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/**
 * A ledger as a list of (order, bytes), oldest first; `held`: its oldest may not go (a queued
 * delivery). A held ledger either says so (Infinity, as the journal's ring does for its newest) or
 * only finds out when asked to evict (as the history's ledgers do): `tellsHeld`.
 */
class FakeLedger implements Ledger {
  readonly kind = 'journal' as const;
  heapIndex = -1;
  entries: Array<{ order: number; bytes: number }> = [];
  held = false;
  constructor(private readonly all: FakeLedger[], private readonly evicted: Array<{ order: number }>, private readonly tellsHeld: boolean) {}

  /** The oldest entry that may go now (Infinity: none). */
  oldestThatMayGo(): number {
    return this.entries.length > 1 && !this.held ? this.entries[0].order : Infinity;
  }

  evictableOrder(): number {
    return this.tellsHeld || this.entries.length < 2 ? this.oldestThatMayGo() : this.entries[0].order;
  }

  evict(bound: number, wanted: number) {
    let bytes = 0;
    let entries = 0;
    while (this.entries.length > 1 && !this.held && bytes < wanted && this.entries[0].order < bound) {
      const gone = this.entries.shift()!;
      // The wall under test: what goes is older than every other ledger's oldest that may go.
      for (const other of this.all) if (other !== this) expect(gone.order).toBeLessThan(other.oldestThatMayGo());
      this.evicted.push(gone);
      bytes += gone.bytes;
      entries += 1;
    }
    return { entries, bytes };
  }
}

describe('MemoryBudget (generated sequences of stores, drops, holds and resets)', () => {
  it('counts exactly what the ledgers hold, evicts the oldest entry of the process first, and is under the budget after each store unless only newest or held entries are left', () => {
    // Mostly stores (small entries, and now and then a large one that evicts many), so that ledgers hold several entries at once.
    const op = fc.oneof(
      { weight: 14, arbitrary: fc.record({ kind: fc.constant('store' as const), ledger: fc.nat(7), bytes: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 1500 })) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), ledger: fc.nat(7) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('discard' as const), ledger: fc.nat(7) }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('hold' as const), ledger: fc.nat(7), held: fc.boolean() }) },
    );
    fc.assert(fc.property(fc.integer({ min: 100, max: 1500 }), fc.array(op, { minLength: 40, maxLength: 300 }), (limit, ops) => {
      const budget = new MemoryBudget(limit);
      const all: FakeLedger[] = [];
      const evicted: Array<{ order: number }> = [];
      for (let i = 0; i < 8; i++) all.push(new FakeLedger(all, evicted, i % 2 === 0));
      const held = () => all.reduce((sum, l) => sum + l.entries.reduce((s, e) => s + e.bytes, 0), 0);
      for (const step of ops) {
        const ledger = all[step.ledger];
        if (step.kind === 'store') {
          ledger.entries.push({ order: budget.next(), bytes: step.bytes });
          budget.charge(ledger, step.bytes);
          const stuck = all.every((l) => l.oldestThatMayGo() === Infinity);
          if (!stuck) expect(budget.bytes).toBeLessThanOrEqual(limit);
        } else if (step.kind === 'drop' && ledger.entries.length) {
          budget.release(ledger.entries.shift()!.bytes);
        } else if (step.kind === 'discard') {
          budget.release(ledger.entries.reduce((s, e) => s + e.bytes, 0));
          budget.forget(ledger);
          ledger.entries = [];
        } else if (step.kind === 'hold') {
          ledger.held = step.held;
          if (!step.held) budget.touch(ledger);
        }
        expect(budget.bytes).toBe(held());
        // Each ledger is in the heap at most once, where its index says.
        expect(budget.figures().ledgers).toBe(all.filter((l) => l.heapIndex >= 0).length);
      }
      expect(budget.figures().evicted.journal.entries).toBe(evicted.length);
    }), { numRuns: 300 });
  });
});

/** Partners made through the control plane, with a production token each. */
async function partners(sb: TestSandbox, count: number): Promise<Array<{ id: string; token: string; account: Account }>> {
  const made = [];
  for (let i = 0; i < count; i++) {
    const partner = (await sb.http.post('/_sandbox/partners').send({ name: `P${i}` }).expect(201)).body;
    made.push({ id: partner.id as string, token: await sb.token('production', partner.credentials.production), account: sb.deps.store.account(partner.id, 'production') });
  }
  return made;
}

const budgetOf = (sb: TestSandbox) => sb.deps.services.installed('memoryBudget');

describe('the budget across accounts (through HTTP)', () => {
  it('evicts the oldest journal entries of the whole process first, keeps every account\'s newest, and holds the total under the budget', async () => {
    const sb = await setup({ memoryBudgetBytes: 16 * 1024 });
    const made = await partners(sb, 6);
    let seq = 0;
    // Rounds over every account, each request numbered: the order the budget must evict in.
    for (let round = 0; round < 12; round++) {
      for (const p of made) await sb.as(p.token).get('/customers').set('X-Seq', String(++seq)).expect(200);
    }
    const figures = budgetOf(sb).figures();
    expect(figures.bytes).toBeLessThanOrEqual(16 * 1024);
    expect(figures.peak).toBeLessThanOrEqual(16 * 1024);
    expect(figures.evicted.journal.entries).toBeGreaterThan(0);
    const kept = new Map<string, number[]>();
    for (const p of made) {
      const listed = (await sb.http.get('/_sandbox/requests?limit=500').set('Authorization', `Bearer ${p.token}`).expect(200)).body.data;
      kept.set(p.id, listed.filter((e: { request: { headers: Record<string, string> } }) => e.request.headers['x-seq']).map((e: { request: { headers: Record<string, string> } }) => Number(e.request.headers['x-seq'])).reverse());
    }
    const survivors = [...kept.values()].flat().sort((a, b) => a - b);
    // What is kept is the newest requests of the process: a run from some point to the last, in every account.
    expect(survivors).toEqual(Array.from({ length: survivors.length }, (_, i) => seq - survivors.length + 1 + i));
    expect(survivors.length).toBeLessThan(seq);
    for (const [id, seqs] of kept) expect(seqs.at(-1)).toBe(seq - made.length + 1 + made.findIndex((p) => p.id === id));
  });

  it('keeps every account\'s newest entry even when the budget cannot hold one per account', async () => {
    const sb = await setup({ memoryBudgetBytes: 1024 });
    const made = await partners(sb, 4);
    for (const p of made) for (let i = 0; i < 3; i++) await sb.as(p.token).get('/customers').set('X-Seq', `${p.id}-${i}`).expect(200);
    for (const p of made) {
      const listed = (await sb.http.get('/_sandbox/requests?limit=5&path=/customers').set('Authorization', `Bearer ${p.token}`).expect(200)).body.data;
      expect(listed.map((e: { request: { headers: Record<string, string> } }) => e.request.headers['x-seq'])).toEqual([`${p.id}-2`]);
    }
  });

  it('leaves nothing in the budget after resets, however many: each reset gives back its account\'s bytes and ledgers', async () => {
    const sb = await setup({ memoryBudgetBytes: 1024 * 1024 });
    const token = await sb.token();
    for (let i = 0; i < 150; i++) {
      await sb.as(token).post('/customers', { name: `C${i}` }).expect(201);
      await sb.as(token).get('/customers').expect(200);
      await sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${token}`).expect(200);
    }
    await sb.http.delete('/_sandbox/requests').set('Authorization', `Bearer ${token}`).expect(200);
    const figures = budgetOf(sb).figures();
    expect(figures.bytes).toBe(0);
    expect(figures.ledgers).toBe(0);
  });

  describe('the webhook history', () => {
    let receiver: WebhookReceiver;
    async function subscribed(sb: TestSandbox, count: number) {
      receiver = await startWebhookReceiver();
      cleanups.push(() => receiver.close());
      const made = await partners(sb, count);
      for (const p of made) await sb.as(p.token).post('/webhooks', { endpoint_url: `${receiver.url}/${p.id}`, topic: 'customer_created' }).expect(201);
      return made;
    }
    const queue = (sb: TestSandbox) => sb.deps.services.installed('webhooks') as WebhookQueue;

    it('evicts events, deliveries and attempts oldest first across accounts through the unit of work, and every account keeps its newest', async () => {
      // No journal: the history alone fills the budget.
      const sb = await setup({ memoryBudgetBytes: 48 * 1024, allowHttpWebhooks: true, journalSize: 0 });
      const made = await subscribed(sb, 4);
      const names: string[] = [];
      for (let round = 0; round < 20; round++) {
        for (const p of made) {
          const name = `C${round}-${p.id}`;
          names.push(name);
          await sb.as(p.token).post('/customers', { name }).expect(201);
          await queue(sb).idle(p.account);
        }
      }
      const figures = budgetOf(sb).figures();
      expect(figures.bytes).toBeLessThanOrEqual(48 * 1024);
      for (const kind of ['events', 'deliveries', 'attempts'] as const) expect(figures.evicted[kind].entries).toBeGreaterThan(0);
      // Kept events are the newest of the process (a run up to the last), and every delivery kept still has its event.
      const keptEvents = made.flatMap((p) => [...eventLog(p.account).values()].map((e) => names.indexOf(e.data.name as string))).sort((a, b) => a - b);
      expect(keptEvents).toEqual(Array.from({ length: keptEvents.length }, (_, i) => names.length - keptEvents.length + i));
      for (const p of made) {
        for (const d of deliveries(p.account).values()) expect(eventLog(p.account).get(d.event_id)).toBeDefined();
        // The newest of each, read as the partner reads it.
        const history = (await sb.as(p.token).get('/webhooks/events?limit=1').expect(200)).body.data;
        expect(history[0].data.name).toBe(`C19-${p.id}`);
        const tried = (await sb.http.get('/_sandbox/webhooks/deliveries?limit=1').set('Authorization', `Bearer ${p.token}`).expect(200)).body.data;
        expect(tried).toHaveLength(1);
        expect(attempts(p.account).size).toBeGreaterThanOrEqual(1);
      }
    });

    it('never evicts a queued delivery or its event, even the oldest of the process; once delivered they may go', async () => {
      const sb = await setup({ memoryBudgetBytes: 32 * 1024, allowHttpWebhooks: true, journalSize: 0 });
      const made = await subscribed(sb, 3);
      const [stuck, ...others] = made;
      // The first account's receiver fails: its deliveries stay queued (retried on its clock).
      receiver.respondWith((d) => (d.path === `/${stuck.id}` ? 503 : 200));
      for (let i = 0; i < 4; i++) await sb.as(stuck.token).post('/customers', { name: `Held ${i}` }).expect(201);
      await queue(sb).idle(stuck.account);
      const queued = queuedDeliveries(stuck.account);
      expect(queued).toHaveLength(4);
      for (let round = 0; round < 40; round++) {
        for (const p of others) {
          await sb.as(p.token).post('/customers', { name: `R${round}` }).expect(201);
          await queue(sb).idle(p.account);
        }
      }
      expect(budgetOf(sb).figures().evicted.events.entries).toBeGreaterThan(0);
      // The oldest entries of the process, and every one still there: the head failed, the rest wait behind it.
      expect(queued.map((id) => deliveries(stuck.account).get(id)?.status)).toEqual(['failed', 'pending', 'pending', 'pending']);
      for (const id of queued) expect(eventLog(stuck.account).get(deliveries(stuck.account).get(id)!.event_id)).toBeDefined();
      // Delivered at last: the history may now go, oldest first, with the next stores.
      receiver.respondWith(200);
      await sb.as(stuck.token).post('/webhooks/retry').expect(200);
      await queue(sb).idle(stuck.account);
      expect(queuedDeliveries(stuck.account)).toEqual([]);
      for (let round = 0; round < 10; round++) {
        for (const p of others) {
          await sb.as(p.token).post('/customers', { name: `S${round}` }).expect(201);
          await queue(sb).idle(p.account);
        }
      }
      expect(queued.some((id) => deliveries(stuck.account).get(id) === undefined)).toBe(true);
      expect(budgetOf(sb).bytes).toBeLessThanOrEqual(32 * 1024);
    });

    it('with --data, evicted history stays gone after a restart, and the restart counts what the file holds', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'budget-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'data.json');
      const sb = await setup({ dataFile: file, seed: 'budget', memoryBudgetBytes: 24 * 1024, allowHttpWebhooks: true, journalSize: 0 });
      const made = await subscribed(sb, 2);
      for (let round = 0; round < 25; round++) {
        for (const p of made) {
          await sb.as(p.token).post('/customers', { name: `C${round}` }).expect(201);
          await queue(sb).idle(p.account);
        }
      }
      expect(budgetOf(sb).figures().evicted.events.entries).toBeGreaterThan(0);
      const before = made.map((p) => [...eventLog(p.account).values()].map((e) => e.id));
      await sb.deps.store.flush();
      const restarted = await setup({ dataFile: file, memoryBudgetBytes: 24 * 1024, journalSize: 0 });
      const accounts = made.map((p) => restarted.deps.store.account(p.id, 'production'));
      expect(accounts.map((a) => [...eventLog(a).values()].map((e) => e.id))).toEqual(before);
      // Counted from the file at start: each stored entry as it is now (a delivery's status has changed since it was first counted).
      const stored = accounts.flatMap((a) => [...eventLog(a).values(), ...deliveries(a).values(), ...attempts(a).values()]);
      expect(budgetOf(restarted).bytes).toBe(stored.reduce((sum, item) => sum + Buffer.byteLength(JSON.stringify(item)), 0));
      expect(budgetOf(restarted).bytes).toBeLessThanOrEqual(24 * 1024);
    });

    it('a reset of one account gives its bytes back at once', async () => {
      const sb = await setup({ memoryBudgetBytes: 1024 * 1024, allowHttpWebhooks: true });
      const made = await subscribed(sb, 2);
      for (const p of made) {
        for (let i = 0; i < 5; i++) await sb.as(p.token).post('/customers', { name: `C${i}` }).expect(201);
        await queue(sb).idle(p.account);
      }
      const both = budgetOf(sb).bytes;
      await sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${made[0].token}`).expect(200);
      const one = budgetOf(sb).bytes;
      expect(one).toBeLessThan(both * 0.6);
      expect(one).toBeGreaterThan(0);
      await sb.http.post('/_sandbox/reset').expect(200);
      expect(budgetOf(sb).bytes).toBe(0);
    });
  });
});

describe('configuration', () => {
  it('reads SANDBOX_MEMORY_BUDGET_MB in whole MB (default LIMITS.memoryBudgetBytes), and refuses 0 or a fraction', () => {
    expect(defaultConfig({}).memoryBudgetBytes).toBe(LIMITS.memoryBudgetBytes);
    expect(defaultConfig({ SANDBOX_MEMORY_BUDGET_MB: '64' }).memoryBudgetBytes).toBe(64 * 1024 * 1024);
    expect(() => defaultConfig({ SANDBOX_MEMORY_BUDGET_MB: '0' })).toThrow(/SANDBOX_MEMORY_BUDGET_MB must be a whole number >= 1/);
    expect(() => defaultConfig({ SANDBOX_MEMORY_BUDGET_MB: '1.5' })).toThrow(/SANDBOX_MEMORY_BUDGET_MB/);
  });
});
