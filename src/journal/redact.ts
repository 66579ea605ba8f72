// Owns what the request journal may keep of a request or response: secrets masked by field and
// header name, and long strings (base64 documents) shortened so a bounded ring stays small.
import { LIMITS } from '../limits.js';

export const MASK = '***';

/** Headers that carry credentials: Basic client secrets, access tokens, the admin token. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-sandbox-admin-token', 'x-api-key']);

/**
 * Field names whose values are secrets wherever they appear: client and webhook secrets, access and
 * checkout tokens, bank and card numbers, card-provider tokens (which embed the card number) and CVVs.
 */
const SECRET_FIELD = /secret|password|passwd|cvv|cvc|account_number|card_number|card_provider_token|access_token|refresh_token|^token$/i;

/** Strings longer than this are cut (a PDF in base64 would otherwise fill the journal). */
export const MAX_STRING = LIMITS.journalStringChars;
const MAX_DEPTH = LIMITS.journalDepth;

function shorten(text: string): string {
  if (text.length <= MAX_STRING) return text;
  // A copy, not a slice: V8 keeps the whole parent string alive behind a slice, so every journal
  // entry held its request's 13 MB base64 document (RSS grew by that much per upload).
  const head = Buffer.from(text.slice(0, 64), 'utf8').toString('utf8');
  return `${head}… [${text.length} characters, shortened by the journal]`;
}

/** A copy of a parsed body or query with secrets masked and long strings shortened. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return shorten(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_FIELD.test(key) && item !== null && item !== undefined && item !== '' ? MASK : redact(item, depth + 1);
  }
  return out;
}

/** Header names in lower case, values as strings, credentials masked. */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    out[lower] = SECRET_HEADERS.has(lower) || SECRET_FIELD.test(lower) ? MASK : shorten(text);
  }
  return out;
}
