// Owns the record of what changed since the last append to the log: the seam between the store and
// its persistence. The store tells it only
//   - record(account, collection, change): an object inserted, updated or deleted, or the collection's
//     tombstones cleared (Collection's change callback);
//   - account(data): this account changed (its clock, counters, due work or module state);
//   - stateKey(account, key) / stateEntry(account, key, entry): a module state value changed, whole or
//     one entry of a map (the typed module state of src/store/module-state.ts reports each change);
//   - accountReset(data), resetAll(), globals().
// drain() turns that into one batch of log lines, reading every value at that moment, so the cost of an
// append is the size of what changed, never of what is stored. Objects must change only through
// Collection insert/update/remove (or a unit of work that reports them): an object edited in place
// with no report is not logged.
import type { AccountData, StoreData } from '../store.js';
import type { CollectionChange } from '../collection.js';
import type { Op } from './format.js';

/** Ops per log line: a big batch (a fixture load, a seed) becomes several lines of one batch. */
const OPS_PER_LINE = 1000;

interface Touched {
  data: AccountData;
  /** State keys to write whole, and map entries to write one by one. */
  whole: Set<string>;
  entries: Map<string, Set<string>>;
}

/** The raw array behind each jobs tracking proxy, so serialising never goes through the traps. */
const raw = new WeakMap<object, object>();
/** Jobs arrays known to be tracked (a new array assigned to `jobs` is not, and is written whole). */
const trackedJobs = new WeakSet<object>();

export function rawOf<T>(value: T): T {
  return (value && typeof value === 'object' ? (raw.get(value) as T | undefined) : undefined) ?? value;
}


export class Journal {
  private ops: Op[] = [];
  private touched = new Map<string, Touched>();
  /**
   * Objects already in this batch (an insert or an update), with their op: a later update only points
   * that op at the newest object (the same one when edited in place; a new one from a copy-on-write).
   */
  private covered = new Map<string, Op>();
  private globalsDirty = false;
  private jobsDirty = new Set<string>();
  /** Sequence number of the last batch drained. */
  seq = 0;

  get empty(): boolean {
    return !this.ops.length && !this.touched.size && !this.globalsDirty;
  }

  record(account: AccountData, collection: string, change: CollectionChange): void {
    const a = account.id;
    switch (change.kind) {
      case 'insert':
      case 'update': {
        const key = `${a}\u0000${collection}\u0000${change.item.id}`;
        const queued = this.covered.get(key) as ['i' | 'u', string, string, { id: string }] | undefined;
        if (queued) {
          queued[3] = change.item;
          break;
        }
        const op: Op = [change.kind === 'insert' ? 'i' : 'u', a, collection, change.item];
        this.covered.set(key, op);
        this.ops.push(op);
        break;
      }
      case 'remove':
        this.covered.delete(`${a}\u0000${collection}\u0000${change.id}`);
        this.ops.push(['d', a, collection, change.id]);
        break;
      case 'trim':
        this.ops.push(['trim', a, collection, change.base]);
        break;
      case 'compact':
        // The order is copied now: later inserts must not appear in it.
        this.ops.push(['compact', a, collection, change.epoch, [...change.order]]);
        break;
    }
    this.account(account);
  }

  account(data: AccountData): Touched {
    let touched = this.touched.get(data.id);
    if (!touched || touched.data !== data) {
      touched = { data, whole: touched?.whole ?? new Set(), entries: touched?.entries ?? new Map<string, Set<string>>() };
      this.touched.set(data.id, touched);
    }
    return touched;
  }

  stateKey(data: AccountData, key: string): void {
    const touched = this.account(data);
    touched.whole.add(key);
    touched.entries.delete(key);
  }

  stateEntry(data: AccountData, key: string, entry: string): void {
    const touched = this.account(data);
    if (touched.whole.has(key)) return;
    let set = touched.entries.get(key);
    if (!set) touched.entries.set(key, (set = new Set()));
    set.add(entry);
  }

  accountReset(data: AccountData): void {
    this.ops.push(['r', data.id]);
    this.touched.set(data.id, { data, whole: new Set(Object.keys(data.state)), entries: new Map() });
    this.jobsDirty.add(data.id);
  }

  resetAll(): void {
    this.ops = [['R']];
    this.touched.clear();
    this.covered.clear();
    this.globalsDirty = true;
  }

  globals(): void {
    this.globalsDirty = true;
  }

  /** Make `data.jobs` report its own changes (module state reports through stateKey/stateEntry). */
  track(data: AccountData): void {
    this.trackJobs(data);
  }

  private trackJobs(data: AccountData): void {
    if (trackedJobs.has(data.jobs)) return;
    const target = data.jobs;
    const mark = () => {
      this.jobsDirty.add(data.id);
      this.account(data);
    };
    const proxy = new Proxy(target, {
      set(t, p, v) { Reflect.set(t, p, v); mark(); return true; },
      deleteProperty(t, p) { Reflect.deleteProperty(t, p); mark(); return true; },
    });
    raw.set(proxy, target);
    trackedJobs.add(proxy);
    data.jobs = proxy;
  }

  /**
   * The batch of everything noted since the last drain, as log lines (empty when nothing changed).
   * Values are read now, synchronously: a change made after this belongs to the next batch.
   */
  drain(store: StoreData): string {
    if (this.empty) return '';
    const ops = this.ops;
    for (const { data, whole, entries } of this.touched.values()) {
      // An account replaced since (a reset of everything) is written from the document's current one.
      const current = store.accounts[data.id];
      if (!current) continue;
      ops.push(['h', data.id, current.clock, current.counters]);
      if (this.jobsDirty.has(data.id) || !trackedJobs.has(current.jobs)) {
        ops.push(['j', data.id, rawOf(current.jobs)]);
        this.trackJobs(current);
      }
      const state = rawOf(current.state);
      for (const key of whole) ops.push(Object.hasOwn(state, key) ? ['s', data.id, key, rawOf(state[key])] : ['sd', data.id, key]);
      for (const [key, names] of entries) {
        const map = rawOf(state[key]) as Record<string, unknown> | undefined;
        if (!map || typeof map !== 'object') {
          ops.push(['sd', data.id, key]);
          continue;
        }
        for (const name of names) ops.push(Object.hasOwn(map, name) ? ['ss', data.id, key, name, map[name]] : ['sx', data.id, key, name]);
      }
    }
    if (this.globalsDirty) ops.push(['g', store.meta, store.partners, store.keys]);
    this.ops = [];
    this.touched.clear();
    this.covered.clear();
    this.jobsDirty.clear();
    this.globalsDirty = false;
    const seq = ++this.seq;
    let text = '';
    for (let i = 0; i < ops.length; i += OPS_PER_LINE) {
      const last = i + OPS_PER_LINE >= ops.length ? 1 : 0;
      text += `${JSON.stringify([seq, last, ...ops.slice(i, i + OPS_PER_LINE)])}\n`;
    }
    return text;
  }

  /** Forget what was noted (a snapshot holds it all). */
  clear(): void {
    this.ops = [];
    this.touched.clear();
    this.covered.clear();
    this.jobsDirty.clear();
    this.globalsDirty = false;
  }
}
