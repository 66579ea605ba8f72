// The account's unit of work (Account.transaction): what work writes stays if it returns and goes if it
// throws, byte for byte (objects, indexes, counters, ids, module state, jobs); what others observe
// (events, the persistence journal, the clearing of tombstones) waits for the commit; work inside work
// is a savepoint. The store-level half is tested on the classes (bookkeeping not visible through HTTP);
// the HTTP half sends requests that fail halfway and reads the account back.
import { describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store, defineCollection } from '../src/store/store.js';
import { checkStoredState, defineStateMap, defineStateValue } from '../src/store/module-state.js';
import { UnitOfWork } from '../src/store/unit-of-work.js';
import { Scheduler } from '../src/clock/scheduler.js';
import { createLogger } from '../src/log.js';
import { defineIdempotencyKeys } from '../src/store/idempotency.js';
import { DEFAULT_PARTNER_ID } from '../src/auth/partners.js';
import { setup } from './helpers.js';
import { events } from './receivables-helpers.js';

interface Thing { id: string; kind: string; note?: string }
const things = defineCollection<Thing>('things', ['kind']);
const names = defineStateMap<string>('names', { type: 'string' });
const tally = defineStateValue<{ count: number; seen: string[] }>('tally', () => ({ count: 0, seen: [] }), { type: 'object' });

async function openAccount(file?: string) {
  const store = await Store.open({ seed: 'uow', realNow: () => Date.UTC(2026, 0, 1), ...(file ? { file, flushDelayMs: 0 } : {}) });
  return { store, account: store.account('p_1', 'production') };
}

const boom = new Error('boom');
function failing(work: () => void): () => void {
  return () => {
    work();
    throw boom;
  };
}

describe('unit of work on the store', () => {
  it('undoes inserts, updates, removes, ids, counters, module state and jobs of work that throws, byte for byte', async () => {
    const { store, account } = await openAccount();
    const scheduler = new Scheduler(store, createLogger('silent'));
    account.transaction(() => {
      things(account).insert({ id: account.newId('thg'), kind: 'a' });
      things(account).insert({ id: account.newId('thg'), kind: 'b', note: 'kept' });
      names(account).set('first', 'one');
      tally.update(account, (t) => { t.count = 1; t.seen.push('x'); });
      scheduler.schedule(account, 'kept', 5);
    });
    const [first, second] = [...things(account).values()];
    const before = JSON.stringify(account.data);
    expect(() => account.transaction(failing(() => {
      things(account).insert({ id: account.newId('thg'), kind: 'a' });
      things(account).update(first.id, { kind: 'b', note: 'added' });
      things(account).update(second.id, { note: 'changed' });
      things(account).remove(second.id);
      account.next('invoices');
      names(account).set('first', 'changed');
      names(account).set('second', 'two');
      names(account).delete('first');
      tally.update(account, (t) => { t.count = 9; t.seen.push('y', 'z'); });
      scheduler.schedule(account, 'k', 1);
      scheduler.cancel(account, (job) => job.kind === 'kept');
    }))).toThrow(boom);
    expect(JSON.stringify(account.data)).toBe(before);
    // Indexes are back too: the filtered walk sees what it saw before.
    expect([...things(account).newest({ field: 'kind', value: 'a' })].map((t) => t.id)).toEqual([first.id]);
    expect([...things(account).newest({ field: 'kind', value: 'b' })].map((t) => t.id)).toEqual([second.id]);
    expect(things(account).size).toBe(2);
    expect(account.data.jobs.map((job) => job.kind)).toEqual(['kept']);
    // The id sequence did not move: the next id is the one the refused work had drawn.
    const next = account.transaction(() => things(account).insert({ id: account.newId('thg'), kind: 'c' }));
    expect(things(account).get(next.id)).toBeDefined();
  });

  it('keeps what work wrote when it returns, and a read never stores module state', async () => {
    const { account } = await openAccount();
    expect(names(account).get('x')).toBeUndefined();
    expect(tally.read(account)).toEqual({ count: 0, seen: [] });
    expect(account.data.state).toEqual({});
    account.transaction(() => {
      names(account).set('x', 'y');
      tally.update(account, (t) => { t.count += 1; });
    });
    expect(account.data.state).toEqual({ names: { x: 'y' }, tally: { count: 1, seen: [] } });
    // "__proto__" is just an entry.
    account.transaction(() => names(account).set('__proto__', 'p'));
    expect(names(account).get('__proto__')).toBe('p');
    expect(Object.getPrototypeOf(account.data.state.names)).toBe(Object.prototype);
  });

  it('undoes each kind of module state change on its own: a new entry, a deleted entry, an array, a cheap inverse', async () => {
    const { account } = await openAccount();
    const list = defineStateValue<string[]>('list', () => [], { type: 'array', items: { type: 'string' } });
    const log = defineStateValue<{ entries: string[] }>('log', () => ({ entries: [] }), { type: 'object' });
    account.transaction(() => {
      names(account).set('kept', 'k');
      list.update(account, (l) => l.push('a', 'b'));
      log.update(account, (l) => l.entries.push('first'));
    });
    const before = JSON.stringify(account.data);
    expect(names(account).has('kept')).toBe(true);
    expect(names(account).has('new')).toBe(false);
    let inverses = 0;
    expect(() => account.transaction(failing(() => {
      names(account).set('new', 'n');
      names(account).delete('kept');
      list.update(account, (l) => { l.splice(0, 1, 'z'); l.push('c'); });
      log.update(account, (l) => l.entries.push('second'), (l) => { inverses += 1; l.entries.pop(); });
    }))).toThrow(boom);
    expect(JSON.stringify(account.data)).toBe(before);
    expect(names(account).has('new')).toBe(false);
    expect(names(account).entries()).toEqual([['kept', 'k']]);
    expect(list.read(account)).toEqual(['a', 'b']);
    expect(inverses).toBe(1);
    // Entries are plain enumerable JSON (they reach the data file).
    expect(JSON.parse(JSON.stringify(account.data.state))).toEqual({ names: { kept: 'k' }, list: ['a', 'b'], log: { entries: ['first'] } });
  });

  it('checks stored state against what each module declares: a map entry and a value, naming account, key and field', async () => {
    const { account } = await openAccount();
    account.transaction(() => {
      names(account).set('ok', 'text');
      tally.update(account, (t) => { t.count = 1; });
    });
    expect(checkStoredState([account])).toEqual([]);
    (account.data.state.names as Record<string, unknown>).bad = 5;
    expect(checkStoredState([account])).toEqual(['account p_1:production, state names/bad: must be string']);
  });

  it('undoes an idempotency key remembered by work that then throws', async () => {
    const { account } = await openAccount();
    const keys = defineIdempotencyKeys<string>('uow_keys');
    account.transaction(() => keys(account).remember('first', { a: 1 }, 'one'));
    const before = JSON.stringify(account.data);
    expect(() => account.transaction(failing(() => keys(account).remember('second', { a: 2 }, 'two')))).toThrow(boom);
    expect(JSON.stringify(account.data)).toBe(before);
    expect(keys(account).replay('second', { a: 2 }, 'key')).toBeUndefined();
    expect(keys(account).replay('first', { a: 1 }, 'key')).toBe('one');
  });

  it('refuses a state key declared twice', () => {
    expect(() => defineStateMap('names', { type: 'string' })).toThrow('module state names declared twice');
  });

  it('removes module state and collections first made by work that throws', async () => {
    const { account } = await openAccount();
    const before = JSON.stringify(account.data);
    expect(() => account.transaction(failing(() => {
      things(account).insert({ id: account.newId('thg'), kind: 'a' });
      names(account).set('a', 'b');
      tally.update(account, (t) => { t.count = 5; });
    }))).toThrow(boom);
    expect(JSON.stringify(account.data)).toBe(before);
    expect(tally.stored(account)).toBe(false);
    // The collection comes back empty and usable.
    account.transaction(() => things(account).insert({ id: 'thg_x', kind: 'a' }));
    expect(things(account).size).toBe(1);
  });

  it('treats work inside work as a savepoint: an inner throw undoes only the inner writes', async () => {
    const { account } = await openAccount();
    account.transaction(() => {
      things(account).insert({ id: 'thg_outer', kind: 'a' });
      expect(() => account.transaction(failing(() => {
        things(account).insert({ id: 'thg_inner', kind: 'a' });
        names(account).set('inner', 'x');
      }))).toThrow(boom);
      names(account).set('outer', 'y');
    });
    expect([...things(account).values()].map((t) => t.id)).toEqual(['thg_outer']);
    expect(names(account).entries()).toEqual([['outer', 'y']]);
    // An inner unit that returns commits or rolls back with the outer one.
    expect(() => account.transaction(failing(() => {
      account.transaction(() => things(account).insert({ id: 'thg_both', kind: 'a' }));
    }))).toThrow(boom);
    expect(things(account).get('thg_both')).toBeUndefined();
  });

  it('runs effects after the commit, in order, and drops them on a rollback', async () => {
    const { account } = await openAccount();
    const seen: string[] = [];
    account.transaction(() => {
      account.afterCommit(() => seen.push('one'));
      seen.push('work');
      account.afterCommit(() => seen.push('two'));
    });
    expect(seen).toEqual(['work', 'one', 'two']);
    expect(() => account.transaction(failing(() => account.afterCommit(() => seen.push('never'))))).toThrow(boom);
    expect(seen).toEqual(['work', 'one', 'two']);
    // Outside a unit of work an effect runs at once.
    account.afterCommit(() => seen.push('now'));
    expect(seen.at(-1)).toBe('now');
  });

  it('runs every effect even when one throws, then throws the first error; a unit finishes once', async () => {
    const { account } = await openAccount();
    const seen: string[] = [];
    const first = new Error('listener one');
    expect(() => account.transaction(() => {
      things(account).insert({ id: 'thg_kept', kind: 'a' });
      account.afterCommit(() => { throw first; });
      account.afterCommit(() => seen.push('two'));
      account.afterCommit(() => { throw new Error('listener three'); });
    })).toThrow(first);
    // The work committed: its writes stay, and the effect after the failing one ran.
    expect(seen).toEqual(['two']);
    expect(things(account).get('thg_kept')).toBeDefined();
    const unit = new UnitOfWork();
    unit.commit();
    expect(() => unit.commit()).toThrow('unit of work finished twice');
    expect(() => unit.rollback()).toThrow('unit of work finished twice');
  });

  it('clears tombstones only once the work commits, so a rolled-back delete finds its position', async () => {
    const { account } = await openAccount();
    account.transaction(() => {
      for (let i = 0; i < 200; i++) things(account).insert({ id: `thg_${i}`, kind: 'a' });
    });
    const before = JSON.stringify(account.data);
    // Removing the 100 oldest would clear leading tombstones (64 and an eighth of the order) at once.
    expect(() => account.transaction(failing(() => {
      for (let i = 0; i < 100; i++) things(account).remove(`thg_${i}`);
      expect(account.data.collections.things.base ?? 0).toBe(0);
    }))).toThrow(boom);
    expect(JSON.stringify(account.data)).toBe(before);
    expect(things(account).oldest()?.id).toBe('thg_0');
    account.transaction(() => {
      for (let i = 0; i < 100; i++) things(account).remove(`thg_${i}`);
    });
    expect(account.data.collections.things.base).toBe(100);
    expect(things(account).page({ limit: 1 }).data[0].id).toBe('thg_199');
  });

  it('logs nothing of work that throws in the data file, and the commit of work that returns', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'uow-'));
    const file = join(dir, 'sandbox.json');
    const { store, account } = await openAccount(file);
    expect(() => account.transaction(failing(() => {
      things(account).insert({ id: 'thg_refused', kind: 'a' });
      names(account).set('refused', 'x');
    }))).toThrow(boom);
    account.transaction(() => {
      things(account).insert({ id: 'thg_kept', kind: 'a' });
      names(account).set('kept', 'y');
    });
    await store.close();
    const written = (await Promise.all((await readdir(dir)).map((name) => readFile(join(dir, name), 'utf8')))).join('\n');
    expect(written).toContain('thg_kept');
    expect(written).not.toContain('thg_refused');
    const reopened = await Store.open({ file, realNow: () => Date.UTC(2026, 0, 1) });
    const again = reopened.account('p_1', 'production');
    expect([...things(again).values()].map((t) => t.id)).toEqual(['thg_kept']);
    expect(names(again).entries()).toEqual([['kept', 'y']]);
    await reopened.close();
  });
});

describe('unit of work through HTTP', () => {
  it('a due job that throws leaves nothing it wrote, and its failure is recorded', async () => {
    const sb = await setup();
    const token = await sb.token();
    const account = sb.deps.store.account(DEFAULT_PARTNER_ID, 'production');
    sb.deps.scheduler.register('test.half', (acc) => {
      things(acc).insert({ id: acc.newId('thg'), kind: 'a' });
      names(acc).set('half', 'done');
      throw new Error('failed after writing');
    });
    account.transaction(() => sb.deps.scheduler.schedule(account, 'test.half', account.clock.nowMs() + 1000));
    const before = JSON.stringify({ ...account.data, jobs: [], clock: null });
    const res = await sb.advance(60, token);
    expect(res.status).toBe(200);
    expect(res.body.failed_jobs).toEqual([expect.objectContaining({ kind: 'test.half', error: 'failed after writing' })]);
    // Only the failure record and the clock changed.
    const after = JSON.parse(JSON.stringify({ ...account.data, jobs: [], clock: null }));
    delete after.state.failed_jobs;
    expect(JSON.stringify(after)).toBe(before);
    expect(things(account).size).toBe(0);
    expect(names(account).get('half')).toBeUndefined();
  });

  it('an accounting sync refused on its last item records no event and queues no webhook', async () => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    const sub = await api.post('/webhooks', { endpoint_url: 'https://hooks.example/partner', topic: 'customer_created' });
    expect(sub.status).toBe(201);
    const res = await sb.http.post('/_sandbox/accounting/sync').send({
      customers: [{ name: 'A' }, { name: 'B' }],
      invoices: [{ customer_id: '$customers[0]', line_items: [{ amount: 10 }] }, { customer_id: 'cus_unknown', line_items: [{ amount: 10 }] }],
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('cus_unknown');
    expect(events(sb)).toEqual([]);
    expect((await api.get('/customers')).body.data).toEqual([]);
    const account = sb.deps.store.account(DEFAULT_PARTNER_ID, 'production');
    expect(account.data.jobs).toEqual([]);
  });
});
