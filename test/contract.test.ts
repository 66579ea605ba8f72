// The documents say exactly what the server does: this file derives from openapi/openapi.yaml and
// openapi/control-plane.yaml what they promise (statuses, required fields, error codes, path
// prefixes) and checks the server against it, operation by operation. Every answer is also checked
// by the strict response checker (validateResponses), which refuses an undocumented status.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type request from 'supertest';
import { Errors } from '../src/http/errors.js';
import { loadDocument } from '../src/http/openapi.js';
import { LIMITS } from '../src/limits.js';
import { setup, type TestSandbox } from './helpers.js';
import { customer, invoice } from './receivables-helpers.js';

type Json = Record<string, any>;
type DocName = 'openapi' | 'control-plane';

interface Op {
  doc: DocName;
  id: string;
  method: string;
  path: string;
  op: Json;
  params: Json[];
}

function resolve(doc: DocName, node: any): any {
  let current = node;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops++) {
    const parts = current.$ref.replace(/^#\//, '').split('/').map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    current = parts.reduce((n: any, k: string) => n?.[k], loadDocument(doc).document);
  }
  return current;
}

function operationsOf(doc: DocName): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries(loadDocument(doc).document.paths ?? {}) as Array<[string, Json]>) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op?.operationId !== 'string') continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => resolve(doc, p));
      out.push({ doc, id: op.operationId, method, path, op, params });
    }
  }
  return out;
}

const API = operationsOf('openapi');
const CONTROL = operationsOf('control-plane');
const documented = (op: Op) => Object.keys(op.op.responses).filter((s) => /^\d{3}$/.test(s)).map(Number);
const securityOf = (op: Op) => JSON.stringify(op.op.security ?? loadDocument(op.doc).document.security ?? []);

/** The operation's documented request example (every operation with a body has one). */
function exampleBody(op: Op): { type: string; body: unknown } | undefined {
  const content = op.op.requestBody?.content as Json | undefined;
  if (!content) return undefined;
  const [type, media] = Object.entries(content)[0] as [string, Json];
  return { type, body: structuredClone(media.example) };
}

let sb: TestSandbox;
let bearer: string;
let demoBearer: string;
let checkoutBearer: string;

beforeAll(async () => {
  sb = await setup();
  bearer = await sb.token();
  demoBearer = await sb.token('demo');
  const api = sb.as(bearer);
  const cus = await customer(api);
  const inv = await invoice(api, cus);
  checkoutBearer = (await api.post('/checkout-auth/init', { customer_id: cus, invoice_id: inv.id }).expect(200)).body.token;
}, 120_000);

/** A request for the operation: path parameters filled, the documented example body, the right credentials. */
function call(op: Op, { path, body, auth = true, query = '' }: { path?: string; body?: unknown; auth?: boolean; query?: string } = {}): request.Test {
  const prefix = op.doc === 'control-plane' ? '' : '';
  const concrete = path ?? op.path.replace(/\{[^}]+\}/g, (name) => `${name.slice(1, -1)}_1`);
  const req = (sb.http as unknown as Record<string, (url: string) => request.Test>)[op.method](`${prefix}${concrete}${query}`);
  const security = securityOf(op);
  if (auth && op.doc === 'openapi') {
    if (security.includes('clientBasic')) req.auth(sb.deps.config.credentials.production.client_id, sb.deps.config.credentials.production.client_secret);
    else if (security.includes('checkoutToken')) req.set('Authorization', `Bearer ${checkoutBearer}`);
    else if (security.includes('oauth2')) req.set('Authorization', `Bearer ${bearer}`);
  }
  const example = exampleBody(op);
  const sent = body ?? example?.body;
  if (sent !== undefined) {
    if (example?.type === 'application/x-www-form-urlencoded') req.type('form');
    req.send(sent as object);
  }
  return req;
}

describe('error codes', () => {
  const templates = [...new Set(Object.values(Errors).map((t) => t.code))];

  it.each(['openapi', 'control-plane'] as const)('HttpError.code of %s lists exactly the codes of the templates in src/http/errors.ts', (doc) => {
    const code = resolve(doc, loadDocument(doc).document.components?.schemas?.HttpError).properties.code;
    expect(code.enum).toEqual(templates);
    expect(code['x-enum-descriptions']).toHaveLength(templates.length);
  });

  it('a scenario respond.code may be exactly those codes', () => {
    const schema = JSON.parse(readFileSync(new URL('../src/scenarios/scenario.schema.json', import.meta.url), 'utf8'));
    expect(schema.$defs.respond.properties.code.enum).toEqual(templates);
  });

  it('every error status an operation documents has a template, so it can be forced with a listed code', () => {
    const statuses = new Set(Object.values(Errors).map((t) => t.status));
    const missing = [...API, ...CONTROL].flatMap((op) => documented(op).filter((s) => s >= 400 && !statuses.has(s)).map((s) => `${op.id} ${s}`));
    expect(missing).toEqual([]);
  });
});

describe('statuses', () => {
  it('every API operation documents 400, 500 and 503, and 401 and 429 when it needs a token or credentials', () => {
    const gaps = API.flatMap((op) => {
      const needs = [400, 500, 503];
      if (/oauth2|checkoutToken/.test(securityOf(op))) needs.push(401);
      if (/oauth2|clientBasic/.test(securityOf(op))) needs.push(429);
      return needs.filter((s) => !documented(op).includes(s)).map((s) => `${op.id} ${s}`);
    });
    expect(gaps).toEqual([]);
  });

  it('every operation with a body documents 413 (the body limit)', () => {
    expect([...API, ...CONTROL].filter((op) => op.op.requestBody && !documented(op).includes(413)).map((op) => op.id)).toEqual([]);
  });

  it.each(API.map((op) => [op.id, op] as const))('%s answers every status it documents to Prefer, and refuses any other', async (_id, op) => {
    for (const status of documented(op)) {
      const res = await call(op).set('Prefer', `code=${status}`);
      // A success status without a documented example cannot be forced (there is nothing to answer).
      const content = resolve('openapi', op.op.responses[String(status)])?.content?.['application/json'];
      const answerable = status >= 400 || !content || content.example !== undefined || content.examples !== undefined;
      expect([status, res.status]).toEqual([status, answerable ? status : 400]);
    }
    for (const status of [418, 502]) {
      const res = await call(op).set('Prefer', `code=${status}`);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.validation_errors)).toEqual(['Prefer']);
    }
  });

  it.each([...API, ...CONTROL].map((op) => [`${op.doc} ${op.id}`, op] as const))('%s answers 400 naming an unknown query parameter', async (_id, op) => {
    const res = await call(op, { query: '?unknown_parameter=1' });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty('unknown_parameter');
    expect(documented(op)).toContain(400);
  });

  it.each(API.filter((op) => /oauth2|checkoutToken/.test(securityOf(op))).map((op) => [op.id, op] as const))('%s answers 401 without a token', async (_id, op) => {
    const res = await call(op, { auth: false });
    expect(res.status).toBe(401);
    expect(documented(op)).toContain(401);
  });
});

describe('one shape per resource', () => {
  /** Names of the component schemas reachable from `from` (following $refs). */
  function reachable(doc: DocName, from: unknown): Set<string> {
    const names = new Set<string>();
    const walk = (node: any): void => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach(walk);
      if (typeof node.$ref === 'string') {
        const [, , kind, name] = node.$ref.split('/');
        if (kind === 'schemas' && names.has(name)) return;
        if (kind === 'schemas') names.add(name);
        return walk(resolve(doc, node));
      }
      for (const [key, value] of Object.entries(node)) if (key !== 'example' && key !== 'examples') walk(value);
    };
    walk(from);
    return names;
  }

  it.each(['openapi', 'control-plane'] as const)('in %s, every object an answer can carry requires all its fields (never set: null, never absent)', (doc) => {
    const document = loadDocument(doc).document as Json;
    const ops = operationsOf(doc).map((o) => o.op);
    const answers = reachable(doc, [ops.map((o) => o.responses), document.webhooks]);
    const inputs = reachable(doc, ops.map((o) => [o.requestBody, o.parameters]));
    const loose: string[] = [];
    const check = (node: any, at: string): void => {
      if (!node || typeof node !== 'object' || node.$ref) return;
      if (node.properties) {
        const missing = Object.keys(node.properties).filter((k) => !(node.required ?? []).includes(k));
        if (missing.length) loose.push(`${at}: ${missing.join(', ')}`);
        for (const [k, v] of Object.entries(node.properties)) check(v, `${at}.${k}`);
      }
      if (node.items) check(node.items, `${at}[]`);
      for (const key of ['allOf', 'oneOf', 'anyOf']) (node[key] ?? []).forEach((s: unknown, i: number) => check(s, `${at}.${key}[${i}]`));
    };
    for (const name of answers) if (!inputs.has(name)) check(document.components.schemas[name], name);
    expect(loose).toEqual([]);
  });
});

describe('lengths and sizes', () => {
  /** Every schema node of a document with where it is, skipping examples. */
  function schemaNodes(doc: DocName): Array<{ at: string; node: Json }> {
    const out: Array<{ at: string; node: Json }> = [];
    const walk = (node: any, at: string): void => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}[${i}]`));
      if ('type' in node && (typeof node.type === 'string' || Array.isArray(node.type))) out.push({ at, node });
      for (const [key, value] of Object.entries(node)) if (key !== 'example' && key !== 'examples' && key !== 'servers') walk(value, `${at}/${key}`);
    };
    const document = loadDocument(doc).document as Json;
    walk(document.paths, 'paths');
    walk(document.components, 'components');
    walk(document.webhooks, 'webhooks');
    return out;
  }
  const types = (node: Json) => ([] as string[]).concat(node.type);

  it.each(['openapi', 'control-plane'] as const)('in %s every string has a maxLength and every array a maxItems', (doc) => {
    const nodes = schemaNodes(doc);
    const strings = nodes.filter(({ node }) => types(node).includes('string') && node.enum === undefined && node.const === undefined && node.maxLength === undefined);
    const arrays = nodes.filter(({ node }) => types(node).includes('array') && node.maxItems === undefined);
    expect([...strings, ...arrays].map(({ at }) => at)).toEqual([]);
  });

  it('agrees with src/limits.ts where the server applies the same limit', () => {
    const api = loadDocument('openapi').document as Json;
    const control = loadDocument('control-plane').document as Json;
    const schema = (name: string) => api.components.schemas[name];
    const pageData = (name: string) => schema(name).allOf[1].properties.data.maxItems;
    expect(api.components.parameters.Limit.schema.maximum).toBe(LIMITS.pageMax);
    for (const page of ['CustomerPage', 'InvoicePage', 'BillPage', 'VendorPage', 'PayoutPage', 'TransactionPage', 'WebhookSubscriptionPage', 'WebhookEventRecordPage']) {
      expect([page, pageData(page)]).toEqual([page, LIMITS.pageMax]);
    }
    expect(schema('WebhookCreateInput').properties.endpoint_url.maxLength).toBe(LIMITS.webhookUrlChars);
    expect(schema('BillIdsInput').properties.bill_ids.maxItems).toBe(LIMITS.bulkItems);
    expect(schema('VendorPaymentsCreateInput').properties.items.maxItems).toBe(LIMITS.bulkItems);
    expect(schema('CreateInvoiceInput').properties.line_items.maxItems).toBe(LIMITS.lineItems);
    expect(schema('BillCreateInput').properties.line_items.maxItems).toBe(LIMITS.lineItems);
    expect(schema('BillUploadResult').properties.extracted_data.properties.line_items.maxItems).toBe(LIMITS.lineItems);
    expect(schema('PaymentMethodList').properties.data.maxItems).toBe(LIMITS.paymentMethodsPerCustomer);
    expect(schema('BillDetail').allOf[1].properties.status_history.maxItems).toBe(LIMITS.billStatusHistory);
    expect(schema('Bill').properties.vendor_payments.maxItems).toBe(LIMITS.billVendorPaymentsShown);
    expect(schema('VendorDataRequestList').properties.data.maxItems).toBe(LIMITS.vendorDataRequestsShown);
    expect(schema('PayoutTransactions').properties.transactions.maxItems).toBe(LIMITS.payoutTransactions);
    expect(control.components.schemas.ScenarioList.properties.data.maxItems).toBe(LIMITS.scenariosPerAccount + LIMITS.globalScenarios);
    expect(schema('Customer').properties.name.maxLength).toBe(LIMITS.nameChars);
    expect(schema('Vendor').properties.name.maxLength).toBe(LIMITS.nameChars);
    expect(schema('BillCreateInput').properties.description.maxLength).toBe(LIMITS.textChars);
    expect(schema('BillUploadResult').properties.extracted_data.properties.vendor_email.maxLength).toBe(LIMITS.emailChars);
    expect(schema('PaymentRequestCreateInput').properties.redirect_url.maxLength).toBe(LIMITS.urlChars);
  });

  it('refuses a 100,000-character customer name with 400 naming name, and stores nothing', async () => {
    const api = sb.as(bearer);
    const before = (await api.get('/customers')).body.data.length;
    const res = await api.post('/customers', { name: 'x'.repeat(100_000) });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({ name: 'must NOT have more than 255 characters' });
    expect((await api.get('/customers')).body.data).toHaveLength(before);
    expect((await api.post('/customers', { name: 'x'.repeat(255) })).status).toBe(201);
  });

  it('refuses an array beyond its maxItems naming it (101 invoice lines)', async () => {
    const api = sb.as(bearer);
    const cus = await customer(api, 'Many Lines Co');
    const line = { description: 'Hour', quantity: 1, amount: 1 };
    const res = await api.post('/invoices', { customer_id: cus, line_items: Array.from({ length: LIMITS.lineItems + 1 }, () => line) });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validation_errors)).toEqual(['line_items']);
    expect((await api.post('/invoices', { customer_id: cus, line_items: Array.from({ length: LIMITS.lineItems }, () => line) })).status).toBe(201);
  });
});

describe('servers', () => {
  const servers = (loadDocument('openapi').document.servers ?? []) as Json[];
  const fixed = servers.filter((s) => !s.url.includes('{'));
  const prefixes = fixed.map((s) => new URL(s.url).pathname.replace(/\/$/, ''));

  it('lists production, demo and both /v1 forms, and the templated entry spells the same prefixes', () => {
    expect(prefixes.sort()).toEqual(['', '/demo', '/demo/v1', '/v1']);
    const templated = servers.find((s) => s.url.includes('{'));
    const combos = (templated?.variables.environment.enum as string[]).flatMap((e) => (templated?.variables.version.enum as string[]).map((v) => `${e}${v}`));
    expect(combos.sort()).toEqual(prefixes.sort());
  });

  it.each(['', '/demo', '/demo/v1', '/v1'])('serves the API under the server prefix "%s" with that environment\'s token', async (prefix) => {
    const token = prefix.startsWith('/demo') ? demoBearer : bearer;
    const res = await sb.http.get(`${prefix}/customers`).set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    const other = await sb.http.get(`${prefix}/customers`).set('Authorization', `Bearer ${token === bearer ? demoBearer : bearer}`);
    expect(other.status).toBe(401);
  });
});
