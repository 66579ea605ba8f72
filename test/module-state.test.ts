// Module state (src/store/module-state.ts) through its public API, where nothing of it shows through
// HTTP: map entries are plain own JSON whatever their name, a value put back after work that throws
// is the same object with its old content, reading stores nothing, the keys an earlier version kept
// are dropped at start (and an account without them is not touched, even one that can no longer be
// written), and the start's check of stored state reads the schemas as modules write them (union
// types such as ['string', 'null'], as the webhook queue's) and names account, key and field.
import { describe, expect, it } from '@jest/globals';
import { Store } from '../src/store/store.js';
import { checkStoredState, defineStateLog, defineStateMap, defineStateValue, isDeclaredState, retireStateKeys, stateProblems } from '../src/store/module-state.js';

const labels = defineStateMap<{ text: string }>('ms_labels', { type: 'object', required: ['text'], properties: { text: { type: 'string' } } });
const cursor = defineStateValue<{ at: string | null; seen: string[] }>('ms_cursor', () => ({ at: null, seen: [] }), {
  type: 'object', required: ['at', 'seen'],
  properties: { at: { type: ['string', 'null'] }, seen: { type: 'array', items: { type: 'string' } } },
});

const queue = defineStateLog<string>('ms_queue', { type: 'string' });
const list = defineStateValue<string[]>('ms_list', () => [], { type: 'array', items: { type: 'string' } });

const other = defineStateValue<{ n: number }>('ms_other', () => ({ n: 0 }), { type: 'object', properties: { n: { type: 'integer' } } });

async function openAccount() {
  const store = await Store.open({ seed: 'module-state', realNow: () => Date.UTC(2026, 0, 1) });
  return { store, account: store.account('p_1', 'production') };
}

const boom = new Error('boom');

describe('a state map', () => {
  it('keeps entries as own, enumerable JSON, whatever their name, in insertion order', async () => {
    const { account } = await openAccount();
    account.transaction(() => {
      for (const name of ['b', 'constructor', '__proto__', 'a']) labels(account).set(name, { text: name });
    });
    expect(labels(account).entries().map(([name]) => name)).toEqual(['b', 'constructor', '__proto__', 'a']);
    expect(Object.keys(JSON.parse(JSON.stringify(account.data.state)).ms_labels)).toEqual(['b', 'constructor', '__proto__', 'a']);
    expect(labels(account).get('toString')).toBeUndefined();
    expect(labels(account).has('hasOwnProperty')).toBe(false);
    account.transaction(() => labels(account).set('b', { text: 'again' }));
    expect(labels(account).entries()[0]).toEqual(['b', { text: 'again' }]);
  });

  it('sets entries as the same plain data properties that reading its JSON back makes', async () => {
    const { account } = await openAccount();
    account.transaction(() => {
      labels(account).set('a', { text: 'a' });
      labels(account).set('__proto__', { text: 'p' });
      labels(account).set('a', { text: 'again' });
    });
    const map = account.data.state.ms_labels as object;
    expect(Object.getOwnPropertyDescriptors(map)).toEqual(Object.getOwnPropertyDescriptors(JSON.parse(JSON.stringify(map))));
    account.transaction(() => labels(account).delete('a'));
    expect(labels(account).entries()).toEqual([['__proto__', { text: 'p' }]]);
  });

  it('reads an account that never stored the map without storing it', async () => {
    const { account } = await openAccount();
    expect(labels(account).entries()).toEqual([]);
    expect(labels(account).get('x')).toBeUndefined();
    account.transaction(() => labels(account).delete('x'));
    expect(Object.hasOwn(account.data.state, 'ms_labels')).toBe(false);
  });
});

describe('a state value', () => {
  it('put back after work that throws is the same object, holding its old content', async () => {
    const { account } = await openAccount();
    account.transaction(() => cursor.update(account, (c) => { c.at = 'one'; c.seen.push('a'); }));
    const held = cursor.read(account);
    expect(() => account.transaction(() => {
      cursor.update(account, (c) => { c.at = 'two'; c.seen.push('b'); });
      cursor.update(account, (c) => { c.seen.splice(0); });
      throw boom;
    })).toThrow(boom);
    expect(cursor.read(account)).toBe(held);
    expect(held).toEqual({ at: 'one', seen: ['a'] });
  });

  it('two values changed by one piece of work that throws are each put back, one made by it and one stored before', async () => {
    const { account } = await openAccount();
    account.transaction(() => {
      cursor.update(account, (c) => { c.at = 'kept'; });
      other.update(account, (o) => { o.n = 1; });
    });
    expect(() => account.transaction(() => {
      cursor.update(account, (c) => { c.at = 'changed'; });
      other.update(account, (o) => { o.n = 2; });
      throw boom;
    })).toThrow(boom);
    expect([cursor.read(account), other.read(account)]).toEqual([{ at: 'kept', seen: [] }, { n: 1 }]);
    // A value the work makes first, then one stored before: the second still has its copy taken.
    const fresh = (await openAccount()).account;
    fresh.transaction(() => other.update(fresh, (o) => { o.n = 1; }));
    expect(() => fresh.transaction(() => {
      cursor.update(fresh, (c) => { c.at = 'made'; });
      other.update(fresh, (o) => { o.n = 3; });
      throw boom;
    })).toThrow(boom);
    expect(cursor.stored(fresh)).toBe(false);
    expect(other.read(fresh)).toEqual({ n: 1 });
  });

  it('an array put back after work that throws is the same array, at its old length', async () => {
    const { account } = await openAccount();
    account.transaction(() => list.update(account, (items) => { items.push('a', 'b'); }));
    const held = list.read(account);
    expect(() => account.transaction(() => {
      list.update(account, (items) => { items.push('c', 'd', 'e'); });
      list.update(account, (items) => { items[0] = 'changed'; });
      throw boom;
    })).toThrow(boom);
    expect(list.read(account)).toBe(held);
    expect(held).toEqual(['a', 'b']);
    expect(held).toHaveLength(2);
  });

  it('removed, is no longer stored, and put back when the work that removed it throws', async () => {
    const { account } = await openAccount();
    account.transaction(() => other.remove(account));
    expect(Object.keys(account.data.state)).toEqual([]);
    // Removing what is not stored does nothing, so work that throws after it has nothing to put back.
    expect(() => account.transaction(() => { other.remove(account); throw boom; })).toThrow(boom);
    expect(Object.keys(account.data.state)).toEqual([]);
    account.transaction(() => other.update(account, (o) => { o.n = 4; }));
    const held = other.read(account);
    expect(() => account.transaction(() => { other.remove(account); throw boom; })).toThrow(boom);
    expect(other.read(account)).toBe(held);
    account.transaction(() => other.remove(account));
    expect([other.stored(account), other.read(account)]).toEqual([false, { n: 0 }]);
  });

  it('is not stored by a read, and not kept when the work that first stored it throws', async () => {
    const { account } = await openAccount();
    expect(cursor.read(account)).toEqual({ at: null, seen: [] });
    expect(cursor.stored(account)).toBe(false);
    expect(() => account.transaction(() => {
      cursor.update(account, (c) => { c.at = 'x'; });
      throw boom;
    })).toThrow(boom);
    expect(cursor.stored(account)).toBe(false);
    expect(Object.keys(account.data.state)).toEqual([]);
  });
});

describe('a state log', () => {
  it('adds at the end and takes from the start, in order, reading nothing past either end', async () => {
    const { account } = await openAccount();
    expect([queue(account).size, queue(account).at(0), queue(account).values()]).toEqual([0, undefined, []]);
    account.transaction(() => {
      expect(queue(account).shift()).toBeUndefined();
      queue(account).push(['a', 'b']);
      queue(account).push([]);
      queue(account).push(['c']);
    });
    expect([queue(account).size, queue(account).at(0), queue(account).at(2), queue(account).at(3), queue(account).at(-1)]).toEqual([3, 'a', 'c', undefined, undefined]);
    account.transaction(() => expect(queue(account).shift()).toBe('a'));
    expect([queue(account).size, queue(account).at(0), queue(account).values()]).toEqual([2, 'b', ['b', 'c']]);
    account.transaction(() => queue(account).replace(['x', 'y', 'z']));
    expect(queue(account).values()).toEqual(['x', 'y', 'z']);
    // Kept as entries by sequence number with its two ends: a push or a shift touches only those.
    expect(account.data.state.ms_queue).toEqual({ head: 3, next: 6, 3: 'x', 4: 'y', 5: 'z' });
    expect(stateProblems({ ms_queue: account.data.state.ms_queue })).toEqual([]);
    expect(stateProblems({ ms_queue: { head: 0, next: 1, 0: 7 } })).toEqual([['ms_queue', '/0', 'must be string']]);
    expect(stateProblems({ ms_queue: { head: 0, next: 1, first: 'x' } })).toEqual([['ms_queue', '', 'must NOT have additional properties']]);
  });

  it('declares the schema of the whole log: two ends that are counts, entries under sequence numbers, nothing else', () => {
    // Declared here, in the test, so its declaration is measured too.
    defineStateLog<string>('ms_declared_log', { type: 'string' });
    const problem = (value: unknown) => stateProblems({ ms_declared_log: value })[0]?.slice(1);
    expect(problem({ head: 2, next: 4, 2: 'a', 3: 'b' })).toBeUndefined();
    expect(problem({})).toBeUndefined();
    expect(problem(['a'])).toEqual(['', 'must be object']);
    expect(problem({ head: -1, next: 0 })).toEqual(['/head', 'must be >= 0']);
    expect(problem({ head: 0, next: 1.5 })).toEqual(['/next', 'must be integer']);
    expect(problem({ next: 1, 0: 5 })).toEqual(['/0', 'must be string']);
    expect(problem({ next: 1, '01': 'a' })).toEqual(['', 'must NOT have additional properties']);
  });

  it('put back after work that throws: every push and shift undone, the same entries in the same places', async () => {
    const { account } = await openAccount();
    account.transaction(() => queue(account).push(['a', 'b']));
    const before = structuredClone(account.data.state.ms_queue);
    expect(() => account.transaction(() => {
      queue(account).shift();
      queue(account).push(['c', 'd']);
      queue(account).replace(['e']);
      throw boom;
    })).toThrow(boom);
    expect(account.data.state.ms_queue).toEqual(before);
    expect(queue(account).values()).toEqual(['a', 'b']);
    // A log the failed work made is not kept either.
    const { account: fresh } = await openAccount();
    expect(() => fresh.transaction(() => { queue(fresh).push(['a']); throw boom; })).toThrow(boom);
    expect(Object.keys(fresh.data.state)).toEqual([]);
  });
});

describe('declaring state', () => {
  it('compiles its schema as it is declared: a schema Ajv cannot compile fails the declaration', () => {
    expect(() => defineStateValue('ms_broken', () => ({}), { type: 'no-such-type' })).toThrow(/type/);
    expect(() => defineStateValue('ms_cursor', () => ({}), { type: 'object' })).toThrow('module state ms_cursor declared twice');
  });
});

describe('at start', () => {
  it('drops the keys an earlier version kept, and leaves alone an account without them, even one replaced since', async () => {
    const { store, account } = await openAccount();
    account.transaction(() => {
      cursor.update(account, (c) => { c.at = 'kept'; });
      (account.data.state as Record<string, unknown>).customer_external_ids = { x: 'cus_1' };
      (account.data.state as Record<string, unknown>).invoice_numbers = { 'INV-1': 'inv_1' };
    });
    retireStateKeys([account]);
    expect(Object.keys(account.data.state)).toEqual(['ms_cursor']);
    const fresh = store.resetAccount(account);
    // The replaced account has no such key: nothing is written to it (a write would be refused).
    expect(() => retireStateKeys([account, fresh])).not.toThrow();
    expect(Object.keys(fresh.data.state)).toEqual([]);
  });

  it('checks stored values against their schemas, union types included, naming account, key and field', async () => {
    const { account } = await openAccount();
    account.transaction(() => {
      cursor.update(account, (c) => { c.at = 'somewhere'; });
      labels(account).set('ok', { text: 'fine' });
    });
    expect(checkStoredState([account])).toEqual([]);
    account.transaction(() => cursor.update(account, (c) => { c.at = null; }));
    expect(checkStoredState([account])).toEqual([]);
    (account.data.state.ms_cursor as { at: unknown }).at = 5;
    (account.data.state.ms_labels as Record<string, unknown>).bad = { text: 7 };
    expect(checkStoredState([account])).toEqual([
      'account p_1:production, state ms_cursor/at: must be string,null',
      'account p_1:production, state ms_labels/bad/text: must be string',
    ]);
    // Keys no module declares are not checked; a whole value of the wrong type is named at its root.
    expect(stateProblems({ undeclared_key: 5, ms_cursor: [] })).toEqual([['ms_cursor', '', 'must be object']]);
    expect(isDeclaredState('ms_cursor')).toBe(true);
    // A map's schema is of each entry: declared here, in the test, so its declaration is measured too.
    const tags = defineStateMap<string>('ms_tags', { type: 'string' });
    account.transaction(() => tags(account).set('ok', 'fine'));
    expect(stateProblems({ ms_tags: account.data.state.ms_tags })).toEqual([]);
    expect(stateProblems({ ms_tags: { ok: 'fine', bad: 7 } })).toEqual([['ms_tags', '/bad', 'must be string']]);
    expect(stateProblems({ ms_tags: ['not', 'a', 'map'] })).toEqual([['ms_tags', '', 'must be object']]);
    expect(isDeclaredState('undeclared_key')).toBe(false);
  });
});
