// Owns the lowdb document, its partition by account, id generation, and group-committed, crash-safe
// writes of the data file (durable() resolves once every change made so far is in the file; the HTTP
// layer waits for it before answering a write). The only module that touches lowdb.
//
// The seam to persistence (src/store/persistence/*): the store reports what changed, never the whole
// document: recordChange(account, collection, change) for each object inserted, updated or deleted (the
// Collection callback, after the unit of work commits), stateChanged(account, key, entry?) for module
// state (src/store/module-state.ts), changed(account) for an account's clock, counters or jobs,
// changed() for partners and keys, and resets. Account.transaction is the unit of work
// (src/store/unit-of-work.ts).
import { hash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Low, Memory, type Adapter } from 'lowdb';
import type { Environment } from '../config.js';
import { AccountClock, type ClockData, type RealNow } from '../clock/clock.js';
import { createRandom, type Random } from '../random.js';
import { Collection, type CollectionChange, type CollectionData } from './collection.js';
import { registerIndexedFields } from './cold-item.js';
import { emptyAccount } from './persistence/format.js';
import { LogFile } from './persistence/log-file.js';
import { UnitOfWork } from './unit-of-work.js';

export interface PartnerRecord {
  id: string;
  name: string;
  /** Requests per second per key; null means the server's default. */
  rate_limit: number | null;
  created_at: string;
}

export interface KeyRecord {
  client_id: string;
  /** SHA-256 of the secret: the secret itself is never stored. */
  secret_sha256: string;
  partner_id: string;
  environment: Environment;
  name: string;
  scopes: string[] | null;
  created_at: string;
  revoked_at: string | null;
}

export interface JobData {
  id: string;
  at: number;
  kind: string;
  payload: Record<string, unknown>;
}

export interface AccountData {
  id: string;
  partner_id: string;
  environment: Environment;
  clock: ClockData;
  counters: Record<string, number>;
  collections: Record<string, CollectionData<unknown>>;
  /** Due work, kept sorted by (at, insertion). */
  jobs: JobData[];
  /**
   * Module state that is not a collection (the webhook queue, external ids...), by key: reached only
   * through the typed accessors of src/store/module-state.ts, which report and undo their changes.
   */
  state: Record<string, unknown>;
}

export interface StoreData {
  version: 1;
  meta: { seed: string; signing_key: string };
  partners: Record<string, PartnerRecord>;
  keys: Record<string, KeyRecord>;
  accounts: Record<string, AccountData>;
}

export class Account {
  readonly clock: AccountClock;
  readonly random: Random;
  private collections = new Map<string, Collection<{ id: string }>>();
  /** The unit of work under way on this account, if any (see transaction). */
  private work: UnitOfWork | undefined;

  constructor(readonly data: AccountData, private readonly store: Store, realNow: RealNow) {
    this.clock = new AccountClock(data.clock, realNow, () => this.changed());
    store.track(data);
    this.random = createRandom(`${store.seed}|${data.id}|random`);
  }

  get id(): string { return this.data.id; }
  get partnerId(): string { return this.data.partner_id; }
  get environment(): Environment { return this.data.environment; }

  collection<T extends { id: string }>(name: string, indexes: ReadonlyArray<keyof T & string> = []): Collection<T> {
    let found = this.collections.get(name) as Collection<T> | undefined;
    if (!found) {
      const collections = this.data.collections;
      const stored = Object.hasOwn(collections, name);
      // A collection not stored yet is kept aside until its first insert: reading writes nothing.
      const data = (stored ? collections[name] : { items: new Map(), order: [] }) as CollectionData<T>;
      const attach = stored ? undefined : () => {
        if (Object.hasOwn(this.data.collections, name)) return;
        this.data.collections[name] = data;
        // Stored by work that is rolled back: it was never there (its inserts are undone too).
        this.work?.undo(() => {
          if (this.data.collections[name] === data) delete this.data.collections[name];
          this.collections.delete(name);
        });
      };
      found = new Collection<T>(name, data, (change) => this.store.recordChange(this, name, change), () => this.work, attach);
      // Indexes are made on first use, but at once over a data file's cold objects: the values of
      // their fields that the load kept for them are then let go (see cold-item.ts).
      for (const field of indexes) {
        if (data.cold) found.indexBy(field);
        else found.declareIndex(field);
      }
      this.collections.set(name, found);
    }
    return found;
  }

  /**
   * Run `work` as one unit of work on this account: everything it writes stays if it returns and goes
   * if it throws (the error is rethrown), and what others observe of its writes (events, the webhook
   * jobs they schedule, the persistence journal) happens after it returns. Work inside work is a
   * savepoint: if it throws, only its own writes are undone; if it returns, its writes join the outer
   * work's and commit (or roll back) with them. Work that returns a promise commits what it wrote
   * before its first await; what it writes after needs its own `transaction` (a unit of work never
   * spans an await: other requests run there).
   */
  transaction<T>(work: (unit: UnitOfWork) => T): T {
    const outer = this.work;
    const unit = new UnitOfWork();
    this.work = unit;
    let result: T;
    try {
      result = work(unit);
    } catch (error) {
      this.work = outer;
      unit.rollback();
      throw error;
    }
    this.work = outer;
    if (outer) {
      outer.absorb(unit);
      return result;
    }
    // Each write reported itself to persistence (objects as the commit runs their effects).
    unit.commit();
    return result;
  }

  /** Run `effect` once the unit of work under way commits (at once when none is). */
  afterCommit(effect: () => void): void {
    if (this.work) this.work.afterCommit(effect);
    else effect();
  }

  /** Undo `inverse` if the unit of work under way is rolled back (nothing to do when none is). */
  undoable(inverse: () => void): void {
    this.work?.undo(inverse);
  }

  /** The same, once per key and unit of work: `make` runs the first time only (see UnitOfWork.undoOnce). */
  undoableOnce(key: string, make: () => () => void): void {
    this.work?.undoOnce(key, make);
  }

  /** A module's state changed: the whole value at `key`, or one entry of the map there (see module-state.ts). */
  stateChanged(key: string, entry?: string): void {
    this.store.stateChanged(this, key, entry);
  }

  /** Next value of a named counter (1, 2, 3, ...), persisted with the account. */
  next(counter: string): number {
    const counters = this.data.counters;
    const had = Object.hasOwn(counters, counter);
    const value = (had ? counters[counter] : 0) + 1;
    counters[counter] = value;
    this.work?.undo(() => {
      if (had) counters[counter] = value - 1;
      else delete counters[counter];
    });
    this.changed();
    return value;
  }

  /** A new id, `prefix_` plus 20 hex characters: deterministic for a seed, account and sequence. */
  newId(prefix: string): string {
    const n = this.next('ids');
    // crypto.hash: the same SHA-256 digest in one call, without a Hash object per id.
    return idText(prefix, hash('sha256', `${this.store.seed}|${this.data.id}|${n}`, 'hex'));
  }

  /** This account's clock, counters, jobs or module state changed. */
  changed(): void {
    this.store.changed(this);
  }

  /** Back to empty: no objects, events, jobs or journal; the clock back to real time. */
  reset(): void {
    const clock = this.data.clock;
    Object.assign(this.data, emptyAccount(this.data.id, this.data.partner_id, this.data.environment), { clock });
    this.clock.reset();
    this.collections.clear();
    this.store.accountReset(this);
    this.store.events.emit('accountReset', this);
  }
}

/** Per prefix, the character codes of an id: the prefix and `_` filled in, then 20 places for the digest's. */
const idCodes = new Map<string, number[]>();

/**
 * `prefix_` and the first 20 characters of `digest`, made as one flat string. A template literal
 * would make a rope of the prefix and a slice of the 64-character digest, which the first map to
 * hash the id copies into a flat string anyway while the rope stays in front of it: 20 bytes more
 * for each stored object and each reference to it, and a copy in the write.
 */
function idText(prefix: string, digest: string): string {
  let codes = idCodes.get(prefix);
  if (!codes) {
    codes = [...`${prefix}_${'0'.repeat(20)}`].map((c) => c.charCodeAt(0));
    idCodes.set(prefix, codes);
  }
  const from = prefix.length + 1;
  for (let i = 0; i < 20; i++) codes[from + i] = digest.charCodeAt(i);
  return String.fromCharCode(...codes);
}

export function accountId(partnerId: string, environment: Environment): string {
  return `${partnerId}:${environment}`;
}

export interface StoreOptions {
  file?: string;
  seed?: string;
  realNow: RealNow;
  /** How long changes no one waits for (background work) are gathered before one file write (ms). */
  flushDelayMs?: number;
  /** The log is compacted into a new snapshot once larger than this and than the snapshot (bytes). */
  compactMinBytes?: number;
}

/** What the store tells its listeners, synchronously, as it happens. */
export interface StoreEvents {
  /** An account was first reached in this process. */
  accountOpened: [Account];
  /** An account went back to empty (Account.reset). */
  accountReset: [Account];
  /** Everything went back to the start state (resetAll), before its steps run. */
  storeReset: [];
  /** A write of the data file failed (it is retried by the next change). */
  writeFailed: [unknown];
}

/** A step of a full reset (the default partner made again, fixtures loaded again...): may be awaited. */
export type ResetStep = () => void | Promise<void>;

export class Store {
  readonly events = new EventEmitter<StoreEvents>();
  private readonly resetSteps: ResetStep[] = [];
  /** A full reset whose steps are still under way: every request waits for it first (see OperationRouter). */
  resetting: Promise<void> | undefined;
  private readonly accounts = new Map<string, Account>();
  private flushTimer: NodeJS.Timeout | undefined;
  /** The file write under way, and how many changes it holds. */
  private writing: Promise<void> | undefined;
  /** Changes noted so far, and how many of them the file holds: the difference is not durable yet. */
  private changes = 0;
  private written = 0;
  /** Number of file writes done, for tests and the benchmark of coalescing. */
  writes = 0;

  /** The log file behind lowdb with --data; absent in memory (then nothing is tracked). */
  private readonly log: LogFile | undefined;

  private constructor(private readonly db: Low<StoreData>, private readonly adapter: Adapter<StoreData>, private readonly options: StoreOptions) {
    this.log = adapter instanceof LogFile ? adapter : undefined;
  }

  static async open(options: StoreOptions): Promise<Store> {
    const initial = freshData(options.seed);
    const adapter = options.file
      ? new LogFile(options.file, { compactMinBytes: options.compactMinBytes, onCompactError: (error) => store.events.emit('writeFailed', error) })
      : new Memory<StoreData>();
    const db = new Low<StoreData>(adapter, initial);
    try {
      if (options.file) await mkdir(dirname(options.file), { recursive: true });
      // An empty file starts fresh; version 1 migrates; another format is refused, never overwritten.
      await db.read();
    } catch (error) {
      throw new Error(`cannot read the data file ${options.file}: ${(error as Error).message}`);
    }
    db.data ??= initial;
    // An explicit seed wins over the one a data file remembers.
    if (options.seed && db.data.meta.seed !== options.seed) {
      db.data.meta.seed = options.seed;
      (adapter as LogFile).journal?.globals();
    }
    const store: Store = new Store(db, adapter, options);
    if (options.file) {
      // Write once at start, so an unwritable location stops the start instead of every later write.
      store.changes = 1;
      try {
        await store.flush();
      } catch (error) {
        throw new Error(`cannot write the data file ${options.file}: ${(error as Error).message}`);
      }
    }
    return store;
  }

  get data(): StoreData {
    return this.db.data;
  }

  get seed(): string {
    return this.db.data.meta.seed;
  }

  get persistent(): boolean {
    return Boolean(this.options.file);
  }

  account(partnerId: string, environment: Environment): Account {
    const id = accountId(partnerId, environment);
    let account = this.accounts.get(id);
    if (!account) {
      // An account not stored yet is kept aside until its first change (see attach): a request that
      // only reads, or is refused, leaves no trace of it.
      const data = this.db.data.accounts[id] ?? emptyAccount(id, partnerId, environment);
      account = new Account(data, this, this.options.realNow);
      this.accounts.set(id, account);
      this.events.emit('accountOpened', account);
    }
    return account;
  }

  /** Accounts that exist in the data (opened or not). */
  *allAccounts(): IterableIterator<Account> {
    for (const data of Object.values(this.db.data.accounts)) yield this.account(data.partner_id, data.environment);
  }

  /** Add a step to every full reset; steps run in the order they were added (see resetAll). */
  onResetAll(step: ResetStep): void {
    this.resetSteps.push(step);
  }

  /**
   * Everything back to the start state, keeping the seed and the signing key; then the reset steps,
   * in order (steps that do not wait run back to back, before anything else can). Resolves once the
   * last step is done; until then `resetting` holds it, and requests wait for it.
   */
  resetAll(): Promise<void> {
    const meta = this.db.data.meta;
    this.db.data = { ...freshData(meta.seed), meta };
    this.accounts.clear();
    this.log?.journal.resetAll();
    this.changed();
    this.events.emit('storeReset');
    const steps = (async () => {
      for (const step of this.resetSteps) {
        const waiting = step();
        if (waiting) await waiting;
      }
    })();
    const done: Promise<void> = steps.finally(() => {
      if (this.resetting === done) this.resetting = undefined;
    });
    this.resetting = done;
    return done;
  }

  /**
   * Note a change: of an account's clock, counters, jobs or module state (with the account), or of
   * partners and keys (without). Changes someone waits for (durable()) are written at once,
   * group-committed: every change made while a write is under way goes into the next one. Changes no
   * one waits for are gathered for `flushDelayMs` first.
   */
  changed(account?: Account): void {
    if (account) this.attach(account);
    if (!this.log) return;
    if (account) this.log.journal.account(account.data);
    else this.log.journal.globals();
    this.changes += 1;
    this.writeLater();
  }

  /** An object of one of the account's collections was inserted, updated or deleted (Collection's callback). */
  recordChange(account: Account, collection: string, change: CollectionChange): void {
    this.attach(account);
    if (!this.log) return;
    this.log.journal.record(account.data, collection, change);
    this.changes += 1;
    this.writeLater();
  }

  /** A module's state changed (Account.stateChanged). */
  stateChanged(account: Account, key: string, entry?: string): void {
    this.attach(account);
    if (!this.log) return;
    if (entry === undefined) this.log.journal.stateKey(account.data, key);
    else this.log.journal.stateEntry(account.data, key, entry);
    this.changes += 1;
    this.writeLater();
  }

  /**
   * Store an account kept aside since it was first reached (Store.account), at its first change.
   * Inside a unit of work that is rolled back, it goes back aside with the rest.
   */
  private attach(account: Account): void {
    const accounts = this.db.data.accounts;
    if (accounts[account.id] === account.data) return;
    // An account object of before a full reset is not stored again.
    if (this.accounts.get(account.id) !== account) return;
    accounts[account.id] = account.data;
    account.undoable(() => {
      if (accounts[account.id] === account.data) delete accounts[account.id];
    });
  }

  /** The account went back to empty (Account.reset). */
  accountReset(account: Account): void {
    if (!this.log) return;
    this.log.journal.accountReset(account.data);
    this.track(account.data);
    this.changed(account);
  }

  /** Let the account's jobs report their own changes (with --data only; module state reports through stateChanged). */
  track(data: AccountData): void {
    this.log?.journal.track(data);
  }

  /** Write a new snapshot now (and wait for it), folding the log into it; e.g. after seeding. */
  async compact(): Promise<void> {
    if (!this.log) return;
    this.log.requestCompaction();
    this.changes += 1;
    await this.flush();
    await this.log.idle();
  }

  private writeLater(): void {
    if (this.flushTimer || this.writing) return;
    this.flushTimer = setTimeout(() => {
      // A failed background write must never crash the process; the next change retries it.
      this.flush().catch((error) => this.events.emit('writeFailed', error));
    }, this.options.flushDelayMs ?? 50);
    this.flushTimer.unref();
  }

  /** True while some change is not in the data file yet. */
  get pending(): boolean {
    return this.changes > this.written;
  }

  /**
   * Resolves once every change made before the call is in the data file (at once without --data,
   * or when nothing is pending); rejects if the write that should hold them fails (they stay pending,
   * and the next write retries them). One write serves every caller waiting at that moment.
   */
  async flush(): Promise<void> {
    if (!this.options.file) return;
    const target = this.changes;
    while (this.written < target) {
      if (this.writing) {
        // A write under way may have begun before some of these changes: wait for it, then look again.
        await this.writing.catch(() => undefined);
        continue;
      }
      await this.writeNow();
    }
  }

  /** The same as flush(): what the HTTP layer awaits before acknowledging a write. */
  durable(): Promise<void> {
    return this.pending ? this.flush() : Promise.resolve();
  }

  /** One write of the whole document; the adapter serialises it before its first await. */
  private writeNow(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const holds = this.changes;
    this.writing = this.adapter.write(this.db.data).then(
      () => {
        this.written = Math.max(this.written, holds);
        this.writes += 1;
        this.writing = undefined;
        // Changes made during the write that no one waits for still need a write.
        if (this.pending) this.writeLater();
      },
      (error: unknown) => {
        this.writing = undefined;
        throw error;
      },
    );
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.log?.close();
  }
}

function freshData(seed?: string): StoreData {
  return {
    version: 1,
    meta: { seed: seed ?? randomBytes(8).toString('hex'), signing_key: randomBytes(32).toString('base64url') },
    partners: {},
    keys: {},
    accounts: {},
  };
}

/** A typed accessor for one collection of every account, with the indexes it needs. */
export function defineCollection<T extends { id: string }>(name: string, indexes: ReadonlyArray<keyof T & string> = []) {
  // Loading a data file keeps these fields' values of the objects it leaves as text (see cold-item.ts).
  registerIndexedFields(name, indexes);
  return (account: Account): Collection<T> => account.collection<T>(name, indexes);
}
