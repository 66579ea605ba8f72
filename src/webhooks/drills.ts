// Owns the delivery drills' own rules: the wrong secret a wrong_secret attempt carries, and how the
// outcome of a drill's attempt (a wrong secret, an answer counted as a time-out, a copy of a delivered
// event) is judged and worded. The queue (src/webhooks/queue.ts) decides when each drill runs.
import { createHash } from 'node:crypto';
import type { AttemptOutcome } from './delivery.js';

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
const ALNUM = LOWER + UPPER + DIGITS;
/** The length of a made-up secret when the subscription has none. */
const MADE_UP_LENGTH = 32;

/** Bytes drawn from sha256(seed|0), sha256(seed|1), ...: deterministic for a seed, as long as needed. */
function bytes(seed: string, count: number): Uint8Array {
  const out = new Uint8Array(count);
  for (let block = 0, at = 0; at < count; block++) {
    const digest = createHash('sha256').update(`${seed}|${block}`).digest();
    for (let i = 0; i < digest.length && at < count; i++) out[at++] = digest[i];
  }
  return out;
}

function classOf(char: string): string | undefined {
  if (LOWER.includes(char)) return LOWER;
  if (UPPER.includes(char)) return UPPER;
  if (DIGITS.includes(char)) return DIGITS;
  return undefined;
}

/**
 * A realistic wrong secret for a wrong_secret drill: the real one's shape (its length, each letter a
 * letter of the same case, each digit a digit, other characters kept, so `whsec_...` keeps its `_`)
 * with every letter and digit drawn anew from `seed`, as a rotated or mistyped secret looks; never
 * the real one. Without a real secret, 32 letters and digits. Derived, not stored: it never reaches
 * the history, the journal, the logs or the data file.
 */
export function wrongSecret(real: string | null, seed: string): string {
  if (!real) return [...bytes(seed, MADE_UP_LENGTH)].map((b) => ALNUM[b % ALNUM.length]).join('');
  const drawn = bytes(seed, real.length);
  const chars = [...real].map((char, i) => {
    const set = classOf(char);
    return set ? set[drawn[i] % set.length] : char;
  });
  if (chars.join('') === real) {
    // Every letter and digit drew itself again (or there are none): change the first character that can change.
    const i = chars.findIndex((char) => classOf(char) !== undefined);
    const at = i < 0 ? 0 : i;
    const set = classOf(chars[at]);
    // The next of its class; a secret of punctuation only gets a letter, which it cannot hold.
    chars[at] = set ? set[(set.indexOf(chars[at]) + 1) % set.length] : 'x';
  }
  return chars.join('');
}

const is2xx = (status: number | null) => status !== null && status >= 200 && status < 300;

/**
 * A wrong_secret attempt always fails: a 401 (or any refusal) is what the drill expects, and a 2xx
 * is the bug it exposes, a receiver accepting a delivery it cannot trust, so it fails too, worded so.
 */
export function judgeWrongSecret(outcome: AttemptOutcome): AttemptOutcome {
  if (is2xx(outcome.status_code)) {
    return {
      ...outcome,
      ok: false,
      error: `receiver accepted a wrong secret: it answered ${outcome.status_code} to a delivery whose Authorization bearer was not the subscription's secret_key (scenario wrong_secret); counted as a failed attempt`,
    };
  }
  return { ...outcome, ok: false, error: `${outcome.error ?? `receiver answered ${outcome.status_code}`} to a wrong secret (scenario wrong_secret)` };
}

/**
 * A timeout_after_delivery attempt always fails as a time-out: no status code, as a sender that gave
 * up waiting has none, and the answer the receiver did give in the error, for the person reading it.
 */
export function judgeTimeoutAfterDelivery(outcome: AttemptOutcome, timeoutMs: number): AttemptOutcome {
  if (outcome.status_code === null) return { ...outcome, ok: false, error: `${outcome.error ?? 'no answer'} (scenario timeout_after_delivery)` };
  return {
    ...outcome,
    ok: false,
    status_code: null,
    error: `timed out after ${timeoutMs} ms (scenario timeout_after_delivery): the receiver got the body and answered ${outcome.status_code}, counted as no answer in time, so the event is sent again`,
  };
}

/** A copy that the receiver refused is recorded so, and not retried: the event was delivered already. */
export function judgeCopy(outcome: AttemptOutcome): AttemptOutcome {
  if (outcome.ok) return outcome;
  return {
    ...outcome,
    error: `${outcome.error ?? `receiver answered ${outcome.status_code}`} to a duplicate of a delivered event (duplicate_delivery drill); not retried: a receiver should acknowledge an event it already processed with 2xx`,
  };
}
