// Owns what `diff` calls a difference between a recorded answer and the sandbox's answer to the same
// request: the status; the error `code`; and, when the statuses agree, the headers that matter
// (`Content-Type`'s media type, `Retry-After`'s presence and form) and the bodies' shapes: fields on
// one side only, JSON types, list lengths, and the values of fields the document declares as an
// enumeration. Other values are never compared: ids, timestamps, tokens, amounts and URLs (which
// carry the host) always differ between two accounts, and differ for no reason a partner must act on.
import { isSecretField, MASK } from '../journal/redact.js';
import type { ShapeChecker } from '../parity/shapes.js';

export type DifferenceKind = 'status' | 'code' | 'header' | 'field' | 'type' | 'items' | 'enum';

export interface Difference {
  kind: DifferenceKind;
  /** Where: a body path (`data[].status`, array places shown as []) or a header name; absent for status and code. */
  path?: string;
  /** field: which side has it. */
  side?: 'recording' | 'sandbox';
  /** What each side had, as short text. */
  recorded: string;
  sandbox: string;
  /** The row of docs/gaps-and-choices.md this difference is a known choice of (choices.ts). */
  choice?: string;
}

/** One side of an exchange, as compared. */
export interface Answer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  text: string;
}

const jsonType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

function parseJson(text: string): { ok: boolean; value?: unknown } {
  if (!text.trim()) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** The media type without parameters (`application/json; charset=utf-8` is `application/json`). */
function mediaType(value: string | undefined): string {
  return (value ?? '').split(';')[0].trim().toLowerCase();
}

/** Retry-After's form: delay-seconds or an HTTP date (RFC 9110 10.2.3); its value depends on timing. */
function retryForm(value: string | undefined): string {
  if (value === undefined) return 'absent';
  if (/^\d+$/.test(value.trim())) return 'seconds';
  return Number.isNaN(Date.parse(value)) ? `not a delay or a date (${value})` : 'an HTTP date';
}

function errorCode(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const code = (body as Record<string, unknown>).code ?? (body as Record<string, unknown>).error;
  return typeof code === 'string' ? code : undefined;
}

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value) ?? 'undefined');

/** A field's value for a report: a secret-named one masked, as everywhere (the sandbox's answer is not masked). */
const value = (key: string, item: unknown) => (isSecretField(key) && item !== null && item !== '' ? MASK : shown(item));

/** A body path for a report: `data[].status`. */
function showPath(path: ReadonlyArray<string | number>): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? '[]' : `${out ? '.' : ''}${part}`;
  return out || '(body)';
}

export interface CompareContext {
  /** The request's operation in openapi.yaml (null: not one of the document's). */
  operationId: string | null;
  shapes: ShapeChecker;
}

/** Every difference between the recorded answer and the sandbox's, each path reported once. */
export function compareAnswers(recorded: Answer, sandbox: Answer, context: CompareContext): Difference[] {
  const out: Difference[] = [];
  const recordedBody = parseJson(recorded.text);
  const sandboxBody = parseJson(sandbox.text);
  const recordedCode = errorCode(recordedBody.value);
  const sandboxCode = errorCode(sandboxBody.value);
  if (recorded.status !== sandbox.status) {
    const status = (s: number, code?: string) => (s === 0 ? 'no answer' : `${s}${code ? ` ${code}` : ''}`);
    out.push({ kind: 'status', recorded: status(recorded.status, recordedCode), sandbox: status(sandbox.status, sandboxCode) });
  }
  if (recordedCode !== undefined && sandboxCode !== undefined && recordedCode !== sandboxCode) {
    out.push({ kind: 'code', recorded: recordedCode, sandbox: sandboxCode });
  }
  // Another status answers another shape: the status says it all.
  if (recorded.status !== sandbox.status || sandbox.status === 0) return out;

  const type = [mediaType(recorded.headers['content-type']), mediaType(sandbox.headers['content-type'])];
  if (type[0] !== type[1]) out.push({ kind: 'header', path: 'Content-Type', recorded: type[0] || 'absent', sandbox: type[1] || 'absent' });
  const retry = [retryForm(recorded.headers['retry-after']), retryForm(sandbox.headers['retry-after'])];
  if (retry[0] !== retry[1]) out.push({ kind: 'header', path: 'Retry-After', recorded: retry[0], sandbox: retry[1] });

  if (recordedBody.ok !== sandboxBody.ok) {
    const what = (b: { ok: boolean }, text: string) => (b.ok ? 'JSON' : text.trim() ? 'not JSON' : 'empty');
    out.push({ kind: 'type', path: '(body)', recorded: what(recordedBody, recorded.text), sandbox: what(sandboxBody, sandbox.text) });
  } else if (recordedBody.ok) {
    const seen = new Set<string>();
    const add = (difference: Difference) => {
      const key = `${difference.kind} ${difference.path} ${difference.side ?? ''} ${difference.recorded} ${difference.sandbox}`;
      if (seen.has(key)) return;
      seen.add(key);
      out.push(difference);
    };
    walk(recordedBody.value, sandboxBody.value, [], { ...context, status: sandbox.status, add });
  }
  return out;
}

interface WalkContext extends CompareContext {
  status: number;
  add(difference: Difference): void;
}

function walk(recorded: unknown, sandbox: unknown, path: Array<string | number>, context: WalkContext): void {
  const types = [jsonType(recorded), jsonType(sandbox)];
  if (types[0] !== types[1]) {
    context.add({ kind: 'type', path: showPath(path), recorded: types[0], sandbox: types[1] });
    return;
  }
  if (Array.isArray(recorded) && Array.isArray(sandbox)) {
    if (recorded.length !== sandbox.length) context.add({ kind: 'items', path: showPath(path), recorded: `${recorded.length} items`, sandbox: `${sandbox.length} items` });
    for (let i = 0; i < Math.min(recorded.length, sandbox.length); i++) walk(recorded[i], sandbox[i], [...path, i], context);
    return;
  }
  if (recorded && typeof recorded === 'object' && sandbox && typeof sandbox === 'object') {
    const left = recorded as Record<string, unknown>;
    const right = sandbox as Record<string, unknown>;
    for (const key of Object.keys(left)) {
      // The top-level error code is compared as such (kind code), above.
      if (path.length === 0 && (key === 'code' || key === 'error') && typeof left[key] === 'string') continue;
      if (!Object.hasOwn(right, key)) context.add({ kind: 'field', path: showPath([...path, key]), side: 'recording', recorded: value(key, left[key]), sandbox: 'absent' });
      else walk(left[key], right[key], [...path, key], context);
    }
    for (const key of Object.keys(right)) {
      if (!Object.hasOwn(left, key)) context.add({ kind: 'field', path: showPath([...path, key]), side: 'sandbox', recorded: 'absent', sandbox: value(key, right[key]) });
    }
    return;
  }
  if (typeof recorded === 'string' && recorded !== sandbox && context.operationId) {
    const allowed = context.shapes.enumAt(context.operationId, context.status, path);
    if (allowed) {
      const outside = (value: unknown) => (allowed.includes(value) ? '' : ' (not in the document)');
      context.add({ kind: 'enum', path: showPath(path), recorded: `${recorded}${outside(recorded)}`, sandbox: `${shown(sandbox)}${outside(sandbox)}` });
    }
  }
}

/** A difference as one line of a report. */
export function describeDifference(d: Difference): string {
  switch (d.kind) {
    case 'status': return `status: recorded ${d.recorded}, sandbox ${d.sandbox}`;
    case 'code': return `code: recorded ${d.recorded}, sandbox ${d.sandbox}`;
    case 'header': return `header ${d.path}: recorded ${d.recorded}, sandbox ${d.sandbox}`;
    case 'field': return d.side === 'recording' ? `field ${d.path} only in the recording (${excerpt(d.recorded)})` : `field ${d.path} only in the sandbox (${excerpt(d.sandbox)})`;
    case 'type': return `type of ${d.path}: recorded ${d.recorded}, sandbox ${d.sandbox}`;
    case 'items': return `length of ${d.path}: recorded ${d.recorded}, sandbox ${d.sandbox}`;
    case 'enum': return `value of ${d.path}: recorded ${d.recorded}, sandbox ${d.sandbox}`;
  }
}

function excerpt(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}
