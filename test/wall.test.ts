// The store's walls, tested as classes with generated inputs (fast-check), not as the instances that
// once broke them:
//   - every write primitive throws outside a unit of work, and changes nothing;
//   - a write to an account a reset replaced throws 409 account_replaced, to any account while the
//     data file cannot be written 503 storage_unavailable, and changes nothing;
//   - a unit of work that stores a value the data file cannot hold (a cycle, a nesting too deep, a
//     BigInt) is refused alone with 400 naming where the value is; every other unit of the same
//     write batch reaches the file, and the file loads to exactly what memory holds;
//   - partners and keys are logged one by one: a key's log costs the same at the 1st and the 90th.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store, defineCollection, type Account } from '../src/store/store.js';
import { defineStateMap, defineStateValue } from '../src/store/module-state.js';
import { ApiError } from '../src/errors.js';
import { LIMITS } from '../src/limits.js';
import { Partners } from '../src/auth/partners.js';
import { Scheduler } from '../src/clock/scheduler.js';
import { createLogger } from '../src/log.js';
import { readDataFile } from '../src/store/persistence/read.js';
import { dataOnDisk, setup, storeJson } from './helpers.js';

interface Box { id: string; value?: unknown }
const boxes = defineCollection<Box>('wall_boxes');
const labels = defineStateMap<unknown>('wall_labels', {});
const counter = defineStateValue<{ n: number; extra?: unknown }>('wall_counter', () => ({ n: 0 }), { type: 'object' });

const scratch = () => mkdtempSync(join(tmpdir(), 'wall-'));
const NOW = () => Date.UTC(2026, 0, 1);

/** Every write primitive an account offers, each named, each given the account and a fresh id. */
function writes(store: Store): Array<[string, (account: Account, n: number) => unknown]> {
  const scheduler = new Scheduler(store, createLogger('silent'));
  return [
    ['collection insert', (account, n) => boxes(account).insert({ id: `b${n}` })],
    ['collection update', (account) => boxes(account).update('seed', { value: 1 })],
    ['collection remove', (account) => boxes(account).remove('seed')],
    ['collection dropOldest', (account) => boxes(account).dropOldest(1)],
    ['state map set', (account, n) => labels(account).set(`l${n}`, n)],
    ['state map delete', (account) => labels(account).delete('seed')],
    ['state value update', (account) => counter.update(account, (v) => { v.n += 1; })],
    ['id counter', (account) => account.newId('x')],
    ['clock move', (account) => account.clock.moveTo(account.clock.nowMs() + 1000)],
    ['job schedule', (account) => scheduler.schedule(account, 'wall.job', account.clock.nowMs() + 1000)],
    ['job cancel', (account) => scheduler.cancel(account, () => true)],
  ];
}

/** An account holding one of everything the writes above change. */
function seeded(store: Store): Account {
  const account = store.account('p_wall', 'production');
  const scheduler = new Scheduler(store, createLogger('silent'));
  account.transaction(() => {
    boxes(account).insert({ id: 'seed' });
    labels(account).set('seed', 'x');
    counter.update(account, (v) => { v.n = 1; });
    scheduler.schedule(account, 'wall.job', account.clock.nowMs() + 5000);
  });
  return account;
}

describe('every write passes the wall', () => {
  it('throws outside a unit of work, for every primitive, in any order, and changes nothing', async () => {
    const store = await Store.open({ seed: 'wall', realNow: NOW });
    const account = seeded(store);
    const primitives = writes(store);
    const before = storeJson(store.data);
    fc.assert(fc.property(fc.array(fc.nat({ max: primitives.length - 1 }), { minLength: 1, maxLength: 20 }), (picks) => {
      picks.forEach((pick, n) => {
        const [name, write] = primitives[pick];
        expect(() => write(account, n)).toThrow(/outside a unit of work/);
        expect([name, storeJson(store.data)]).toEqual([name, before]);
      });
    }), { numRuns: 50 });
  });

  it('answers 409 on an account a reset replaced and 503 while the file cannot be written, for every primitive, changing nothing', async () => {
    const store = await Store.open({ seed: 'wall', realNow: NOW });
    const old = seeded(store);
    const fresh = old.reset();
    expect(fresh).not.toBe(old);
    for (const [name, write] of writes(store)) {
      const error = (() => { try { old.transaction(() => write(old, 1)); } catch (e) { return e; } return undefined; })();
      expect([name, error instanceof ApiError && error.status, error instanceof ApiError && error.code]).toEqual([name, 409, 'account_replaced']);
    }
    expect(store.account('p_wall', 'production')).toBe(fresh);
    expect(boxes(fresh).size).toBe(0);
    // A store that cannot write: the wall's storage check (what a failed write of the file turns on).
    const degraded = await Store.open({ seed: 'wall', realNow: NOW });
    const account = seeded(degraded);
    const before = storeJson(degraded.data);
    degraded.degraded = { reason: 'ENOSPC', since: new Date(NOW()).toISOString() };
    for (const [name, write] of writes(degraded)) {
      const error = (() => { try { account.transaction(() => write(account, 1)); } catch (e) { return e; } return undefined; })();
      expect([name, error instanceof ApiError && error.status, error instanceof ApiError && error.code]).toEqual([name, 503, 'storage_unavailable']);
    }
    expect(storeJson(degraded.data)).toBe(before);
  });

  it('throws for partners and keys written outside their unit of work', async () => {
    const store = await Store.open({ seed: 'wall', realNow: NOW });
    expect(() => store.putPartner({ id: 'ptn_x', name: 'x', rate_limit: null, created_at: '2026-01-01T00:00:00Z' })).toThrow(/outside a unit of work/);
    expect(store.data.partners).toEqual({});
  });
});

/** A value JSON cannot hold, with where it is and why: generated in size and shape. */
const unstorable = fc.oneof(
  fc.record({ depth: fc.integer({ min: 1, max: 5 }), key: fc.constantFrom('a', 'body', 'items') }).map(({ depth, key }) => {
    const root: Record<string, unknown> = {};
    let at = root;
    for (let i = 0; i < depth; i++) at = (at[key] = {}) as Record<string, unknown>;
    at.loop = root;
    return { value: root, why: /cycle/ };
  }),
  fc.integer({ min: 20_000, max: 40_000 }).map((depth) => {
    let value: unknown = 'leaf';
    for (let i = 0; i < depth; i++) value = [value];
    return { value, why: /nested/ };
  }),
  fc.bigInt().map((n) => ({ value: { amount: n }, why: /BigInt/ })),
);

describe('a value the data file cannot hold', () => {
  it('is refused with 400 in its own unit of work; the rest of the batch is written, and the file is memory', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.option(unstorable, { freq: 3 }), { minLength: 2, maxLength: 12 }), fc.constantFrom('object', 'state'), async (plan, where) => {
      const dir = scratch();
      const file = join(dir, 'sandbox.json');
      // A long gathering delay: every unit below lands in one write batch.
      const store = await Store.open({ file, seed: 'wall', realNow: NOW, flushDelayMs: 60_000 });
      const account = store.account('p_wall', 'production');
      const kept: string[] = [];
      plan.forEach((bad, n) => {
        const write = () => (where === 'object'
          ? boxes(account).insert({ id: `b${n}`, value: bad ? bad.value : { n } })
          : labels(account).set(`l${n}`, bad ? bad.value : { n }));
        if (!bad) {
          account.transaction(write);
          kept.push(`${n}`);
          return;
        }
        let error: unknown;
        try { account.transaction(write); } catch (e) { error = e; }
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).status).toBe(400);
        expect(Object.values((error as ApiError).validationErrors).join(' ')).toMatch(bad.why);
        // Nothing of it in memory.
        expect(where === 'object' ? boxes(account).get(`b${n}`) : labels(account).get(`l${n}`)).toBeUndefined();
      });
      await store.flush();
      const loaded = (await readDataFile(file))!.data;
      expect(storeJson(loaded)).toBe(storeJson(store.data));
      const ids = where === 'object' ? [...boxes(account).values()].map((b) => b.id.slice(1)) : labels(account).entries().map(([k]) => k.slice(1));
      expect(ids.sort()).toEqual(kept.sort());
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }), { numRuns: 25 });
  });

  it('through HTTP: five creates sent with a refused value in the same batch are all on disk after a restart', async () => {
    const dir = scratch();
    const file = join(dir, 'sandbox.json');
    const sb = await setup({ dataFile: file, flushDelayMs: 0 });
    const api = sb.as(await sb.token());
    const account = sb.deps.store.account('ptn_default', 'production');
    // A value the door lets through cannot exist in a request; the store's own check is the second
    // line: a module state change made inside one of the concurrent requests' units of work.
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const results = await Promise.all([
      ...[1, 2, 3, 4, 5].map((n) => api.post('/customers', { name: `Kept ${n}` })),
      Promise.resolve().then(() => {
        try {
          account.transaction(() => counter.update(account, (v) => { v.extra = cyclic; }));
          return 'stored';
        } catch (error) {
          return (error as ApiError).status;
        }
      }),
    ]);
    expect(results.slice(0, 5).map((r) => (r as { status: number }).status)).toEqual([201, 201, 201, 201, 201]);
    expect(results[5]).toBe(400);
    await sb.deps.store.close();
    const again = await setup({ dataFile: file });
    const names = (await again.as(await again.token()).get('/customers').expect(200)).body.data.map((c: { name: string }) => c.name).sort();
    expect(names).toEqual(['Kept 1', 'Kept 2', 'Kept 3', 'Kept 4', 'Kept 5']);
    await again.deps.store.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('partners and keys in the data file', () => {
  it('logs only the key that changed: the 90th key costs the log what the 1st did', async () => {
    const dir = scratch();
    const file = join(dir, 'sandbox.json');
    const store = await Store.open({ file, seed: 'keys', realNow: NOW, flushDelayMs: 0 });
    const partners = new Partners(store, () => '2026-01-01T00:00:00.000Z');
    const { partner } = partners.createPartner('Keys', undefined);
    await store.flush();
    const logBytes = () => readdirSync(dir).filter((f) => f.includes('.log.')).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
    const grown: number[] = [];
    for (let n = 0; n < LIMITS.keysPerPartner - 2; n++) {
      const before = logBytes();
      partners.createKey(partner.id, 'production', `key ${n}`, null);
      await store.flush();
      grown.push(logBytes() - before);
    }
    // Each key's batch holds that key alone (its client id and secret digest vary by a few bytes).
    expect(Math.max(...grown) - Math.min(...grown)).toBeLessThan(16);
    expect(grown.at(-1)).toBeLessThan(600);
    // At the cap: 422 limit_reached, nothing made.
    let error: unknown;
    try { partners.createKey(partner.id, 'demo', 'one too many', null); } catch (e) { error = e; }
    expect((error as ApiError).code).toBe('limit_reached');
    expect(Object.values(store.data.keys).filter((k) => k.partner_id === partner.id)).toHaveLength(LIMITS.keysPerPartner);
    await store.close();
    // The log replays to the same partners and keys.
    const loaded = (await readDataFile(file))!.data;
    expect(loaded.keys).toEqual(store.data.keys);
    expect(loaded.partners).toEqual(store.data.partners);
    expect(readFileSync(file, 'utf8').length).toBeGreaterThan(0);
    expect(dataOnDisk(file)).toContain(partner.id);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 422 limit_reached through the control plane at the cap', async () => {
    const sb = await setup();
    const made = (await sb.http.post('/_sandbox/partners').send({ name: 'Capped' }).expect(201)).body;
    const token = await sb.token('production', made.credentials.production);
    const mint = (environment: string) => sb.http.post(`/_sandbox/partners/${made.id}/keys`).set('Authorization', `Bearer ${token}`).send({ environment });
    for (let n = 2; n < LIMITS.keysPerPartner; n++) await mint('production').expect(201);
    const refused = await mint('demo');
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'limit_reached', validation_errors: { id: expect.stringContaining(`${LIMITS.keysPerPartner} keys`) } });
  });
});

describe('a failed append', () => {
  it('is tried once more with its content intact, in a new segment, and nothing is lost or degraded', async () => {
    const dir = scratch();
    const file = join(dir, 'sandbox.json');
    const store = await Store.open({ file, seed: 'retry', realNow: NOW, flushDelayMs: 60_000 });
    const account = store.account('p_wall', 'production');
    account.transaction(() => boxes(account).insert({ id: 'first' }));
    await store.flush();
    // A real fault of the open segment: its descriptor is closed under it, so the next append fails (EBADF).
    const log = (store as unknown as { log: { handle?: { fd: number } } }).log;
    const { closeSync } = await import('node:fs');
    closeSync(log.handle!.fd);
    for (let n = 0; n < 5; n++) account.transaction(() => boxes(account).insert({ id: `b${n}`, value: { n } }));
    await store.flush();
    expect(store.degraded).toBeUndefined();
    const loaded = (await readDataFile(file))!;
    expect(storeJson(loaded.data)).toBe(storeJson(store.data));
    // No segment left empty or torn: every one has a header and whole batches.
    expect(loaded.torn).toBe(0);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
