// Owns what the fuzzer sends: fast-check arbitraries for a case (which mutation, which odd value)
// and the builder that turns a case into one HTTP request for an operation: a valid request first
// (bodies and query values from json-schema-faker, ids taken from the world so the request reaches
// the handler), then the case's mutation applied to it. Nothing here generates data by hand: the
// odd values are fast-check arbitraries, the valid ones come from the schemas.
import fc from 'fast-check';
import { generateSync } from 'json-schema-faker';
import { stringify as toYaml } from 'yaml';
import { fieldKind } from './operations.mjs';
import { hostileJson, hostileJsonText, hostileYaml, jsonWithText, oddNumeral, valueAt, yamlWith } from './hostile-values.mjs';

const MAX_U32 = 0xffffffff;

// ---- odd values -------------------------------------------------------------------------------

const nested = (depth, leaf, asObject) => {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = asObject ? { a: value } : [value];
  return value;
};

/** A JSON value of the wrong kind, size or shape for wherever it lands. */
export const weirdValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e308, -1e308, 5e-324, 2 ** 53 + 1, -0, 0.1 + 0.2, 1e21, -1, 0),
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '0', '-1', 'null', 'true', '__proto__', 'constructor', '1e309', 'NaN', '2026-02-30',
    '9999-12-31', '0000-00-00', '2026-03-02T25:61:61Z', '%00', '\u0000', '../../etc/passwd', '<script>alert(1)</script>',
    '\u202e\u0301\ufeff', '😀'.repeat(50), 'tok_visa', 'https://127.0.0.1/x', 'http://[::1]/', 'USD', 'usd'),
  fc.integer({ min: 10_000, max: 300_000 }).map((n) => 'x'.repeat(n)),
  fc.integer({ min: 1_000, max: 50_000 }).map((n) => '𝔘é'.repeat(n)),
  fc.integer({ min: 1_000, max: 100_000 }).map((n) => new Array(n).fill(0)),
  fc.array(fc.jsonValue(), { maxLength: 6 }),
  fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue(), { maxKeys: 6 }),
  fc.tuple(fc.integer({ min: 20, max: 2_500 }), fc.boolean()).map(([depth, asObject]) => nested(depth, 1, asObject)),
);

/** Field names a body should not have (or that an attacker would try). */
export const extraKey = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'created_at', 'updated_at', 'status', 'account_id',
    'partner_id', 'environment', 'secret_key', 'client_secret', 'is_deleted', 'paid_at', 'amount_paid'),
);

/** Bodies that are not JSON (or JSON no parser should be asked to take). */
export const rawBody = fc.oneof(
  fc.constantFrom('{', '{"a":', '[1,2', 'nul', '{"a":1}}', "{'a':1}", '{"a":1,}', '\u0000', '\ufeff{}', '"\\ud800"',
    '{"a":"\\u0000"}', '1e999999', '[]', '""', 'true', '-', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}'),
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.integer({ min: 1_000, max: 200_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.integer({ min: 1_000, max: 100_000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
  fc.integer({ min: 1_000, max: 100_000 }).map((n) => '['.repeat(n)),
);

export const contentType = fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/json; charset=latin1', '',
  'application/vnd.api+json', 'application/yaml', '*/*', 'application/json, text/plain', 'text/html; charset=utf-8',
  'application/octet-stream', 'application/json;;;', 'application/merge-patch+json');

/** Odd path ids: written into the path as they are (already percent-encoded where needed). */
export const oddId = fc.oneof(
  fc.constantFrom('%00', '..', '%2e%2e', '.', '%2F', 'a%2Fb', '%252e', '%c0%ae', '%ff', '%20', '~', 'null', 'undefined',
    '__proto__', 'constructor', 'hasOwnProperty', '0', '-1', '*', '%2A', 'cus_', 'inv_%00', '..%2F..%2F_sandbox%2Freset',
    '%E0%A4%A', '%', '%zz', '%C0%AF', '%u0041', '..;', ';a=b', '%3B', '%09', '%0d%0a', 'a%0d%0aX-Injected:%201', '%23', '%3F'),
  fc.integer({ min: 256, max: 20_000 }).map((n) => 'a'.repeat(n)),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'))),
);

export const absurdQueryValue = fc.oneof(
  oddNumeral,
  fc.constantFrom('-1', '0', '1e9', '1e309', 'NaN', 'Infinity', 'abc', '', '1.5', '99999999999999999999', '%00', 'true',
    '2026-13-45', '0000-00-00', '9999-12-31T23:59:59Z', '+1', ' 1', '0x10', '[]', '{}', 'null', 'undefined', 'demo'),
  fc.integer({ min: 1_000, max: 12_000 }).map((n) => 'x'.repeat(n)),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
);

const authMutation = fc.constantFrom('none', 'empty-bearer', 'garbage', 'truncated', 'alg-none', 'other-env', 'basic-on-bearer',
  'checkout-on-api', 'api-on-checkout', 'lowercase-scheme', 'two-tokens', 'bad-basic', 'admin-header');

const headerMutation = fc.oneof(
  fc.record({ name: fc.constant('prefer'), value: fc.constantFrom('code=abc', 'code=', 'code=99999', 'code=200', 'code=404', 'code=-1', 'example=nope', 'dynamic=true', 'code=422, example=x', 'wait=1e9', 'code=1e3') }),
  fc.record({ name: fc.constant('idempotency-key'), value: fc.oneof(fc.string({ maxLength: 300 }).filter((s) => /^[\x21-\x7e]*$/.test(s)), fc.constantFrom('', 'x'.repeat(5000))) }),
  fc.record({ name: fc.constantFrom('accept', 'accept-encoding', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'origin', 'content-encoding', 'transfer-encoding-x', 'x-http-method-override'),
    value: fc.constantFrom('application/xml', 'gzip', 'deflate', '::1', 'evil.example', 'https', '*', 'DELETE', 'br', 'none') }),
  fc.record({ name: fc.constant('x-huge'), value: fc.integer({ min: 8_000, max: 40_000 }).map((n) => 'h'.repeat(n)) }),
);

/** What happens to the valid request. Weighted towards mutations of the body and the path. */
export const mutation = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'valid' }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('replace'), at: fc.nat(), value: weirdValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete'), at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('extra'), at: fc.nat(), key: extraKey, value: fc.jsonValue({ maxDepth: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('wholeBody'), value: weirdValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rawBody'), text: rawBody }) },
  // A hostile document (hostile-values.mjs) in place of one value of the valid body; as YAML (with a
  // YAML-only value when there is one) where the operation takes YAML and the case picked it.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('hostile'), at: fc.nat(), value: hostileJson, yaml: fc.option(hostileYaml, { freq: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('contentType'), type: contentType }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('pathId'), at: fc.nat(), value: oddId }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('query'), entries: fc.array(fc.tuple(fc.nat(), absurdQueryValue), { minLength: 1, maxLength: 4 }), unknown: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('auth'), how: authMutation }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('header'), header: headerMutation }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('method'), method: fc.constantFrom('PUT', 'PATCH', 'DELETE', 'POST', 'GET', 'OPTIONS', 'HEAD') }) },
);

/** One case: which environment and prefix, the seeds of the valid parts, and the mutation. */
export const caseArbitrary = fc.record({
  env: fc.constantFrom('production', 'production', 'production', 'demo'),
  v1: fc.boolean(),
  jsfSeed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  picks: fc.array(fc.nat({ max: MAX_U32 }), { minLength: 24, maxLength: 24 }),
  mutation,
});

/** `count` cases from a seed, in a fixed order (the same seed gives the same cases). */
export function casesFrom(seed, count) {
  return fc.sample(caseArbitrary, { seed, numRuns: count });
}

// ---- valid requests ---------------------------------------------------------------------------

function picker(picks) {
  let i = 0;
  return {
    int: (n) => (n <= 0 ? 0 : picks[i++ % picks.length] % n),
    chance: (p) => (picks[i++ % picks.length] / MAX_U32) < p,
  };
}

// Valid strings stop at this length: json-schema-faker builds a string one random character at a time,
// and a document maximum of 15 million characters (a bill upload's `content`) took seconds per
// request. Strings past a field's limit come from the mutations instead (`weirdValue`), cheaply.
const GENERATED_STRING_CAP = 4_096;

// (json-schema-faker's own `maxLength` option does not reach a string with `contentEncoding`, so the
// schemas handed to it are capped copies.)
const cappedCopies = new WeakMap();
function capped(schema) {
  if (!schema || typeof schema !== 'object') return schema;
  let copy = cappedCopies.get(schema);
  if (!copy) {
    copy = JSON.parse(JSON.stringify(schema), (key, value) => (key === 'maxLength' && value > GENERATED_STRING_CAP ? GENERATED_STRING_CAP : value));
    cappedCopies.set(schema, copy);
  }
  return copy;
}

export function generate(schema, seed, resolve, extra = {}) {
  try {
    return generateSync(capped(schema), { seed, refResolver: (ref) => capped(resolve(ref)), maxDepth: 6, refDepthMax: 3, maxDefaultItems: 3, optionalsProbability: 0.6, maxLength: GENERATED_STRING_CAP, ...extra });
  } catch {
    return {};
  }
}

/** Ids of a kind in an account's pool ('paymentMethod' is any card or bank account). */
export function poolOf(account, kind) {
  if (kind === 'paymentMethod') return [...(account.ids.card ?? []), ...(account.ids.bank ?? [])];
  return account.ids[kind] ?? [];
}

/** Replace `*_id` fields of a generated body with real ids of the account (most of the time). */
export function withRealIds(value, account, pick, operationId, key = '') {
  if (Array.isArray(value)) {
    const kind = fieldKind(key, operationId);
    if (kind && value.every((v) => typeof v === 'string')) {
      const pool = poolOf(account, kind);
      return pool.length ? value.map((v) => (pick.chance(0.8) ? pool[pick.int(pool.length)] : v)).slice(0, 5) : value;
    }
    return value.map((v) => withRealIds(v, account, pick, operationId, key));
  }
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = withRealIds(v, account, pick, operationId, k);
    return out;
  }
  const kind = typeof value === 'string' ? fieldKind(key, operationId) : null;
  if (kind) {
    const pool = poolOf(account, kind);
    if (pool.length && pick.chance(0.85)) return pool[pick.int(pool.length)];
  }
  return value;
}

/** JSON pointers (as key paths) of every value inside a body, the body itself first. */
export function pointers(value, path = [], out = []) {
  out.push(path);
  if (out.length > 200) return out;
  if (Array.isArray(value)) value.forEach((v, i) => pointers(v, [...path, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) pointers(v, [...path, k], out);
  return out;
}

export function setAt(root, path, update) {
  if (!path.length) return update(root);
  const copy = structuredClone(root);
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key];
  const last = path[path.length - 1];
  const next = update(parent[last]);
  if (next === DELETE) {
    if (Array.isArray(parent)) parent.splice(last, 1);
    else delete parent[last];
  } else {
    Object.defineProperty(parent, last, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}
const DELETE = Symbol('delete');

function withExtra(root, path, key, value) {
  return setAt(root, path, (target) => {
    if (!target || typeof target !== 'object' || Array.isArray(target)) return target;
    const copy = { ...target };
    // defineProperty, so "__proto__" becomes an own field and reaches the JSON text.
    Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
    return copy;
  });
}

const basic = (c) => `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`;

export function authHeaders(op, world, accountName, account) {
  switch (op.auth) {
    case 'oauth2': case 'control': return { authorization: `Bearer ${account.token}` };
    case 'checkout': return { authorization: `Bearer ${account.ids.checkoutToken}` };
    case 'basic': return { authorization: basic(world.keys[accountName]) };
    default: return {};
  }
}

function mutateAuth(how, op, world, accountName, account, headers) {
  const other = world.accounts[accountName === 'A:demo' ? 'A:production' : 'A:demo'];
  const h = { ...headers };
  const token = account.token;
  switch (how) {
    case 'none': delete h.authorization; break;
    case 'empty-bearer': h.authorization = 'Bearer '; break;
    case 'garbage': h.authorization = 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x'; break;
    case 'truncated': h.authorization = `Bearer ${token.slice(0, -3)}`; break;
    case 'alg-none': {
      const [, payload] = token.split('.');
      h.authorization = `Bearer ${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
      break;
    }
    case 'other-env': h.authorization = `Bearer ${other.token}`; break;
    case 'basic-on-bearer': h.authorization = basic(world.keys[accountName]); break;
    case 'checkout-on-api': h.authorization = `Bearer ${account.ids.checkoutToken}`; break;
    case 'api-on-checkout': h.authorization = `Bearer ${token}`; break;
    case 'lowercase-scheme': h.authorization = (h.authorization ?? `Bearer ${token}`).replace(/^Bearer/, 'bearer'); break;
    case 'two-tokens': h.authorization = `Bearer ${token} ${other.token}`; break;
    case 'bad-basic': h.authorization = 'Basic Og=='; break;
    case 'admin-header': h['x-sandbox-admin-token'] = 'not-the-token'; break;
    default: break;
  }
  return h;
}

/**
 * One request for an operation: valid, then mutated as the case says. Answers the request and
 * what the checks need (the account it acts on, whether the Prefer header forces a status).
 */
export function buildRequest(op, kase, world) {
  const pick = picker(kase.picks);
  const accountName = kase.env === 'demo' ? 'A:demo' : 'A:production';
  const account = world.accounts[accountName];
  const m = kase.mutation;

  // Path: real ids of the right kind, most of the time.
  const pathValues = op.pathParams.map((p) => {
    const pool = poolOf(account, p.kind);
    if (pool.length && pick.chance(0.9)) return encodeURIComponent(pool[pick.int(pool.length)]);
    return encodeURIComponent(String(generate(p.schema ?? { type: 'string' }, kase.jsfSeed, op.resolve) ?? 'x'));
  });
  if (m.kind === 'pathId' && pathValues.length) pathValues[m.at % pathValues.length] = m.value;
  let i = 0;
  const filled = op.template.replace(/\{[^}]+\}/g, () => pathValues[i++]);
  const prefix = op.doc === 'control' ? '' : `${kase.env === 'demo' ? '/demo' : ''}${kase.v1 ? '/v1' : ''}`;

  // Query.
  const query = [];
  for (const q of op.queryParams) {
    if (!q.required && !pick.chance(0.4)) continue;
    const kind = fieldKind(q.name, op.id);
    const pool = kind ? poolOf(account, kind) : [];
    const value = pool.length && pick.chance(0.8) ? pool[pick.int(pool.length)] : generate(q.schema, kase.jsfSeed + query.length, op.resolve);
    query.push([q.name, typeof value === 'object' ? JSON.stringify(value) : String(value)]);
  }
  if (m.kind === 'query') {
    for (const [n, value] of m.entries) {
      const name = m.unknown || !op.queryParams.length ? `x_${n % 7}` : op.queryParams[n % op.queryParams.length].name;
      query.push([name, value]);
    }
  }
  const search = query.length ? `?${query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}` : '';

  // Headers.
  let headers = authHeaders(op, world, accountName, account);
  for (const h of op.headerParams) {
    if (h.required || pick.chance(0.5)) headers[h.name.toLowerCase()] = `fuzz-${kase.jsfSeed}-${pick.int(1000)}`;
  }
  if (m.kind === 'auth') headers = mutateAuth(m.how, op, world, accountName, account, headers);
  let forced = false;
  if (m.kind === 'header') {
    headers[m.header.name] = m.header.value;
    forced = m.header.name === 'prefer' && /code=/.test(m.header.value);
  }

  // Body.
  let body;
  let type;
  if (op.body) {
    const types = Object.keys(op.body.content);
    type = types.includes('application/json') ? 'application/json' : types[0];
    if (types.includes('application/yaml') && pick.chance(0.3)) type = 'application/yaml';
    const generated = withRealIds(generate(op.body.content[type] ?? op.body.content[types[0]], kase.jsfSeed, op.resolve), account, pick, op.id);
    let value = generated;
    const spots = pointers(value);
    if (m.kind === 'replace') value = setAt(value, spots[m.at % spots.length], () => m.value);
    if (m.kind === 'delete' && spots.length > 1) value = setAt(value, spots[1 + (m.at % (spots.length - 1))], () => DELETE);
    if (m.kind === 'extra') {
      const objects = spots.filter((p) => { let v = value; for (const k of p) v = v?.[k]; return v && typeof v === 'object' && !Array.isArray(v); });
      value = objects.length ? withExtra(value, objects[m.at % objects.length], m.key, m.value) : value;
    }
    if (m.kind === 'wholeBody') value = m.value;
    if (m.kind === 'hostile') {
      const spot = spots[m.at % spots.length];
      const text = hostileJsonText(m.value, valueAt(value, spot));
      if (type === 'application/yaml') body = yamlWith(value ?? null, spot, m.yaml ?? { kind: 'yamlScalar', text });
      else {
        type = 'application/json';
        body = jsonWithText(value ?? null, spot, text);
      }
    } else if (type === 'application/x-www-form-urlencoded') {
      body = new URLSearchParams(Object.entries(value && typeof value === 'object' ? value : { value }).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
    } else if (type === 'application/yaml') {
      // JSON is YAML too: a value nested too deep for the YAML writer goes as JSON text.
      try { body = toYaml(value ?? null); } catch { body = JSON.stringify(value ?? null); }
    } else {
      body = JSON.stringify(value ?? null);
    }
  } else if (['wholeBody', 'replace', 'extra', 'hostile'].includes(m.kind)) {
    // An operation without a body gets one anyway.
    type = 'application/json';
    body = m.kind === 'hostile' ? hostileJsonText(m.value) : JSON.stringify(m.kind === 'extra' ? { [m.key]: m.value } : m.value ?? null);
  }
  if (m.kind === 'rawBody') {
    body = m.text;
    type ??= 'application/json';
  }
  if (m.kind === 'contentType') {
    type = m.type;
    body ??= '{}';
  }
  if (body !== undefined && type) headers['content-type'] = type;

  const method = m.kind === 'method' ? m.method : op.method;
  return {
    method,
    path: `${prefix}${filled}${search}`,
    headers,
    body: method === 'HEAD' ? undefined : body,
    accountName,
    forced,
  };
}
