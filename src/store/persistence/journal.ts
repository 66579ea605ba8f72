// Owns the record of what changed since the last append to the log: the seam between the store and
// its persistence. The store tells it only
//   - record(account, collection, change): an object inserted, updated or deleted, or the collection's
//     tombstones cleared (Collection's change callback);
//   - account(data): this account changed (its clock, counters or due work);
//   - stateKey(account, key) / stateEntry(account, key, entry): a module state value changed, whole or
//     one entry of a map (the typed module state of src/store/module-state.ts reports each change);
//   - accountReset(data), resetAll(), meta(), partner(id), key(id).
//
// What is noted goes into the open section of its owner (an account, or the store's globals). A unit
// of work seals its owner's section as it commits: every value is serialised then, inside the request
// that wrote it, so a value the data file cannot hold (a cycle, a nesting deeper than JSON.stringify
// can walk) fails that request alone, with nothing sealed (UnstorableValue), and never a batch that
// other requests wait on. drain() then only joins sealed texts into the batch's log lines: it cannot
// fail, and its cost is the size of what changed, never of what is stored. Within a batch, a later
// change of the same object (or of an account's clock and counters, due work, or a whole state value)
// replaces the text sealed for it before, so a batch writes each at most once.
//
// Objects must change only through Collection insert/update/remove (or a unit of work that reports
// them): an object edited in place with no report is not logged.
import type { AccountData, StoreData } from '../store.js';
import type { CollectionChange } from '../collection.js';
import type { Op } from './format.js';

/** Ops per log line: a big batch (a fixture load, a seed) becomes several lines of one batch. */
const OPS_PER_LINE = 1000;

/** The owner of the store's partners, keys and meta (an account id always holds a colon). */
export const GLOBALS = 'globals';

/** A value the data file cannot hold, found as its unit of work sealed: where it is, and why. */
export class UnstorableValue extends Error {
  constructor(
    /** What holds it: `customers/cus_…`, `state scenarios`… */
    readonly holder: string,
    /** The path of the bad value inside what holds it (`document.rules[0].respond.body`), or '' for the whole. */
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${holder}${path ? ` ${path}` : ''} cannot be stored: ${reason}`);
    this.name = 'UnstorableValue';
  }
}

/** What one owner noted since its last seal. */
interface Section {
  ops: Op[];
  /** Objects already in `ops` (an insert or an update): a later report only points that op at the newest object. */
  covered: Map<string, Op>;
  /** The account's data (absent for the globals), and whether its clock and counters or jobs changed. */
  data?: AccountData;
  touched: boolean;
  jobs: boolean;
  /** State keys to write whole, and map entries to write one by one. */
  whole: Set<string>;
  entries: Map<string, Set<string>>;
  /** Globals: meta, and partners and keys by id. */
  meta: boolean;
  partners: Set<string>;
  keys: Set<string>;
}

/** The raw array behind each jobs tracking proxy, so serialising never goes through the traps. */
const raw = new WeakMap<object, object>();
/**
 * The ids of the jobs last written of each account's jobs array (by its raw array): a seal then
 * writes the jobs added and removed since ('ja', 'jr'), not the whole list, whose length grows with
 * the account's objects (an invoice's due date, a payment's settlement).
 */
const writtenJobs = new WeakMap<object, Set<string>>();

/** Jobs arrays known to be tracked (a new array assigned to `jobs` is not, and is written whole). */
const trackedJobs = new WeakSet<object>();

export function rawOf<T>(value: T): T {
  return (value && typeof value === 'object' ? (raw.get(value) as T | undefined) : undefined) ?? value;
}

function newSection(data?: AccountData): Section {
  return { ops: [], covered: new Map(), data, touched: false, jobs: false, whole: new Set(), entries: new Map(), meta: false, partners: new Set(), keys: new Set() };
}

export class Journal {
  private sections = new Map<string, Section>();
  /** Sealed op texts since the last drain, in the order their units committed. */
  private texts: string[] = [];
  /**
   * Per owner, where the text of each value sealed in this batch is, so a later change replaces it:
   * `o <collection> <id>` for objects, `h`, `j`, `s <key>` for an account's clock and counters, jobs,
   * whole state values. Dropped for an owner by its reset, for all by a reset of everything.
   */
  private sealedAt = new Map<string, Map<string, number>>();
  /** Sequence number of the last batch drained. */
  seq = 0;

  /** Nothing noted, sealed or not. */
  get empty(): boolean {
    return !this.texts.length && !this.sections.size;
  }

  private section(owner: string, data?: AccountData): Section {
    let section = this.sections.get(owner);
    if (!section) this.sections.set(owner, (section = newSection(data)));
    else if (data) section.data = data;
    return section;
  }

  record(account: AccountData, collection: string, change: CollectionChange): void {
    const section = this.section(account.id, account);
    const a = account.id;
    switch (change.kind) {
      case 'insert':
      case 'update': {
        const key = `${collection}\u0000${change.item.id}`;
        const queued = section.covered.get(key) as ['i' | 'u', string, string, { id: string }] | undefined;
        if (queued) {
          queued[3] = change.item;
          break;
        }
        const op: Op = [change.kind === 'insert' ? 'i' : 'u', a, collection, change.item];
        section.covered.set(key, op);
        section.ops.push(op);
        break;
      }
      case 'remove':
        section.covered.delete(`${collection}\u0000${change.id}`);
        section.ops.push(['d', a, collection, change.id]);
        break;
      case 'trim':
        section.ops.push(['trim', a, collection, change.base]);
        break;
      case 'compact':
        // The order is copied now: later inserts must not appear in it.
        section.ops.push(['compact', a, collection, change.epoch, [...change.order]]);
        break;
    }
    section.touched = true;
  }

  /** The account's clock, counters or jobs changed. */
  account(data: AccountData): void {
    this.section(data.id, data).touched = true;
  }

  stateKey(data: AccountData, key: string): void {
    const section = this.section(data.id, data);
    section.touched = true;
    section.whole.add(key);
    section.entries.delete(key);
  }

  stateEntry(data: AccountData, key: string, entry: string): void {
    const section = this.section(data.id, data);
    section.touched = true;
    if (section.whole.has(key)) return;
    let set = section.entries.get(key);
    if (!set) section.entries.set(key, (set = new Set()));
    set.add(entry);
  }

  /**
   * The account's data was replaced by `data` (empty after a reset, a snapshot's content after a
   * restore): sealed at once, after what it had noted. The content follows the 'r' as a replay must
   * build it: each collection's objects as inserts in their order, then its order as it is (with its
   * tombstones, base and epoch) when the inserts alone would not make it.
   */
  accountReset(data: AccountData): void {
    this.sections.delete(data.id);
    const section = this.section(data.id, data);
    section.ops.push(['r', data.id]);
    for (const [name, c] of Object.entries(data.collections)) {
      let live = 0;
      const items = c.items as Map<string, { id: string } | number>;
      for (const id of c.order) {
        const item = items.get(id);
        if (item === undefined) continue;
        // A replacement's objects are made for it (never cold numbers: nothing loaded them from a file).
        if (typeof item === 'number') throw new Error(`account ${data.id} replaced with a cold object in ${name}`);
        section.ops.push(['i', data.id, name, item]);
        live += 1;
      }
      if (live !== c.order.length || c.base !== undefined || c.epoch !== undefined) section.ops.push(['o', data.id, name, [...c.order], c.base ?? null, c.epoch ?? null]);
    }
    section.touched = true;
    section.jobs = true;
    for (const key of Object.keys(data.state)) section.whole.add(key);
  }

  /** Everything back to the start: what was noted or sealed before is moot (the globals follow). */
  resetAll(): void {
    this.sections.clear();
    this.sealedAt.clear();
    this.texts = [JSON.stringify(['R'])];
    const globals = this.section(GLOBALS);
    globals.meta = true;
  }

  meta(): void {
    this.section(GLOBALS).meta = true;
  }

  partner(id: string): void {
    this.section(GLOBALS).partners.add(id);
  }

  key(clientId: string): void {
    this.section(GLOBALS).keys.add(clientId);
  }

  /** Make `data.jobs` report its own changes (module state reports through stateKey/stateEntry). */
  track(data: AccountData): void {
    if (trackedJobs.has(data.jobs)) return;
    const target = data.jobs;
    const mark = () => {
      const section = this.section(data.id, data);
      section.touched = true;
      section.jobs = true;
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
   * Serialise what `owner` noted since its last seal, reading every value now. All or nothing: when a
   * value cannot be serialised, UnstorableValue is thrown and nothing is sealed (the section stays
   * for discard()).
   */
  seal(store: StoreData, owner: string): void {
    const section = this.sections.get(owner);
    if (!section) return;
    const sealed = new Sealing(this.sealedAt.get(owner), this.texts.length, this.texts);
    /** The jobs this seal writes, kept as written once it counts. */
    let jobsWritten: [object, Set<string>] | undefined;
    for (const op of section.ops) {
      switch (op[0]) {
        case 'i':
        case 'u':
          sealed.put(op, `${op[2]}/${op[3].id}`, `o ${op[2]} ${op[3].id}`);
          break;
        case 'r':
          sealed.forgetAll();
          sealed.put(op, 'reset');
          break;
        case 'd':
          sealed.put(op, `${op[2]}/${op[3]}`, undefined, `o ${op[2]} ${op[3]}`);
          break;
        default:
          // trim, compact (of a collection: its name), 'R' (a reset of everything).
          sealed.put(op, typeof op[2] === 'string' ? op[2] : op[0]);
      }
    }
    const data = section.data;
    const current = data && store.accounts[data.id];
    // An account not stored (kept aside, or gone with a reset of everything) has nothing to write.
    if (current && section.touched) {
      const a = current.id;
      sealed.put(['h', a, current.clock, current.counters], 'clock and counters', 'h');
      const jobs = rawOf(current.jobs);
      const written = trackedJobs.has(current.jobs) ? writtenJobs.get(jobs) : undefined;
      if (!written) {
        sealed.put(['j', a, jobs], 'jobs', 'j');
        jobsWritten = [jobs, new Set(jobs.map((job) => job.id))];
      } else if (section.jobs) {
        const ids = new Set<string>();
        // In the list's order: replayed one by one, each lands after the jobs due at or before it, as here.
        for (const job of jobs) {
          ids.add(job.id);
          if (!written.has(job.id)) sealed.put(['ja', a, job], `job ${job.id}`, undefined, 'j');
        }
        for (const id of written) if (!ids.has(id)) sealed.put(['jr', a, id], `job ${id}`, undefined, 'j');
        jobsWritten = [jobs, ids];
      }
      const state = rawOf(current.state);
      for (const key of section.whole) {
        if (Object.hasOwn(state, key)) sealed.put(['s', a, key, rawOf(state[key])], `state ${key}`, `s ${key}`);
        else sealed.put(['sd', a, key], `state ${key}`, undefined, `s ${key}`);
      }
      for (const [key, names] of section.entries) {
        const map = rawOf(state[key]) as Record<string, unknown> | undefined;
        if (!map || typeof map !== 'object') {
          sealed.put(['sd', a, key], `state ${key}`, undefined, `s ${key}`);
          continue;
        }
        for (const name of names) {
          const op: Op = Object.hasOwn(map, name) ? ['ss', a, key, name, map[name]] : ['sx', a, key, name];
          // An entry written after the whole value: the whole value's text must not move past it.
          sealed.put(op, `state ${key} ${name}`, undefined, `s ${key}`);
        }
      }
    }
    if (owner === GLOBALS) {
      if (section.meta) sealed.put(['m', store.meta], 'meta');
      for (const id of section.partners) sealed.put(Object.hasOwn(store.partners, id) ? ['p', id, store.partners[id]] : ['px', id], `partner ${id}`);
      for (const id of section.keys) sealed.put(Object.hasOwn(store.keys, id) ? ['k', id, store.keys[id]] : ['kx', id], `key ${id}`);
    }
    // Everything serialised: now it counts.
    this.sections.delete(owner);
    sealed.apply(this.texts);
    if (jobsWritten) writtenJobs.set(...jobsWritten);
    this.sealedAt.set(owner, sealed.positions);
  }

  /** Drop what `owner` noted since its last seal (its unit of work was rolled back). */
  discard(owner: string): void {
    this.sections.delete(owner);
  }

  /**
   * The batch of everything sealed since the last drain, as log lines (empty when nothing was). What
   * is still open (maintenance outside a unit of work: tombstones cleared) is sealed first.
   */
  drain(store: StoreData): string {
    for (const owner of [...this.sections.keys()]) this.seal(store, owner);
    const texts = this.texts;
    if (!texts.length) return '';
    this.texts = [];
    this.sealedAt.clear();
    const seq = ++this.seq;
    let text = '';
    for (let i = 0; i < texts.length; i += OPS_PER_LINE) {
      const last = i + OPS_PER_LINE >= texts.length ? 1 : 0;
      text += `[${seq},${last},${texts.slice(i, i + OPS_PER_LINE).join(',')}]\n`;
    }
    return text;
  }

  /** Forget everything noted and sealed (a snapshot holds it all, or the data was read again from the file). */
  clear(): void {
    this.sections.clear();
    this.texts = [];
    this.sealedAt.clear();
  }
}

/** One seal's texts, staged: nothing reaches the journal until every value of the section serialised. */
class Sealing {
  readonly positions: Map<string, number>;
  private readonly added: string[] = [];
  private readonly replaced: Array<[number, string]> = [];

  constructor(positions: Map<string, number> | undefined, private readonly base: number, private readonly texts: readonly string[]) {
    this.positions = new Map(positions);
  }

  /**
   * Serialise `op` (naming `holder` if it cannot be): in place of the text sealed before under `key`,
   * if any, else at the end. `forget`: a key whose earlier text must no longer be replaced.
   */
  put(op: Op, holder: string, key?: string, forget?: string): void {
    let text = serialise(op, holder);
    if (forget !== undefined) this.positions.delete(forget);
    const at = key === undefined ? undefined : this.positions.get(key);
    if (at !== undefined) {
      // An object inserted earlier in this batch and updated since stays an insert, with its newer
      // value: an update in its place would leave its id out of the order when the log is replayed.
      if (op[0] === 'u' && (at >= this.base ? this.added[at - this.base] : this.texts[at]).startsWith('["i",')) text = `["i"${text.slice(4)}`;
      if (at >= this.base) this.added[at - this.base] = text;
      else this.replaced.push([at, text]);
      return;
    }
    if (key !== undefined) this.positions.set(key, this.base + this.added.length);
    this.added.push(text);
  }

  /** An account reset: nothing sealed before it may be replaced by what comes after. */
  forgetAll(): void {
    this.positions.clear();
  }

  apply(texts: string[]): void {
    for (const [at, text] of this.replaced) texts[at] = text;
    for (const text of this.added) texts.push(text);
  }
}

/** The op as JSON, or UnstorableValue naming where the value that cannot be written is. */
function serialise(op: Op, holder: string): string {
  try {
    return JSON.stringify(op);
  } catch (error) {
    const value = op.at(-1);
    const found = findUnstorable(value);
    throw new UnstorableValue(holder, found?.path ?? '', found?.reason ?? (error as Error).message);
  }
}

/**
 * The first place in `value` that JSON cannot hold: a reference back to an enclosing value (a cycle)
 * or a BigInt; else, when none is found, the deepest place (JSON.stringify's recursion runs out some
 * thousands of levels down). Walked with an explicit stack: the value may be deeper than the call stack.
 */
export function findUnstorable(value: unknown): { path: string; reason: string } | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number; exit?: object }> = [{ value, path: '', depth: 0 }];
  const open = new Set<object>();
  let deepest = { path: '', depth: 0 };
  while (stack.length) {
    const frame = stack.pop()!;
    if (frame.exit) {
      open.delete(frame.exit);
      continue;
    }
    const v = frame.value;
    if (typeof v === 'bigint') return { path: frame.path, reason: 'a BigInt has no JSON form' };
    if (!v || typeof v !== 'object') continue;
    if (open.has(v)) return { path: frame.path, reason: 'it refers to a value that holds it (a cycle)' };
    if (frame.depth > deepest.depth) deepest = { path: frame.path, depth: frame.depth };
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') continue;
    open.add(v);
    stack.push({ value: undefined, path: frame.path, depth: frame.depth, exit: v });
    const entries: Array<[string, unknown]> = Array.isArray(v) ? v.map((item, i) => [`[${i}]`, item]) : Object.entries(v).map(([k, item]) => [frame.path ? `.${k}` : k, item]);
    for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i][1], path: `${frame.path}${entries[i][0]}`, depth: frame.depth + 1 });
  }
  return deepest.depth ? { path: deepest.path, reason: `it is nested ${deepest.depth} levels deep, more than the data file can hold` } : undefined;
}
