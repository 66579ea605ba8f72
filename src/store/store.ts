// Owns the lowdb document, its partition by account, id generation, and group-committed, crash-safe
// writes of the data file (durable() resolves once every change made so far is in the file; the HTTP
// layer waits for it before answering a write). The only module that touches lowdb.
//
// Its walls (an invariant kept where it cannot be forgotten, not by convention):
//   - Every write happens inside a unit of work (Account.transaction, Store.globalTransaction): a
//     write outside one throws. Work that awaits writes in steps, each its own unit of work.
//   - A unit of work is bound to the account as it was when the work began: a reset (or a restore)
//     replaces the Account object and retires the old one, and a write to a retired account throws
//     409 account_replaced, so nothing written after a reset lands in the account it replaced.
//   - Memory stays equal to the data file. A unit of work's changes are serialised as it commits (a
//     value that cannot be stored fails that request with 400); when a write of the file fails, every
//     change not yet in the file is rolled back by reading the file again (as PostgreSQL recovers from
//     a failed fsync), the requests that waited on them answer 503 storage_unavailable, and writes are
//     refused with the same 503 until a probe finds the file writable again. Reads go on meanwhile.
//
// The seam to persistence (src/store/persistence/*): the store reports what changed, never the whole
// document: recordChange(account, collection, change) for each object inserted, updated or deleted (the
// Collection callback, as the unit of work prepares to commit), stateChanged(account, key, entry?) for
// module state (src/store/module-state.ts), changed(account) for an account's clock, counters or jobs,
// the partner and key writes of globalTransaction, and resets.
import { hash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Low, Memory, type Adapter } from 'lowdb';
import type { Environment } from '../config.js';
import { ApiError, Errors, invalidFields } from '../errors.js';
import { AccountClock, type ClockData, type RealNow } from '../clock/clock.js';
import { createRandom, type Random } from '../random.js';
import { Collection, type CollectionChange, type CollectionData } from './collection.js';
import { registerIndexedFields } from './cold-item.js';
import { emptyAccount } from './persistence/format.js';
import { LogFile } from './persistence/log-file.js';
import { GLOBALS, UnstorableValue } from './persistence/journal.js';
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

/** Why an Account object takes no more writes: a reset or restore replaced it, or memory was read again from the file. */
export type Retirement = 'reset' | 'storage';

/** The answer to work that tries to write to a retired account. */
export function retiredError(why: Retirement): ApiError {
  return why === 'storage' ? storageError() : new ApiError(Errors.accountReplaced);
}

export class Account {
  readonly clock: AccountClock;
  readonly random: Random;
  /** Set once a reset replaced this account, or a failed write of the data file rolled memory back: it takes no more writes. */
  retired: Retirement | undefined;
  private collections = new Map<string, Collection<{ id: string }>>();
  /** The unit of work under way on this account, if any (see transaction). */
  private work: UnitOfWork | undefined;
  /** True while a unit of work's inverses run: they put data back and are not writes of their own. */
  private rollingBack = false;

  constructor(readonly data: AccountData, private readonly store: Store, realNow: RealNow) {
    this.clock = new AccountClock(data.clock, realNow, (previous) => {
      const work = this.openWork();
      work.undo(() => { this.data.clock.offset_ms = previous; });
      this.store.changed(this);
    });
    store.track(data);
    this.random = createRandom(`${store.seed}|${data.id}|random`);
  }

  get id(): string { return this.data.id; }
  get partnerId(): string { return this.data.partner_id; }
  get environment(): Environment { return this.data.environment; }

  /** Throw what work on a retired account gets (409 account_replaced, or 503 after a failed write). */
  assertCurrent(): void {
    if (this.retired) throw retiredError(this.retired);
  }

  /**
   * The wall every write passes first: the unit of work under way, or a throw when there is none (a
   * bug: the write would be neither undone nor bound to this account), when the account was replaced
   * (409), or when the data file cannot be written (503).
   */
  openWork(): UnitOfWork {
    const work = this.work;
    if (!work) throw new Error(`a write to account ${this.id} outside a unit of work (wrap it in account.transaction)`);
    if (this.retired) throw retiredError(this.retired);
    this.store.assertWritable();
    return work;
  }

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
      found = new Collection<T>(name, data, (change) => this.store.recordChange(this, name, change), () => this.openWork(), attach);
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
   * spans an await: other requests run there), and a write there outside one throws.
   *
   * With --data the outermost unit serialises its changes as it commits: a value the data file cannot
   * hold rolls the work back and answers 400 naming where it is.
   */
  transaction<T>(work: (unit: UnitOfWork) => T): T {
    const outer = this.work;
    const unit = new UnitOfWork();
    this.work = unit;
    let result: T;
    try {
      result = work(unit);
      if (!outer) {
        unit.prepare();
        this.store.seal(this.id);
      }
    } catch (error) {
      this.rollBack(unit, outer);
      throw error instanceof UnstorableValue ? unstorableError(error) : error;
    }
    this.work = outer;
    if (outer) {
      outer.absorb(unit);
      return result;
    }
    try {
      unit.commit();
    } finally {
      // What the effects wrote outside the unit (tombstones cleared) is sealed with the commit.
      this.store.seal(this.id);
    }
    return result;
  }

  private rollBack(unit: UnitOfWork, outer: UnitOfWork | undefined): void {
    this.work = outer;
    this.rollingBack = true;
    try {
      unit.rollback();
    } finally {
      this.rollingBack = false;
    }
    // The outermost unit's noted changes go with it (a savepoint's stay noted: the values it put back are written).
    if (!outer) this.store.discard(this.id);
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

  /** A module's state is about to change: the wall's check, before anything is written (see openWork). */
  writing(): void {
    if (!this.rollingBack) this.openWork();
  }

  /** A module's state changed: the whole value at `key`, or one entry of the map there (see module-state.ts). */
  stateChanged(key: string, entry?: string): void {
    if (this.rollingBack) return;
    this.openWork();
    this.store.stateChanged(this, key, entry);
  }

  /** Next value of a named counter (1, 2, 3, ...), persisted with the account. */
  next(counter: string): number {
    const work = this.openWork();
    const counters = this.data.counters;
    const had = Object.hasOwn(counters, counter);
    const value = (had ? counters[counter] : 0) + 1;
    counters[counter] = value;
    work.undo(() => {
      if (had) counters[counter] = value - 1;
      else delete counters[counter];
    });
    this.store.changed(this);
    return value;
  }

  /** A new id, `prefix_` plus 20 hex characters: deterministic for a seed, account and sequence. */
  newId(prefix: string): string {
    const n = this.next('ids');
    // crypto.hash: the same SHA-256 digest in one call, without a Hash object per id. Not a cheaper
    // permutation of the counter (some 2.5 us a POST less): seeded ids are pinned across versions
    // (test/customers.test.ts), since a partner's tests may hold them.
    return idText(prefix, hash('sha256', `${this.store.seed}|${this.data.id}|${n}`, 'hex'));
  }

  /** This account's clock, counters or jobs changed (inside a unit of work). */
  changed(): void {
    if (this.rollingBack) return;
    this.openWork();
    this.store.changed(this);
  }

  /**
   * Back to empty: no objects, events, jobs or journal; the clock back to real time. This Account is
   * retired and a new one takes its place (answered): work still under way on this one writes nothing.
   */
  reset(): Account {
    return this.store.resetAccount(this);
  }
}

/** 400 naming where a value that the data file cannot hold is. */
function unstorableError(error: UnstorableValue): ApiError {
  const field = error.path || error.holder;
  return invalidFields({ [field]: `cannot be stored: ${error.reason}` }, `A value cannot be stored (${error.holder}): ${error.reason}. Nothing was changed.`);
}

/** Seconds a client waits before retrying a write the data file refused (the probe's period). */
let retryAfterSeconds = 1;

/** 503 storage_unavailable with Retry-After (the probe's period); `message` for a file other than the data file. */
export function storageError(message?: string): ApiError {
  return new ApiError(Errors.storageUnavailable, { message, headers: { 'Retry-After': String(retryAfterSeconds) } });
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
  /** While the data file cannot be written, how often a probe tries it again (ms; the Retry-After of the 503s). */
  storageRetryMs?: number;
}

/** What the store tells its listeners, synchronously, as it happens. */
export interface StoreEvents {
  /** An account was first reached in this process. */
  accountOpened: [Account];
  /** An account's data was replaced, by empty data (a reset) or a snapshot's (a restore): the new Account, and the one it replaced (retired). */
  accountReset: [Account, Account];
  /** Everything went back to the start state (resetAll), before its steps run. */
  storeReset: [];
  /** A write of the data file failed: writes are refused until it can be written again. */
  writeFailed: [unknown];
  /** Memory was read again from the data file after a failed write (every Account object before it is retired). */
  storeReloaded: [];
  /** The data file can be written again (a probe succeeded). */
  writeResumed: [];
}

/** A step of a full reset (the default partner made again, fixtures loaded again...): may be awaited. */
export type ResetStep = () => void | Promise<void>;

/** Why the data file cannot be written, for /_sandbox/health and the log. */
export interface Degraded {
  reason: string;
  since: string;
}

export class Store {
  readonly events = new EventEmitter<StoreEvents>();
  private readonly resetSteps: ResetStep[] = [];
  /** A full reset whose steps are still under way: every request waits for it first (see gate). */
  resetting: Promise<void> | undefined;
  /** Memory being read again from the data file after a failed write: every request waits for it first. */
  private reloading: Promise<void> | undefined;
  /** Set while the data file cannot be written: every write answers 503 storage_unavailable. */
  degraded: Degraded | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private readonly accounts = new Map<string, Account>();
  private flushTimer: NodeJS.Timeout | undefined;
  /** The file write under way, and how many changes it holds. */
  private writing: Promise<void> | undefined;
  /** Changes noted so far, and how many of them the file holds: the difference is not durable yet. */
  private changes = 0;
  private written = 0;
  /** Bumped when a failed write rolls memory back: a flush begun before it can never be satisfied. */
  private epoch = 0;
  /** The unit of work under way on partners, keys and meta, if any (see globalTransaction). */
  private globalWork: UnitOfWork | undefined;
  /** Number of file writes done, for tests and the benchmark of coalescing. */
  writes = 0;
  /**
   * Changes noted, with --data or not (objects, module state, clocks and counters, partners and keys,
   * resets): the fuzz compares it around a refused request, which must change nothing.
   */
  changeCount = 0;

  /** The log file behind lowdb with --data; absent in memory (then nothing is tracked). */
  private readonly log: LogFile | undefined;

  private constructor(private readonly db: Low<StoreData>, private readonly adapter: Adapter<StoreData>, private readonly options: StoreOptions) {
    this.log = adapter instanceof LogFile ? adapter : undefined;
    retryAfterSeconds = Math.max(1, Math.ceil((options.storageRetryMs ?? DEFAULT_STORAGE_RETRY_MS) / 1000));
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
    const store: Store = new Store(db, adapter, options);
    // An explicit seed wins over the one a data file remembers.
    if (options.seed && db.data.meta.seed !== options.seed) store.globalTransaction(() => store.setSeed(options.seed as string));
    if (options.file) {
      // Write once at start, so an unwritable location stops the start instead of every later write.
      store.changes += 1;
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

  /** What every request waits for before it starts: a full reset's steps, or memory read again after a failed write. */
  get gate(): Promise<void> | undefined {
    return this.resetting ?? this.reloading;
  }

  /** The wall's storage check: 503 storage_unavailable while the data file cannot be written. */
  assertWritable(): void {
    if (this.degraded) throw storageError();
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
   * last step is done; until then `resetting` holds it, and requests wait for it. Every Account
   * before it is retired: work still under way on one writes nothing.
   */
  resetAll(): Promise<void> {
    this.assertWritable();
    const meta = this.db.data.meta;
    for (const account of this.accounts.values()) account.retired = 'reset';
    this.changeCount += 1;
    this.db.data = { ...freshData(meta.seed), meta };
    this.accounts.clear();
    if (this.log) {
      this.log.journal.resetAll();
      this.seal(GLOBALS);
      this.noted();
    }
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
   * An account back to empty: a new Account with empty data takes its place (answered), and the old
   * one is retired, so work still under way on it (a request waiting on a scenario delay, an upload)
   * writes nothing there, and nothing of it reaches the data file.
   */
  resetAccount(old: Account): Account {
    return this.replaceAccount(old);
  }

  /**
   * The account's data replaced by `data` (a snapshot's content, made for this account: see
   * src/snapshots/), or by empty data when none is given (a reset): one unit of work. A new Account
   * takes the old one's place (answered) and the old one is retired, as for a reset. With --data the
   * replacement is logged and sealed at once (a reset, then the content as inserts, clock and
   * counters, jobs and state), in one batch a replay applies whole or not at all. Listeners hear
   * 'accountReset' and take up what derives from the data (webhook queues, history ledgers).
   */
  replaceAccount(old: Account, data?: AccountData): Account {
    old.assertCurrent();
    this.assertWritable();
    if (data && (data.id !== old.id || data.partner_id !== old.partnerId || data.environment !== old.environment)) {
      throw new Error(`replacing account ${old.id} with the data of ${data.id}`);
    }
    const replacement = data ?? emptyAccount(old.id, old.partnerId, old.environment);
    const fresh = new Account(replacement, this, this.options.realNow);
    const accounts = this.db.data.accounts;
    const stored = Object.hasOwn(accounts, old.id);
    // An account kept aside (never stored) has nothing to empty in the file; a restore stores it.
    if (stored || data) {
      const previous = accounts[old.id];
      accounts[old.id] = replacement;
      if (this.log) {
        this.log.journal.accountReset(replacement);
        try {
          this.seal(old.id);
        } catch (error) {
          // Nothing changed: the old data stays in place, and the old account current.
          this.discard(old.id);
          if (stored) accounts[old.id] = previous;
          else delete accounts[old.id];
          throw error instanceof UnstorableValue ? unstorableError(error) : error;
        }
        this.noted();
      }
    }
    old.retired = 'reset';
    this.changeCount += 1;
    this.accounts.set(old.id, fresh);
    this.events.emit('accountReset', fresh, old);
    return fresh;
  }

  /**
   * Run `work` as one unit of work on partners, keys and meta (the globals): everything it writes
   * through putPartner, putKey and setSeed stays if it returns and goes if it throws.
   */
  globalTransaction<T>(work: () => T): T {
    const outer = this.globalWork;
    const unit = new UnitOfWork();
    this.globalWork = unit;
    let result: T;
    try {
      result = work();
      if (!outer) this.seal(GLOBALS);
    } catch (error) {
      this.globalWork = outer;
      unit.rollback();
      if (!outer) this.discard(GLOBALS);
      throw error instanceof UnstorableValue ? unstorableError(error) : error;
    }
    this.globalWork = outer;
    if (outer) outer.absorb(unit);
    else unit.commit();
    return result;
  }

  /** Undo `inverse` if the globals' unit of work under way rolls back. */
  undoableGlobal(inverse: () => void): void {
    this.globalWork?.undo(inverse);
  }

  /** The globals' wall: their unit of work under way (a write outside one throws), and the storage check. */
  private openGlobalWork(): UnitOfWork {
    const work = this.globalWork;
    if (!work) throw new Error('a write to partners or keys outside a unit of work (wrap it in store.globalTransaction)');
    this.assertWritable();
    return work;
  }

  /** Store a partner (new, or its new value), inside globalTransaction. */
  putPartner(partner: PartnerRecord): void {
    this.putGlobal(this.db.data.partners, partner.id, partner, (id) => this.log?.journal.partner(id));
  }

  /** Store an API key (new, or its new value), inside globalTransaction. */
  putKey(key: KeyRecord): void {
    this.putGlobal(this.db.data.keys, key.client_id, key, (id) => this.log?.journal.key(id));
  }

  private putGlobal<V>(map: Record<string, V>, id: string, value: V, note: (id: string) => void): void {
    const work = this.openGlobalWork();
    const had = Object.hasOwn(map, id);
    // A copy of the previous value: callers may have changed the stored object in place before.
    const previous = had ? map[id] : undefined;
    Object.defineProperty(map, id, { value, enumerable: true, writable: true, configurable: true });
    work.undo(() => {
      if (had) Object.defineProperty(map, id, { value: previous, enumerable: true, writable: true, configurable: true });
      else delete map[id];
    });
    this.changeCount += 1;
    note(id);
    this.noted();
  }

  /** The seed (an explicit --seed over the data file's), inside globalTransaction. */
  private setSeed(seed: string): void {
    const work = this.openGlobalWork();
    const meta = this.db.data.meta;
    const before = meta.seed;
    meta.seed = seed;
    work.undo(() => { meta.seed = before; });
    this.log?.journal.meta();
    this.noted();
  }

  /** Seal what `owner` (an account id, or the globals) noted: see Journal.seal. Throws UnstorableValue. */
  seal(owner: string): void {
    this.log?.journal.seal(this.db.data, owner);
  }

  /** Drop what `owner` noted (its unit of work rolled back). */
  discard(owner: string): void {
    this.log?.journal.discard(owner);
  }

  /** Note a change of an account's clock, counters or jobs (Account.changed, after the wall's check). */
  changed(account: Account): void {
    this.changeCount += 1;
    this.attach(account);
    if (!this.log) return;
    this.log.journal.account(account.data);
    this.noted();
  }

  /** An object of one of the account's collections was inserted, updated or deleted (Collection's callback). */
  recordChange(account: Account, collection: string, change: CollectionChange): void {
    this.changeCount += 1;
    this.attach(account);
    if (!this.log) return;
    this.log.journal.record(account.data, collection, change);
    this.noted();
  }

  /** A module's state changed (Account.stateChanged). */
  stateChanged(account: Account, key: string, entry?: string): void {
    this.changeCount += 1;
    this.attach(account);
    if (!this.log) return;
    if (entry === undefined) this.log.journal.stateKey(account.data, key);
    else this.log.journal.stateEntry(account.data, key, entry);
    this.noted();
  }

  /**
   * One more change to write: changes someone waits for (durable()) are written at once,
   * group-committed (every change made while a write is under way goes into the next one); changes no
   * one waits for are gathered for `flushDelayMs` first.
   */
  private noted(): void {
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
    if (this.flushTimer || this.writing || this.degraded) return;
    this.flushTimer = setTimeout(() => {
      // A failed background write must never crash the process (fail() already rolled memory back).
      this.flush().catch(() => undefined);
    }, this.options.flushDelayMs ?? 50);
    this.flushTimer.unref();
  }

  /** True while some change is not in the data file yet. */
  get pending(): boolean {
    return this.changes > this.written;
  }

  /**
   * Resolves once every change made before the call is in the data file (at once without --data,
   * or when nothing is pending); rejects with 503 storage_unavailable if a write fails first: the
   * changes were then rolled back (see fail). One write serves every caller waiting at that moment.
   */
  async flush(): Promise<void> {
    if (!this.options.file) return;
    const target = this.changes;
    const epoch = this.epoch;
    while (this.written < target) {
      if (this.epoch !== epoch || this.degraded) throw storageError();
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

  /** One write of what changed; the adapter takes the batch before its first await. */
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
        this.fail(error);
        throw storageError();
      },
    );
    return this.writing;
  }

  /**
   * A write of the data file failed (after its retry): refuse writes, roll memory back to what the
   * file holds, and probe the file until it can be written again. Every change not in the file is
   * gone from memory too, and everyone who waited on one gets 503.
   */
  private fail(error: unknown): void {
    this.degraded = { reason: describeFailure(error), since: new Date(this.options.realNow()).toISOString() };
    this.epoch += 1;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.events.emit('writeFailed', error);
    const reloading: Promise<void> = this.reload().catch((reloadError: unknown) => void this.events.emit('writeFailed', reloadError)).finally(() => {
      if (this.reloading === reloading) this.reloading = undefined;
    });
    this.reloading = reloading;
    this.probeLater();
  }

  /** Read memory again from the data file: its last durable state. */
  private async reload(): Promise<void> {
    const log = this.log as LogFile;
    const loaded = await log.reload();
    for (const account of this.accounts.values()) account.retired = 'storage';
    this.accounts.clear();
    this.db.data = loaded ?? { ...freshData(this.seed), meta: this.db.data.meta };
    // Nothing is pending: memory is what the file holds.
    this.written = this.changes;
    this.events.emit('storeReloaded');
  }

  private probeLater(): void {
    if (this.probeTimer) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      void this.probe();
    }, this.options.storageRetryMs ?? DEFAULT_STORAGE_RETRY_MS);
    this.probeTimer.unref();
  }

  /** Try the data file again: writes resume when a new log segment can be made and synced. */
  private async probe(): Promise<void> {
    try {
      if (this.reloading) await this.reloading;
      await (this.log as LogFile).probe();
    } catch {
      this.probeLater();
      return;
    }
    this.degraded = undefined;
    this.events.emit('writeResumed');
  }

  async close(): Promise<void> {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    if (this.reloading) await this.reloading;
    if (!this.degraded) await this.flush();
    await this.log?.close();
  }
}

/** The default period of the storage probe (and Retry-After of storage_unavailable), in ms. */
const DEFAULT_STORAGE_RETRY_MS = 2000;

function describeFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.startsWith(code) ? `${code}: ${message}` : message;
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
