// Owns idempotency keys: per account and per named store, the first answer given to a key and a
// fingerprint of the request that earned it. A repeat with the same request gets that answer again;
// a repeat with another request is refused with 409 idempotency_key_reused. Keys are forgotten after
// LIMITS.idempotencyKeyHours on the account clock, and beyond LIMITS.idempotencyKeysPerAccount per
// store the oldest first, so the records do not grow with traffic.
import { createHash } from 'node:crypto';
import { ApiError, Errors } from '../errors.js';
import { canonicalJson } from '../canonical-json.js';
import { LIMITS } from '../limits.js';
import { HOUR_MS } from '../clock/durations.js';
import type { Account } from './store.js';
import { defineStateLog, defineStateMap, defineStateValue, type StateLog, type StateMap, type StateValue } from './module-state.js';

/** `at`: when it was remembered, account clock ms (absent in data written before keys expired). */
interface Remembered<T> { fingerprint: string; answer: T; at?: number }

/** One key of a store's order: the key and when it was remembered. */
type Ordered = [key: string, at: number];

/** The key log an earlier version kept, one value written whole at every key: `head` is the oldest not yet forgotten. */
interface LegacyKeyLog { entries: Ordered[]; head: number }

export interface IdempotencyKeys<T> {
  /** The first answer to the key, or undefined for a new key; 409 when the key came with another request. */
  replay(key: string, request: unknown, field: string): T | undefined;
  /** Remember the answer to a key; call it only once the request did something. */
  remember(key: string, request: unknown, answer: T): void;
}

/**
 * The fingerprint of a request: a hash of its canonical JSON (keys sorted), so the same request in
 * another key order is the same request, and a stored key never holds the request itself.
 */
function fingerprintOf(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request) ?? 'null').digest('hex');
}

/**
 * Make the store's order of keys from what earlier versions kept: their key log (its live entries, in
 * order; the log goes), or, in data written before keys expired, the records themselves (those keys
 * start their time now).
 */
function takeUpLegacy<T>(account: Account, order: StateLog<Ordered>, legacy: StateValue<LegacyKeyLog>, records: StateMap<Remembered<T>>): void {
  if (legacy.stored(account)) {
    const { entries, head } = legacy.read(account);
    order.push(entries.slice(head));
    legacy.remove(account);
    return;
  }
  if (order.size || !records.entries().length) return;
  const now = account.clock.nowMs();
  const entries: Ordered[] = [];
  for (const [key, record] of records.entries()) {
    if (record.at === undefined) records.set(key, { ...record, at: now });
    entries.push([key, record.at ?? now]);
  }
  order.push(entries);
}

/** Forget keys past their time or beyond the count, oldest first: O(1) when none is due, each forgotten key one shift. */
function forgetExpired<T>(account: Account, order: StateLog<Ordered>, records: StateMap<Remembered<T>>): void {
  const cutoff = account.clock.nowMs() - LIMITS.idempotencyKeyHours * HOUR_MS;
  for (let oldest = order.at(0); oldest; oldest = order.at(0)) {
    const [key, at] = oldest;
    const record = records.get(key);
    // An entry whose key was remembered again later is outdated: skip it, the later entry counts.
    const outdated = !record || record.at !== at;
    if (!outdated && at >= cutoff && order.size <= LIMITS.idempotencyKeysPerAccount) return;
    if (!outdated) records.delete(key);
    order.shift();
  }
}

/** Each defined store's step for keys written before keys expired (see startLegacyKeys). */
const legacySteps: Array<(account: Account) => void> = [];

/**
 * At start: keys that data written before keys expired holds (records without a time, no key log)
 * start their time now, and are forgotten LIMITS.idempotencyKeyHours later. At start rather than at a
 * key's first use, because a first use refused with 409 must write nothing (its unit of work is undone).
 */
export function startLegacyKeys(accounts: Iterable<Account>): void {
  for (const account of accounts) account.transaction(() => { for (const step of legacySteps) step(account); });
}

/** A named store of idempotency keys, kept with the account's state (so --data keeps it across restarts). */
export function defineIdempotencyKeys<T>(name: string): (account: Account) => IdempotencyKeys<T> {
  const recordsOf = defineStateMap<Remembered<T>>(name, {
    type: 'object', required: ['fingerprint', 'answer'],
    properties: { fingerprint: { type: 'string' }, at: { type: 'number' } },
  });
  const entry = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], minItems: 2, maxItems: 2 };
  // The keys in the order they were remembered: a log, so remembering a key writes that key alone.
  const orderOf = defineStateLog<Ordered>(`${name}_order`, entry);
  // Still declared: data and snapshot exports an earlier version wrote hold it, to be taken up.
  const legacy = defineStateValue<LegacyKeyLog>(`${name}_log`, () => ({ entries: [], head: 0 }), {
    type: 'object', required: ['entries', 'head'],
    properties: { entries: { type: 'array', items: entry }, head: { type: 'integer', minimum: 0 } },
  });
  legacySteps.push((account) => takeUpLegacy(account, orderOf(account), legacy, recordsOf(account)));
  return (account) => {
    const records = recordsOf(account);
    return {
      replay(key, request, field) {
        // A read treats a key past its time as forgotten (keys are forgotten on writes only).
        const prior = records.get(key);
        if (!prior) return undefined;
        if (prior.at !== undefined && prior.at < account.clock.nowMs() - LIMITS.idempotencyKeyHours * HOUR_MS) return undefined;
        if (prior.fingerprint !== fingerprintOf(request)) {
          throw new ApiError(Errors.idempotencyConflict, { validation_errors: { [field]: 'was already used with a different request' } });
        }
        return prior.answer;
      },
      remember(key, request, answer) {
        const at = account.clock.nowMs();
        const order = orderOf(account);
        // A restored snapshot an earlier version exported still holds its key log: taken up at the first write.
        takeUpLegacy(account, order, legacy, records);
        records.set(key, { fingerprint: fingerprintOf(request), answer, at });
        order.push([[key, at]]);
        // Housekeeping in the same unit of work: keys past their time or beyond the count go (never
        // this one, the newest); undone with the rest if the work rolls back.
        forgetExpired(account, order, records);
      },
    };
  };
}
