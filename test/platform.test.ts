// The ground every resource stands on: pagination, isolation, rate limiting, the clock's due work,
// persistence with --data, the OpenAPI document, unknown routes, body limits and 501s.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventLog } from '../src/events/events.js';
import { dataOnDisk, loadDataFile, setup, storeJson, type Api, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
let api: Api;
beforeEach(async () => {
  sb = await setup();
  api = sb.as(await sb.token());
});

async function createCustomers(n: number, into = api): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await into.post('/customers', { name: `Customer ${i}` })).body.id);
  return ids;
}

describe('pagination', () => {
  it('pages forwards with after and backwards with before, newest first', async () => {
    const ids = (await createCustomers(7)).reverse();
    const first = (await api.get('/customers?limit=3')).body;
    expect(first.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 3));
    expect(first).toMatchObject({ has_next_page: true, has_previous_page: false, start_cursor: expect.any(String), end_cursor: expect.any(String) });
    const second = (await api.get(`/customers?limit=3&after=${first.end_cursor}`)).body;
    expect(second.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(3, 6));
    expect(second).toMatchObject({ has_next_page: true, has_previous_page: true });
    const third = (await api.get(`/customers?limit=3&after=${second.end_cursor}`)).body;
    expect(third.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(6));
    expect(third).toMatchObject({ has_next_page: false, has_previous_page: true });
    const back = (await api.get(`/customers?limit=3&before=${third.start_cursor}`)).body;
    expect(back.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(3, 6));
    expect(back).toMatchObject({ has_next_page: true, has_previous_page: true });
    const start = (await api.get(`/customers?limit=3&before=${back.start_cursor}`)).body;
    expect(start.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 3));
    expect(start.has_previous_page).toBe(false);
  });

  it('stays stable while objects are added', async () => {
    const ids = (await createCustomers(4)).reverse();
    const first = (await api.get('/customers?limit=2')).body;
    await createCustomers(3);
    const second = (await api.get(`/customers?limit=2&after=${first.end_cursor}`)).body;
    expect(second.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(2, 4));
    const newer = (await api.get(`/customers?limit=10&before=${first.start_cursor}`)).body;
    expect(newer.data).toHaveLength(3);
    expect(newer.has_previous_page).toBe(false);
  });

  it('defaults to 100 and refuses a bad limit or cursor with 400 naming the field', async () => {
    await createCustomers(2);
    expect((await api.get('/customers')).body.data).toHaveLength(2);
    for (const [query, field] of [['limit=0', 'limit'], ['limit=501', 'limit'], ['limit=ten', 'limit'], ['after=garbage', 'after'], ['before=Y3VzdG9tZXJzOjk5OQ', 'before']]) {
      const res = await api.get(`/customers?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.validation_errors).toHaveProperty(field);
    }
    const users = (await api.get('/customers?limit=1')).body;
    const { body: customer } = await api.post('/customers', { name: 'x' });
    const wrongList = await api.get(`/customers/${customer.id}/users?after=${users.end_cursor}`);
    expect(wrongList.status).toBe(400);
  });

  it('returns the empty envelope for an empty list', async () => {
    expect((await api.get('/customers')).body).toEqual({ data: [], start_cursor: null, end_cursor: null, has_next_page: false, has_previous_page: false });
  });
});

describe('isolation', () => {
  it('keeps partners and environments apart: their ids are 404 and their lists empty', async () => {
    const { body: mine } = await api.post('/customers', { name: 'Mine', external_id: 'shared-ref' });
    const demo = sb.as(await sb.token('demo'), 'demo');
    expect((await demo.get(`/customers/${mine.id}`)).status).toBe(404);
    expect((await demo.get('/customers')).body.data).toEqual([]);
    // external_id uniqueness is per account: the demo account may reuse it.
    expect((await demo.post('/customers', { name: 'Demo', external_id: 'shared-ref' })).status).toBe(201);
    const partner = (await sb.http.post('/_sandbox/partners').send({ name: 'Other' })).body;
    const other = sb.as(await sb.token('production', partner.credentials.production));
    expect((await other.get(`/customers/${mine.id}`)).status).toBe(404);
    expect((await other.patch(`/customers/${mine.id}`, { name: 'stolen' })).status).toBe(404);
    expect((await other.delete(`/customers/${mine.id}`)).status).toBe(404);
    expect((await other.get('/customers')).body.data).toEqual([]);
    expect((await api.get(`/customers/${mine.id}`)).body.name).toBe('Mine');
  });

  it('resets only the calling account with a token, and everything without one', async () => {
    await api.post('/customers', { name: 'Prod' }).expect(201);
    const demoToken = await sb.token('demo');
    await sb.as(demoToken, 'demo').post('/customers', { name: 'Demo' }).expect(201);
    const reset = await sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${demoToken}`);
    expect(reset.body).toEqual({ reset: 'account' });
    expect((await sb.as(demoToken, 'demo').get('/customers')).body.data).toEqual([]);
    expect((await api.get('/customers')).body.data).toHaveLength(1);
    const partner = (await sb.http.post('/_sandbox/partners').send({})).body;
    expect((await sb.http.post('/_sandbox/reset')).body).toEqual({ reset: 'all' });
    expect((await api.get('/customers')).body.data).toEqual([]);
    const gone = await sb.http.post('/oauth/token').auth(partner.credentials.production.client_id, partner.credentials.production.client_secret).type('form').send({ grant_type: 'client_credentials' });
    expect(gone.status).toBe(403);
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After past 5 requests per second per key, and recovers the next second', async () => {
    const limited = await setup({ rateLimit: 5 });
    const token = await limited.token();
    const client = limited.as(token);
    for (let i = 0; i < 4; i++) expect((await client.get('/customers')).status).toBe(200);
    const refused = await client.get('/customers');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toMatchObject({ code: 'rate_limit_exceeded', validation_errors: {} });
    // The demo key has its own budget.
    expect((await limited.as(await limited.token('demo'), 'demo').get('/customers')).status).toBe(200);
    limited.time.now += 1000;
    expect((await client.get('/customers')).status).toBe(200);
  });

  it('takes a partner\'s own limit, 0 meaning unlimited', async () => {
    const limited = await setup({ rateLimit: 1 });
    const partner = (await limited.http.post('/_sandbox/partners').send({ rate_limit: 0 })).body;
    expect(partner.rate_limit).toBe(0);
    const client = limited.as(await limited.token('production', partner.credentials.production));
    for (let i = 0; i < 20; i++) expect((await client.get('/customers')).status).toBe(200);
  });
});

describe('the account clock', () => {
  it('an advance by seconds adds exactly that many seconds, however much real time passes while it runs', async () => {
    const start = sb.time.now;
    let reads = 0;
    // A busy machine: every read of real time finds it a millisecond later.
    Object.defineProperty(sb.time, 'now', { configurable: true, enumerable: true, get: () => start + reads++ });
    try {
      const before = (await sb.http.get('/_sandbox/clock')).body.offset_seconds as number;
      const advanced = (await sb.advance(90)).body;
      expect(reads).toBeGreaterThan(2);
      expect(advanced.offset_seconds).toBe(before + 90);
      expect(sb.deps.store.account('ptn_default', 'production').clock.offsetMs).toBe(before * 1000 + 90_000);
    } finally {
      Object.defineProperty(sb.time, 'now', { configurable: true, enumerable: true, writable: true, value: start + reads });
    }
  });

  it('reads real time plus its offset and moves only forward', async () => {
    const clock = (await sb.http.get('/_sandbox/clock')).body;
    expect(clock).toEqual({ now: new Date(sb.time.now).toISOString(), offset_seconds: 0, failed_jobs: [] });
    const advanced = (await sb.advance(90)).body;
    expect(advanced).toMatchObject({ now: new Date(sb.time.now + 90_000).toISOString(), offset_seconds: 90, ran: 0 });
    const to = new Date(sb.time.now + 3600_000).toISOString();
    expect((await sb.http.post('/_sandbox/clock/advance').send({ to })).body.now).toBe(to);
    const back = await sb.http.post('/_sandbox/clock/advance').send({ to: new Date(sb.time.now).toISOString() });
    expect(back.status).toBe(422);
    expect(back.body.validation_errors).toHaveProperty('to');
    const bad = await sb.http.post('/_sandbox/clock/advance').send({ seconds: -5 });
    expect(bad.status).toBe(400);
  });

  it('runs everything due in time order, each job seeing its own due time, and only for its account', async () => {
    const account = sb.deps.store.account('ptn_default', 'production');
    const demo = sb.deps.store.account('ptn_default', 'demo');
    const seen: string[] = [];
    sb.deps.scheduler.register('test.note', (acc, job) => {
      seen.push(`${job.payload.label}@${acc.clock.iso()}`);
      if (job.payload.label === 'b') sb.deps.scheduler.schedule(acc, 'test.note', acc.clock.nowMs() + 5_000, { label: 'b+5s' });
    });
    const t0 = account.clock.nowMs();
    account.transaction(() => {
      sb.deps.scheduler.schedule(account, 'test.note', t0 + 60_000, { label: 'c' });
      sb.deps.scheduler.schedule(account, 'test.note', t0 + 10_000, { label: 'a' });
      sb.deps.scheduler.schedule(account, 'test.note', t0 + 30_000, { label: 'b' });
      sb.deps.scheduler.schedule(account, 'test.note', t0 + 600_000, { label: 'later' });
    });
    demo.transaction(() => sb.deps.scheduler.schedule(demo, 'test.note', t0 + 1_000, { label: 'demo' }));
    const res = await sb.advance(120);
    expect(res.body.ran).toBe(4);
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    expect(seen).toEqual([`a@${at(10)}`, `b@${at(30)}`, `b+5s@${at(35)}`, `c@${at(60)}`]);
    expect(account.clock.iso()).toBe(at(120));
    expect(sb.deps.scheduler.pending(account).map((j) => j.payload.label)).toEqual(['later']);
    expect(sb.deps.scheduler.pending(demo)).toHaveLength(1);
  });

  it('stamps API writes with the account clock', async () => {
    await sb.advance(86_400 * 3);
    const { body } = await sb.as(await sb.token()).post('/customers', { name: 'Later' });
    expect(body.created_at).toBe(new Date(sb.time.now + 86_400 * 3 * 1000).toISOString());
  });
});

/** A fresh temporary directory per test of the block, removed after it. */
function useTempDir(prefix: string): () => string {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return () => dir;
}

describe('persistence with --data', () => {
  const tempDir = useTempDir('sandbox-data-');

  it('keeps accounts, partners, keys and the clock across a restart; concurrent writes share file writes', async () => {
    const file = join(tempDir(), 'data.json');
    // A long gathering window: only acknowledgements make writes happen here.
    const first = await setup({ dataFile: file, flushDelayMs: 60_000 });
    const client = first.as(await first.token());
    const partner = (await first.http.post('/_sandbox/partners').send({ name: 'Durable' })).body;
    const writesBefore = first.deps.store.writes;
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => client.post('/customers', { name: `C${i}` }).then((r) => r.body.id)));
    // Each answer came once its change was in the file; answers waiting together shared a write (group commit).
    const burstWrites = first.deps.store.writes - writesBefore;
    expect(burstWrites).toBeGreaterThanOrEqual(1);
    expect(burstWrites).toBeLessThan(20);
    const onDisk = dataOnDisk(file);
    expect(ids.filter((id) => !onDisk.includes(id))).toEqual([]);
    await first.advance(3000);
    expect(first.deps.store.pending).toBe(false);
    expect(dataOnDisk(file)).not.toContain(partner.credentials.production.client_secret);

    const second = await setup({ dataFile: file });
    const again = second.as(await second.token('production', partner.credentials.production));
    expect((await again.get('/customers')).body.data).toEqual([]);
    const mine = second.as(await second.token());
    const listed = (await mine.get('/customers')).body.data.map((c: { id: string }) => c.id);
    expect(new Set(listed)).toEqual(new Set(ids));
    expect((await second.http.get('/_sandbox/clock')).body.offset_seconds).toBe(3000);
    const created = (await mine.post('/customers', { name: 'After restart' })).body;
    expect(ids).not.toContain(created.id);
    await second.deps.store.close();
  });
});

describe('data files written by other versions', () => {
  const tempDir = useTempDir('sandbox-old-data-');

  it('refuses a file of another format version and leaves it as it was', async () => {
    const file = join(tempDir(), 'data.json');
    const later = `${JSON.stringify({ format: 'billing-sandbox-data', version: 3, generation: 1 })}\n{"t":"end","lines":2}\n`;
    await writeFile(file, later);
    await expect(setup({ dataFile: file })).rejects.toThrow(/has format version 3; this sandbox reads version 2/);
    expect(await readFile(file, 'utf8')).toBe(later);
    const foreign = JSON.stringify({ version: 7, accounts: { kept: true } });
    await writeFile(file, foreign);
    await expect(setup({ dataFile: file })).rejects.toThrow(/whole document of format version 7/);
    expect(await readFile(file, 'utf8')).toBe(foreign);
  });

  it('shows only documented fields when stored records carry fields an older version kept', async () => {
    const file = join(tempDir(), 'data.json');
    const first = await setup({ dataFile: file });
    const client = first.as(await first.token());
    const customer = (await client.post('/customers', { name: 'Kept' })).body;
    await first.deps.store.close();
    // Add fields no answer documents to the stored record, as an older release might have left (and
    // write it back as a version 1 document, which migrates).
    const saved = await loadDataFile(file);
    const stale = { updated_at: '2020-01-01T00:00:00.000Z', payment_ids: ['pay_old'], internal_note: 'not for partners' };
    const record = findRecord(saved, customer.id);
    Object.assign(record, stale);
    await writeFile(file, storeJson(saved));

    const second = await setup({ dataFile: file });
    const again = second.as(await second.token());
    // validateResponses is on: an undocumented field would have turned these into 500 response_validation_failed.
    const read = await again.get(`/customers/${customer.id}`).expect(200);
    expect(read.body).toEqual(customer);
    const listed = await again.get('/customers').expect(200);
    expect(listed.body.data).toEqual([customer]);
    await second.deps.store.close();
  });
});

/** The stored object with this id, wherever it sits in the data file. */
function findRecord(node: unknown, id: string): Record<string, unknown> {
  if (node && typeof node === 'object') {
    if ((node as { id?: unknown }).id === id) return node as Record<string, unknown>;
    // A collection's objects are a Map in memory.
    for (const child of node instanceof Map ? node.values() : Object.values(node)) {
      const found = findRecord(child, id);
      if (found) return found;
    }
  }
  return undefined as unknown as Record<string, unknown>;
}

describe('the data file location', () => {
  it('creates missing directories, and refuses to start where it cannot write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-nested-'));
    const nested = await setup({ dataFile: join(dir, 'a', 'b', 'data.json') });
    expect(JSON.parse((await readFile(join(dir, 'a', 'b', 'data.json'), 'utf8')).split('\n')[0])).toMatchObject({ format: 'billing-sandbox-data', version: 2 });
    await nested.deps.store.close();
    await expect(setup({ dataFile: join(dir, 'a', 'b', 'data.json', 'under-a-file.json') })).rejects.toThrow(/cannot/);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('the HTTP surface', () => {
  it('serves the OpenAPI document as YAML and JSON', async () => {
    const json = await sb.http.get('/openapi.json');
    expect(json.body.openapi).toBe('3.1.1');
    expect(Object.keys(json.body.webhooks)).toHaveLength(18);
    const yaml = await sb.http.get('/openapi.yaml');
    expect(yaml.headers['content-type']).toContain('yaml');
    expect(yaml.text).toContain('openapi: 3.1.1');
  });

  it('answers an unknown route with a 404 HttpError, and a known path with another method with 405 and Allow', async () => {
    const unknown = await api.get('/no-such-thing');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'not_found', message: expect.any(String), validation_errors: {} });
    const other = await sb.http.put('/customers').set('Authorization', `Bearer ${await sb.token()}`).send({});
    expect([other.status, other.headers.allow]).toEqual([405, 'GET, POST']);
    expect(other.body).toMatchObject({ code: 'method_not_allowed', validation_errors: { method: 'must be one of GET, POST' } });
  });

  it('routes a literal segment before a template at the same place', async () => {
    const router = sb.app.locals.api;
    expect(router.operationFor('get', '/webhooks/events')?.operationId).toBe('listWebhookEvents');
    expect(router.operationFor('delete', '/webhooks/sub_1')?.operationId).toBe('deleteWebhook');
    expect(router.operationFor('post', '/bills/upload')?.operationId).toBe('uploadBill');
    expect(router.operationFor('post', '/bills/bill_1/submit')?.operationId).toBe('submitBill');
    expect(router.operationFor('post', '/customers/cus_1/payment-methods/card')?.operationId).toBe('createCardPaymentMethod');
    expect(router.operationFor('post', '/customers/cus_1/payment-methods/pm_1/cvv')?.operationId).toBe('submitCardCvv');
    expect(router.operationFor('get', '/customers/cus_1/payment-methods/pm_1')?.operationId).toBe('getPaymentMethod');
    expect(router.operationFor('put', '/customers')).toBeUndefined();
  });

  it('answers a body over the limit with 413 and stores nothing', async () => {
    const res = await api.post('/customers', { name: 'x'.repeat(16 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    expect((await api.get('/customers')).body.data).toEqual([]);
  });

  it('answers an unexpected failure with a 500 HttpError without a stack trace', async () => {
    const customers = sb.deps.store.account('ptn_default', 'production').collection('customers');
    const original = customers.page.bind(customers);
    customers.page = () => { throw new Error('disk on fire at /secret/path'); };
    const res = await api.get('/customers');
    customers.page = original;
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: 'internal_error', message: expect.any(String), validation_errors: {} });
    expect(JSON.stringify(res.body)).not.toContain('secret/path');
    expect((await api.get('/customers')).status).toBe(200);
  });

  it('answers health and records customer events in the account log', async () => {
    expect((await sb.http.get('/_sandbox/health')).body).toEqual({ status: 'ok', version: expect.any(String), reason: null, since: null });
    const { body } = await api.post('/customers', { name: 'Evented' });
    const events = [...eventLog(sb.deps.store.account('ptn_default', 'production')).values()];
    expect(events).toEqual([expect.objectContaining({ topic: 'customer_created', entity_id: body.id, idempotency_key: expect.any(String), timestamp: body.created_at })]);
  });

  it('answers 501 not_implemented for every operation without a handler', async () => {
    const missing = sb.app.locals.api.unimplemented();
    for (const operationId of missing) {
      const operation = sb.app.locals.api.backendFor().getOperation(operationId)!;
      const path = operation.path.replace(/\{[^}]+\}/g, 'x_1');
      const res = await sb.http[operation.method as 'get'](path).set('Authorization', `Bearer ${await sb.token()}`);
      // A 501 answers once auth and validation pass; with no valid input an operation may stop at 400
      // first, and the checkout surface refuses API tokens (401) before anything else.
      const checkout = JSON.stringify(operation.security ?? []).includes('checkoutToken');
      expect(checkout ? [401] : [501, 400]).toContain(res.status);
      if (res.status === 501) expect(res.body.code).toBe('not_implemented');
    }
    // eslint-disable-next-line no-console
    if (missing.length) console.log(`operations not implemented yet (${missing.length}): ${missing.join(', ')}`);
  });
});
