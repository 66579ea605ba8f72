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
import { defineStateMap, defineStateValue, type StateMap, type StateValue } from './module-state.js';

/** `at`: when it was remembered, account clock ms (absent in data written before keys expired). */
interface Remembered<T> { fingerprint: string; answer: T; at?: number }

/** The keys of a store in the order they were remembered, with their time; `head` is the oldest not yet forgotten. */
interface KeyLog { entries: Array<[key: string, at: number]>; head: number }

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

/** Make the key log of data written before keys expired from its records: those keys start their time now. */
function keyLog<T>(account: Account, log: StateValue<KeyLog>, records: StateMap<Remembered<T>>): void {
  if (log.stored(account) || !records.entries().length) return;
  const now = account.clock.nowMs();
  const entries: KeyLog['entries'] = [];
  for (const [key, record] of records.entries()) {
    if (record.at === undefined) records.set(key, { ...record, at: now });
    entries.push([key, record.at ?? now]);
  }
  log.update(account, (value) => { value.entries = entries; });
}

/** Forget keys past their time or beyond the count, oldest first: O(1) when none is due, amortised. */
function forgetExpired<T>(account: Account, log: StateValue<KeyLog>, records: StateMap<Remembered<T>>): void {
  const cutoff = account.clock.nowMs() - LIMITS.idempotencyKeyHours * HOUR_MS;
  const current = log.read(account);
  let head = current.head;
  while (head < current.entries.length) {
    const [key, at] = current.entries[head];
    const record = records.get(key);
    // An entry whose key was remembered again later is outdated: skip it, the later entry counts.
    const outdated = !record || record.at !== at;
    if (!outdated && at >= cutoff && current.entries.length - head <= LIMITS.idempotencyKeysPerAccount) break;
    if (!outdated) records.delete(key);
    head += 1;
  }
  if (head === current.head) return;
  log.update(account, (value) => {
    value.head = head;
    if (value.head >= 64 && value.head * 2 >= value.entries.length) {
      value.entries.splice(0, value.head);
      value.head = 0;
    }
  });
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
  const log = defineStateValue<KeyLog>(`${name}_log`, () => ({ entries: [], head: 0 }), {
    type: 'object', required: ['entries', 'head'],
    properties: {
      entries: { type: 'array', items: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], minItems: 2, maxItems: 2 } },
      head: { type: 'integer', minimum: 0 },
    },
  });
  legacySteps.push((account) => keyLog(account, log, recordsOf(account)));
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
        records.set(key, { fingerprint: fingerprintOf(request), answer, at });
        // An append is undone by removing it: no copy of the log is needed.
        log.update(account, (value) => value.entries.push([key, at]), (value) => { value.entries.pop(); });
        // Housekeeping in the same unit of work: keys past their time or beyond the count go (never
        // this one, the newest); undone with the rest if the work rolls back.
        forgetExpired(account, log, records);
      },
    };
  };
}
