// Evolution drills (scenario actions unknown_fields, new_enum_values, reordered_fields): a client that
// rejects unknown fields, unknown statuses or another order fails under them and a tolerant one passes;
// the same seed gives the same bytes; counters; stored state untouched; webhook bodies too; other
// accounts untouched; and, over generated operations and drills, every drilled answer stays the
// answer it was, only evolved.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { loadDocument } from '../src/http/openapi.js';
import { responseCheckerFor } from '../src/http/response-check.js';
import { EVOLUTION_DRILLS, type EvolutionDrill } from '../src/scenarios/evolve.js';
import { setup, storeJson, type Api, type TestSandbox } from './helpers.js';
import { deliveryErrors, webhookSandbox } from './webhooks-support.js';

const checker = responseCheckerFor(loadDocument('openapi').document);

/** Every property name and every enum (or const) string the API document holds, anywhere. */
const documentNames = new Set<string>();
const documentEnums = new Set<string>();
(function collect(node: unknown, seen = new Set<unknown>()): void {
  if (!node || typeof node !== 'object' || seen.has(node)) return;
  seen.add(node);
  const n = node as Record<string, unknown>;
  if (n.properties && typeof n.properties === 'object') for (const k of Object.keys(n.properties)) documentNames.add(k);
  if (Array.isArray(n.enum)) for (const v of n.enum) if (typeof v === 'string') documentEnums.add(v);
  if (typeof n.const === 'string') documentEnums.add(n.const);
  for (const v of Object.values(n)) collect(v, seen);
})(loadDocument('openapi').document);

type Json = Record<string, unknown>;

/**
 * A strict client: it holds an answer to the document's schema closed (additionalProperties false, each
 * enum fixed, as a generated client with exhaustive enums does) and reads fields by position, in the
 * order it recorded them. Throws on anything else.
 */
function strictClient(operationId: string, status: number, body: unknown, recordedOrder: string[]): void {
  const problem = checker.check(operationId, status, body);
  if (problem) throw new Error(`strict client: ${problem.errors.map((e) => `${e.instancePath} ${e.message}`).join('; ')}`);
  const keys = Object.keys(body as Json);
  if (keys.join(',') !== recordedOrder.join(',')) throw new Error(`strict client: fields in another order (${keys.join(',')})`);
}

const INVOICE_STATUSES = ['UPCOMING', 'OVERDUE', 'RECEIVED', 'PAID', 'ARCHIVED'] as const;

/** A tolerant client: reads the fields it knows by name, ignores the rest, and maps a status it does not know to `unknown`. */
function tolerantInvoice(body: Json): { id: string; total: number; status: string; items: Array<{ description: string; total: number }> } {
  if (typeof body.id !== 'string' || typeof body.total !== 'number' || !Array.isArray(body.line_items)) throw new Error('not an invoice');
  const status = (INVOICE_STATUSES as readonly unknown[]).includes(body.status) ? (body.status as string) : 'unknown';
  const items = (body.line_items as Json[]).map((i) => ({ description: String(i.description), total: Number(i.total) }));
  return { id: body.id, total: body.total, status, items };
}

async function loadScenario(sb: TestSandbox, document: object, token?: string): Promise<string> {
  const req = sb.http.post('/_sandbox/scenarios').send(document);
  if (token) req.set('Authorization', `Bearer ${token}`);
  const res = await req;
  if (res.status !== 201) throw new Error(`load: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

async function invoiceOf(api: Api): Promise<Json> {
  const customer = (await api.post('/customers', { name: 'Acme Corp', email: 'ap@acme.test' })).body;
  const res = await api.post('/invoices', { customer_id: customer.id, due_date: '2026-04-01', line_items: [{ description: 'Consulting', amount: 1250 }, { description: 'Travel', amount: 80 }] });
  if (res.status !== 201) throw new Error(`invoice: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describe('a client that rejects what a later release may send fails under each drill; a tolerant one passes', () => {
  it.each(EVOLUTION_DRILLS)('%s', async (drill) => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    const invoice = await invoiceOf(api);
    const before = await api.get(`/invoices/${invoice.id}`);
    const order = Object.keys(before.body);
    // Without a drill both clients read the answer.
    expect(() => strictClient('getInvoice', before.status, before.body, order)).not.toThrow();
    expect(before.headers['sandbox-drill']).toBeUndefined();
    await loadScenario(sb, { name: drill, rules: [{ match: { operation: 'getInvoice' }, [drill]: true }] });
    const drilled = await api.get(`/invoices/${invoice.id}`);
    // The server's own response check (on in every test) did not flag it: a 200, marked.
    expect(drilled.status).toBe(200);
    expect(drilled.headers['sandbox-drill']).toBe(drill);
    expect(() => strictClient('getInvoice', drilled.status, drilled.body, order)).toThrow(/strict client/);
    const tolerant = tolerantInvoice(drilled.body);
    expect(tolerant).toEqual({ ...tolerantInvoice(before.body), status: drill === 'new_enum_values' ? 'unknown' : before.body.status });
    if (drill === 'unknown_fields') {
      // At every level: the invoice and each of its line items.
      const added = (o: Json, b: Json) => Object.keys(o).filter((k) => !(k in b));
      expect(added(drilled.body, before.body).length).toBeGreaterThan(0);
      for (const [i, item] of (drilled.body.line_items as Json[]).entries()) expect(added(item, before.body.line_items[i]).length).toBeGreaterThan(0);
      for (const name of added(drilled.body, before.body)) expect(documentNames.has(name)).toBe(false);
    }
    if (drill === 'new_enum_values') {
      expect(INVOICE_STATUSES).not.toContain(drilled.body.status);
      expect(documentEnums.has(drilled.body.status)).toBe(false);
      // The rest of the invoice is as it was.
      expect({ ...drilled.body, status: before.body.status }).toEqual(before.body);
    }
    if (drill === 'reordered_fields') {
      expect(drilled.body).toEqual(before.body);
      expect(Object.keys(drilled.body)).not.toEqual(order);
      expect(Object.keys(drilled.body.line_items[0])).not.toEqual(Object.keys(before.body.line_items[0]));
    }
  });
});

describe('determinism', () => {
  async function drilledText(seed: string, documentSeed?: string): Promise<string> {
    const sb = await setup({ seed });
    const api = sb.as(await sb.token());
    await invoiceOf(api);
    await loadScenario(sb, { name: 'all', ...(documentSeed ? { seed: documentSeed } : {}), rules: EVOLUTION_DRILLS.map((d) => ({ match: { operation: 'listInvoices' }, [d]: true })) });
    const res = await api.get('/invoices');
    expect(res.headers['sandbox-drill']).toBe('new_enum_values, unknown_fields, reordered_fields');
    return res.text;
  }

  it('the same seed gives the same bytes; another seed other names, statuses or order; a document seed wins', async () => {
    const a = await drilledText('seed-a');
    expect(await drilledText('seed-a')).toBe(a);
    const b = await drilledText('seed-b');
    // Ids differ with the seed too: compare what the drills chose, with the ids taken out.
    const shape = (text: string) => text.replace(/"(inv|cus)_[0-9a-f]+"/g, '"id"');
    expect(shape(b)).not.toBe(shape(a));
    expect(shape(await drilledText('seed-b', 'pinned'))).toBe(shape(await drilledText('seed-a', 'pinned')));
  });
});

describe('counters, stored state and other accounts', () => {
  it('times: 2 drills the first two answers only; the counters say so', async () => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    await api.post('/customers', { name: 'Acme Corp' });
    const id = await loadScenario(sb, { name: 'twice', rules: [{ match: { operation: ['listCustomers', 'getCustomer'] }, times: 2, unknown_fields: true }] });
    const marks = [];
    for (let i = 0; i < 3; i++) marks.push((await api.get('/customers')).headers['sandbox-drill']);
    expect(marks).toEqual(['unknown_fields', 'unknown_fields', undefined]);
    const listed = (await sb.http.get('/_sandbox/scenarios')).body.data.find((s: { id: string }) => s.id === id);
    expect(listed.counters).toEqual([{ matched: 3, fired: 2 }]);
  });

  it('changes only the answer: a write answers drilled, the stored object stays documented, and a GET without the drill shows it', async () => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    const invoice = await invoiceOf(api);
    const id = await loadScenario(sb, { name: 'evolve', rules: EVOLUTION_DRILLS.map((d) => ({ match: { operation: ['getInvoice', 'createCustomer'] }, [d]: true })) });
    const drilled = await api.get(`/invoices/${invoice.id}`);
    expect(INVOICE_STATUSES).not.toContain(drilled.body.status);
    // Another operation (not matched) shows the stored status.
    const listed = (await api.get('/invoices')).body.data[0];
    expect(listed.status).toBe(invoice.status);
    expect(Object.keys(listed)).toEqual(Object.keys(invoice));
    // A write under the drill: its answer is drilled, what it stored is not.
    const made = await api.post('/customers', { name: 'Drilled Co' });
    expect(made.status).toBe(201);
    expect(made.headers['sandbox-drill']).toBe('new_enum_values, unknown_fields, reordered_fields');
    expect(['active', 'archived']).not.toContain(made.body.status);
    // Nothing a drill draws reached the store.
    const stored = storeJson(sb.deps.store.data);
    expect(stored).toContain(made.body.id);
    expect(stored).not.toMatch(/ON_HOLD|DISPUTED|PARTIALLY_PAID|IN_REVIEW|WRITTEN_OFF|SUSPENDED|PENDING_APPROVAL|on_hold|under_review|partially_settled|disputed|requires_action|in_transit|suspended/);
    for (const [name] of Object.entries(made.body).filter(([k]) => !documentNames.has(k))) expect(stored).not.toContain(`"${name}"`);
    await sb.http.delete(`/_sandbox/scenarios/${id}`).expect(200);
    const again = await api.get(`/invoices/${invoice.id}`);
    expect(again.headers['sandbox-drill']).toBeUndefined();
    expect(again.body).toEqual(invoice);
    expect(Object.keys(again.body)).toEqual(Object.keys(invoice));
    const customer = await api.get(`/customers/${made.body.id}`);
    expect(customer.body.status).toBe('active');
    expect(() => strictClient('getCustomer', 200, customer.body, Object.keys(customer.body))).not.toThrow();
  });

  it('another account (demo, another partner) is not drilled; a drill loaded with --scenario api-evolution drills every account', async () => {
    const sb = await setup();
    const token = await sb.token();
    const api = sb.as(token);
    const demo = sb.as(await sb.token('demo'), 'demo');
    await loadScenario(sb, { name: 'mine', rules: [{ match: {}, unknown_fields: true }] }, token);
    expect((await api.get('/customers')).headers['sandbox-drill']).toBe('unknown_fields');
    const other = await demo.get('/customers');
    expect(other.headers['sandbox-drill']).toBeUndefined();
    expect(Object.keys(other.body)).toEqual(['data', 'start_cursor', 'end_cursor', 'has_next_page', 'has_previous_page']);

    const shipped = await setup({ scenarios: ['api-evolution'] });
    for (const env of ['production', 'demo'] as const) {
      const res = await shipped.as(await shipped.token(env), env).get('/customers');
      expect([env, res.status, res.headers['sandbox-drill']]).toEqual([env, 200, 'new_enum_values, unknown_fields, reordered_fields']);
      expect(checker.check('listCustomers', 200, res.body)).not.toBeNull();
    }
    // The control plane is never drilled.
    expect((await shipped.http.get('/_sandbox/scenarios')).headers['sandbox-drill']).toBeUndefined();
  });
});

describe('the docs\' example document (examples/scenarios/evolution-drills.yaml)', () => {
  it('drills invoice reads: statuses and fields on both, the order on the first three getInvoice; other operations untouched', async () => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    const invoice = await invoiceOf(api);
    const text = readFileSync('examples/scenarios/evolution-drills.yaml', 'utf8');
    expect((await sb.http.post('/_sandbox/scenarios').type('application/yaml').send(text)).status).toBe(201);
    const marks = [];
    for (let i = 0; i < 4; i++) marks.push((await api.get(`/invoices/${invoice.id}`)).headers['sandbox-drill']);
    const all = 'new_enum_values, unknown_fields, reordered_fields';
    expect(marks).toEqual([all, all, all, 'new_enum_values, unknown_fields']);
    const list = await api.get('/invoices');
    expect(list.headers['sandbox-drill']).toBe('new_enum_values, unknown_fields');
    expect(INVOICE_STATUSES).not.toContain(list.body.data[0].status);
    expect((await api.get('/customers')).headers['sandbox-drill']).toBeUndefined();
  });
});

describe('webhook deliveries', () => {
  it('a topic drill reshapes the delivery body and marks it; the stored event and other topics stay documented', async () => {
    const w = await webhookSandbox();
    try {
      await loadScenario(w.sb, { name: 'evolving hooks', rules: EVOLUTION_DRILLS.map((d) => ({ match: { topic: 'customer_created' }, times: 1, [d]: true })) });
      await w.subscribe('customer_created');
      await w.subscribe('customer_updated');
      const customer = (await w.api.post('/customers', { name: 'Hooked Co' })).body;
      await w.api.patch(`/customers/${customer.id}`, { name: 'Hooked Corp' });
      await w.api.post('/customers', { name: 'Second Co' });
      await w.settle();
      const [first, updated, second] = w.receiver.deliveries;
      expect([first.topic, updated.topic, second.topic]).toEqual(['customer_created', 'customer_updated', 'customer_created']);
      expect(first.headers['sandbox-drill']).toBe('new_enum_values, unknown_fields, reordered_fields');
      const body = first.body as unknown as Json;
      const data = body.data as Json;
      expect(data.customer_id).toBe(customer.id);
      expect(['active', 'archived']).not.toContain(data.status);
      expect(Object.keys(body).some((k) => !documentNames.has(k))).toBe(true);
      expect(Object.keys(data).some((k) => !documentNames.has(k))).toBe(true);
      // The strict check flags the drilled body; told it is drilled (its headers), it does not.
      expect(deliveryErrors(body)).not.toEqual([]);
      expect(deliveryErrors(body, first.headers)).toEqual([]);
      // times: 1, and another topic: documented bodies, no header, the strict check passes.
      for (const d of [updated, second]) {
        expect(d.headers['sandbox-drill']).toBeUndefined();
        expect(deliveryErrors(d.body, d.headers)).toEqual([]);
      }
      // The event as stored answers documented.
      const events = (await w.api.get('/webhooks/events')).body.data as Json[];
      const stored = events.find((e) => e.idempotency_key === body.idempotency_key) as Json;
      expect((stored.data as Json).status).toBe('active');
    } finally {
      await w.close();
    }
  });

  it('a topic drill counts each delivery once: one delivery sent, its rules at matched 1, fired 1', async () => {
    const w = await webhookSandbox();
    try {
      // nth: 1 as well: a second count of the same delivery (by the walk that looks for faults) would
      // make the drill's own match the second, and the drill would not fire.
      await loadScenario(w.sb, { name: 'one delivery', rules: EVOLUTION_DRILLS.map((d) => ({ match: { topic: ['customer_created', 'customer_updated'] }, nth: 1, [d]: true })) });
      await w.subscribe('customer_created');
      const customer = (await w.api.post('/customers', { name: 'Counted Once' })).body;
      await w.settle();
      expect(w.receiver.deliveries.map((d) => [d.entity_id, d.headers['sandbox-drill']])).toEqual([[customer.id, 'new_enum_values, unknown_fields, reordered_fields']]);
      const listed = (await w.sb.http.get('/_sandbox/scenarios')).body.data[0];
      expect(listed.counters).toEqual(EVOLUTION_DRILLS.map(() => ({ matched: 1, fired: 1 })));
    } finally {
      await w.close();
    }
  });
});

describe('generated operations and drills: every drilled answer is the same answer, evolved', () => {
  let sb: TestSandbox;
  let api: Api;
  const targets: Array<{ operation: string; path: string }> = [];

  beforeAll(async () => {
    sb = await setup({ fixtures: 'demo', seed: 'demo-1' });
    api = sb.as(await sb.token());
    const first = async (path: string) => ((await api.get(path)).body.data as Json[])[0].id as string;
    const [customer, invoice, bill, vendor, payout] = await Promise.all(['/customers', '/invoices', '/bills', '/vendors', '/payouts'].map(first));
    targets.push(
      { operation: 'listCustomers', path: '/customers?limit=3' }, { operation: 'getCustomer', path: `/customers/${customer}` },
      { operation: 'listCustomerUsers', path: `/customers/${customer}/users` }, { operation: 'listPaymentMethods', path: `/customers/${customer}/payment-methods` },
      { operation: 'listInvoices', path: '/invoices?limit=5' }, { operation: 'getInvoice', path: `/invoices/${invoice}` },
      { operation: 'getInvoice', path: '/invoices/inv_missing' }, { operation: 'listBills', path: '/bills?limit=5' },
      { operation: 'getBill', path: `/bills/${bill}` }, { operation: 'listVendors', path: '/vendors' }, { operation: 'getVendor', path: `/vendors/${vendor}` },
      { operation: 'listPayouts', path: '/payouts?limit=3' }, { operation: 'getPayout', path: `/payouts/${payout}` },
      { operation: 'listPayoutTransactions', path: `/payouts/${payout}/transactions` }, { operation: 'listPayments', path: '/payments?limit=5' },
      { operation: 'listWebhookEvents', path: '/webhooks/events?limit=5' },
    );
  });

  /** Compare a drilled value with the answer it came from; the differences the drills may make, and no other. */
  function compare(base: unknown, drilled: unknown, drills: EvolutionDrill[], at: string, found: { extras: number; statuses: number; reordered: number }): void {
    if (Array.isArray(base)) {
      expect([at, Array.isArray(drilled) && drilled.length]).toEqual([at, base.length]);
      base.forEach((item, i) => compare(item, (drilled as unknown[])[i], drills, `${at}[${i}]`, found));
      return;
    }
    if (base && typeof base === 'object') {
      const b = base as Json;
      const d = drilled as Json;
      const added = Object.keys(d).filter((k) => !Object.hasOwn(b, k));
      for (const k of Object.keys(b)) expect([at, k, Object.hasOwn(d, k)]).toEqual([at, k, true]);
      if (added.length) {
        expect([at, drills.includes('unknown_fields')]).toEqual([at, true]);
        for (const k of added) expect([at, k, documentNames.has(k)]).toEqual([at, k, false]);
        found.extras += 1;
      }
      if (Object.keys(d).filter((k) => Object.hasOwn(b, k)).join() !== Object.keys(b).join()) {
        expect([at, drills.includes('reordered_fields')]).toEqual([at, true]);
        found.reordered += 1;
      }
      for (const k of Object.keys(b)) {
        if (typeof b[k] === 'string' && b[k] !== d[k]) {
          // Only a status, only under new_enum_values, only to a value no enum of the document lists.
          expect([`${at}.${k}`, drills.includes('new_enum_values'), k === 'status' || k.endsWith('_status'), documentEnums.has(d[k] as string), typeof d[k]]).toEqual([`${at}.${k}`, true, true, false, 'string']);
          found.statuses += 1;
        } else compare(b[k], d[k], drills, `${at}.${k}`, found);
      }
      return;
    }
    expect([at, drilled]).toEqual([at, base]);
  }

  it('valid JSON, the same status, every documented field kept, only drills\' changes, each drill visible', async () => {
    await fc.assert(fc.asyncProperty(
      fc.nat({ max: 1000 }), fc.subarray([...EVOLUTION_DRILLS], { minLength: 1 }), fc.string({ minLength: 1, maxLength: 12 }),
      async (pick, drills, seed) => {
        const target = targets[pick % targets.length];
        const id = await loadScenario(sb, { name: 'generated', seed, rules: drills.map((d) => ({ match: { operation: target.operation, header: { 'X-Drill': 'on' } }, [d]: true })) });
        try {
          const base = await api.get(target.path);
          const drilled = await api.get(target.path).set('X-Drill', 'on');
          expect(base.headers['sandbox-drill']).toBeUndefined();
          expect([target.path, drilled.status, drilled.headers['sandbox-drill']]).toEqual([target.path, base.status, EVOLUTION_DRILLS.filter((d) => drills.includes(d)).join(', ')]);
          expect(JSON.parse(drilled.text)).toEqual(drilled.body);
          const found = { extras: 0, statuses: 0, reordered: 0 };
          compare(base.body, drilled.body, drills, target.path, found);
          // Each drill shows: every answer here is an object whose fields the document lists, and most hold statuses.
          if (drills.includes('unknown_fields')) {
            expect(found.extras).toBeGreaterThan(0);
            for (const item of (drilled.body.data ?? []) as Json[]) expect(Object.keys(item).some((k) => !documentNames.has(k))).toBe(true);
            expect(checker.check(target.operation, drilled.status, drilled.body)).not.toBeNull();
          }
          if (drills.includes('reordered_fields')) expect(found.reordered).toBeGreaterThan(0);
          const statuses = JSON.stringify(base.body).match(/"(\w+_)?status":"/g)?.length ?? 0;
          if (drills.includes('new_enum_values') && statuses) expect(found.statuses).toBeGreaterThan(0);
        } finally {
          await sb.http.delete(`/_sandbox/scenarios/${id}`).expect(200);
        }
      },
    ), { numRuns: 60 });
  });
});
