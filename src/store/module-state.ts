// Owns typed module state: what a module keeps on each account that is not a collection of objects
// (the webhook queue, external ids, idempotency keys, scenario counters...). A module declares its
// state once, with its type and key, and reaches it only through the accessor declared here:
//   - defineStateMap<V>(key): a map of entries (external id -> customer id, say). Each set or delete is
//     reported to persistence as that entry alone, and undone entry by entry if the unit of work under
//     way rolls back; a read never creates the map.
//   - defineStateLog<E>(key): an ordered log of entries, added at the end and taken from the start (a
//     queue of deliveries, the order of idempotency keys). Kept as a map of entries by sequence number
//     plus its `head` and `next`, so each push or shift is reported and undone as the entries it
//     touches: its cost never grows with the log, where a value holding the list would be written whole.
//   - defineStateValue<T>(key, initial): one value (an object or an array, changed in place), changed
//     only inside `update`. The first update in a unit of work keeps a copy to put back on a rollback,
//     so these values must stay small (each has a cap in LIMITS); a read never stores the initial value.
// A rollback runs the inverses newest first (src/store/unit-of-work.ts), so each inverse finds the
// state exactly as its own change left it: no inverse needs to check what it undoes.
// Every write passes the account's wall first (Account.writing: inside a unit of work, on an account
// not replaced, with a writable data file), before anything changes.
// Both report their own changes (no module calls `changed()` for its state), and both keep the data
// file's format: `state[key]` is the map or the value, as plain JSON. Each declares the JSON Schema of
// what it persists (of a map, of one entry); a data file whose state does not match stops the start,
// naming the account, the key and the field (checkStoredState). Each schema is compiled as it is
// declared: a schema Ajv cannot compile fails the module's load, not the first start on a data file.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import type { Account } from './store.js';

/** A JSON Schema (2020-12) of persisted state. */
export type StateSchema = Record<string, unknown>;

/** Not strict: the declared schemas use union types (`['string', 'null']`), which strict mode refuses. */
const ajv = new Ajv2020({ strict: false });

/** The compiled schema of every declared state key, of the whole value (a map's: an object of entries). */
const declared = new Map<string, ReturnType<Ajv2020['compile']>>();

function declare(key: string, schema: StateSchema): void {
  if (declared.has(key)) throw new Error(`module state ${key} declared twice`);
  declared.set(key, ajv.compile(schema));
}

export interface StateMap<V> {
  get(entry: string): V | undefined;
  has(entry: string): boolean;
  set(entry: string, value: V): void;
  delete(entry: string): void;
  /** Entries in insertion order (for bulk work: a restart's sweep, a migration; never per request). */
  entries(): Array<[string, V]>;
}

export interface StateValue<T> {
  /** Whether the account has this state stored (some update happened). */
  stored(account: Account): boolean;
  /** The stored value, or a fresh initial one that is not stored: reading writes nothing. */
  read(account: Account): Readonly<T>;
  /**
   * Change the value (stored first if it was not): persisted, and undone if the unit of work rolls
   * back, by putting back a copy taken before its first change, or by `undo` when given (a cheap
   * inverse for a big value: an append undone by a pop).
   */
  update<R>(account: Account, change: (value: T) => R, undo?: (value: T) => void): R;
  /** Stop storing the value (put back if the unit of work rolls back); nothing when it is not stored. */
  remove(account: Account): void;
}

/** A map of entries per account, kept at `state[key]`; `entry`: the schema of one entry. */
export function defineStateMap<V>(key: string, entry: StateSchema): (account: Account) => StateMap<V> {
  declare(key, { type: 'object', additionalProperties: entry });
  return (account) => new AccountStateMap<V>(account, key);
}

class AccountStateMap<V> implements StateMap<V> {
  constructor(private readonly account: Account, private readonly key: string) {}

  private stored(): Record<string, V> | undefined {
    const state = this.account.data.state;
    return Object.hasOwn(state, this.key) ? (state[this.key] as Record<string, V>) : undefined;
  }

  get(entry: string): V | undefined {
    const map = this.stored();
    // Own entries only: an entry such as "constructor" or "__proto__" is just an entry.
    return map && Object.hasOwn(map, entry) ? map[entry] : undefined;
  }

  has(entry: string): boolean {
    const map = this.stored();
    return Boolean(map && Object.hasOwn(map, entry));
  }

  set(entry: string, value: V): void {
    this.account.writing();
    const map = this.stored() ?? createState<Record<string, V>>(this.account, this.key, {});
    const had = Object.hasOwn(map, entry);
    const previous = map[entry];
    setOwn(map, entry, value);
    this.account.stateChanged(this.key, entry);
    this.account.undoable(() => {
      if (had) setOwn(map, entry, previous);
      else delete map[entry];
      this.account.stateChanged(this.key, entry);
    });
  }

  delete(entry: string): void {
    const map = this.stored();
    if (!map || !Object.hasOwn(map, entry)) return;
    this.account.writing();
    const previous = map[entry];
    delete map[entry];
    this.account.stateChanged(this.key, entry);
    this.account.undoable(() => {
      setOwn(map, entry, previous);
      this.account.stateChanged(this.key, entry);
    });
  }

  entries(): Array<[string, V]> {
    return Object.entries(this.stored() ?? {});
  }
}

export interface StateLog<E> {
  /** Entries in the log (pushed and not shifted yet). */
  readonly size: number;
  /** The entry `index` places from the oldest (0: the oldest), or undefined past either end. */
  at(index: number): E | undefined;
  /** Add entries at the end, in order (an array, never spread: a migration may add thousands). */
  push(entries: readonly E[]): void;
  /** Take the oldest entry off (undefined when empty). */
  shift(): E | undefined;
  /** Entries, oldest first (for bulk work: a sweep, a filter; never per request). */
  values(): E[];
  /** Replace every entry by `entries` (a filter of the log: as many writes as entries, so only for rare work). */
  replace(entries: readonly E[]): void;
}

/** Sequence numbers of a log's entries: the integers in decimal, as JSON object keys. */
const SEQUENCE = '^(0|[1-9][0-9]*)$';

/** An ordered log per account, kept at `state[key]` as `{ head, next, "<seq>": entry... }`; `entry`: the schema of one entry. */
export function defineStateLog<E>(key: string, entry: StateSchema): (account: Account) => StateLog<E> {
  declare(key, {
    type: 'object',
    properties: { head: { type: 'integer', minimum: 0 }, next: { type: 'integer', minimum: 0 } },
    patternProperties: { [SEQUENCE]: entry },
    additionalProperties: false,
  });
  return (account) => new AccountStateLog<E>(new AccountStateMap<unknown>(account, key));
}

/** The log over its map: entries head..next-1, each under its sequence number; absent ends read 0. */
class AccountStateLog<E> implements StateLog<E> {
  constructor(private readonly map: AccountStateMap<unknown>) {}

  private end(name: 'head' | 'next'): number {
    return (this.map.get(name) as number | undefined) ?? 0;
  }

  get size(): number {
    return this.end('next') - this.end('head');
  }

  at(index: number): E | undefined {
    // Past either end there is no entry: those before the head were deleted, none is set from next on.
    return this.map.get(String(this.end('head') + index)) as E | undefined;
  }

  push(entries: readonly E[]): void {
    let next = this.end('next');
    for (const entry of entries) this.map.set(String(next++), entry);
    this.map.set('next', next);
  }

  shift(): E | undefined {
    if (!this.size) return undefined;
    const head = this.end('head');
    const entry = this.map.get(String(head)) as E;
    this.map.delete(String(head));
    this.map.set('head', head + 1);
    return entry;
  }

  values(): E[] {
    const out: E[] = [];
    for (let seq = this.end('head'); seq < this.end('next'); seq++) out.push(this.map.get(String(seq)) as E);
    return out;
  }

  replace(entries: readonly E[]): void {
    while (this.size) this.shift();
    this.push(entries);
  }
}

/** One value per account, kept at `state[key]`; `schema`: of the value. */
export function defineStateValue<T extends object>(key: string, initial: () => T, schema: StateSchema): StateValue<T> {
  declare(key, schema);
  return {
    stored: (account) => Object.hasOwn(account.data.state, key),
    read(account) {
      const state = account.data.state;
      return Object.hasOwn(state, key) ? (state[key] as T) : initial();
    },
    update(account, change, undo) {
      account.writing();
      const state = account.data.state;
      let value: T;
      if (Object.hasOwn(state, key) && undo) {
        value = state[key] as T;
        account.undoable(() => {
          undo(value);
          account.stateChanged(key);
        });
      } else if (Object.hasOwn(state, key)) {
        value = state[key] as T;
        // A copy is taken once per unit of work, before its first change, and put back in place (the
        // same object: a module may hold it across an await) if the work rolls back.
        account.undoableOnce(`state ${key}`, () => {
          const copy = structuredClone(value);
          return () => {
            restoreInPlace(value, copy);
            account.stateChanged(key);
          };
        });
      } else {
        // Made by this unit of work: createState's inverse removes it (a later update in the same work
        // still takes its copy, which that removal then makes moot).
        value = createState(account, key, initial());
      }
      const result = change(value);
      account.stateChanged(key);
      return result;
    },
    remove(account) {
      const state = account.data.state;
      if (!Object.hasOwn(state, key)) return;
      account.writing();
      const value = state[key];
      delete state[key];
      account.stateChanged(key);
      account.undoable(() => {
        state[key] = value;
        account.stateChanged(key);
      });
    },
  };
}

/** Store a module's state for the first time; a rollback of the unit of work under way removes it. */
function createState<T>(account: Account, key: string, value: T): T {
  const state = account.data.state;
  state[key] = value;
  account.stateChanged(key);
  account.undoable(() => {
    delete state[key];
    account.stateChanged(key);
  });
  return value;
}

/** Put a copy's content back into the object (or array) it was taken from (a structured clone of it). */
function restoreInPlace<T extends object>(target: T, copy: T): void {
  if (Array.isArray(target)) {
    target.length = 0;
    for (const item of copy as unknown[]) target.push(item);
  } else {
    for (const name of Object.keys(target)) delete (target as Record<string, unknown>)[name];
    Object.assign(target, copy);
  }
}

/** Assignment would change the prototype for "__proto__": define the entry instead. */
function setOwn<V>(map: Record<string, V>, entry: string, value: V): void {
  Object.defineProperty(map, entry, { value, enumerable: true, writable: true, configurable: true });
}

/** State keys an earlier version kept that are now indexes on collections (customers' external_id, invoice numbers). */
const RETIRED_KEYS = ['customer_external_ids', 'invoice_numbers'];

/** At start: drop the retired keys from data an earlier version wrote. */
export function retireStateKeys(accounts: Iterable<Account>): void {
  for (const account of accounts) {
    const state = account.data.state;
    const retired = RETIRED_KEYS.filter((key) => Object.hasOwn(state, key));
    if (!retired.length) continue;
    account.transaction(() => {
      account.writing();
      for (const key of retired) {
        delete state[key];
        account.stateChanged(key);
      }
    });
  }
}

/**
 * The first problem of each module state value that a module declares and that does not match its
 * schema, as [key, path, message]; keys no module declares are not checked.
 */
export function stateProblems(state: Record<string, unknown>): Array<[key: string, path: string, message: string]> {
  const problems: Array<[string, string, string]> = [];
  for (const [key, value] of Object.entries(state)) {
    const validate = declared.get(key);
    if (!validate || validate(value)) continue;
    // A value that does not validate always has a first error (Ajv stops at it), with its message.
    const [error] = validate.errors as [ErrorObject];
    problems.push([key, error.instancePath, String(error.message)]);
  }
  return problems;
}

/** Whether a module declares state under `key` (a snapshot carries only declared keys). */
export function isDeclaredState(key: string): boolean {
  return declared.has(key);
}

/**
 * At start on a data file: every stored module state that a module declares matches its schema. Answers
 * the problems (empty: all match), each naming the account, the key and the field.
 */
export function checkStoredState(accounts: Iterable<Account>): string[] {
  const problems: string[] = [];
  for (const account of accounts) {
    for (const [key, path, message] of stateProblems(account.data.state)) problems.push(`account ${account.id}, state ${key}${path}: ${message}`);
  }
  return problems;
}
