// The documents say exactly what the server does: this file derives from openapi/openapi.yaml and
// openapi/control-plane.yaml what they promise (statuses, required fields, error codes, path
// prefixes) and checks the server against it, operation by operation. Every answer is also checked
// by the strict response checker (validateResponses), which refuses an undocumented status.
import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import type request from 'supertest';
import { Errors } from '../src/errors.js';
import { loadDocument } from '../src/http/openapi.js';
import { LIMITS } from '../src/limits.js';
import { setup, type TestSandbox } from './helpers.js';
import { operationsOf, resolve, securityOf, type DocName, type Json, type Op } from './document-operations.js';
import { customer, invoice } from './receivables-helpers.js';


const API = operationsOf('openapi');
const CONTROL = operationsOf('control-plane');
const documented = (op: Op) => Object.keys(op.op.responses).filter((s) => /^\d{3}$/.test(s)).map(Number);

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

  it.each(['openapi', 'control-plane'] as const)('HttpError.code of %s lists exactly the codes of the templates in src/errors.ts', (doc) => {
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

describe('required fields', () => {
  /** The merged object schema of a node: $refs resolved, allOf members' properties and required joined. */
  function objectSchema(doc: DocName, node: any): { properties: Json; required: string[] } {
    const schema = resolve(doc, node) ?? {};
    const out = { properties: { ...(schema.properties ?? {}) }, required: [...(schema.required ?? [])] };
    for (const member of schema.allOf ?? []) {
      const merged = objectSchema(doc, member);
      Object.assign(out.properties, merged.properties);
      out.required.push(...merged.required);
    }
    return out;
  }

  /** Every required field present in the example, as [path in the body, field name as validation_errors spells it]. */
  function requiredFields(doc: DocName, schemaNode: any, example: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
    if (!example || typeof example !== 'object' || Array.isArray(example)) return [];
    const { properties, required } = objectSchema(doc, schemaNode);
    const out: Array<Array<string | number>> = [];
    for (const key of required) if (key in (example as Json)) out.push([...at, key]);
    for (const [key, value] of Object.entries(example as Json)) {
      const property = resolve(doc, properties[key]);
      if (!property) continue;
      if (Array.isArray(value) && value.length && property.items) out.push(...requiredFields(doc, property.items, value[0], [...at, key, 0]));
      else if (value && typeof value === 'object') out.push(...requiredFields(doc, property, value, [...at, key]));
    }
    return out;
  }

  const spelled = (path: Array<string | number>) => path.reduce<string>((name, s) => (typeof s === 'number' ? `${name}[${s}]` : name ? `${name}.${s}` : s), '');
  const cases = [...API, ...CONTROL].flatMap((op) => {
    const example = exampleBody(op);
    const media = op.op.requestBody?.content?.[example?.type ?? ''];
    if (!example || !media?.schema) return [];
    return requiredFields(op.doc, media.schema, example.body).map((path) => [`${op.doc} ${op.id}`, spelled(path), op, path] as const);
  });

  it('finds required fields to drop in most operations with a body', () => {
    expect(new Set(cases.map(([id]) => id)).size).toBeGreaterThan(30);
  });

  it.each(cases)('%s without %s answers 400 naming it', async (_id, field, op, path) => {
    const body = structuredClone(exampleBody(op)!.body) as Json;
    const parent = path.slice(0, -1).reduce((node: any, key) => node[key], body);
    delete parent[path.at(-1) as string];
    const res = await call(op, { body });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty([field]);
  });
});

describe('rules the schemas state', () => {
  const api = () => sb.as(bearer);

  it('every path parameter has minLength 1, and GET /bills/ is not the list', async () => {
    const params = [...API, ...CONTROL].flatMap((op) => op.params.filter((p) => p.in === 'path').map((p) => `${op.id} ${p.name} ${p.schema?.minLength}`));
    expect(params.filter((p) => !p.endsWith(' 1'))).toEqual([]);
    const res = await api().get('/bills/');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('POST /checkout-auth/init requires invoice_id', async () => {
    const res = await api().post('/checkout-auth/init', { customer_id: 'cus_x' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validation_errors)).toEqual(['invoice_id']);
  });

  it('bill amounts: more than 0 with at most two decimals, on create and PATCH, without float trouble', async () => {
    const vendor = (await api().post('/vendors', { name: 'Amounts Inc' }).expect(201)).body;
    for (const amount of [19.99, 0.07, 1234567.89, 0.1 + 0.2, 1_000_000_000, 0.01]) {
      const created = await api().post('/bills', { vendor_id: vendor.id, amount });
      expect([amount, created.status]).toEqual([amount, 201]);
      expect([amount, (await api().patch(`/bills/${created.body.id}`, { amount })).status]).toEqual([amount, 200]);
    }
    const bill = (await api().post('/bills', { vendor_id: vendor.id, amount: 5 }).expect(201)).body;
    for (const amount of [0, -1, 0.001, 19.999, 1_000_000_000.01]) {
      const created = await api().post('/bills', { vendor_id: vendor.id, amount });
      expect([amount, created.status, Object.keys(created.body.validation_errors ?? {})]).toEqual([amount, 400, ['amount']]);
      const patched = await api().patch(`/bills/${bill.id}`, { amount });
      expect([amount, patched.status, Object.keys(patched.body.validation_errors ?? {})]).toEqual([amount, 400, ['amount']]);
    }
    expect((await api().get(`/bills/${bill.id}`)).body.amount).toBe(5);
  });

  it('emails: the server accepts exactly what the documented pattern accepts', async () => {
    const pattern = new RegExp((loadDocument('openapi').document as Json).components.schemas.Email.pattern, 'u');
    const addresses = ['ap@northwind.test', 'A.B+tag@sub.example.co', "o'brien@example.test", 'a@b', 'a..b@example.test', 'x@[127.0.0.1]', '"quoted"@example.test', 'josé@example.test', '.a@example.test'];
    for (const email of addresses) {
      const res = await api().post('/customers', { name: 'Mail Co', email });
      expect([email, res.status]).toEqual([email, pattern.test(email) ? 201 : 400]);
    }
  });

  it('bank accounts: the account data that matches account_data_type is required, the other refused', async () => {
    const cus = await customer(api(), 'Bank Rules Co');
    const us = { account_number: '000123456789', routing_number: '011000015' };
    const ca = { account_number: '0001234567', institution_code: '001', transit_number: '12345' };
    const post = (body: object) => api().post(`/customers/${cus}/payment-methods/bank`, body);
    expect((await post({ account_data_type: 'us' })).body.validation_errors).toEqual({ us_account_data: 'is required' });
    expect((await post({ account_data_type: 'ca', us_account_data: us })).body.validation_errors).toEqual({
      ca_account_data: 'is required', us_account_data: 'must not be sent when account_data_type is ca',
    });
    expect((await post({ account_data_type: 'us', us_account_data: us, ca_account_data: ca })).body.validation_errors).toEqual({
      ca_account_data: 'must not be sent when account_data_type is us',
    });
    expect((await post({ account_data_type: 'us', us_account_data: us })).status).toBe(201);
    expect((await post({ account_data_type: 'ca', ca_account_data: ca })).status).toBe(201);
  });

  it('checkout payments need payment_method_id unless manual', async () => {
    const checkout = (body: object) => sb.http.post('/checkout/payments').set('Authorization', `Bearer ${checkoutBearer}`).send(body);
    const res = await checkout({ amount: '1.00', payment_method: 'card' });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({ payment_method_id: 'is required' });
    const bad = await checkout({ amount: '1.00', payment_method: 'manual', payment_date: 'March 7, 2026' });
    expect(Object.keys(bad.body.validation_errors)).toEqual(['payment_date']);
  });

  it('an invoice PDF upload takes exactly one of content and url', async () => {
    const neither = await api().post('/invoices/inv_x/pdf', {});
    expect(neither.body.validation_errors).toEqual({ content: 'is required', url: 'is required' });
    const both = await api().post('/invoices/inv_x/pdf', { content: 'JVBERi0=', url: 'https://files.example/a.pdf' });
    expect(both.body.validation_errors).toEqual({ content: 'give only one of content and url', url: 'give only one of content and url' });
    const notBase64 = await api().post('/invoices/inv_x/pdf', { content: 'not base64!' });
    expect(Object.keys(notBase64.body.validation_errors)).toEqual(['content']);
  });

  it('an invoice PDF upload names the fields of the branch the caller chose (oneOf of content and url)', async () => {
    // Every mix of content and url (absent, valid, malformed, wrong type) and an unknown field: the body
    // is refused unless exactly one valid field is given, and validation_errors names the fields of the
    // branch the caller chose, never "url is required" for a malformed content.
    const content = fc.constantFrom(undefined, 'JVBERi0=', 'not base64!', 42);
    const url = fc.constantFrom(undefined, 'https://files.example/a.pdf', 'not a uri', 7);
    await fc.assert(fc.asyncProperty(content, url, fc.boolean(), async (c, u, extra) => {
      const body: Json = { ...(c !== undefined && { content: c }), ...(u !== undefined && { url: u }), ...(extra && { colour: 'red' }) };
      const res = await api().post('/invoices/inv_x/pdf', body);
      const valid = (v: unknown, good: string) => v === good;
      const expected = new Set<string>(extra ? ['colour'] : []);
      if ((c === undefined) === (u === undefined)) ['content', 'url'].forEach((f) => expected.add(f));
      else if (c !== undefined && !valid(c, 'JVBERi0=')) expected.add('content');
      else if (u !== undefined && !valid(u, 'https://files.example/a.pdf')) expected.add('url');
      if (!expected.size) return expect(res.status).toBe(404); // valid: the unknown invoice is next
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.validation_errors).sort()).toEqual([...expected].sort());
      if (c !== undefined && u !== undefined) expect(res.body.validation_errors.content).toBe('give only one of content and url');
    }), { numRuns: 64 });
  });

  it('accounting-sync items are checked against the API create schemas the control-plane document references', async () => {
    const items = (loadDocument('control-plane').document as Json).components.schemas.AccountingSyncInput.properties;
    expect(Object.fromEntries(Object.entries(items).map(([kind, s]: [string, any]) => [kind, s.items.$ref]))).toEqual({
      customers: '#/components/schemas/CustomerCreateInput', invoices: '#/components/schemas/CreateInvoiceInput',
      vendors: '#/components/schemas/VendorCreateInput', bills: '#/components/schemas/BillCreateInput',
    });
    const text = readFileSync(new URL('../openapi/control-plane.yaml', import.meta.url), 'utf8');
    expect(text).toContain("$ref: './openapi.yaml#/components/schemas/CustomerCreateInput'");
    const res = await sb.http.post('/_sandbox/accounting/sync').set('Authorization', `Bearer ${bearer}`)
      .send({ customers: [{ name: 'x'.repeat(300) }], bills: [{ vendor_id: 'ven_x', amount: 0.001 }] });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validation_errors).sort()).toEqual(['bills[0].amount', 'customers[0].name']);
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
    expect(control.components.schemas.SnapshotList.properties.data.maxItems).toBe(LIMITS.snapshotsPerPartner);
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

describe('descriptions', () => {
  it('every operation of both documents has a description', () => {
    expect([...API, ...CONTROL].filter((op) => typeof op.op.description !== 'string' || !op.op.description.trim()).map((op) => op.id)).toEqual([]);
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
