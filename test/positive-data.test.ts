// Schemathesis-style positive data: every operation of both documents, sent its documented request
// example (and, for a JSON body, one more built from the schemas' lower bounds: only the required
// fields, each at its minimum length, value or count), against a fresh world of objects whose ids
// the request names, is answered with a status the operation documents as a success. The strict
// response check (validateResponses) holds each answer to the document as well. A refusal here is
// the document promising more than the server does (an example in the past, "" allowed where the
// server wants an id), or the server refusing what it documents.
import { describe, expect, it, jest } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type request from 'supertest';
import { createSandboxServer } from '../src/app.js';
import { generateSync } from 'json-schema-faker';
import { fieldKind, pathParamKind } from '../scripts/fuzz/operations.mjs';
import { setup, type TestSandbox } from './helpers.js';
import { operationsOf, resolve, securityOf, type DocName, type Json, type Op } from './document-operations.js';

jest.setTimeout(60_000);


const OPERATIONS = [...operationsOf('openapi'), ...operationsOf('control-plane')];
const successes = (op: Op) => Object.keys(op.op.responses).filter((s) => /^2\d\d$/.test(s)).map(Number);

// ---- the world ---------------------------------------------------------------------------------

const BANK = { account_number: '000123456789', routing_number: '011000015', account_type: 'checking', bank_name: 'First Sandbox Bank' };
/** A far-future day every date rule accepts (a pay date, a payment date). */
const FUTURE = '2099-03-15';

interface World {
  sb: TestSandbox;
  token: string;
  api: ReturnType<TestSandbox['as']>;
  checkout: string;
  /** Ids by the kind operations.mjs names (customer, invoice, bill, ...), the first being the one used. */
  ids: Record<string, string[]>;
  ctl(method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object): Promise<request.Response>;
}

async function must(res: Promise<request.Response> | request.Test, status: number): Promise<Json> {
  const answer = await res;
  if (answer.status !== status) throw new Error(`world: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  return answer.body;
}

/**
 * One account with an object of every kind the operations name, made through the API and the
 * control plane. `today`: the account clock starts at the real time, as a partner meets it (the
 * examples must hold on any day), else at the tests' fixed start.
 */
async function buildWorld(today: boolean): Promise<World> {
  const sb = await setup();
  if (today) sb.time.now = Date.now();
  const token = await sb.token();
  const api = sb.as(token);
  const ctl: World['ctl'] = (method, path, body) => {
    const req = sb.http[method](`/_sandbox${path}`).set('Authorization', `Bearer ${token}`);
    return Promise.resolve(body === undefined ? req : req.send(body));
  };
  const ids: Record<string, string[]> = {};
  const add = (kind: string, id: string) => (ids[kind] ??= []).push(id);
  const c1 = (await must(api.post('/customers', { name: 'World One', email: 'one@world.example' }), 201)).id;
  add('customer', c1);
  add('customer', (await must(api.post('/customers', { name: 'World Two' }), 201)).id);
  const card = (await must(api.post(`/customers/${c1}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault' }), 201)).id;
  const bank = (await must(api.post(`/customers/${c1}/payment-methods/bank`, { account_data_type: 'us', us_account_data: { account_number: '000123456789', routing_number: '011000015' } }), 201)).id;
  add('card', card);
  add('paymentMethod', card);
  add('paymentMethod', bank);
  add('bank', bank);
  add('invoice', (await must(api.post('/invoices', { customer_id: c1, exclude_from_autopay: true, line_items: [{ description: 'Work', quantity: 1, amount: 1500 }] }), 201)).id);
  const synced = await must(ctl('post', '/accounting/sync', { invoices: [{ customer_id: c1, line_items: [{ description: 'Synced', quantity: 1, amount: 500 }] }] }), 201);
  add('syncedInvoice', synced.invoices[0].id);
  add('paymentRequest', (await must(api.post('/payments/request', { amount: 25.5, currency: 'USD', redirect_url: 'https://shop.example/thanks' }), 201)).id);
  const vendor = (await must(api.post('/vendors', { name: 'World Supply', bank_account: BANK }), 201)).id;
  add('vendor', vendor);
  add('vendorMethod', (await must(api.get(`/vendors/${vendor}/bank-account`), 200)).payment_method_id);
  add('bill', (await must(api.post('/bills', { vendor_id: vendor, amount: 100, number: 'W-1' }), 201)).id);
  add('webhook', (await must(api.post('/webhooks', { endpoint_url: 'https://hooks.world.example/in', topic: 'customer_created' }), 201)).id);
  add('scenario', (await must(ctl('post', '/scenarios', { name: 'quiet', rules: [{ match: { path: '/never-called' }, respond: { status: 404 } }] }), 201)).id);
  add('partner', 'ptn_default');
  const checkout = (await must(api.post('/checkout-auth/init', { customer_id: c1, invoice_id: ids.invoice[0] }), 200)).token;
  return { sb, token, api, checkout, ids, ctl };
}

const first = (w: World, kind: string) => w.ids[kind]?.[0] ?? `${kind}_missing`;

/** A payment of the first invoice, settled (succeeded) when asked; its payout then exists. */
async function payment(w: World, settle: boolean): Promise<string> {
  const paid = await must(w.ctl('post', `/invoices/${first(w, 'invoice')}/pay`, {}), 200);
  if (settle) await must(w.ctl('post', '/clock/advance', { seconds: 2 * 3600 }), 200);
  return paid.id;
}

/** The account saved as a snapshot; its name. */
async function snapshot(w: World): Promise<string> {
  return (await must(w.ctl('post', '/snapshots', { name: 'world' }), 201)).name;
}

/** An open vendor payment (waiting for its pay date) of the first bill. */
async function vendorPayment(w: World): Promise<string> {
  const bill = first(w, 'bill');
  await must(w.api.post(`/bills/${bill}/submit`), 200);
  await must(w.api.post(`/bills/${bill}/pay-date`, { pay_date: FUTURE }), 200);
  const made = await must(w.api.post('/vendor-payments', { idempotency_key: 'world-run', items: [{ bill_id: bill, payment_speed: 'standard' }] }), 200);
  return made.results[0].payment_id;
}

/**
 * What an operation needs beyond the world: an object in the state its example applies to. Each
 * answers the ids to use, by kind, first.
 */
const PREPARE: Record<string, (w: World) => Promise<Record<string, string>>> = {
  restoreCustomer: async (w) => (await must(w.api.delete(`/customers/${first(w, 'customer')}`), 200), {}),
  restoreInvoice: async (w) => (await must(w.api.delete(`/invoices/${first(w, 'invoice')}`), 200), {}),
  uploadInvoicePdf: async (w) => ({ invoice: first(w, 'syncedInvoice') }),
  setDefaultPaymentMethod: async (w) => ({ paymentMethod: first(w, 'bank') }),
  rejectBill: async (w) => (await must(w.api.post(`/bills/${first(w, 'bill')}/submit`), 200), {}),
  getBillDocument: async (w) => {
    const uploaded = await must(w.api.post('/bills/upload', { content: 'JVBERi0xLjQKJSVFT0YK', content_type: 'application/pdf', filename: 'bill.pdf' }), 201);
    return { bill: uploaded.bill_id };
  },
  createVendorPayments: async (w) => {
    await must(w.api.post(`/bills/${first(w, 'bill')}/submit`), 200);
    await must(w.api.post(`/bills/${first(w, 'bill')}/pay-date`, { pay_date: FUTURE }), 200);
    return {};
  },
  cancelVendorPayment: async (w) => ({ vendorPayment: await vendorPayment(w) }),
  bulkCancelVendorPayments: async (w) => ({ vendorPayment: await vendorPayment(w) }),
  sandboxFailVendorPayment: async (w) => ({ vendorPayment: await vendorPayment(w) }),
  retryVendorPayment: async (w) => {
    const paymentId = await vendorPayment(w);
    await must(w.ctl('post', `/vendor-payments/${paymentId}/fail`, {}), 200);
    return {};
  },
  resendVendorDataRequest: async (w) => ({ dataRequest: (await must(w.api.post(`/vendors/${first(w, 'vendor')}/data-request`), 201)).id }),
  sandboxSubmitVendorDataRequest: async (w) => ({ dataRequest: (await must(w.api.post(`/vendors/${first(w, 'vendor')}/data-request`), 201)).id }),
  reactivateVendor: async (w) => (await must(w.api.post(`/vendors/${first(w, 'vendor')}/deactivate`), 200), {}),
  sandboxFailPayment: async (w) => ({ payment: await payment(w, false) }),
  sandboxRefundPayment: async (w) => ({ payment: await payment(w, true) }),
  sandboxChargebackPayment: async (w) => ({ payment: await payment(w, true) }),
  getPayout: async (w) => {
    await payment(w, true);
    return { payout: (await must(w.api.get('/payouts'), 200)).data[0].id };
  },
  listPayoutTransactions: async (w) => {
    await payment(w, true);
    return { payout: (await must(w.api.get('/payouts'), 200)).data[0].id };
  },
  sandboxRenameKey: async (w) => ({ client: (await must(w.ctl('post', '/partners/ptn_default/keys', { environment: 'production', name: 'spare' }), 201)).client_id }),
  sandboxRevokeKey: async (w) => ({ client: (await must(w.ctl('post', '/partners/ptn_default/keys', { environment: 'production', name: 'spare' }), 201)).client_id }),
  sandboxGetObject: async (w) => ({ '{kind}': 'customers', '{id}': first(w, 'customer') }),
  sandboxFireEvent: async (w) => {
    // Its example asks for a duplicate drill, which needs a subscription of the topic to deliver to.
    await must(w.api.post('/webhooks', { endpoint_url: 'https://hooks.world.example/paid', topic: 'invoice_paid' }), 201);
    return { invoice: first(w, 'invoice') };
  },
  sandboxExportSnapshot: async (w) => ({ '{name}': await snapshot(w) }),
  sandboxDeleteSnapshot: async (w) => ({ '{name}': await snapshot(w) }),
  sandboxRestoreSnapshot: async (w) => ({ '{name}': await snapshot(w) }),
  checkoutAddressDetails: async (w) => {
    const found = await must(w.sb.http.post('/checkout/address/autocomplete').set('Authorization', `Bearer ${w.checkout}`).send({ q: '100 Main', country: 'US' }), 200);
    return { address: found.data?.[0]?.id ?? found.suggestions?.[0]?.id ?? found[0]?.id };
  },
};

// ---- requests ------------------------------------------------------------------------------------

/** The kind of id a body field names: the fuzz's own mapping, and the vendor's bank payment method. */
function bodyKind(field: string, op: Op, body?: Json): string | null {
  if (field === 'payment_method_id' && op.id.includes('Vendor')) return 'vendorMethod';
  // A fired event's object: the kind its topic names (invoice_paid: an invoice).
  if (field === 'entity_id' && typeof body?.topic === 'string') return TOPIC_KIND.find(([prefix]) => body.topic.startsWith(prefix))?.[1] ?? null;
  if (field === 'id' && op.id === 'checkoutAddressDetails') return 'address';
  return fieldKind(field, op.id);
}

const TOPIC_KIND: Array<[string, string]> = [['customer_', 'customer'], ['invoice_', 'invoice'], ['payment_method_', 'paymentMethod'], ['default_payment_method', 'customer'], ['payment_', 'payment'], ['payout_', 'payout']];

/** The example (or bounds) body with every id field naming the world's object of that kind. */
function withWorldIds(value: unknown, op: Op, ids: (kind: string, i: number) => string | undefined, key = '', parent?: Json): unknown {
  const kind = key ? bodyKind(key, op, parent) : null;
  if (kind && typeof value === 'string') return ids(kind, 0) ?? value;
  if (kind && Array.isArray(value)) return value.map((v, i) => (typeof v === 'string' ? ids(kind, i) ?? v : v));
  if (Array.isArray(value)) return value.map((v) => withWorldIds(v, op, ids));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withWorldIds(v, op, ids, k, value as Json)]));
  return value;
}

/** The merged object schema of a node (allOf members joined, the first oneOf/anyOf branch taken). */
function merged(doc: DocName, node: any): Json {
  const schema = resolve(doc, node) ?? {};
  const out: Json = { ...schema, properties: { ...(schema.properties ?? {}) }, required: [...(schema.required ?? [])] };
  for (const member of [...(schema.allOf ?? []), ...(schema.oneOf ?? []).slice(0, 1), ...(schema.anyOf ?? []).slice(0, 1)]) {
    const part = merged(doc, member);
    // A branch's `{}` for a field declared above (an exactly-one rule) adds nothing to it.
    for (const [key, value] of Object.entries(part.properties)) out.properties[key] ??= value;
    out.required.push(...part.required);
    for (const key of ['type', 'minLength', 'minimum', 'exclusiveMinimum', 'multipleOf', 'minItems', 'items', 'enum', 'const', 'format', 'example', 'examples']) {
      if (out[key] === undefined && part[key] !== undefined) out[key] = part[key];
    }
  }
  return out;
}

const DATES: Record<string, string> = { date: FUTURE, 'date-time': `${FUTURE}T00:00:00Z`, email: 'a@b.example', uri: 'https://b.example/', uuid: '00000000-0000-4000-8000-000000000000' };

/**
 * A value at the schema's lower bounds: only the required fields of an object, each string at its
 * minLength, each number at its minimum (one step above an exclusive one), each list at its minItems.
 * A string with a format or pattern takes the schema's own example, else a format's far-future or
 * plain value: a bound alone cannot spell one.
 */
function atBounds(doc: DocName, node: any): unknown {
  const schema = merged(doc, node);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const type = ([] as string[]).concat(schema.type ?? (Object.keys(schema.properties).length ? 'object' : 'string')).find((t) => t !== 'null');
  switch (type) {
    case 'object': {
      const value: Json = Object.fromEntries([...new Set<string>(schema.required)].map((key) => [key, atBounds(doc, schema.properties[key] ?? {})]));
      // Conditional requirements (if/then): what the values chosen so far make required, too.
      for (const member of [schema, ...(resolve(doc, node)?.allOf ?? []).map((m: unknown) => resolve(doc, m))]) {
        if (!member?.if || !member.then || !holds(doc, member.if, value)) continue;
        for (const key of merged(doc, member.then).required) value[key] ??= atBounds(doc, schema.properties[key] ?? {});
      }
      return value;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => atBounds(doc, schema.items ?? {}));
    case 'integer':
    case 'number': {
      const step = schema.multipleOf ?? (type === 'integer' ? 1 : 0.01);
      if (schema.minimum !== undefined) return schema.minimum;
      if (schema.exclusiveMinimum !== undefined) return Math.round((schema.exclusiveMinimum + step) * 100) / 100;
      // No bound in the schema (one the service enforces with 422, said in the description): its example.
      return schema.examples?.[0] ?? schema.example ?? 0;
    }
    case 'boolean':
      return false;
    default: {
      // The document's own example of the field first: some rules (a PDF in base64) no bound spells.
      if (schema.examples?.length || schema.example !== undefined) return schema.examples?.[0] ?? schema.example;
      if (schema.format && DATES[schema.format]) return DATES[schema.format];
      // A string the pattern matches, at the shortest the pattern and minLength allow.
      if (schema.pattern) return generateSync({ type: 'string', pattern: schema.pattern, minLength: schema.minLength }, { seed: 1 }) as string;
      return 'a'.repeat(schema.minLength ?? 0);
    }
  }
}

/** Whether a value meets an `if` (the const and enum rules of its properties). */
function holds(doc: DocName, condition: Json, value: Json): boolean {
  const schema = resolve(doc, condition);
  for (const key of schema.required ?? []) if (!(key in value)) return false;
  for (const [key, rule] of Object.entries(schema.properties ?? {}) as Array<[string, Json]>) {
    if (!(key in value)) continue;
    if (rule.const !== undefined && value[key] !== rule.const) return false;
    if (rule.enum && !rule.enum.includes(value[key])) return false;
  }
  return true;
}

interface Built {
  url: string;
  body?: unknown;
  form?: Record<string, string>;
  auth: 'bearer' | 'checkout' | 'basic' | 'none';
}

/** The request of an operation for the world: path ids, the query parameters' examples, the body given. */
function buildRequest(op: Op, w: World, chosen: Record<string, string>, body: unknown): Built {
  const idOf = (kind: string, i = 0) => (i === 0 && chosen[kind]) || w.ids[kind]?.[i];
  const pathParam = (name: string) => {
    const declared = op.params.find((p) => p.in === 'path' && p.name === name);
    return chosen[`{${name}}`] ?? idOf(pathParamKind(op.path, name)) ?? declared?.schema?.enum?.[0] ?? `${name}_missing`;
  };
  const url = op.path.replace(/\{([^}]+)\}/g, (_all, name: string) => encodeURIComponent(pathParam(name)));
  const query = new URLSearchParams();
  for (const p of op.params.filter((x) => x.in === 'query')) {
    const example = p.example ?? p.schema?.examples?.[0] ?? p.schema?.example;
    if (example !== undefined) query.set(p.name, String(example));
    else if (p.required) query.set(p.name, String(atBounds(op.doc, p.schema)));
  }
  const security = securityOf(op);
  const auth = op.doc === 'control-plane' ? 'bearer' : security.includes('clientBasic') ? 'basic' : security.includes('checkoutToken') ? 'checkout' : security.includes('oauth2') ? 'bearer' : 'none';
  const media = Object.keys(op.op.requestBody?.content ?? {})[0];
  const sent = body === undefined ? undefined : withWorldIds(body, op, idOf);
  return {
    url: `${url}${query.size ? `?${query}` : ''}`,
    ...(media === 'application/x-www-form-urlencoded' ? { form: sent as Record<string, string> } : { body: sent }),
    auth,
  };
}

async function send(w: World, op: Op, built: Built): Promise<{ status: number; body: unknown }> {
  if (op.id === 'sandboxStream') return streamStatus(w, built.url);
  let req = (w.sb.http as unknown as Record<string, (url: string) => request.Test>)[op.method](built.url);
  if (built.auth === 'bearer') req = req.set('Authorization', `Bearer ${w.token}`);
  if (built.auth === 'checkout') req = req.set('Authorization', `Bearer ${w.checkout}`);
  if (built.auth === 'basic') req = req.auth(w.sb.deps.config.credentials.production.client_id, w.sb.deps.config.credentials.production.client_secret);
  if (built.form) req = req.type('form').send(built.form);
  else if (built.body !== undefined) req = req.send(built.body as object);
  const res = await req;
  return { status: res.status, body: res.body };
}

/** A live stream never ends: its status and first bytes are the answer, then the connection is closed. */
async function streamStatus(w: World, url: string): Promise<{ status: number; body: unknown }> {
  const server = createSandboxServer(w.sb.app);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((done, fail) => {
      const req = http.get({ host: '127.0.0.1', port, path: url, headers: { authorization: `Bearer ${w.token}` } }, (res) => {
        res.once('data', (chunk: Buffer) => {
          done({ status: res.statusCode ?? 0, body: chunk.toString() });
          req.destroy();
        });
      });
      req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : fail(error)));
    });
  } finally {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
}

/** The documented request example of the operation's first content type, if any. */
function exampleOf(op: Op): unknown {
  const content = op.op.requestBody?.content as Json | undefined;
  if (!content) return undefined;
  const media = Object.values(content)[0] as Json;
  return structuredClone(media.example ?? Object.values(media.examples ?? {}).map((e: any) => resolve(op.doc, e).value)[0]);
}

async function sendFresh(op: Op, body: unknown, today: boolean): Promise<{ status: number; body: unknown; built: Built }> {
  const w = await buildWorld(today);
  const chosen = (await PREPARE[op.id]?.(w)) ?? {};
  const built = buildRequest(op, w, chosen, body);
  return { ...(await send(w, op, built)), built };
}

/** The answer is a success the operation documents; else the request and the answer, to read. */
function expectSuccess(op: Op, res: { status: number; body: unknown; built: Built }): void {
  if (!successes(op).includes(res.status)) {
    throw new Error(`${op.id} answered ${res.status} (it documents ${successes(op).join(', ')}) to ${JSON.stringify(res.built)}: ${JSON.stringify(res.body).slice(0, 800)}`);
  }
  expect(successes(op)).toContain(res.status);
}

describe('positive data: the documents\' examples and bounds are accepted', () => {
  it('walks every operation of both documents', () => {
    expect(OPERATIONS.length).toBeGreaterThan(100);
    const bodies = OPERATIONS.filter((op) => op.op.requestBody);
    // Every body has a documented example (the bounds walk below builds one more from the schema).
    expect(bodies.filter((op) => exampleOf(op) === undefined).map((op) => op.id)).toEqual([]);
  });

  it.each(OPERATIONS.map((op) => [`${op.doc} ${op.id}`, op] as const))('%s: its documented example is answered with a documented success today', async (_name, op) => {
    const example = exampleOf(op);
    const body = example ?? (op.op.requestBody ? atBounds(op.doc, Object.values(op.op.requestBody.content as Json)[0].schema) : undefined);
    expectSuccess(op, await sendFresh(op, body, true));
  });

  const withBodies = OPERATIONS.filter((op) => op.op.requestBody?.content?.['application/json']?.schema);
  it.each(withBodies.map((op) => [`${op.doc} ${op.id}`, op] as const))('%s: a body at the schema\'s lower bounds (required fields only) is answered with a documented success', async (_name, op) => {
    const body = atBounds(op.doc, op.op.requestBody.content['application/json'].schema);
    expectSuccess(op, await sendFresh(op, body, false));
  });
});
