// What one batch of the --data log holds replays to what memory held, whatever units of work it
// gathered: generated sequences of inserts, updates, removes, module state writes and account
// replacements (a reset, a restore of a snapshot's data), each its own unit of work, all written in one
// batch, then the file read back. The class this guards: an object inserted by one unit and updated by
// a later one of the same batch once replayed as an update alone, never put in the order.
import { afterEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store, type Account, type AccountData } from '../src/store/store.js';
import { loadDataFile, storeJson } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Step =
  | { kind: 'insert'; n: number }
  | { kind: 'update'; pick: number; n: number }
  | { kind: 'remove'; pick: number }
  | { kind: 'state'; n: number }
  | { kind: 'reset' }
  | { kind: 'restore' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('insert' as const), n: fc.nat(1000) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), n: fc.nat(1000) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('state' as const), n: fc.nat(1000) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restore' as const }) },
);

/** The account's data as sorted JSON (a collection's Map written out by id). */
function canonical(data: AccountData | undefined): string {
  if (!data) return 'none';
  const plain = JSON.parse(storeJson(data)) as AccountData;
  for (const [name, c] of Object.entries(plain.collections)) if (!c.order.length && !c.base) delete plain.collections[name];
  return JSON.stringify(plain, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));
}

/** A copy of the account's data made for it again, as a restore makes it: fresh objects, the same order, tombstones, base and epoch. */
function copyOf(account: Account): AccountData {
  const data = JSON.parse(storeJson(account.data)) as AccountData & { collections: Record<string, { items: Record<string, { id: string }> }> };
  const collections: AccountData['collections'] = {};
  for (const [name, c] of Object.entries(account.data.collections)) {
    const items = new Map<string, unknown>();
    for (const id of c.order) if (c.items.has(id)) items.set(id, data.collections[name].items[id]);
    collections[name] = { ...c, items, order: [...c.order] };
  }
  return { ...data, collections, jobs: [...account.data.jobs] } as AccountData;
}

describe('one batch of the log', () => {
  it('replays to what memory held, for generated sequences of units of work', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
      const dir = mkdtempSync(join(tmpdir(), 'journal-batch-'));
      dirs.push(dir);
      const file = join(dir, 'sandbox.json');
      // Nothing is written until the flush at the end: every unit below lands in one batch.
      const store = await Store.open({ file, seed: 'batch', realNow: () => 0, flushDelayMs: 3_600_000 });
      let account = store.account('ptn_x', 'production');
      let saved: AccountData | undefined;
      const live: string[] = [];
      for (const s of steps) {
        const things = account.collection<{ id: string; n: number }>('things');
        if (s.kind === 'insert') {
          const id = account.transaction(() => things.insert({ id: account.newId('thg'), n: s.n }).id);
          live.push(id);
        } else if (s.kind === 'update' && live.length) {
          const id = live[s.pick % live.length];
          account.transaction(() => things.update(id, { n: s.n }));
        } else if (s.kind === 'remove' && live.length) {
          const [id] = live.splice(s.pick % live.length, 1);
          account.transaction(() => things.remove(id));
        } else if (s.kind === 'state') {
          account.transaction(() => {
            account.writing();
            account.data.state.marker = s.n;
            account.stateChanged('marker');
          });
        } else if (s.kind === 'reset') {
          saved = copyOf(account);
          account = store.resetAccount(account);
          live.length = 0;
        } else if (s.kind === 'restore' && saved) {
          account = store.replaceAccount(account, saved);
          live.length = 0;
          live.push(...account.data.collections.things?.order.filter((id) => account.data.collections.things.items.has(id)) ?? []);
          saved = copyOf(account);
        }
      }
      const held = canonical(store.data.accounts[account.id]);
      await store.close();
      const loaded = await loadDataFile(file);
      expect(canonical(loaded.accounts[account.id])).toBe(held);
    }), { numRuns: 150, seed: 4343 });
  });
});
