// The door every value stored from a request passes (src/http/storable.ts): bytes, depth, cycles and
// JSON values for scenario documents (JSON and YAML bodies, --scenario files), fixture files and every
// request body; prototype-named field names refused by name where a schema is closed and kept as own
// data where a value is free-form; odd numerals refused for every integer or number parameter; the
// framing and hop-by-hop headers a scenario cannot set. Generated inputs (fast-check), through HTTP,
// checking what is stored and what answers afterwards, not only the status.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { createDeps } from '../src/app.js';
import { startSandbox } from '../src/index.js';
import { documentOperations, loadDocument } from '../src/http/openapi.js';
import { findUnstorable } from '../src/http/storable.js';
import { numeralProblem } from '../src/http/router.js';
import { LIMITS } from '../src/limits.js';
import { VALIDATION_ERROR_FIELDS } from '../src/errors.js';
import { FRAMING_HEADERS } from '../src/scenarios/document.js';
import { deepText, hostileYaml, jsonWithText, oddNumeral, prototypeKey, PROTOTYPE_NAMES, yamlWith } from '../scripts/fuzz/hostile-values.mjs';
import { setup, type Api, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
let token: string;
let api: Api;

beforeEach(async () => {
  sb = await setup({ seed: 'storable' });
  token = await sb.token();
  api = sb.as(token);
});

const loadJson = (text: string) => sb.http.post('/_sandbox/scenarios').set('Content-Type', 'application/json').send(text);
const loadYaml = (text: string) => sb.http.post('/_sandbox/scenarios').set('Content-Type', 'application/yaml').send(text);
const scenarios = async () => (await sb.http.get('/_sandbox/scenarios')).body.data as unknown[];

/** A document whose one rule answers GET /vendors with `body` (the hole for hostile values). */
const vendorsRule = (body: unknown = { kept: true }) => ({ name: 'probe', rules: [{ match: { operation: 'listVendors' }, respond: { status: 200, body } }] });
const RESPOND_BODY = ['rules', 0, 'respond', 'body'];

/** The sandbox still answers every kind of request after a refusal: the token endpoint, a read, the scenario list. */
async function stillServing(): Promise<void> {
  expect((await sb.http.post('/oauth/token').auth('sandbox_client_id', 'sandbox_client_secret').type('form').send({ grant_type: 'client_credentials' })).status).toBe(200);
  const vendors = await api.get('/vendors');
  expect(vendors.status).toBe(200);
  expect(vendors.body.data).toEqual([]);
  expect(await scenarios()).toEqual([]);
  expect((await sb.http.delete('/_sandbox/scenarios')).body).toEqual({ deleted: 0 });
}

describe('scenario documents at the door', () => {
  it.each([
    ['operation: listVendors', '{operation: listVendors}'],
    ['an empty match (every request, the token endpoint among them)', '{}'],
  ])('refuse a cyclic alias (%s) with 400 naming rules[0].respond.body; nothing is stored and every request is still answered', async (_what, match) => {
    const res = await loadYaml(`name: loop\nrules: &r [{match: ${match}, respond: {status: 200, body: *r}}]\n`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'bad_request', message: expect.stringContaining('rules[0].respond.body'), validation_errors: { 'rules[0].respond.body': expect.stringContaining('contains itself') } });
    await stillServing();
  });

  it('refuse every generated cyclic alias, wherever it loops, with 400 naming a field of the document', async () => {
    await fc.assert(fc.asyncProperty(hostileYaml.filter((v) => v.kind === 'cyclic'), async (cyclic) => {
      const res = await loadYaml(yamlWith(vendorsRule({ a: [1, { b: 'c' }] }), RESPOND_BODY, cyclic));
      expect(res.status).toBe(400);
      const fields = Object.entries(res.body.validation_errors as Record<string, string>);
      expect(fields).toHaveLength(1);
      expect(fields[0][1]).toContain('contains itself');
      expect(await scenarios()).toEqual([]);
    }), { seed: 4001, numRuns: 40 });
    await stillServing();
  });

  it('hold the nesting of a document to LIMITS.valueDepth levels in all, exactly: respond.body (4 levels down) up to 60 deep is stored and served, one more is a 400 naming it', async () => {
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 140 }), fc.boolean(), async (depth, object) => {
      const text = jsonWithText(vendorsRule(), RESPOND_BODY, deepText(depth, object));
      const res = await loadJson(text);
      if (depth + 4 <= LIMITS.valueDepth) {
        expect(res.status).toBe(201);
        const served = await api.get('/vendors');
        expect(served.status).toBe(200);
        expect(JSON.stringify(served.body)).toBe(deepText(depth, object));
        expect((await sb.http.delete(`/_sandbox/scenarios/${res.body.id}`)).status).toBe(200);
      } else {
        expect(res.status).toBe(400);
        expect(res.body.validation_errors).toEqual({ 'rules[0].respond.body': `nests deeper than ${LIMITS.valueDepth} levels of objects and arrays` });
        expect(await scenarios()).toEqual([]);
      }
    }), { seed: 4002, numRuns: 40 });
  });

  it.each([
    ['JSON', (depth: number) => loadJson(jsonWithText(vendorsRule(), RESPOND_BODY, deepText(depth, true))), 'rules[0].respond.body'],
    ['YAML', (depth: number) => loadYaml(yamlWith(vendorsRule(), RESPOND_BODY, { kind: 'yamlScalar', text: deepText(depth, false) })), 'body'],
  ])('answer a %s document nested 10,000 and 100,000 deep with a clean 400 (once 500), and keep serving', async (_kind, send, field) => {
    for (const depth of [10_000, 100_000]) {
      const res = await send(depth);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.validation_errors)).toEqual([field]);
    }
    await stillServing();
  });

  it('hold a JSON document to LIMITS.scenarioBytes as JSON, exactly, whatever the characters (their JSON sizes differ): 413 naming rules[0].respond.body beyond', async () => {
    const units = fc.constantFrom('x', 'é', '𝔘', '\n', '\u0001', '"', '\\', '\ud800', '€');
    await fc.assert(fc.asyncProperty(units, fc.integer({ min: -600, max: 600 }), async (unit, off) => {
      const overhead = Buffer.byteLength(JSON.stringify(vendorsRule('')));
      const perUnit = Buffer.byteLength(JSON.stringify(unit)) - 2;
      const body = unit.repeat(Math.max(0, Math.floor((LIMITS.scenarioBytes - overhead) / perUnit) + off));
      const doc = vendorsRule(body);
      const res = await loadJson(JSON.stringify(doc));
      if (Buffer.byteLength(JSON.stringify(doc)) <= LIMITS.scenarioBytes) {
        expect(res.status).toBe(201);
        expect((await api.get('/vendors')).body).toBe(body);
        expect((await sb.http.delete(`/_sandbox/scenarios/${res.body.id}`)).status).toBe(200);
      } else {
        expect(res.status).toBe(413);
        expect(res.body).toEqual({ code: 'payload_too_large', message: expect.any(String), validation_errors: { 'rules[0].respond.body': expect.stringContaining('past 1 MB as JSON') } });
      }
    }), { seed: 4003, numRuns: 25 });
    expect(await scenarios()).toEqual([]);
  });

  it('refuse a JSON document with a 14 MB respond.body with 413 naming it (once stored: 290 of them ran the heap out)', async () => {
    const res = await loadJson(JSON.stringify(vendorsRule('x'.repeat(14 * 1024 * 1024))));
    expect(res.status).toBe(413);
    expect(Object.keys(res.body.validation_errors)).toEqual(['rules[0].respond.body']);
    await stillServing();
  });

  it('refuse a YAML text past the limit with 413 naming the body, and an alias bomb with 400 naming the body, and store a shared alias expanded', async () => {
    const big = await loadYaml(`name: big\nrules: [{match: {operation: listVendors}, respond: {status: 200, body: "${'x'.repeat(LIMITS.scenarioBytes)}"}}]\n`);
    expect(big.status).toBe(413);
    expect(big.body.validation_errors).toEqual({ body: 'is larger than 1 MB' });
    // Ten levels of ten aliases: 10^10 strings if expanded.
    const bomb = await loadYaml(yamlWith(vendorsRule(), RESPOND_BODY, { kind: 'bomb', fan: 10, levels: 10, leaf: 8 }));
    expect(bomb.status).toBe(400);
    expect(bomb.body.validation_errors).toEqual({ body: expect.stringContaining(`more than ${LIMITS.yamlAliases} times`) });
    const shared = await loadYaml(yamlWith(vendorsRule(), RESPOND_BODY, { kind: 'bomb', fan: 3, levels: 1, leaf: 2 }));
    expect(shared.status).toBe(201);
    expect((await api.get('/vendors')).body).toEqual({ l0: ['xx', 'xx', 'xx'], l1: [['xx', 'xx', 'xx'], ['xx', 'xx', 'xx'], ['xx', 'xx', 'xx']] });
  });

  it.each([
    ['.inf', 'is Infinity'], ['-.inf', 'is -Infinity'], ['.nan', 'is NaN'],
  ])('refuse the YAML value %s, which JSON cannot hold, naming the field', async (text, why) => {
    const res = await loadYaml(yamlWith(vendorsRule(), RESPOND_BODY, { kind: 'yamlScalar', text }));
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({ 'rules[0].respond.body': expect.stringContaining(why) });
    const json = await loadJson(jsonWithText(vendorsRule(), RESPOND_BODY, text === '-.inf' ? '-1e400' : '1e400'));
    expect(json.status).toBe(400);
    expect(Object.keys(json.body.validation_errors)).toEqual(['rules[0].respond.body']);
    expect(await scenarios()).toEqual([]);
  });

  it.each(['!!binary aGVsbG8=', '!!set {a, b}', '!!timestamp 2001-12-14', '!!js/undefined ~', '!custom x', '? [a, b]\n        : c', '{[a, b]: c}'])('refuse the YAML %j (a type JSON has not, or a tag the sandbox does not read) naming the body', async (text) => {
    const res = await loadYaml(`name: tagged\nrules:\n  - match: {operation: listVendors}\n    respond:\n      status: 200\n      body:\n        ${text}\n`);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validation_errors)).toEqual(['body']);
    expect(await scenarios()).toEqual([]);
  });

  it('store odd YAML numerals as the numbers YAML 1.2 reads (0x1F is 31), and serve them', async () => {
    await fc.assert(fc.asyncProperty(oddNumeral, async (numeral) => {
      const text = yamlWith(vendorsRule(), RESPOND_BODY, { kind: 'yamlScalar', text: JSON.stringify(numeral) === `"${numeral}"` && numeral.trim() ? numeral.trim() : '0x1F' });
      const expected = (parseYaml(text) as { rules: Array<{ respond: { body: unknown } }> }).rules[0].respond.body;
      const res = await loadYaml(text);
      if (typeof expected === 'number' && !Number.isFinite(expected)) {
        expect(res.status).toBe(400);
        return;
      }
      expect(res.status).toBe(201);
      expect((await api.get('/vendors')).body).toEqual(expected);
      expect((await sb.http.delete(`/_sandbox/scenarios/${res.body.id}`)).status).toBe(200);
    }), { seed: 4004, numRuns: 30 });
  });

  it('refuse a --scenario file that loops, nests too deep or is too large: the start stops with the field named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'door-scn-'));
    try {
      const write = (name: string, text: string) => {
        const file = join(dir, name);
        writeFileSync(file, text);
        return file;
      };
      const loop = write('loop.yaml', 'name: loop\nrules: &r [{match: {operation: listVendors}, respond: {status: 200, body: *r}}]\n');
      await expect(createDeps({ scenarios: [loop], logLevel: 'silent' })).rejects.toThrow(/rules\[0\]\.respond\.body contains itself/);
      const deep = write('deep.json', jsonWithText(vendorsRule(), RESPOND_BODY, deepText(100_000, false)));
      await expect(createDeps({ scenarios: [deep], logLevel: 'silent' })).rejects.toThrow(/body nests deeper than 64 levels/);
      const big = write('big.json', JSON.stringify(vendorsRule('x'.repeat(LIMITS.scenarioBytes))));
      await expect(createDeps({ scenarios: [big], logLevel: 'silent' })).rejects.toThrow(/more than 1 MB/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('every request body at the door', () => {
  it.each([
    ['POST /customers', '/customers', (d: string) => `{"name":${d}}`, 'name[0][0][0]'],
    ['POST /_sandbox/accounting/sync', '/_sandbox/accounting/sync', (d: string) => `{"customers":[{"name":"A","tags":${d}}]}`, 'customers[0].tags[0]'],
    ['POST /_sandbox/events', '/_sandbox/events', (d: string) => `{"topic":"customer_created","data":${d}}`, 'data[0][0][0]'],
  ])('%s nested 100,000 deep answers a clean 400 naming the field, and changes nothing', async (_what, path, body, field) => {
    const before = JSON.stringify(sb.deps.store.data);
    const res = await sb.http.post(path).set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json').send(body(deepText(100_000, false)));
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({ [field]: `nests deeper than ${LIMITS.valueDepth} levels of objects and arrays` });
    expect(JSON.stringify(sb.deps.store.data)).toBe(before);
  });

  it('counts the nesting of a compressed body once inflated (100,000 brackets gzip to a few hundred bytes)', async () => {
    // superagent would write a Buffer as JSON: sent as the bytes it is.
    const gzipped = (bytes: Buffer) => sb.http.post('/customers').set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json').set('Content-Encoding', 'gzip')
      .serialize(((raw: Buffer) => raw) as unknown as (obj: unknown) => string).send(bytes as unknown as object);
    const deep = gzipSync(`{"name":${deepText(100_000, false)}}`);
    expect(deep.length).toBeLessThan(2 * (LIMITS.valueDepth + 1) * 10);
    const res = await gzipped(deep);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({ 'name[0][0][0]': `nests deeper than ${LIMITS.valueDepth} levels of objects and arrays` });
    const small = gzipSync(`{"name":${deepText(LIMITS.valueDepth + 1, true)}}`);
    expect(small.length).toBeLessThan(2 * (LIMITS.valueDepth + 1));
    const refused = await gzipped(small);
    expect(Object.keys(refused.body.validation_errors)).toEqual(['name.a.a.a']);
  });

  it(`holds a body to LIMITS.bodyValues values (413 naming where the count passed it), and names at most LIMITS.validationErrorFields refused fields, with how many more`, async () => {
    const list = (n: number) => `{"customer_id":"cus_x","line_items":[${Array(n).fill(0).join(',')}]}`;
    const post = (text: string) => sb.http.post('/invoices').set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json').send(text);
    // The body, customer_id, line_items and its items: 3 values before the items.
    expect(VALIDATION_ERROR_FIELDS).toBe(LIMITS.validationErrorFields);
    const under = await post(list(LIMITS.bodyValues - 3));
    expect(under.status).toBe(400);
    expect(Object.keys(under.body.validation_errors)).toHaveLength(LIMITS.validationErrorFields + 1);
    expect(under.body.validation_errors).toMatchObject({ line_items: 'must NOT have more than 100 items', 'line_items[0]': 'must be object', '…': `${LIMITS.bodyValues - 3 + 1 - LIMITS.validationErrorFields} more fields are invalid` });
    const over = await post(list(LIMITS.bodyValues - 2));
    expect(over.status).toBe(413);
    expect(over.body.validation_errors).toEqual({ [`line_items[${LIMITS.bodyValues - 3}]`]: expect.stringContaining(`past ${LIMITS.bodyValues} values`) });
    // A YAML list of rules past the schema's 200 is refused before the schema walks it.
    const rules = await loadYaml(`name: many\nrules:\n${'  - 0\n'.repeat(50_000)}`);
    expect(rules.body.validation_errors).toEqual({ rules: 'must NOT have more than 200 items' });
    expect((await api.get('/invoices')).body.data).toEqual([]);
  });

  it('walks nothing for a body too short to nest past the limit, and refuses at exactly one level more than the limit', async () => {
    expect(findUnstorable(JSON.parse(deepText(LIMITS.valueDepth, false)), { what: 'x', depth: LIMITS.valueDepth, bytes: Infinity, values: Infinity })).toBeUndefined();
    expect(findUnstorable(JSON.parse(deepText(LIMITS.valueDepth + 1, false)), { what: 'x', depth: LIMITS.valueDepth, bytes: Infinity, values: Infinity })?.why).toMatch(/nests deeper/);
    // The body is the first level: its field may nest 63 more.
    const deep = await api.post('/customers', JSON.parse(`{"name":${deepText(LIMITS.valueDepth - 1, false)}}`) as object);
    expect(deep.body.validation_errors).toEqual({ name: 'must be string' });
  });
});

describe('the door measures a value as JSON does', () => {
  it('counts the bytes of any JSON value exactly as JSON.stringify writes them (escapes, astral and lone surrogates included)', () => {
    fc.assert(fc.property(fc.jsonValue({ depthSize: 'small' }), fc.string({ unit: 'binary' }), (value, text) => {
      for (const v of [value, text, { [text]: value }]) {
        const bytes = Buffer.byteLength(JSON.stringify(v));
        expect(findUnstorable(v, { what: 'x', depth: 1000, bytes, values: Infinity })).toBeUndefined();
        expect(findUnstorable(v, { what: 'x', depth: 1000, bytes: bytes - 1, values: Infinity })?.status).toBe(413);
      }
    }), { seed: 4005, numRuns: 300 });
  });

  it('finds a cycle anywhere, and a value that is not JSON, without recursion at 1,000,000 levels', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.nat(), (value, pick) => {
      const root = { wrap: [value, { inner: value }] } as Record<string, unknown>;
      const holders: Array<Record<string, unknown> | unknown[]> = [];
      const visit = (v: unknown) => {
        if (v && typeof v === 'object') {
          holders.push(v as Record<string, unknown>);
          for (const child of Object.values(v)) visit(child);
        }
      };
      visit(root);
      const holder = holders[pick % holders.length];
      if (Array.isArray(holder)) holder.push(root);
      else holder.loop = root;
      expect(findUnstorable(root, { what: 'x', depth: 1000, bytes: Infinity, values: Infinity })?.why).toContain('contains itself');
    }), { seed: 4006, numRuns: 200 });
    let deep: unknown = 1;
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(findUnstorable(deep, { what: 'x', depth: 2_000_000, bytes: Infinity, values: Infinity })).toBeUndefined();
    for (const odd of [new Date(), new Map(), new Set(), Buffer.from('x'), /x/, () => 1, Symbol('s'), 1n, undefined, NaN, -Infinity]) {
      expect(findUnstorable({ a: [odd] }, { what: 'x', depth: 10, bytes: Infinity, values: Infinity })?.path).toEqual(['a', 0]);
    }
    expect(findUnstorable(Object.create(null), { what: 'x', depth: 10, bytes: Infinity, values: Infinity })).toBeUndefined();
  });
});

describe('prototype-named field names', () => {
  /** A schema with its local $refs followed, in its own document. */
  const resolved = (doc: 'openapi' | 'control-plane', schema: Record<string, unknown>): Record<string, unknown> => {
    let node = schema;
    for (let hops = 0; typeof node.$ref === 'string' && hops < 10; hops++) {
      node = String(node.$ref).slice(2).split('/').reduce<Record<string, unknown>>((n, segment) => n[segment] as Record<string, unknown>, loadDocument(doc).document as unknown as Record<string, unknown>);
    }
    return node;
  };
  /** Operations (bearer or none) whose JSON body is a closed object, with its fields: an unknown field is refused by name. */
  const closedBodies = () => (['openapi', 'control-plane'] as const).flatMap((doc) => documentOperations(doc).flatMap(({ path, method, operation }) => {
    const security = JSON.stringify(operation.security ?? '');
    const raw = (operation.requestBody as { content?: Record<string, { schema?: Record<string, unknown> }> } | undefined)?.content?.['application/json']?.schema;
    if (!raw || security.includes('checkoutToken') || security.includes('clientBasic')) return [];
    const schema = resolved(doc, raw);
    if (schema.additionalProperties !== false || schema.oneOf || schema.anyOf) return [];
    return [{ path, method, fields: new Set(Object.keys((schema.properties ?? {}) as object)) }];
  }));

  it('are refused with a 400 whose validation_errors names them, in the body of every operation with a closed body, and in a query', async () => {
    const operations = closedBodies();
    expect(operations.length).toBeGreaterThan(30);
    await fc.assert(fc.asyncProperty(prototypeKey, fc.nat(), async (key, pick) => {
      const { path, method, fields } = operations[pick % operations.length];
      // A prototype name that is also one of the operation's fields (`name` is Function.prototype's) is not unknown there.
      fc.pre(!fields.has(key));
      const url = path.replace(/\{[^}]+\}/g, 'x_1');
      const res = await sb.http[method as 'post' | 'patch'](url).set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json').send(`{${JSON.stringify(key)}:1}`);
      expect(res.status).toBe(400);
      expect(Object.hasOwn(res.body.validation_errors, key)).toBe(true);
      expect(res.body.validation_errors[key]).toBe('is not a known field');
      const query = await api.get(`/customers?${encodeURIComponent(key)}=1`);
      expect(query.status).toBe(400);
      expect(Object.hasOwn(query.body.validation_errors, key)).toBe(true);
    }), { seed: 4007, numRuns: 60 });
  });

  it('every name of Object.prototype is refused by name when creating a customer (the list was empty)', async () => {
    for (const key of PROTOTYPE_NAMES.filter((name) => name !== 'name')) {
      const res = await sb.http.post('/customers').set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json').send(`{"name":"A",${JSON.stringify(key)}:{"x":1}}`);
      expect({ key, errors: res.body.validation_errors }).toEqual({ key, errors: { [key]: 'is not a known field' } });
    }
    expect((await api.get('/customers')).body.data).toEqual([]);
  });

  it('are kept as own data in a scenario\'s free-form values (respond.body, header maps), served as given, also after a restart on the data file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'door-keys-'));
    const dataFile = join(dir, 'sandbox.json');
    const time = { now: Date.parse('2026-03-02T09:00:00.000Z') };
    const start = () => startSandbox({ port: 0, rateLimit: 0, logLevel: 'silent', dataFile, overrides: { realNow: () => time.now } });
    const body = fc.dictionary(prototypeKey, fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.dictionary(prototypeKey, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 })), { minKeys: 1, maxKeys: 6 });
    const cases = fc.sample(fc.tuple(body, prototypeKey), { seed: 4008, numRuns: 12 });
    let running = await start();
    try {
      const bearer = await running.token();
      const probes: Array<{ header: string; text: string; key: string }> = [];
      for (const [value, key] of cases) {
        const n = probes.length;
        const text = JSON.stringify(value);
        // The header map keys too: a rule that matches a header named like a prototype property, and answers one.
        const doc = `{"name":"keys ${n}","rules":[{"match":{"operation":"listVendors","header":{"x-probe":"${n}"}},"respond":{"status":200,"headers":{${JSON.stringify(key.replace(/[^!#$%&'*+.^_`|~0-9A-Za-z-]/g, '') || 'constructor')}:"v${n}"},"body":${text}}}]}`;
        const loaded = await fetch(`${running.url}/_sandbox/scenarios`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, body: doc });
        expect(loaded.status).toBe(201);
        probes.push({ header: String(n), text, key });
      }
      const read = async (url: string, bearerToken: string) => {
        for (const { header, text } of probes) {
          const res = await fetch(`${url}/vendors`, { headers: { authorization: `Bearer ${bearerToken}`, 'x-probe': header } });
          expect(res.status).toBe(200);
          const served = await res.text();
          expect(served).toBe(text);
          // Parsed, every key is an own field: the prototype is Object.prototype's, untouched.
          const parsed = JSON.parse(served) as Record<string, unknown>;
          expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
        }
        // Without the probe header no rule matches: a rule naming a header `constructor` meets no inherited one.
        expect((await fetch(`${url}/vendors`, { headers: { authorization: `Bearer ${bearerToken}` } })).status).toBe(200);
      };
      await read(running.url, bearer);
      await running.close();
      running = await start();
      await read(running.url, await running.token());
      expect(readFileSync(dataFile, 'utf8').length).toBeGreaterThan(0);
    } finally {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('odd numerals', () => {
  /** Every integer or number query and path parameter of both documents, with its operation. */
  const numericParameters = () => (['openapi', 'control-plane'] as const).flatMap((doc) => documentOperations(doc).flatMap(({ operationId, path, method, operation }) => {
    const parameters = (operation.parameters ?? []) as Array<{ $ref?: string; name: string; in: string; schema?: { type?: string; minimum?: number; maximum?: number } }>;
    return parameters.map((p) => (p.$ref ? p.$ref.split('/').slice(1).reduce<Record<string, unknown>>((n, s) => n[s] as Record<string, unknown>, loadDocument(doc).document as unknown as Record<string, unknown>) as unknown as typeof p : p))
      .filter((p) => (p.in === 'query' || p.in === 'path') && (p.schema?.type === 'integer' || p.schema?.type === 'number'))
      .map((p) => ({ doc, operationId, path, method, name: p.name, minimum: p.schema?.minimum ?? 0, maximum: p.schema?.maximum ?? 100 }));
  }));

  it('are refused with 400 naming the parameter, for every integer or number parameter of both documents (limit=0x10 was read as 16, limit=1e2 as 100)', async () => {
    const params = numericParameters();
    expect(params.map((p) => p.name)).toEqual(expect.arrayContaining(['limit', 'status']));
    expect(params.length).toBeGreaterThanOrEqual(14);
    await fc.assert(fc.asyncProperty(fc.nat(), oddNumeral, async (pick, numeral) => {
      const p = params[pick % params.length];
      const url = `${p.path.replace(/\{[^}]+\}/g, 'x_1')}?${p.name}=${encodeURIComponent(numeral)}`;
      const res = await sb.http[p.method as 'get'](url).set('Authorization', `Bearer ${token}`);
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect(res.body.validation_errors[p.name]).toEqual(expect.stringContaining('decimal digits'));
    }), { seed: 4009, numRuns: 120 });
    for (const numeral of ['0x10', '1e2', ' 10', '+10', '10.0', '0b1', '1_0', 'Infinity']) {
      const res = await api.get(`/customers?limit=${encodeURIComponent(numeral)}`);
      expect({ numeral, status: res.status, errors: Object.keys(res.body.validation_errors) }).toEqual({ numeral, status: 400, errors: ['limit'] });
    }
  });

  it('in decimal digits within the range are read as written', async () => {
    const params = numericParameters();
    await fc.assert(fc.asyncProperty(fc.nat(), fc.nat(), async (pick, n) => {
      const p = params[pick % params.length];
      const value = p.minimum + (n % (p.maximum - p.minimum + 1));
      const url = `${p.path.replace(/\{[^}]+\}/g, 'x_1')}?${p.name}=${value}`;
      const res = await sb.http[p.method as 'get'](url).set('Authorization', `Bearer ${token}`);
      expect(Object.keys(res.body?.validation_errors ?? {})).not.toContain(p.name);
    }), { seed: 4010, numRuns: 60 });
    const customers = await api.get('/customers?limit=007');
    expect(customers.status).toBe(200);
  });

  it('numeralProblem accepts exactly the decimal numerals', () => {
    fc.assert(fc.property(fc.integer(), (n) => numeralProblem(String(n), true) === undefined));
    fc.assert(fc.property(oddNumeral, (text) => numeralProblem(text, true) !== undefined), { seed: 4011 });
    expect(numeralProblem('2.5', false)).toBeUndefined();
    expect(numeralProblem('2.5', true)).toBeDefined();
    expect(numeralProblem('1e2', false)).toBeDefined();
  });

  it('a signed link whose exp is spelled another way than it was signed answers 403', async () => {
    const customer = await api.post('/customers', { name: 'Linked', email: 'l@example.test' });
    const invoice = await api.post('/invoices', { customer_id: customer.body.id, line_items: [{ description: 'x', quantity: 1, amount: 10 }] });
    const link = new URL((await api.get(`/invoices/${invoice.body.id}/payment-link`)).body.url as string);
    expect((await sb.http.get(`${link.pathname}${link.search}`)).status).toBe(200);
    const exp = Number(link.searchParams.get('exp'));
    for (const spelled of [`0x${exp.toString(16)}`, `${exp}.0`, ` ${exp}`, `+${exp}`]) {
      link.searchParams.set('exp', spelled);
      expect((await sb.http.get(`${link.pathname}${link.search}`)).status).toBe(403);
    }
  });
});

describe('headers a scenario cannot set', () => {
  const schemaPattern = () => (JSON.parse(readFileSync('src/scenarios/scenario.schema.json', 'utf8')) as { $defs: { respond: { properties: { headers: { propertyNames: { not: { pattern: string; description: string } } } } } } }).$defs.respond.properties.headers.propertyNames.not;
  /** The rule as the control-plane document states it: ScenarioDocument's rules are ScenarioRule items, whose respond is ScenarioRespond. */
  const documentPattern = () => {
    const schemas = loadDocument('control-plane').document.components?.schemas as unknown as {
      ScenarioDocument: { properties: { rules: { items: { $ref: string } } } };
      ScenarioRespond: { properties: { headers: { propertyNames: { not: { pattern: string; description: string } } } } };
    };
    expect(schemas.ScenarioDocument.properties.rules.items.$ref).toBe('#/components/schemas/ScenarioRule');
    return schemas.ScenarioRespond.properties.headers.propertyNames.not;
  };

  it('are the same rule in scenario.schema.json and the control-plane document, and it refuses exactly the framing and hop-by-hop names in any case', () => {
    expect(documentPattern()).toEqual(schemaPattern());
    const caseless = (name: string) => [...name].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('');
    expect(schemaPattern().pattern).toBe(`^(?:${FRAMING_HEADERS.map(caseless).join('|')})$`);
    const pattern = new RegExp(schemaPattern().pattern, 'u');
    expect(FRAMING_HEADERS).toEqual(expect.arrayContaining(['Trailer', 'Transfer-Encoding', 'Content-Length', 'Connection', 'Upgrade', 'Keep-Alive', 'Proxy-Connection', 'TE']));
    fc.assert(fc.property(fc.constantFrom(...FRAMING_HEADERS), fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }), (name, upper) => {
      const cased = [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join('');
      expect(pattern.test(cased)).toBe(true);
      expect(pattern.test(`X-${cased}`)).toBe(false);
      expect(pattern.test(`${cased}s`)).toBe(false);
    }), { seed: 4012 });
    for (const fine of ['Retry-After', 'Content-Type', 'Cache-Control', 'Set-Cookie', 'X-Request-Id', 'ETag', 'Location', 'Date', 'Tea']) expect(pattern.test(fine)).toBe(false);
  });

  it('are refused with 400 naming the header, as JSON, as YAML and in a --scenario file, in any case; nothing is loaded', async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom(...FRAMING_HEADERS), fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }), fc.boolean(), async (name, upper, yaml) => {
      const cased = [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join('');
      const doc = { name: 'framing', rules: [{ match: { operation: 'listVendors' }, respond: { status: 200, headers: { [cased]: 'chunked', 'X-Fine': 'yes' }, body: {} } }] };
      const res = yaml ? await loadYaml(yamlWith(doc, [], { kind: 'yamlScalar', text: JSON.stringify(doc) })) : await loadJson(JSON.stringify(doc));
      expect(res.status).toBe(400);
      expect(res.body.validation_errors).toEqual({ [`rules[0].respond.headers.${cased}`]: schemaPattern().description });
      expect(await scenarios()).toEqual([]);
    }), { seed: 4013, numRuns: 40 });
    const dir = mkdtempSync(join(tmpdir(), 'door-headers-'));
    try {
      const file = join(dir, 'trailer.yaml');
      writeFileSync(file, 'name: trailer\nrules:\n  - match: {}\n    respond: {status: 200, headers: {Trailer: X}, body: {}}\n');
      await expect(createDeps({ scenarios: [file], logLevel: 'silent' })).rejects.toThrow(/rules\[0\]\.respond\.headers\.Trailer is a header that frames the message/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Other headers still go out, once, with the server's own framing.
    const ok = await loadJson(JSON.stringify({ name: 'fine', rules: [{ match: { operation: 'listVendors' }, respond: { status: 200, headers: { 'X-Fine': 'yes', 'Cache-Control': 'no-store' }, body: { a: 1 } } }] }));
    expect(ok.status).toBe(201);
    const served = await api.get('/vendors');
    expect(served.headers['x-fine']).toBe('yes');
    expect(served.headers['content-length']).toBe(String(Buffer.byteLength('{"a":1}')));
    expect(served.headers['transfer-encoding']).toBeUndefined();
  });
});

describe('fixture files at the door', () => {
  it('a --fixtures file nested 100,000 deep, or larger than LIMITS.fixtureBytes, stops the start with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'door-fix-'));
    try {
      const deep = join(dir, 'deep.json');
      writeFileSync(deep, `{"name":"deep","customers":[{"name":"A","users":${deepText(100_000, false)}}]}`);
      await expect(createDeps({ fixtures: deep, logLevel: 'silent' })).rejects.toThrow(/customers\[0\]\.users\[0\] nests deeper than 64 levels/);
      const big = join(dir, 'big.json');
      writeFileSync(big, JSON.stringify({ name: 'big', description: 'x'.repeat(LIMITS.fixtureBytes) }));
      await expect(createDeps({ fixtures: big, logLevel: 'silent' })).rejects.toThrow(/past 10 MB/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
