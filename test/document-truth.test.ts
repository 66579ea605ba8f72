// The documents say exactly what the server does, where an outside Schemathesis run found them
// looser: the control plane's 404 for an X-Sandbox-Account it cannot reach (every operation), the
// scenario document's whole schema in POST /_sandbox/scenarios (the same as the server's own), an
// id that names a stored object is never "", and the Email pattern agrees with `format: email`
// (RFC 5321: a local part of at most 64 characters, labels of at most 63). test/positive-data.test.ts
// holds the other side: the documents' examples and bounds are accepted.
import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import type request from 'supertest';
import { eventLog } from '../src/events/events.js';
import { loadDocument } from '../src/http/openapi.js';
import { responseCheckerFor } from '../src/http/response-check.js';
import { fieldKind } from '../scripts/fuzz/operations.mjs';
import { setup, type TestSandbox } from './helpers.js';

type Json = Record<string, any>;
type DocName = 'openapi' | 'control-plane';

function resolve(doc: DocName, node: any): any {
  let current = node;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops++) {
    const [file, pointer] = current.$ref.split('#');
    if (file) doc = file.includes('control-plane') ? 'control-plane' : 'openapi';
    current = pointer.replace(/^\//, '').split('/').map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~')).reduce((n: any, k: string) => n?.[k], loadDocument(doc).document);
  }
  return current;
}

interface Op { doc: DocName; id: string; method: string; path: string; op: Json; params: Json[] }

function operationsOf(doc: DocName): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries(loadDocument(doc).document.paths ?? {}) as Array<[string, Json]>) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op?.operationId !== 'string') continue;
      out.push({ doc, id: op.operationId, method, path, op, params: [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => resolve(doc, p)) });
    }
  }
  return out;
}

const CONTROL = operationsOf('control-plane');
const API = operationsOf('openapi');

let sb: TestSandbox;
let token: string;
beforeAll(async () => {
  sb = await setup();
  token = await sb.token();
});

const call = (op: Op, url: string): request.Test => (sb.http as unknown as Record<string, (u: string) => request.Test>)[op.method](url);

describe('the control plane\'s 404 for an account it cannot reach', () => {
  const takesHeader = CONTROL.filter((op) => op.params.some((p) => p.in === 'header' && p.name === 'X-Sandbox-Account'));

  it('most operations take X-Sandbox-Account', () => {
    expect(takesHeader.length).toBeGreaterThan(20);
  });

  // The header is read on every control-plane request, so every operation documents the answer.
  it.each(CONTROL.map((op) => [op.id, op] as const))('%s documents 404 and answers it, as documented, for an unknown or unreachable account', async (_id, op) => {
    expect(Object.keys(op.op.responses)).toContain('404');
    const url = op.path.replace(/\{[^}]+\}/g, 'x_1');
    for (const [header, bearer] of [['ptn_nope:production', undefined], ['ptn_default:demo', undefined]] as const) {
      // With the default partner's token, another partner's account is out of reach.
      const named = header === 'ptn_default:demo' ? 'ptn_someone_else:demo' : header;
      const res = await call(op, url).set('X-Sandbox-Account', named).set('Authorization', `Bearer ${bearer ?? token}`).send(op.op.requestBody ? {} : undefined);
      expect([named, res.status, res.body.code]).toEqual([named, 404, 'not_found']);
      expect(responseCheckerFor(loadDocument('control-plane').document).check(op.id, 404, res.body)).toBeNull();
    }
  });
});

describe('POST /_sandbox/scenarios documents the whole scenario document', () => {
  /** A schema with its references followed (`$defs` of the server's file, components of the document), descriptions and examples left out. */
  function normalised(doc: 'file' | 'control-plane', node: any, root: Json, seen: string[] = []): unknown {
    if (Array.isArray(node)) return node.map((n) => normalised(doc, n, root, seen));
    if (!node || typeof node !== 'object') return node;
    if (typeof node.$ref === 'string') {
      if (seen.includes(node.$ref)) return { cycle: node.$ref };
      const target = doc === 'file' ? root.$defs[node.$ref.replace('#/$defs/', '')] : resolve('control-plane', { $ref: node.$ref });
      const { $ref: _ref, ...rest } = node;
      return { ...(normalised(doc, target, root, [...seen, node.$ref]) as Json), ...(normalised(doc, rest, root, seen) as Json) };
    }
    return Object.fromEntries(Object.entries(node)
      .filter(([key]) => !['description', 'examples', 'example', 'title', '$schema', '$id', '$defs', 'x-enum-descriptions'].includes(key))
      .map(([key, value]) => [key, normalised(doc, value, root, seen)]));
  }

  it('its body schema is the server\'s scenario.schema.json, every action and rule included', () => {
    const file = JSON.parse(readFileSync('src/scenarios/scenario.schema.json', 'utf8')) as Json;
    const control = loadDocument('control-plane').document as unknown as Json;
    const operation = control.paths['/_sandbox/scenarios'].post;
    for (const media of ['application/json', 'application/yaml']) expect(operation.requestBody.content[media].schema).toEqual({ $ref: '#/components/schemas/ScenarioDocument' });
    const documented = normalised('control-plane', { $ref: '#/components/schemas/ScenarioDocument' }, control);
    expect(documented).toEqual(normalised('file', file, file));
    // Every action is there by name.
    const rule = resolve('control-plane', { $ref: '#/components/schemas/ScenarioRule' });
    expect(Object.keys(rule.properties)).toEqual(expect.arrayContaining(['match', 'respond', 'delay_ms', 'drop', 'fail_delivery', 'nth', 'from', 'times', 'probability']));
    expect(rule.oneOf.map((branch: Json) => branch.required[0])).toEqual(file.$defs.rule.oneOf.map((branch: Json) => branch.required[0]));
    expect(rule.oneOf.length).toBeGreaterThanOrEqual(4);
  });

  it('what the document refuses, the server refuses (400 naming the field) and loads nothing', async () => {
    for (const [document, field] of [
      [{ name: 'x', rules: [{ match: {}, respond: { status: 200 }, drop: 'reset' }] }, 'rules[0]'],
      [{ name: 'x', rules: [{ match: {}, respond: { status: 503, message: 'm'.repeat(1001) } }] }, 'rules[0].respond.message'],
      [{ name: 'x', rules: [{ match: { operation: 'o'.repeat(256) }, respond: { status: 503 } }] }, 'rules[0].match.operation'],
      [{ name: 'x', rules: [{ match: { topic: ['invoice_paid', 'invoice_paid'] }, fail_delivery: { status: 500 } }] }, 'rules[0].match.topic'],
    ] as const) {
      const res = await sb.http.post('/_sandbox/scenarios').send(document);
      expect([field, res.status, Object.keys(res.body.validation_errors ?? {})]).toEqual([field, 400, expect.arrayContaining([field])]);
    }
    expect((await sb.http.get('/_sandbox/scenarios')).body.data).toEqual([]);
  });
});

describe('POST /_sandbox/snapshots says one of name and document is required', () => {
  it('an empty body answers 400 naming both, as the schema\'s oneOf does, and nothing is saved', async () => {
    const schema = resolve('control-plane', { $ref: '#/components/schemas/SnapshotSaveInput' });
    expect(schema.oneOf.map((branch: Json) => branch.required)).toEqual([['name'], ['document']]);
    const res = await sb.http.post('/_sandbox/snapshots').send({});
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validation_errors).sort()).toEqual(['document', 'name']);
    expect((await sb.http.get('/_sandbox/snapshots')).body.data).toEqual([]);
  });
});

describe('an id that names a stored object is never ""', () => {
  /** Every request body property of both documents that names a stored object (the fuzz's own mapping), with where it is. */
  function idFields(): Array<{ op: Op; path: string; schema: Json }> {
    const out: Array<{ op: Op; path: string; schema: Json }> = [];
    const walk = (op: Op, node: any, at: string, seen: Set<unknown>) => {
      const schema = resolve(op.doc, node);
      if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
      seen.add(schema);
      for (const [key, value] of Object.entries(schema.properties ?? {}) as Array<[string, Json]>) {
        const property = resolve(op.doc, value);
        const named = at ? `${at}.${key}` : key;
        const kind = fieldKind(key, op.id) ?? (key === 'payment_method_id' ? 'vendorMethod' : null);
        if (kind) out.push({ op, path: named, schema: property.type === 'array' ? resolve(op.doc, property.items) : property });
        walk(op, property, named, seen);
        if (property.items) walk(op, property.items, `${named}[0]`, seen);
      }
      for (const key of ['allOf', 'oneOf', 'anyOf']) for (const member of schema[key] ?? []) walk(op, member, at, seen);
    };
    for (const op of [...API, ...CONTROL]) {
      for (const media of Object.values(op.op.requestBody?.content ?? {}) as Json[]) if (media.schema) walk(op, media.schema, '', new Set());
    }
    return out;
  }

  it('every such field of a request body has minLength 1 (checkout-auth invoice_id and bill vendor_id among them)', () => {
    const fields = idFields();
    expect(fields.map((f) => `${f.op.id} ${f.path}`)).toEqual(expect.arrayContaining(['initCheckoutAuth invoice_id', 'createBill vendor_id', 'createInvoice customer_id']));
    expect(fields.filter((f) => f.schema.minLength !== 1).map((f) => `${f.op.id} ${f.path}`)).toEqual([]);
  });

  it.each([
    ['POST /checkout-auth/init', '/checkout-auth/init', { customer_id: 'cus_x', invoice_id: '' }, 'invoice_id'],
    ['POST /bills', '/bills', { vendor_id: '', amount: 10 }, 'vendor_id'],
    ['POST /invoices', '/invoices', { customer_id: '', line_items: [{ amount: 10 }] }, 'customer_id'],
    ['POST /bills/bulk-delete', '/bills/bulk-delete', { bill_ids: [''] }, 'bill_ids[0]'],
  ])('%s with "" answers 400 naming the field, and nothing is stored', async (_name, path, body, field) => {
    const res = await sb.as(token).post(path, body);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validation_errors)).toEqual([field]);
    expect([...eventLog(sb.deps.store.account('ptn_default', 'production')).values()]).toEqual([]);
  });
});

describe('emails: the pattern agrees with format: email (RFC 5321 lengths), and the server with both', () => {
  const pattern = () => new RegExp((loadDocument('openapi').document as Json).components.schemas.Email.pattern as string, 'u');
  const ATEXT = "abcXYZ0189!#$%&'*+/=?^_`{|}~-";
  const localPart = fc.array(fc.stringMatching(/^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]{1,30}$/), { minLength: 1, maxLength: 4 }).map((atoms) => atoms.join('.'));
  const label = fc.integer({ min: 1, max: 70 }).chain((n) => fc.constantFrom(...'abc019').map((c) => (n === 1 ? c : `${c}${'x'.repeat(n - 2)}${c}`)));
  const domain = fc.array(label, { minLength: 2, maxLength: 4 }).map((labels) => labels.join('.'));

  /** RFC 5321's limits on the dot-atom form the sandbox accepts: local part 1-64, labels 1-63, 254 in all. */
  function reference(email: string): boolean {
    const at = email.lastIndexOf('@');
    const local = email.slice(0, at);
    const labels = email.slice(at + 1).split('.');
    return email.length <= 254 && local.length >= 1 && local.length <= 64
      && local.split('.').every((atom) => atom.length > 0 && [...atom].every((c) => ATEXT.includes(c) || /[a-zA-Z0-9]/.test(c)))
      && labels.length >= 2 && labels.every((l) => /^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/.test(l) && l.length <= 63);
  }

  it('the pattern accepts exactly the addresses within RFC 5321\'s lengths (generated local parts of 1 to 123 characters, labels of 1 to 70)', () => {
    fc.assert(fc.property(localPart, domain, (local, host) => {
      const email = `${local}@${host}`;
      // The schema's maxLength (254) bounds the whole; the pattern the parts.
      expect([email, pattern().test(email) && email.length <= 254]).toEqual([email, reference(email)]);
    }), { numRuns: 2000, seed: 42 });
    expect(pattern().test(`${'a'.repeat(64)}@example.test`)).toBe(true);
    expect(pattern().test(`${'a'.repeat(65)}@example.test`)).toBe(false);
    expect(pattern().test(`a@${'b'.repeat(63)}.test`)).toBe(true);
    expect(pattern().test(`a@${'b'.repeat(64)}.test`)).toBe(false);
  });

  it('the server accepts a customer email exactly when the pattern does (generated, over HTTP)', async () => {
    const api = sb.as(token);
    await fc.assert(fc.asyncProperty(localPart, domain, async (local, host) => {
      const email = `${local}@${host}`;
      fc.pre(email.length <= 254);
      const res = await api.post('/customers', { name: 'Mail Co', email });
      expect([email, res.status]).toEqual([email, pattern().test(email) ? 201 : 400]);
      if (res.status === 400) expect(Object.keys(res.body.validation_errors)).toEqual(['email']);
    }), { numRuns: 60, seed: 7 });
  });
});
