// Owns the fuzzers' judgement of one answer: which operation of which document the request reached,
// whether the answer is what that operation documents (the strict response checker), whether an
// error answer is an HttpError body, and the fingerprint of the stored state a refused write must
// leave as it was.
import { createHash } from 'node:crypto';

const API_PATH = /^(\/demo)?(\/v1)?(\/.*)?$/;

/** The operation a request path reaches (null: none; such a request must answer a 404 HttpError). */
export function routedOperation(app, method, rawPath) {
  const path = rawPath.split('?')[0];
  try {
    if (path === '/_sandbox' || path.startsWith('/_sandbox/')) return app.locals.control.operationFor(method, path)?.operationId ?? null;
    const rest = API_PATH.exec(path)?.[3] ?? '/';
    return app.locals.api.operationFor(method, rest)?.operationId ?? null;
  } catch {
    return null;
  }
}

/** The checker of the document the path belongs to. */
export function checkerFor(checkers, rawPath) {
  return rawPath.startsWith('/_sandbox') ? checkers.control : checkers.api;
}

/**
 * Problems with one answer, as short labels with details: 'connection' (no answer), '5xx',
 * 'non-HttpError' (an error answer that is not the HttpError body), 'invalid' (the strict checker
 * refuses it for the operation the request reached).
 */
export function judge({ res, operationId, checker, forced, method = 'GET' }) {
  const problems = [];
  if (res.status <= 0) {
    if (res.status === 0) problems.push(['connection', res.error ?? 'no answer']);
    return problems;
  }
  if (res.status >= 500) problems.push(['5xx', `${res.status} ${res.text.slice(0, 300)}`]);
  // A HEAD answer has no body by definition.
  if (method === 'HEAD') return problems;
  // Node's parser refuses oversized headers before any operation is reached: a transport-level
  // answer (documented once, in the limits), judged by its body only.
  if (res.status === 431) operationId = null;
  if (res.status >= 400) {
    if (res.json === undefined) problems.push(['non-HttpError', `${res.status} ${res.headers['content-type'] ?? 'no content type'}: ${res.text.slice(0, 200)}`]);
    else {
      const bad = checker.checkComponent('HttpError', res.json);
      if (bad) problems.push(['non-HttpError', `${res.status} ${JSON.stringify(bad.errors.slice(0, 3))}: ${res.text.slice(0, 200)}`]);
    }
  }
  if (operationId && (res.json !== undefined || res.status >= 400)) {
    const bad = checker.check(operationId, res.status, res.json, { forced });
    if (bad) problems.push(['invalid', `${operationId} ${res.status}: ${JSON.stringify(bad.errors.slice(0, 3))}`]);
  }
  return problems;
}

/**
 * Everything the store keeps (accounts, partners, keys) as text; the journal lives outside it.
 * `normal()` drops what a first read creates and is not a change: an empty collection or map.
 */
export function storeSnapshot(deps) {
  const raw = JSON.stringify(deps.store.data);
  return { raw, normal: () => JSON.stringify(JSON.parse(raw), withoutEmpty) };
}

function withoutEmpty(key, value) {
  if (key === '' || !value || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 0) return undefined;
  if (keys.length === 2 && value.items && value.order && !value.order.length && !Object.keys(value.items).length) return undefined;
  return value;
}

/** A hash of one account's stored data, without what a first read creates. */
export function accountFingerprint(deps, accountId) {
  const text = JSON.stringify(deps.store.data.accounts[accountId] ?? null, withoutEmpty);
  return createHash('sha1').update(text).digest('hex');
}

/** Which parts of the store differ between two snapshots (for a readable report). */
export function storeDiff(before, after, path = '', out = []) {
  if (out.length >= 6) return out;
  if (before === after) return out;
  if (typeof before !== 'object' || typeof after !== 'object' || before === null || after === null) {
    out.push(`${path || '/'}: ${JSON.stringify(before)?.slice(0, 80)} -> ${JSON.stringify(after)?.slice(0, 80)}`);
    return out;
  }
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of keys) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) storeDiff(before[key], after[key], `${path}/${key}`, out);
  }
  return out;
}
