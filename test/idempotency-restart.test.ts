// Idempotency keys kept with the account's state (src/store/idempotency.ts): they survive a restart
// with --data, and a key reused with another request is a 409 naming the field with a fixed text.
// Pinned because mutation testing (npm run mutate, issue 19) showed a key dropped from the data file,
// and the 409's text, went unnoticed.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bytesPerWrite, lowerLimit, setup, type Api, type TestSandbox } from './helpers.js';
import { bankAccount } from './payables-helpers.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'idempotency-'));
  file = join(dir, 'sandbox.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function instance(): Promise<{ sb: TestSandbox; api: Api }> {
  const sb = await setup({ dataFile: file, seed: 'idempotency' });
  return { sb, api: sb.as(await sb.token()) };
}

/**
 * Data an earlier version wrote: `edit` reshapes the production account's state and names the keys it
 * changed (reported as module state reports itself, so the file holds the old shape); then the process
 * "dies" and a new one starts on the file.
 */
async function restartOnEarlierState(a: { sb: TestSandbox }, edit: (state: Record<string, unknown>) => string[]) {
  const account = a.sb.deps.store.account('ptn_default', 'production');
  account.transaction(() => { for (const key of edit(account.data.state)) account.stateChanged(key); });
  await a.sb.deps.store.flush();
  a.sb.deps.store.changed = () => undefined;
  const b = await instance();
  return { b, restarted: b.sb.deps.store.account('ptn_default', 'production').data.state };
}

async function payableBill(api: Api): Promise<string> {
  const vendor = await api.post('/vendors', { name: 'Paper Co', bank_account: bankAccount() });
  expect(vendor.status).toBe(201);
  const bill = await api.post('/bills', { vendor_id: vendor.body.id, amount: 120, status: 'needs_approval' });
  expect(bill.status).toBe(201);
  const today = (await api.get(`/bills/${bill.body.id}`)).body.created_at.slice(0, 10);
  await api.post(`/bills/${bill.body.id}/pay-date`, { pay_date: today }).expect(200);
  return bill.body.id;
}

describe('idempotency keys', () => {
  it('survive a restart with --data: the same request replays the first answer, another is 409 naming idempotency_key', async () => {
    const a = await instance();
    const billId = await payableBill(a.api);
    const otherId = await payableBill(a.api);
    const body = { idempotency_key: 'run-after-restart', items: [{ bill_id: billId, payment_speed: 'standard' }] };
    const first = await a.api.post('/vendor-payments', body);
    expect(first.status).toBe(200);
    expect(first.body.results[0]).toMatchObject({ success: true, payment_id: expect.stringMatching(/^vp_/) });
    await a.sb.deps.store.flush();
    a.sb.deps.store.changed = () => undefined; // the first process is gone

    const b = await instance();
    const replay = await b.api.post('/vendor-payments', body);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect((await b.api.get(`/bills/${billId}`)).body.vendor_payments).toHaveLength(1);

    const reused = await b.api.post('/vendor-payments', { ...body, items: [{ bill_id: otherId, payment_speed: 'standard' }] });
    expect(reused.status).toBe(409);
    expect(reused.body).toEqual({
      code: 'idempotency_key_reused',
      message: 'This idempotency key was already used with a different request body.',
      validation_errors: { idempotency_key: 'was already used with a different request' },
    });
    expect((await b.api.get(`/bills/${otherId}`)).body.vendor_payments).toEqual([]);
  });

  it('are per account: the same key in another environment is a new request', async () => {
    const a = await instance();
    const body = (billId: string) => ({ idempotency_key: 'shared-key', items: [{ bill_id: billId }] });
    const prodBill = await payableBill(a.api);
    expect((await a.api.post('/vendor-payments', body(prodBill))).body.results[0].success).toBe(true);
    const demo = a.sb.as(await a.sb.token('demo'), 'demo');
    const demoBill = await payableBill(demo);
    const res = await demo.post('/vendor-payments', body(demoBill));
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ bill_id: demoBill, success: true });
  });
});

describe('the key log across a restart', () => {
  // The log is made from the records only on data that has none (written before keys expired); made
  // again at every start, it would lose the forgotten head's place, and keys beyond the count would
  // stay remembered after the restart.
  it('is kept as stored: after a restart, the oldest key beyond LIMITS.idempotencyKeysPerAccount is still forgotten first', async () => {
    lowerLimit('idempotencyKeysPerAccount', 2);
    const a = await instance();
    const billId = await payableBill(a.api);
    const items = [{ bill_id: billId, payment_speed: 'standard' }];
    for (const key of ['k1', 'k2', 'k3']) expect((await a.api.post('/vendor-payments', { idempotency_key: key, items })).status).toBe(200);
    await a.sb.deps.store.flush();
    a.sb.deps.store.changed = () => undefined;

    const b = await instance();
    // The keys' order, as a log: k1 forgotten (its entry gone), k2 and k3 kept.
    expect(b.sb.deps.store.account('ptn_default', 'production').data.state.vendor_payment_idempotency_order).toEqual({
      head: 1, next: 3, 1: ['k2', expect.any(Number)], 2: ['k3', expect.any(Number)],
    });
    expect((await b.api.post('/vendor-payments', { idempotency_key: 'k4', items })).status).toBe(200);
    const other = [{ bill_id: billId, payment_speed: 'instant' }];
    // k2 is now the oldest of three: forgotten, so the key is a new request (not a 409).
    expect((await b.api.post('/vendor-payments', { idempotency_key: 'k2', items: other })).status).toBe(200);
    expect((await b.api.post('/vendor-payments', { idempotency_key: 'k4', items: other })).status).toBe(409);
  });
});

describe('the key log an earlier version kept (one value, written whole at every key)', () => {
  it('is taken up at start: its live keys, in order, become the keys\' order, and the old log goes', async () => {
    lowerLimit('idempotencyKeysPerAccount', 2);
    const a = await instance();
    const billId = await payableBill(a.api);
    const items = [{ bill_id: billId, payment_speed: 'standard' }];
    for (const key of ['k1', 'k2', 'k3']) expect((await a.api.post('/vendor-payments', { idempotency_key: key, items })).status).toBe(200);
    // As an earlier version wrote it: k1 forgotten (before the head), k2 and k3 live; no order log.
    const { b, restarted } = await restartOnEarlierState(a, (state) => {
      const order = state.vendor_payment_idempotency_order as Record<string, [string, number]>;
      state.vendor_payment_idempotency_log = { entries: [['k1', order[1][1] - 1], order[1], order[2]], head: 1 };
      delete state.vendor_payment_idempotency_order;
      return ['vendor_payment_idempotency_log', 'vendor_payment_idempotency_order'];
    });
    expect(restarted.vendor_payment_idempotency_order).toEqual({ next: 2, 0: ['k2', expect.any(Number)], 1: ['k3', expect.any(Number)] });
    expect(Object.keys(restarted)).not.toContain('vendor_payment_idempotency_log');
    const other = [{ bill_id: billId, payment_speed: 'instant' }];
    expect((await b.api.post('/vendor-payments', { idempotency_key: 'k3', items: other })).status).toBe(409);
    // k4 makes three: the oldest live key, k2, is forgotten first.
    expect((await b.api.post('/vendor-payments', { idempotency_key: 'k4', items })).status).toBe(200);
    expect((await b.api.post('/vendor-payments', { idempotency_key: 'k2', items: other })).status).toBe(200);
  });
});

describe('the cost of remembering a key', () => {
  // The class: a write's cost never grows with what is stored. The key log was one value written
  // whole at every key: at 400 keys a key wrote about 12 KB more than at 5.
  it('is the same bytes in the data file with 5 or 400 keys remembered', async () => {
    const a = await instance();
    const items = [{ bill_id: await payableBill(a.api), payment_speed: 'standard' }];
    let made = 0;
    const pay = async () => {
      expect((await a.api.post('/vendor-payments', { idempotency_key: `key-${String(made++).padStart(5, '0')}`, items })).status).toBe(200);
    };
    const { atFew, atMany } = await bytesPerWrite(file, pay, () => a.sb.deps.store.flush(), { few: 5, many: 400 });
    expect(atMany).toBeLessThan(atFew * 1.1);
  });
});

describe('a snapshot an earlier version exported, with its key log', () => {
  it('is taken up at the first key after the restore: its keys stay remembered, in their order', async () => {
    lowerLimit('idempotencyKeysPerAccount', 2);
    const a = await instance();
    const billId = await payableBill(a.api);
    const items = [{ bill_id: billId, payment_speed: 'standard' }];
    for (const key of ['k1', 'k2']) expect((await a.api.post('/vendor-payments', { idempotency_key: key, items })).status).toBe(200);
    const auth = { Authorization: `Bearer ${await a.sb.token()}` };
    await a.sb.http.post('/_sandbox/snapshots').set(auth).send({ name: 'now' }).expect(201);
    const doc = (await a.sb.http.get('/_sandbox/snapshots/now').set(auth).expect(200)).body;
    const order = doc.state.vendor_payment_idempotency_order as Record<string, [string, number]>;
    doc.state.vendor_payment_idempotency_log = { entries: [order[0], order[1]], head: 0 };
    delete doc.state.vendor_payment_idempotency_order;
    await a.sb.http.post('/_sandbox/snapshots').set(auth).send({ name: 'earlier', document: doc }).expect(201);
    await a.sb.http.post('/_sandbox/snapshots/earlier/restore').set(auth).send({}).expect(200);
    const other = [{ bill_id: billId, payment_speed: 'instant' }];
    expect((await a.api.post('/vendor-payments', { idempotency_key: 'k2', items: other })).status).toBe(409);
    // The first key remembered after the restore takes the old log up, then forgets the oldest beyond two.
    expect((await a.api.post('/vendor-payments', { idempotency_key: 'k3', items })).status).toBe(200);
    const state = a.sb.deps.store.account('ptn_default', 'production').data.state;
    expect(Object.keys(state)).not.toContain('vendor_payment_idempotency_log');
    expect(state.vendor_payment_idempotency_order).toEqual({ head: 1, next: 3, 1: ['k2', expect.any(Number)], 2: ['k3', expect.any(Number)] });
    expect((await a.api.post('/vendor-payments', { idempotency_key: 'k1', items: other })).status).toBe(200);
  });
});

describe('idempotency keys written before keys expired', () => {
  it('start their 24 hours when the sandbox restarts on them, then are forgotten', async () => {
    const a = await instance();
    const billId = await payableBill(a.api);
    const otherId = await payableBill(a.api);
    const body = { idempotency_key: 'legacy', items: [{ bill_id: billId, payment_speed: 'standard' }] };
    expect((await a.api.post('/vendor-payments', body)).status).toBe(200);
    // Make the data an older version wrote: records without `at`, and no key log.
    const { b, restarted } = await restartOnEarlierState(a, (state) => {
      delete (state.vendor_payment_idempotency as Record<string, { at?: number }>).legacy.at;
      delete state.vendor_payment_idempotency_order;
      return ['vendor_payment_idempotency', 'vendor_payment_idempotency_order'];
    });
    // The restart made the log from the records, and the key's time started then.
    expect((restarted.vendor_payment_idempotency as Record<string, { at?: number }>).legacy.at).toBe(b.sb.time.now);
    expect(restarted.vendor_payment_idempotency_order).toEqual({ next: 1, 0: ['legacy', b.sb.time.now] });
    const other = { ...body, items: [{ bill_id: otherId, payment_speed: 'standard' }] };
    // Its time started when the sandbox restarted on it (a refused request writes nothing, so not at a first use).
    await b.sb.advance(3600).expect(200);
    expect((await b.api.post('/vendor-payments', other)).status).toBe(409);
    await b.sb.advance(23 * 3600 - 1).expect(200);
    await b.api.post('/vendor-payments', other).expect(409);
    await b.sb.advance(2).expect(200);
    const later = b.sb.as(await b.sb.token());
    const res = await later.post('/vendor-payments', other);
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ bill_id: otherId, success: true });
  });
});
