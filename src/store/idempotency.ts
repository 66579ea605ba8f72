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

/** The store's key log; keys remembered before keys expired start their time now. */
function keyLog<T>(account: Account, name: string, records: Record<string, Remembered<T>>): KeyLog {
  return account.state<KeyLog>(`${name}_log`, () => {
    const now = account.clock.nowMs();
    return { entries: Object.keys(records).map((key) => [key, (records[key].at ??= now)]), head: 0 };
  });
}

/** Forget keys past their time or beyond the count, oldest first: O(1) when none is due, amortised. */
function forgetExpired<T>(account: Account, records: Record<string, Remembered<T>>, log: KeyLog): void {
  const cutoff = account.clock.nowMs() - LIMITS.idempotencyKeyHours * HOUR_MS;
  const before = log.head;
  while (log.head < log.entries.length) {
    const [key, at] = log.entries[log.head];
    const current = Object.hasOwn(records, key) ? records[key] : undefined;
    // An entry whose key was remembered again later is outdated: skip it, the later entry counts.
    const outdated = !current || current.at !== at;
    if (!outdated && at >= cutoff && log.entries.length - log.head <= LIMITS.idempotencyKeysPerAccount) break;
    if (!outdated) delete records[key];
    log.head += 1;
  }
  if (log.head === before) return;
  if (log.head >= 64 && log.head * 2 >= log.entries.length) {
    log.entries.splice(0, log.head);
    log.head = 0;
  }
  account.changed();
}

/** A named store of idempotency keys, kept with the account's state (so --data keeps it across restarts). */
export function defineIdempotencyKeys<T>(name: string): (account: Account) => IdempotencyKeys<T> {
  return (account) => {
    // Keys are forgotten on writes only (remember), so a refused request changes nothing; a read
    // treats a key past its time as forgotten.
    const open = (prune: boolean) => {
      const records = account.state<Record<string, Remembered<T>>>(name, () => ({}));
      const log = keyLog(account, name, records);
      if (prune) forgetExpired(account, records, log);
      return { records, log };
    };
    return {
      replay(key, request, field) {
        // No key remembered yet: nothing to replay, and the store is not touched (a request refused
        // after this check must leave the account as it was).
        if (!account.hasState(name)) return undefined;
        const { records } = open(false);
        // Own keys only: a key such as "constructor" or "__proto__" is just a key.
        const prior = Object.hasOwn(records, key) ? records[key] : undefined;
        if (!prior) return undefined;
        if (prior.at !== undefined && prior.at < account.clock.nowMs() - LIMITS.idempotencyKeyHours * HOUR_MS) return undefined;
        if (prior.fingerprint !== fingerprintOf(request)) {
          throw new ApiError(Errors.idempotencyConflict, { validation_errors: { [field]: 'was already used with a different request' } });
        }
        return prior.answer;
      },
      remember(key, request, answer) {
        const { records, log } = open(true);
        // defineProperty, not assignment: assigning to "__proto__" would change the object's prototype.
        const at = account.clock.nowMs();
        Object.defineProperty(records, key, { value: { fingerprint: fingerprintOf(request), answer, at }, enumerable: true, writable: true, configurable: true });
        log.entries.push([key, at]);
        forgetExpired(account, records, log);
        account.changed();
      },
    };
  };
}
