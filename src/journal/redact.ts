// Owns what the request journal may keep of a request or response: secrets masked by field and
// header name, and a bounded copy: long strings shortened, arrays and objects cut after a few items
// with a marker saying how many were left out, and a byte budget per part of an entry, so a huge
// body costs the journal (and the copy itself) a few kilobytes, never its own size.
import { LIMITS } from '../limits.js';

export const MASK = '***';

/** The key of the marker an object cut by the journal carries, e.g. {"…": "120 more fields left out by the journal"}. */
export const LEFT_OUT_KEY = '…';

/** Headers that carry credentials: Basic client secrets, access tokens, the admin token. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-sandbox-admin-token', 'x-api-key']);

/**
 * Field names whose values are secrets wherever they appear: client and webhook secrets, access and
 * checkout tokens, bank and card numbers, card-provider tokens (which embed the card number) and CVVs.
 */
const SECRET_FIELD = /secret|password|passwd|cvv|cvc|account_number|card_number|card_provider_token|access_token|refresh_token|^token$/i;

/**
 * Fields named after a secret whose documented value is not one: the last four characters or a
 * mask shown in place of it (`secret_last_4_digits` of a webhook subscription, `account_last4`).
 */
const SHOWN_PART_OF_SECRET = /(^|_)(last_?4(_digits)?|mask)$/i;

/** The field's value is a secret: masked in every journal entry. */
export const isSecretField = (name: string) => SECRET_FIELD.test(name) && !SHOWN_PART_OF_SECRET.test(name);

/**
 * The header's value is a secret: one that carries credentials, or one named like a secret field
 * (redactHeaders' rule; `record` masks the same headers in its files). Any case.
 */
export const isSecretHeader = (name: string) => SECRET_HEADERS.has(name.toLowerCase()) || isSecretField(name);

/** Strings longer than this are cut (a PDF in base64 would otherwise fill the journal). */
export const MAX_STRING = LIMITS.journalStringChars;
const MAX_DEPTH = LIMITS.journalDepth;

/** Serialised bytes one part of an entry may still keep; each kept value spends its JSON size. */
export class Budget {
  constructor(public left: number) {}

  spend(bytes: number): void {
    this.left -= bytes;
  }

  get exhausted(): boolean {
    return this.left <= 0;
  }
}

/**
 * A request's part (headers, query, body) and the response's body each get half an entry, less a
 * reserve for the entry's own fields (id, at, path...) and for the markers and the last value that
 * cross the line, so an entry rarely needs journal.ts's final cut.
 */
const ENTRY_RESERVE_BYTES = 2048;
export const partBudget = () => new Budget((LIMITS.journalEntryBytes - ENTRY_RESERVE_BYTES) / 2);

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? 'null');

function shorten(text: string): string {
  if (text.length <= MAX_STRING) return text;
  // A copy, not a slice: V8 keeps the whole parent string alive behind a slice, so every journal
  // entry held its request's 13 MB base64 document (RSS grew by that much per upload).
  const head = Buffer.from(text.slice(0, 64), 'utf8').toString('utf8');
  return `${head}… [${text.length} characters, shortened by the journal]`;
}

const moreItems = (count: number) => `… ${count} more items left out by the journal`;
const moreFields = (count: number, what = 'fields') => `${count} more ${what} left out by the journal`;

/**
 * A copy of a parsed body or query with secrets masked, long strings shortened, arrays and objects
 * cut after a few items, and everything after the budget is spent replaced by a marker.
 */
export function redact(value: unknown, budget: Budget = partBudget(), depth = 0): unknown {
  if (typeof value === 'string') {
    const kept = shorten(value);
    budget.spend(jsonBytes(kept));
    return kept;
  }
  if (value === null || typeof value !== 'object') {
    budget.spend(jsonBytes(value));
    return value;
  }
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    budget.spend(2);
    for (let i = 0; i < value.length; i++) {
      if (i >= LIMITS.journalArrayItems || budget.exhausted) {
        out.push(moreItems(value.length - i));
        break;
      }
      out.push(redact(value[i], budget, depth + 1));
      budget.spend(1);
    }
    return out;
  }
  const keys = Object.keys(value);
  const out: Record<string, unknown> = {};
  budget.spend(2);
  for (let i = 0; i < keys.length; i++) {
    if (i >= LIMITS.journalObjectKeys || budget.exhausted) {
      out[LEFT_OUT_KEY] = moreFields(keys.length - i);
      break;
    }
    const key = keys[i];
    const item = (value as Record<string, unknown>)[key];
    budget.spend(jsonBytes(key) + 2);
    // defineProperty: a body's "__proto__" key is kept as a field, never as the copy's prototype.
    Object.defineProperty(out, key, {
      value: isSecretField(key) && item !== null && item !== undefined && item !== '' ? MASK : redact(item, budget, depth + 1),
      enumerable: true, writable: true, configurable: true,
    });
  }
  return out;
}

/**
 * A request's headers as the journal keeps them: one string of `name:value` lines, names in lower
 * case, a repeated header's values joined, the value of a header that carries credentials masked (a
 * value holds no line break: node refuses one; a name holds no colon). One flat string, not node's
 * header object and its strings: every entry of the journal's ring is still young when the next
 * young collection comes, which copies what the entry keeps, so a GET at 100k stored customers paid
 * some 2 us of young collections and 2.4 us of V8's helper threads less this way. No entry holds a bearer token, even in memory.
 */
export function keptHeaders(headers: Record<string, string | string[] | undefined>): string {
  const lines: string[] = [];
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    lines.push(`${lower}:${SECRET_HEADERS.has(lower) ? MASK : Array.isArray(value) ? value.join(', ') : value}`);
  }
  // join: one flat string (concatenation would keep a tree of pieces, one object each).
  return lines.join('\n');
}

/** Kept headers (keptHeaders) as a record, credentials and secret-named ones masked, long values cut; past the budget, a marker. */
export function redactHeaders(kept: string, budget: Budget = partBudget()): Record<string, string> {
  const out: Record<string, string> = {};
  if (!kept) return out;
  const lines = kept.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (budget.exhausted) {
      out[LEFT_OUT_KEY] = moreFields(lines.length - i, 'headers');
      break;
    }
    const colon = lines[i].indexOf(':');
    const name = lines[i].slice(0, colon);
    out[name] = isSecretHeader(name) ? MASK : shorten(lines[i].slice(colon + 1));
    budget.spend(jsonBytes(name) + jsonBytes(out[name]) + 2);
  }
  return out;
}
