// Owns idempotency keys: per account and per named store, the first answer given to a key and a
// fingerprint of the request that earned it. A repeat with the same request gets that answer again;
// a repeat with another request is refused with 409 idempotency_key_reused.
import { createHash } from 'node:crypto';
import { ApiError, Errors } from '../http/errors.js';
import { canonicalJson } from '../canonical-json.js';
import type { Account } from './store.js';

interface Remembered<T> { fingerprint: string; answer: T }

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

/** A named store of idempotency keys, kept with the account's state (so --data keeps it across restarts). */
export function defineIdempotencyKeys<T>(name: string): (account: Account) => IdempotencyKeys<T> {
  return (account) => {
    const records = account.state<Record<string, Remembered<T>>>(name, () => ({}));
    return {
      replay(key, request, field) {
        // Own keys only: a key such as "constructor" or "__proto__" is just a key.
        const prior = Object.hasOwn(records, key) ? records[key] : undefined;
        if (!prior) return undefined;
        if (prior.fingerprint !== fingerprintOf(request)) {
          throw new ApiError(Errors.idempotencyConflict, { validation_errors: { [field]: 'was already used with a different request' } });
        }
        return prior.answer;
      },
      remember(key, request, answer) {
        // defineProperty, not assignment: assigning to "__proto__" would change the object's prototype.
        Object.defineProperty(records, key, { value: { fingerprint: fingerprintOf(request), answer }, enumerable: true, writable: true, configurable: true });
        account.changed();
      },
    };
  };
}
