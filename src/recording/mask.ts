// Owns what `record` keeps of a secret: nothing. The request journal's rules decide what is one
// (src/journal/redact.ts: headers that carry credentials, fields named like secrets, at any depth, in
// JSON bodies, forms and query strings); each is written `***#n`, where n numbers the distinct
// values of one recording, so `diff` can tell which token a later request used without the file
// holding it. A secret once seen is also masked wherever else it turns up (a token echoed in a
// URL or a message). Documented test values (docs/test-values.md) are public and stay, as in a
// snapshot export, since they decide what a replay does.
import { CARD_TEST_TOKENS, BANK_FAILURES } from '../domain/payment-methods/payment-methods.js';
import { TEST_ACCOUNT_FAILURES } from '../domain/vendor-payments/records.js';
import { isSecretField, isSecretHeader, MASK } from '../journal/redact.js';
import { LIMITS } from '../limits.js';

/** Values the documentation publishes as test inputs: kept in recordings. */
const PUBLIC_TEST_VALUES = new Set([...Object.keys(CARD_TEST_TOKENS), ...Object.keys(BANK_FAILURES), ...Object.keys(TEST_ACCOUNT_FAILURES)]);

/** A masked value as written: the journal's mask and the value's number. */
export const MASKED = /^\*\*\*#(\d+)$/;

/**
 * Runs of characters a token, a key or a base64 credential is made of; a secret of this form and at
 * least this long is found wherever it appears (shorter ones only where their name says so).
 */
const SCRUB_MIN_CHARS = 16;
const TOKEN_RUN = /[A-Za-z0-9._~+/-]{16,}=*/g;

/** The numbers given to the secrets of one recording, and the search for them in any text. */
export class SecretLabels {
  private readonly numbers = new Map<string, number>();
  private next = 1;

  constructor(private readonly kept = LIMITS.recordSecretsKept) {}

  /** `***#n` for this value: the same value, the same n, while it is remembered. */
  mask(value: string): string {
    let n = this.numbers.get(value);
    if (n === undefined) {
      n = this.next++;
      this.numbers.set(value, n);
      // A bounded memory: the oldest secret is forgotten (seen again, it gets a new number).
      if (this.numbers.size > this.kept) this.numbers.delete(this.numbers.keys().next().value as string);
    }
    return `${MASK}#${n}`;
  }

  get size(): number {
    return this.numbers.size;
  }

  /** The text with every remembered secret of token form masked where it appears (one pass over the text). */
  scrub(text: string): string {
    if (!this.numbers.size || text.length < SCRUB_MIN_CHARS) return text;
    return text.replace(TOKEN_RUN, (run) => {
      if (this.numbers.has(run)) return this.mask(run);
      // A base64 value's padding may or may not belong to the secret.
      const bare = run.replace(/=+$/, '');
      if (bare !== run && bare.length >= SCRUB_MIN_CHARS && this.numbers.has(bare)) return `${this.mask(bare)}${run.slice(bare.length)}`;
      // Base64 holds slashes, and so does a path with a token in one of its segments.
      if (run.includes('/')) return run.split('/').map((part) => (this.numbers.has(part) ? this.mask(part) : part)).join('/');
      return run;
    });
  }
}

/** A copy of a parsed JSON value with every secret-named field masked; `changed` says whether any was. */
export function maskJson(value: unknown, labels: SecretLabels): { value: unknown; changed: boolean } {
  let changed = false;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(node)) {
      let kept: unknown;
      if (isSecretField(key) && item !== null && item !== undefined && item !== '' && !(typeof item === 'string' && PUBLIC_TEST_VALUES.has(item))) {
        kept = labels.mask(typeof item === 'string' ? item : JSON.stringify(item));
        changed = true;
      } else kept = walk(item);
      // defineProperty: a body's "__proto__" key stays a field, never the copy's prototype.
      Object.defineProperty(out, key, { value: kept, enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  const masked = walk(value);
  return { value: masked, changed };
}

/** A JSON text with its secrets masked: the text as it came when nothing was (numbers and spacing kept exactly), else the masked copy. */
export function maskJsonText(text: string, labels: SecretLabels): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return labels.scrub(text);
  }
  const { value, changed } = maskJson(parsed, labels);
  return labels.scrub(changed ? JSON.stringify(value) : text);
}

/** Form or query parameters with secret-named values masked; the text as it came when none was. */
export function maskParams(text: string, labels: SecretLabels): string {
  const params = new URLSearchParams(text);
  let changed = false;
  for (const [name, value] of [...params]) {
    if (isSecretField(name) && value !== '' && !PUBLIC_TEST_VALUES.has(value)) {
      params.set(name, labels.mask(value));
      changed = true;
    }
  }
  return labels.scrub(changed ? params.toString() : text);
}

/**
 * A header's value as recorded: a credential header keeps its scheme (`Bearer ***#2`, `Basic ***#1`),
 * which `diff` needs to replay it; other secret headers are masked whole. A Basic credential's secret
 * is remembered too, so it is masked where else it appears (a form body, say).
 */
export function maskHeader(name: string, value: string, labels: SecretLabels): string {
  if (!isSecretHeader(name)) return labels.scrub(value);
  const scheme = /^(Bearer|Basic|Token)\s+(\S.*)$/i.exec(value);
  if (!scheme) return labels.mask(value);
  if (scheme[1].toLowerCase() === 'basic') {
    const decoded = Buffer.from(scheme[2], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) labels.mask(decoded.slice(colon + 1));
  }
  return `${scheme[1]} ${labels.mask(scheme[2])}`;
}
