// Account snapshots through HTTP (POST/GET/DELETE /_sandbox/snapshots, .../restore): a saved snapshot
// restores the account byte for byte (objects and tombstones, history, clock, the webhook queue with
// a failed delivery awaiting retry, scenarios and their counters, idempotency keys, id counters), and
// the restored queue retries on the restored schedule; an attempt cut by the save is sent again; an
// export redacts secrets and loads with --fixtures and through POST; a restore into the partner's
// other account keeps ids and creates never collide; with --data a restore and the snapshots survive a
// restart; a restore racing a held write answers it 409 account_replaced; caps, names, another
// partner's 404, and imported documents checked field by field (generated mutations never 500).
import { afterEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCustomer } from '../src/domain/customers/customers.js';
import { memoryBudget } from '../src/budget/memory-budget.js';
import { SCENARIO_SLEEP } from '../src/scenarios/intercept.js';
import type { AccountData } from '../src/store/store.js';
import { loadDataFile, lowerLimit, setup, storeJson, type Api, type TestSandbox } from './helpers.js';
import { gate } from './gate.js';
import { bankAccount } from './payables-helpers.js';
import { card } from './receivables-helpers.js';
import { at, webhookSandbox, type WebhookSandbox } from './webhooks-support.js';

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'snapshots-'));
  scratch.push(dir);
  return dir;
}

/** State a snapshot leaves out (documents, stream forwarders) or the target keeps (its token generation). */
const NOT_CARRIED = ['blobs', 'blob_sizes', 'stream_forwarders', 'tokens'];

/** An account's data as JSON with sorted keys: what "byte for byte" compares. */
function canonical(data: AccountData): string {
  const plain = JSON.parse(storeJson(data)) as AccountData;
  for (const key of NOT_CARRIED) delete plain.state[key];
  return JSON.stringify(plain, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));
}

/** The same without the account's own names (its id, partner and environment): what two accounts restored from one snapshot share. */
function content(data: AccountData): string {
  const { id: _id, partner_id: _partner, environment: _environment, ...rest } = data;
  return canonical({ ...rest, id: '', partner_id: '', environment: 'production' });
}

const dataOf = (sb: TestSandbox, environment: 'production' | 'demo' = 'production') => sb.deps.store.account('ptn_default', environment).data;

/** Control-plane calls on the account a token names. */
function control(sb: TestSandbox, token: string) {
  return {
    save: (body: object) => sb.http.post('/_sandbox/snapshots').set('Authorization', `Bearer ${token}`).send(body),
    list: () => sb.http.get('/_sandbox/snapshots').set('Authorization', `Bearer ${token}`),
    export: (name: string) => sb.http.get(`/_sandbox/snapshots/${name}`).set('Authorization', `Bearer ${token}`),
    restore: (name: string, body?: object) => sb.http.post(`/_sandbox/snapshots/${name}/restore`).set('Authorization', `Bearer ${token}`).send(body ?? {}),
    remove: (name: string) => sb.http.delete(`/_sandbox/snapshots/${name}`).set('Authorization', `Bearer ${token}`),
  };
}

type Attempt = { attempt: number; status_code: number | null; at: string; next_attempt_at: string | null };

async function attempts(w: WebhookSandbox): Promise<Attempt[]> {
  const res = await w.sb.http.get('/_sandbox/webhooks/deliveries').set('Authorization', `Bearer ${w.token}`).expect(200);
  return (res.body.data as Attempt[]).slice().reverse();
}

/**
 * An account holding a bit of everything a snapshot carries: customers, a hard-deleted payment method
 * (a tombstone), a vendor with a bank account and a vendor payment made with an idempotency key (its
 * jobs due), a scenario whose rule counted matches, a webhook subscription with a secret whose
 * delivery failed and awaits its retry at 90 s, and a clock a day ahead.
 */
async function richAccount(w: WebhookSandbox): Promise<{ customers: string[]; retryAt: string }> {
  const { api } = w;
  await w.sb.advance(86_400).expect(200);
  w.receiver.respondWith(500);
  await w.subscribe('customer_created', '/hooks', 'whsec_round_trip_0042');
  const customers: string[] = [];
  for (const name of ['Acme', 'Globex', 'Initech']) customers.push((await api.post('/customers', { name, email: `${name.toLowerCase()}@example.com` }).expect(201)).body.id);
  const first = await card(api, customers[0]);
  await card(api, customers[0], 'tok_mastercard');
  await api.delete(`/customers/${customers[0]}/payment-methods/${first}`).expect(201);
  const vendor = (await api.post('/vendors', { name: 'Paper Supply', bank_account: bankAccount('987654321012') }).expect(201)).body;
  const bill = (await api.post('/bills', { vendor_id: vendor.id, amount: 120, number: 'B-7', status: 'needs_approval' }).expect(201)).body;
  const today = (await w.sb.http.get('/_sandbox/clock').expect(200)).body.now.slice(0, 10);
  await api.post(`/bills/${bill.id}/pay-date`, { pay_date: today }).expect(200);
  await api.post('/vendor-payments', { idempotency_key: 'run-7', items: [{ bill_id: bill.id, payment_speed: 'standard' }] }).expect(200);
  await w.sb.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${w.token}`)
    .send({ name: 'tenth list throttled', rules: [{ match: { operation: 'listCustomers' }, nth: 10, respond: { status: 429 } }] }).expect(201);
  for (let i = 0; i < 3; i++) await api.get('/customers').expect(200);
  await w.settle();
  const [failed] = await attempts(w);
  expect(failed).toMatchObject({ attempt: 1, status_code: 500 });
  return { customers, retryAt: failed.next_attempt_at as string };
}

describe('a saved snapshot, restored', () => {
  it('gives the account back byte for byte, and its failed delivery is retried on the restored schedule', async () => {
    const w = await webhookSandbox();
    try {
      const { customers, retryAt } = await richAccount(w);
      const ctl = control(w.sb, w.token);
      const before = canonical(dataOf(w.sb));
      const saved = await ctl.save({ name: 'setup' });
      expect(saved.status).toBe(201);
      expect(saved.body).toMatchObject({ name: 'setup', account: 'ptn_default:production', environment: 'production', redacted: false, bytes: expect.any(Number) });
      expect(saved.body.counts).toMatchObject({ customers: 3, payment_methods: 1, vendors: 1, bills: 1, vendor_payments: 1, webhook_subscriptions: 1, webhook_deliveries: 3, webhook_attempts: 1 });

      // Everything moves on: more objects, the clock, the retry (which fails again), a reset.
      await w.api.post('/customers', { name: 'After the save' }).expect(201);
      await w.sb.advance(3600).expect(200);
      expect((await attempts(w)).length).toBeGreaterThan(1);
      await w.sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${w.token}`).expect(200);

      const restored = await ctl.restore('setup');
      expect(restored.status).toBe(200);
      expect(restored.body).toEqual({ name: 'setup', account: 'ptn_default:production', counts: saved.body.counts });
      expect(canonical(dataOf(w.sb))).toBe(before);
      // The token of before the restore still works (a restore changes data, not who may call).
      expect((await w.api.get('/customers').expect(200)).body.data.map((c: { id: string }) => c.id)).toEqual([...customers].reverse());
      const clock = (await w.sb.http.get('/_sandbox/clock').set('Authorization', `Bearer ${w.token}`).expect(200)).body;
      expect(clock.offset_seconds).toBe(86_400);

      // The receiver is fixed; the retry comes when the restored schedule says, not before.
      w.receiver.respondWith(200);
      const secondsToRetry = (Date.parse(retryAt) - Date.parse(clock.now)) / 1000;
      await w.sb.advance(secondsToRetry - 1).expect(200);
      expect(await attempts(w)).toHaveLength(1);
      await w.sb.advance(1).expect(200);
      await w.settle();
      // The head's retry, then the two queued behind it, in order.
      expect((await attempts(w)).map((a) => [a.attempt, a.status_code, a.at])).toEqual([[1, 500, at(86_400)], [2, 200, retryAt], [1, 200, retryAt], [1, 200, retryAt]]);
      const delivered = w.receiver.accepted('customer_created');
      expect(delivered.map((d) => d.entity_id)).toEqual(customers);
      expect(delivered[0].secret).toBe('whsec_round_trip_0042');
    } finally {
      await w.close();
    }
  });

  it('counts the restored history in the memory budget, as a data file\'s is counted at start', async () => {
    const w = await webhookSandbox({ journalSize: 0 });
    try {
      await richAccount(w);
      const budget = memoryBudget(w.sb.deps);
      expect(budget.figures().bytes).toBeGreaterThan(0);
      await control(w.sb, w.token).save({ name: 'history' }).expect(201);
      await w.sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${w.token}`).expect(200);
      expect(budget.figures().bytes).toBe(0);
      await control(w.sb, w.token).restore('history').expect(200);
      // Each entry at its size now, as a start on a data file counts it.
      const data = dataOf(w.sb);
      let expected = 0;
      for (const name of ['events', 'webhook_deliveries', 'webhook_attempts']) {
        for (const item of data.collections[name].items.values()) expected += Buffer.byteLength(JSON.stringify(item));
      }
      expect(budget.figures().bytes).toBe(expected);
    } finally {
      await w.close();
    }
  });

  it('sends again a delivery whose attempt was under way when the snapshot was saved, as after a restart', async () => {
    const w = await webhookSandbox();
    try {
      await w.subscribe('customer_created');
      let release!: () => void;
      let arrived!: () => void;
      const reached = new Promise<void>((resolve) => { arrived = resolve; });
      w.receiver.respondWith(async () => {
        arrived();
        await new Promise<void>((resolve) => { release = resolve; });
        return 200;
      });
      const made = (await w.api.post('/customers', { name: 'In flight' }).expect(201)).body;
      const running = w.settle();
      await reached;
      await control(w.sb, w.token).save({ name: 'mid-attempt' }).expect(201);
      release();
      await running;
      w.receiver.respondWith(200);
      await control(w.sb, w.token).restore('mid-attempt').expect(200);
      await w.sb.advance(1).expect(200);
      await w.settle();
      const tried = await attempts(w);
      expect(tried.map((a) => [a.attempt, a.status_code])).toEqual([[1, null], [2, 200]]);
      expect(w.receiver.accepted('customer_created').map((d) => d.entity_id)).toEqual([made.id, made.id]);
    } finally {
      await w.close();
    }
  });
});

describe('an export', () => {
  it('redacts every secret (keeping documented test values), validates, and --fixtures FILE restores it', async () => {
    const w = await webhookSandbox();
    try {
      const { customers } = await richAccount(w);
      await w.api.post('/vendors', { name: 'Failing Co', bank_account: bankAccount('000000000002') }).expect(201);
      const ctl = control(w.sb, w.token);
      await ctl.save({ name: 'shared' }).expect(201);
      const exported = await ctl.export('shared');
      expect(exported.status).toBe(200);
      const text = JSON.stringify(exported.body);
      expect(exported.body).toMatchObject({ format: 'billing-sandbox-snapshot', version: 1, name: 'shared', redacted: true });
      expect(text).not.toContain('whsec_round_trip_0042');
      expect(text).not.toContain('987654321012');
      expect(exported.body.collections.webhook_subscriptions.items[0].secret_key).toBe('redacted-0042');
      const accounts = exported.body.collections.vendors.items.map((v: { bank_account: { account_number: string } }) => v.bank_account.account_number);
      expect(accounts).toEqual(['redacted-1012', '000000000002']);

      const file = join(tempDir(), 'shared.json');
      writeFileSync(file, JSON.stringify(exported.body));
      const loaded = await setup({ fixtures: file, allowHttpWebhooks: true });
      const api = loaded.as(await loaded.token());
      expect((await api.get('/customers').expect(200)).body.data.map((c: { id: string }) => c.id)).toEqual([...customers].reverse());
      const clock = (await loaded.http.get('/_sandbox/clock').expect(200)).body;
      expect(clock.offset_seconds).toBe(86_400);
      // Everything but the secrets: the same data as the export holds, masks in place of secrets.
      const fromExport = structuredClone(exported.body);
      const restored = JSON.parse(storeJson(dataOf(loaded)));
      expect(restored.collections.webhook_subscriptions.items).toEqual(Object.fromEntries(fromExport.collections.webhook_subscriptions.items.map((s: { id: string }) => [s.id, s])));
      expect(restored.state.webhook_queue).toEqual(fromExport.state.webhook_queue);
      expect(restored.jobs).toEqual(fromExport.jobs);
      // A full reset loads it again.
      await loaded.http.post('/_sandbox/reset').expect(200);
      expect((await loaded.as(await loaded.token()).get('/customers').expect(200)).body.data).toHaveLength(3);
    } finally {
      await w.close();
    }
  });

  it('imports through POST {document}, under its name or another, restoring what the export holds', async () => {
    const source = await setup();
    const token = await source.token();
    await source.as(token).post('/customers', { name: 'Exported' }).expect(201);
    await control(source, token).save({ name: 'exported' }).expect(201);
    const document = (await control(source, token).export('exported').expect(200)).body;

    const target = await setup();
    const targetToken = await target.token('demo');
    const ctl = control(target, targetToken);
    const imported = await ctl.save({ document });
    expect(imported.status).toBe(201);
    expect(imported.body).toMatchObject({ name: 'exported', account: 'ptn_default:production', redacted: true, counts: { customers: 1, events: 1 } });
    expect((await ctl.save({ document, name: 'renamed' })).status).toBe(201);
    expect((await ctl.save({ document })).body.code).toBe('snapshot_exists');
    expect((await ctl.list().expect(200)).body.data.map((s: { name: string }) => s.name)).toEqual(['exported', 'renamed']);
    await ctl.restore('renamed').expect(200);
    const listed = (await target.as(targetToken, 'demo').get('/customers').expect(200)).body.data;
    expect(listed.map((c: { name: string }) => c.name)).toEqual(['Exported']);
  });
});

describe('a restore into the partner\'s other account', () => {
  it('keeps every object\'s id, continues the snapshot\'s counter, and new creates never collide', async () => {
    const sb = await setup();
    const token = await sb.token();
    const api = sb.as(token);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await api.post('/customers', { name: `Made ${i}` }).expect(201)).body.id);
    await control(sb, token).save({ name: 'five' }).expect(201);
    const restored = await control(sb, token).restore('five', { environment: 'demo' });
    expect(restored.body).toMatchObject({ account: 'ptn_default:demo' });
    expect(dataOf(sb, 'demo').counters.ids).toBe(dataOf(sb).counters.ids);

    const demo = sb.as(await sb.token('demo'), 'demo');
    const listed = (await demo.get('/customers').expect(200)).body.data.map((c: { id: string }) => c.id);
    expect(listed).toEqual([...made].reverse());
    const fresh: string[] = [];
    for (let i = 0; i < 20; i++) fresh.push((await demo.post('/customers', { name: `Fresh ${i}` }).expect(201)).body.id);
    expect(new Set([...made, ...fresh]).size).toBe(25);
    // Each of them is found, by its own id, in the demo account only.
    for (const id of fresh) expect((await demo.get(`/customers/${id}`)).status).toBe(200);
    expect((await api.get(`/customers/${fresh[0]}`)).status).toBe(404);
    // The production account was not touched.
    expect((await api.get('/customers').expect(200)).body.data).toHaveLength(5);
  });

  it('restores into the same account after more was made: those objects are gone, and creates go on from the snapshot\'s counter', async () => {
    const sb = await setup();
    const token = await sb.token();
    const api = sb.as(token);
    const kept = (await api.post('/customers', { name: 'Kept' }).expect(201)).body.id;
    await control(sb, token).save({ name: 'one' }).expect(201);
    const gone = (await api.post('/customers', { name: 'Gone' }).expect(201)).body.id;
    await control(sb, token).restore('one').expect(200);
    expect((await api.get(`/customers/${gone}`)).status).toBe(404);
    const next = (await api.post('/customers', { name: 'Next' }).expect(201)).body.id;
    expect(next).not.toBe(kept);
    expect((await api.get('/customers').expect(200)).body.data.map((c: { id: string }) => c.id)).toEqual([next, kept]);
  });
});

describe('with --data', () => {
  it('a restore of many objects (a batch of several log lines) and the snapshots survive a restart', async () => {
    const dataFile = join(tempDir(), 'sandbox.json');
    const sb = await setup({ dataFile, flushDelayMs: 0 });
    const account = sb.deps.store.account('ptn_default', 'production');
    // 1,500 customers and their events: over 3,000 inserts, more than one log line of ops.
    for (let i = 0; i < 1500; i++) account.transaction(() => createCustomer(sb.deps, account, { name: `Customer ${i}` }));
    await sb.deps.store.flush();
    const token = await sb.token();
    await control(sb, token).save({ name: 'many' }).expect(201);
    await control(sb, token).restore('many', { environment: 'demo' }).expect(200);
    const demo = canonical(dataOf(sb, 'demo'));
    // Into the data file's snapshot: a start then leaves the objects as text until read (cold).
    await sb.deps.store.compact();
    await sb.deps.store.close();

    const again = await setup({ dataFile, flushDelayMs: 0 });
    expect(canonical(dataOf(again, 'demo'))).toBe(demo);
    const againToken = await again.token();
    expect((await control(again, againToken).list().expect(200)).body.data.map((s: { name: string; counts: Record<string, number> }) => [s.name, s.counts.customers])).toEqual([['many', 1500]]);
    // The production account's objects are as the data file loaded them (cold, kept as text): saved
    // as that text, they restore into demo as the same objects.
    expect(typeof again.deps.store.data.accounts['ptn_default:production'].collections.customers.items.values().next().value).toBe('number');
    const production = content(dataOf(again));
    await control(again, againToken).save({ name: 'cold' }).expect(201);
    await control(again, againToken).restore('cold', { environment: 'demo' }).expect(200);
    expect(content(dataOf(again, 'demo'))).toBe(production);
    await control(again, againToken).remove('cold').expect(200);
    // Restored again after the restart, into production: the same objects.
    await control(again, againToken).restore('many').expect(200);
    expect(content(dataOf(again))).toBe(content(dataOf(again, 'demo')));
    await again.deps.store.close();
    // What the file holds after both restores is what memory held.
    const loaded = await loadDataFile(dataFile);
    expect(canonical(loaded.accounts['ptn_default:production'])).toBe(canonical(dataOf(again)));
  });

  it('a delete removes the snapshot\'s file; a full reset removes them all', async () => {
    const dataFile = join(tempDir(), 'sandbox.json');
    const sb = await setup({ dataFile, flushDelayMs: 0 });
    const token = await sb.token();
    const ctl = control(sb, token);
    await ctl.save({ name: 'a' }).expect(201);
    await ctl.save({ name: 'b' }).expect(201);
    const files = () => readdirSync(join(`${dataFile}.snapshots`, 'ptn_default'));
    expect(files()).toHaveLength(2);
    expect((await ctl.remove('a')).body).toEqual({ deleted: 1 });
    expect(files()).toHaveLength(1);
    expect((await ctl.remove('a')).status).toBe(404);
    await sb.http.post('/_sandbox/reset').expect(200);
    expect(readdirSync(`${dataFile}.snapshots`)).toEqual([]);
    expect((await control(sb, await sb.token()).list().expect(200)).body.data).toEqual([]);
    await sb.deps.store.close();
  });
});


describe('a restore racing a write held at an await', () => {
  for (const mode of ['memory', 'data'] as const) {
    it(`answers the held POST /customers 409 account_replaced, which writes nothing anywhere (${mode})`, async () => {
      const dataFile = mode === 'data' ? join(tempDir(), 'sandbox.json') : undefined;
      const sb = await setup({ dataFile, flushDelayMs: 0 });
      const token = await sb.token();
      const api = sb.as(token);
      await api.post('/customers', { name: 'Before' }).expect(201);
      await control(sb, token).save({ name: 'before' }).expect(201);
      const hold = gate();
      sb.deps.services.set(SCENARIO_SLEEP, () => hold.wait());
      await sb.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`)
        .send({ name: 'hold', rules: [{ match: { operation: 'createCustomer' }, delay_ms: 1 }] }).expect(201);
      const pending = Promise.resolve(api.post('/customers', { name: 'Raced' }));
      await hold.reached;
      const restoredData = await control(sb, token).restore('before');
      expect(restoredData.status).toBe(200);
      hold.release();
      const raced = await pending;
      expect(raced.status).toBe(409);
      expect(raced.body).toEqual({ code: 'account_replaced', message: expect.stringContaining('restored'), validation_errors: {} });
      const names = (await api.get('/customers').expect(200)).body.data.map((c: { name: string }) => c.name);
      expect(names).toEqual(['Before']);
      if (!dataFile) return;
      await sb.deps.store.close();
      const again = await setup({ dataFile });
      expect((await again.as(await again.token()).get('/customers').expect(200)).body.data.map((c: { name: string }) => c.name)).toEqual(['Before']);
      await again.deps.store.close();
    });
  }
});

describe('limits and names', () => {
  it('a name taken answers 409 snapshot_exists unless replace is true', async () => {
    const sb = await setup();
    const ctl = control(sb, await sb.token());
    await ctl.save({ name: 'twice' }).expect(201);
    const again = await ctl.save({ name: 'twice' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'snapshot_exists', validation_errors: { name: expect.any(String) } });
    await ctl.save({ name: 'twice', replace: true }).expect(201);
    expect((await ctl.list()).body.data).toHaveLength(1);
  });

  it('a partner keeps at most snapshotsPerPartner: one more is 422 limit_reached naming name, and nothing is kept', async () => {
    lowerLimit('snapshotsPerPartner', 2);
    const sb = await setup();
    const ctl = control(sb, await sb.token());
    await ctl.save({ name: 'one' }).expect(201);
    await ctl.save({ name: 'two' }).expect(201);
    const third = await ctl.save({ name: 'three' });
    expect(third.status).toBe(422);
    expect(third.body).toMatchObject({ code: 'limit_reached', validation_errors: { name: expect.stringContaining('at most 2') } });
    await ctl.save({ name: 'two', replace: true }).expect(201);
    expect((await ctl.list()).body.data.map((s: { name: string }) => s.name)).toEqual(['one', 'two']);
    // Another partner has room of its own.
    const other = (await sb.http.post('/_sandbox/partners').send({ name: 'Other' }).expect(201)).body;
    const otherToken = await sb.token('production', other.credentials.production);
    await control(sb, otherToken).save({ name: 'three' }).expect(201);
  });

  it('one snapshot larger than snapshotBytes is 413; past the partner\'s or the server\'s bytes, 422', async () => {
    const sb = await setup();
    const token = await sb.token();
    await sb.as(token).post('/customers', { name: 'Some bytes' }).expect(201);
    const ctl = control(sb, token);
    // Names of one length: every one of these snapshots has the same size.
    const size = (await ctl.save({ name: 'size-0' }).expect(201)).body.bytes as number;
    await ctl.remove('size-0').expect(200);
    lowerLimit('snapshotBytes', size - 1);
    const big = await ctl.save({ name: 'size-1' });
    expect([big.status, big.body.code]).toEqual([413, 'payload_too_large']);
    lowerLimit('snapshotBytes', size);
    lowerLimit('snapshotBytesPerPartner', size * 2);
    await ctl.save({ name: 'size-2' }).expect(201);
    await ctl.save({ name: 'size-3' }).expect(201);
    const third = await ctl.save({ name: 'size-4' });
    expect([third.status, third.body.code]).toEqual([422, 'limit_reached']);
    lowerLimit('snapshotBytesPerServer', size * 2);
    const other = (await sb.http.post('/_sandbox/partners').send({ name: 'Other' }).expect(201)).body;
    const refused = await control(sb, await sb.token('production', other.credentials.production)).save({ name: 'size-5' });
    expect([refused.status, refused.body.code]).toEqual([422, 'limit_reached']);
    expect((await ctl.list()).body.data).toHaveLength(2);
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: '-starts-with-a-dash' }, 'name'],
    [{ name: 'has space' }, 'name'],
    [{ name: 'x'.repeat(65) }, 'name'],
    [{ name: 'ok', replace: 'yes' }, 'replace'],
    [{ name: 'ok', extra: 1 }, 'extra'],
  ])('POST %j answers 400 naming %s, keeping nothing', async (body, field) => {
    const sb = await setup();
    const ctl = control(sb, await sb.token());
    const res = await ctl.save(body);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validation_errors)).toContain(field);
    expect((await ctl.list()).body.data).toEqual([]);
  });

  it('another partner\'s snapshot is 404 to list, export, restore and delete, as one that does not exist', async () => {
    const sb = await setup();
    const token = await sb.token();
    await sb.as(token).post('/customers', { name: 'Private' }).expect(201);
    await control(sb, token).save({ name: 'private' }).expect(201);
    const other = (await sb.http.post('/_sandbox/partners').send({ name: 'Other' }).expect(201)).body;
    const ctl = control(sb, await sb.token('production', other.credentials.production));
    expect((await ctl.list().expect(200)).body.data).toEqual([]);
    for (const res of [await ctl.export('private'), await ctl.restore('private'), await ctl.remove('private'), await ctl.export('nothing-here')]) {
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    }
    expect((await ctl.restore('private', { environment: 'demo' })).status).toBe(404);
    // Naming the other partner's account with X-Sandbox-Account from this partner's token is 404 too.
    const named = await sb.http.get('/_sandbox/snapshots').set('Authorization', `Bearer ${await sb.token('production', other.credentials.production)}`).set('X-Sandbox-Account', 'ptn_default:production');
    expect(named.status).toBe(404);
    expect((await control(sb, token).list()).body.data).toHaveLength(1);
  });
});

describe('an imported document is checked before anything is kept', () => {
  async function exported(): Promise<{ sb: TestSandbox; ctl: ReturnType<typeof control>; document: Record<string, any>; api: Api; token: string }> {
    const sb = await setup();
    const token = await sb.token();
    const api = sb.as(token);
    await api.post('/customers', { name: 'A' }).expect(201);
    await api.post('/customers', { name: 'B' }).expect(201);
    await sb.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`).send({ name: 's', rules: [{ match: { operation: 'listCustomers' }, nth: 5, respond: { status: 429 } }] }).expect(201);
    const ctl = control(sb, token);
    await ctl.save({ name: 'base' }).expect(201);
    return { sb, ctl, api, token, document: (await ctl.export('base').expect(200)).body };
  }

  it.each([
    ['format', (d: any) => { d.format = 'something-else'; }, 'document.format'],
    ['version', (d: any) => { d.version = 2; }, 'document.version'],
    ['clock', (d: any) => { d.clock.offset_ms = 1e300; }, 'document.clock.offset_ms'],
    ['a counter', (d: any) => { d.counters.ids = -1; }, 'document.counters.ids'],
    ['the id counter below the ids held', (d: any) => { d.counters.ids = 1; }, 'document.counters.ids'],
    ['a stream forwarder\'s subscription', (d: any) => { d.collections.webhook_subscriptions = { items: [{ id: 'whs_00000000000000000001', forwarder: 'stm_1' }] }; }, 'document.collections.webhook_subscriptions.items[0].forwarder'],
    ['an item without id', (d: any) => { delete d.collections.customers.items[1].id; }, 'document.collections.customers.items[1].id'],
    ['a repeated id', (d: any) => { d.collections.customers.items[1].id = d.collections.customers.items[0].id; }, 'document.collections.customers.items[1].id'],
    ['an unknown collection', (d: any) => { d.collections.bogus = { items: [] }; }, 'document.collections.bogus'],
    ['an order missing an item', (d: any) => { d.collections.customers.order = [d.collections.customers.items[0].id]; }, 'document.collections.customers.order'],
    ['jobs out of order', (d: any) => { d.jobs = [{ id: 'j1', at: 2, kind: 'x', payload: {} }, { id: 'j2', at: 1, kind: 'x', payload: {} }]; }, 'document.jobs[1].at'],
    ['undeclared state', (d: any) => { d.state.whatever = 1; }, 'document.state.whatever'],
    ['state left out of snapshots', (d: any) => { d.state.blobs = { bytes: 0, sizes: {} }; }, 'document.state.blobs'],
    ['a queue of the wrong shape', (d: any) => { d.state.webhook_queue = { queue: 'x', paused: false, retry_count: 0, job: null, in_flight: null }; }, 'document.state.webhook_queue.queue'],
    ['a scenario document the scenario schema refuses', (d: any) => { d.state.scenarios[0].document.rules[0].respond.status = 99; }, 'document.state.scenarios[0].document.rules[0].respond.status'],
    ['nesting past snapshotDepth', (d: any) => { let deep: any = {}; const top = deep; for (let i = 0; i < 150; i++) { deep.x = {}; deep = deep.x; } d.collections.customers.items[0].nested = top; }, 'document.collections.customers.items'],
  ])('%s: 400 naming %s', async (_what, mutate, field) => {
    const { ctl, document } = await exported();
    mutate(document);
    const res = await ctl.save({ document, name: 'edited' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validation_errors)).toContain(field);
    expect((await ctl.list()).body.data.map((s: { name: string }) => s.name)).toEqual(['base']);
  });

  it('generated edits of an export either import and restore cleanly or answer 400 naming a document field: never 500', async () => {
    const { sb, ctl, document, api, token } = await exported();
    const paths = ['format', 'version', 'name', 'environment', 'account', 'clock', 'counters', 'jobs', 'state', 'collections', 'collections.customers', 'collections.customers.items', 'collections.customers.items.0.id',
      'collections.customers.order', 'collections.customers.base', 'collections.events.items', 'state.scenarios', 'state.scenario_counters', 'counters.ids', 'clock.offset_ms'];
    const values = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer({ min: -5, max: 1e9 }), fc.double(), fc.string({ maxLength: 5 }), fc.constant([]), fc.constant({}), fc.constant([{}]), fc.constant([{ id: 'x' }, { id: 'x' }]), fc.constant(['a', 'a']));
    let round = 0;
    await fc.assert(fc.asyncProperty(fc.constantFrom(...paths), values, async (path, value) => {
      const doc = structuredClone(document);
      const keys = path.split('.');
      const holder = keys.slice(0, -1).reduce((node: any, key) => node?.[key], doc);
      if (holder && typeof holder === 'object') {
        if (value === undefined) delete holder[keys.at(-1) as string];
        else holder[keys.at(-1) as string] = value;
      }
      const name = `gen-${(round += 1)}`;
      const res = await ctl.save({ document: doc, name });
      expect([200, 201, 400]).toContain(res.status);
      if (res.status === 400) {
        expect(Object.keys(res.body.validation_errors).every((f) => f.startsWith('document'))).toBe(true);
        return;
      }
      await ctl.restore(name).expect(200);
      expect((await api.get('/customers')).status).toBeLessThan(500);
      expect((await api.post('/customers', { name: 'After an import' })).status).toBe(201);
      expect((await sb.http.get('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`)).status).toBeLessThan(500);
      expect((await sb.advance(60, token)).status).toBeLessThan(500);
      await ctl.remove(name).expect(200);
    }), { numRuns: 60, seed: 43 });
  });
});
