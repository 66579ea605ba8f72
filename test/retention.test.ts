// Growth without bound (issue 16 item 8): every structure that grows with traffic has a cap or a
// retention from src/limits.ts. Subscriptions and scenarios past their cap answer 422 limit_reached
// and create nothing; the webhook history, event log and attempt log drop their oldest settled
// entries past the count or the age (account clock) but never a queued delivery or its event;
// idempotency keys are forgotten after 24 h or beyond the count; idle rate-limit buckets go.
import { afterEach, describe, expect, it } from '@jest/globals';
import { eventLog } from '../src/events/events.js';
import { LIMITS } from '../src/limits.js';
import { attempts, deliveries } from '../src/webhooks/history.js';
import { keptAfterDrop } from '../src/webhooks/retention.js';
import { lowerLimit, setup } from './helpers.js';
import { Payables } from './payables-helpers.js';
import { webhookSandbox, type WebhookSandbox } from './webhooks-support.js';

let w: WebhookSandbox | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const DAY = 86_400;

/** The keys of a store's order log (src/store/module-state.ts defineStateLog), oldest first. */
function keysInOrder(log: Record<string, unknown>): string[] {
  const head = (log.head as number | undefined) ?? 0;
  return Array.from({ length: (log.next as number) - head }, (_, i) => (log[String(head + i)] as [string, number])[0]);
}

describe('webhook subscriptions per account', () => {
  it(`answers 422 limit_reached past ${LIMITS.webhookSubscriptionsPerAccount} active subscriptions and creates nothing; a deleted one frees its place`, async () => {
    w = await webhookSandbox();
    const cap = LIMITS.webhookSubscriptionsPerAccount;
    expect(cap).toBe(50);
    const made: string[] = [];
    for (let i = 0; i < cap; i++) made.push((await w.subscribe('customer_created', `/h${i}`)).id);
    const refused = await w.api.post('/webhooks', { endpoint_url: `${w.receiver.url}/one-more`, topic: 'invoice_paid' });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ code: 'limit_reached', message: expect.stringContaining(`${cap} active webhook subscriptions, the most it may have`), validation_errors: {} });
    const listed = await w.api.get('/webhooks?limit=500');
    expect(listed.body.data).toHaveLength(cap);
    expect(listed.body.data.some((s: { endpoint_url: string }) => s.endpoint_url.endsWith('/one-more'))).toBe(false);

    expect((await w.api.delete(`/webhooks/${made[0]}`)).status).toBe(200);
    expect((await w.api.post('/webhooks', { endpoint_url: `${w.receiver.url}/one-more`, topic: 'invoice_paid' })).status).toBe(201);
  });

  it('keeps the most recently deleted subscriptions listed and drops older deleted ones', async () => {
    w = await webhookSandbox();
    lowerLimit('webhookDeletedSubscriptionsKept', 3);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const sub = await w.subscribe('customer_created', `/d${i}`);
      ids.push(sub.id);
      expect((await w.api.delete(`/webhooks/${sub.id}`)).status).toBe(200);
    }
    const inactive = await w.api.get('/webhooks?is_active=false');
    expect(inactive.body.data.map((s: { id: string }) => s.id)).toEqual([ids[4], ids[3], ids[2]]);
    expect((await w.api.delete(`/webhooks/${ids[0]}`)).status).toBe(404);
  });
});

describe('webhook history retention', () => {
  const customer = async (name: string) => (await w!.api.post('/customers', { name }).expect(201)).body.id as string;
  const history = async () => (await w!.api.get('/webhooks/events?limit=500')).body.data as Array<{ entity_id: string; status: string }>;
  const attemptLog = async () => (await w!.sb.http.get('/_sandbox/webhooks/deliveries').set('Authorization', `Bearer ${w!.token}`)).body.data as Array<{ event_id: string }>;

  it(`drops settled history older than ${LIMITS.webhookHistoryDays} days on the account clock, keeping queued deliveries and their events`, async () => {
    w = await webhookSandbox();
    await w.subscribe('customer_created');
    const delivered = await customer('Delivered');
    await w.settle();
    expect((await history()).map((r) => [r.entity_id, r.status])).toEqual([[delivered, 'sent']]);

    // The receiver starts failing: this event's delivery stays queued through every retry, then paused.
    w.receiver.respondWith(500);
    const stuck = await customer('Stuck');
    await w.settle();
    await w.sb.advance((LIMITS.webhookHistoryDays + 1) * DAY).expect(200);
    await w.fresh();
    const later = await customer('Later');
    await w.settle();

    const records = await history();
    expect(records.map((r) => [r.entity_id, r.status])).toEqual([[later, 'pending'], [stuck, 'failed']]);
    const account = w.account;
    expect([...eventLog(account).values()].map((e) => e.entity_id)).toEqual([stuck, later]);
    // Attempts are history only: the ones made more than 30 days ago are gone.
    expect(await attemptLog()).toEqual([]);

    // Once delivered, the old record is settled and past its age: it goes too.
    w.receiver.respondWith(200);
    expect((await w.api.post('/webhooks/retry')).status).toBe(200);
    await w.settle();
    expect((await history()).map((r) => [r.entity_id, r.status])).toEqual([[later, 'sent']]);
    expect([...eventLog(account).values()].map((e) => e.entity_id)).toEqual([later]);
  });

  it('applies the age when the history is read, also when no event was recorded since the clock moved', async () => {
    w = await webhookSandbox();
    await w.subscribe('customer_created');
    await customer('Old');
    await w.settle();
    expect(await history()).toHaveLength(1);
    expect(await attemptLog()).toHaveLength(1);
    await w.sb.advance((LIMITS.webhookHistoryDays + 1) * DAY).expect(200);
    await w.fresh();
    expect(await history()).toEqual([]);
    expect(await attemptLog()).toEqual([]);
  });

  it('applies the age as a clock advance ends, so that reading the history afterwards writes nothing', async () => {
    w = await webhookSandbox();
    await w.subscribe('customer_created');
    await customer('Old');
    await w.settle();
    const account = w.sb.deps.store.account('ptn_default', 'production');
    await w.sb.advance((LIMITS.webhookHistoryDays + 1) * DAY).expect(200);
    expect([deliveries(account).size, eventLog(account).size, attempts(account).size]).toEqual([0, 0, 0]);
    await w.fresh();
    const changes = w.sb.deps.store.changeCount;
    expect(await history()).toEqual([]);
    expect(await attemptLog()).toEqual([]);
    expect(w.sb.deps.store.changeCount).toBe(changes);
  });

  it('past the count, drops the oldest down to a sixteenth below it at once, settled deliveries, events and attempts alike', async () => {
    w = await webhookSandbox();
    lowerLimit('webhookHistoryEntries', 32);
    expect(keptAfterDrop(32)).toBe(30);
    expect(keptAfterDrop(10_000)).toBe(9_375);
    await w.subscribe('customer_created');
    const made: string[] = [];
    for (let i = 0; i < 32; i++) made.push(await customer(`Kept ${i}`));
    await w.settle();
    expect(eventLog(w.account).size).toBe(32);
    // The 33rd: the oldest three go, not one.
    made.push(await customer('Over'));
    await w.settle();
    expect(eventLog(w.account).size).toBe(30);
    expect([...eventLog(w.account).values()].map((e) => e.entity_id)).toEqual(made.slice(3));
    expect((await history()).map((r) => r.entity_id)).toEqual(made.slice(3).reverse());
    expect(await attemptLog()).toHaveLength(30);
    // Then it fills up to the count again before the next drop.
    for (let i = 0; i < 2; i++) made.push(await customer(`Again ${i}`));
    await w.settle();
    expect(eventLog(w.account).size).toBe(32);
    expect(await history()).toHaveLength(32);
  });

  it('keeps at most LIMITS.webhookHistoryEntries settled records, events and attempts, but every queued one', async () => {
    w = await webhookSandbox();
    lowerLimit('webhookHistoryEntries', 3);
    await w.subscribe('customer_created');
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push(await customer(`Sent ${i}`));
    await w.settle();
    expect((await history()).map((r) => r.entity_id)).toEqual(sent.slice(2).reverse());
    expect(eventLog(w.account).size).toBe(3);
    expect(await attemptLog()).toHaveLength(3);

    w.receiver.respondWith(503);
    const queued: string[] = [];
    for (let i = 0; i < 5; i++) queued.push(await customer(`Queued ${i}`));
    await w.settle();
    const records = await history();
    // Every queued delivery stays although the count is over 3; the settled ones before them are gone.
    expect(records.map((r) => r.entity_id)).toEqual([...queued].reverse());
    expect(records.map((r) => r.status)).toEqual(['pending', 'pending', 'pending', 'pending', 'failed']);
    expect(deliveries(w.account).size).toBe(5);
    expect(eventLog(w.account).size).toBe(5);
    expect(attempts(w.account).size).toBeLessThanOrEqual(3);
  });
});

describe('idempotency keys', () => {
  async function payable(p: Payables) {
    const v = await p.vendor();
    const bill = await p.bill(v.id, { status: 'needs_approval' });
    await p.api.post(`/bills/${bill.id}/pay-date`, { pay_date: await p.clockToday() }).expect(200);
    return bill.id;
  }

  it(`are forgotten ${LIMITS.idempotencyKeyHours} h after use on the account clock`, async () => {
    const p = await Payables.start();
    const bill = await payable(p);
    const body = { idempotency_key: 'run-1', items: [{ bill_id: bill, payment_speed: 'standard' }] };
    const first = await p.api.post('/vendor-payments', body);
    expect(first.status).toBe(200);
    await p.advance(LIMITS.idempotencyKeyHours * 3600 - 60);
    expect((await p.api.post('/vendor-payments', body)).body).toEqual(first.body);
    expect((await p.api.post('/vendor-payments', { ...body, items: [{ bill_id: bill, payment_speed: 'instant' }] })).status).toBe(409);
    await p.advance(120);
    // Forgotten: the same key is a new request (refused per item: the bill's payment is under way), not a 409.
    const again = await p.api.post('/vendor-payments', { ...body, items: [{ bill_id: bill, payment_speed: 'instant' }] });
    expect(again.status).toBe(200);
    expect(again.body.results[0]).toMatchObject({ success: false, payment_id: null });
  });

  it(`are remembered for exactly ${LIMITS.idempotencyKeyHours} h: at that instant still a 409, a second later a new request`, async () => {
    const p = await Payables.start();
    const bill = await payable(p);
    const body = { idempotency_key: 'edge', items: [{ bill_id: bill, payment_speed: 'standard' }] };
    const other = { ...body, items: [{ bill_id: bill, payment_speed: 'instant' }] };
    expect((await p.api.post('/vendor-payments', body)).status).toBe(200);
    await p.advance(LIMITS.idempotencyKeyHours * 3600);
    expect((await p.api.post('/vendor-payments', other)).status).toBe(409);
    // A write at that instant prunes the keys; this one is not past its time yet.
    expect((await p.api.post('/vendor-payments', { idempotency_key: 'edge-2', items: body.items })).status).toBe(200);
    expect((await p.api.post('/vendor-payments', other)).status).toBe(409);
    await p.advance(1);
    expect((await p.api.post('/vendor-payments', other)).status).toBe(200);
  });

  it('drop forgotten keys from their log, so the log does not grow with traffic', async () => {
    const p = await Payables.start();
    const bill = await payable(p);
    const items = [{ bill_id: bill, payment_speed: 'standard' }];
    for (let i = 0; i < 70; i++) expect((await p.api.post('/vendor-payments', { idempotency_key: `bulk-${i}`, items })).status).toBe(200);
    const state = p.sb.deps.store.account('ptn_default', 'production').data.state as Record<string, Record<string, unknown>>;
    const log = () => keysInOrder(state.vendor_payment_idempotency_order);
    expect(log()).toHaveLength(70);
    // A read does not prune; the next write after the keys' time forgets all 70 and drops them from the log.
    await p.advance(LIMITS.idempotencyKeyHours * 3600 + 1);
    expect((await p.api.post('/vendor-payments', { idempotency_key: 'bulk-0', items: [{ bill_id: bill, payment_speed: 'instant' }] })).status).toBe(200);
    expect(log()).toEqual(['bulk-0']);
    // Each forgotten key left the log as it went: only the ends and the one live entry are stored.
    expect(Object.keys(state.vendor_payment_idempotency_order).sort()).toEqual(['70', 'head', 'next'].sort());
    expect(Object.keys(state.vendor_payment_idempotency)).toEqual(['bulk-0']);
  });

  // Keys remembered 24 h ago, keys 12 h ago, then one more key: each forgotten key leaves the log as
  // it goes (a shift of the log, written alone), so nothing forgotten is kept and nothing is copied.
  it('forget the keys past their time at the next key, leaving exactly the live ones and the new one, in order', async () => {
    const p = await Payables.start();
    const bill = await payable(p);
    const items = [{ bill_id: bill, payment_speed: 'standard' }];
    const state = p.sb.deps.store.account('ptn_default', 'production').data.state as Record<string, Record<string, unknown>>;
    const remember = async (prefix: string, n: number) => {
      for (let i = 0; i < n; i++) expect((await p.api.post('/vendor-payments', { idempotency_key: `${prefix}-${i}`, items })).status).toBe(200);
    };
    await remember('old', 10);
    await p.advance(12 * 3600);
    await remember('live', 9);
    await p.advance(12 * 3600 + 1); // the old keys are past their time, the live ones not
    await remember('new', 1);
    expect(keysInOrder(state.vendor_payment_idempotency_order)).toEqual([...Array.from({ length: 9 }, (_, i) => `live-${i}`), 'new-0']);
    expect(Object.keys(state.vendor_payment_idempotency_order)).toHaveLength(10 + 2);
    const other = [{ bill_id: bill, payment_speed: 'instant' }];
    expect((await p.api.post('/vendor-payments', { idempotency_key: 'live-0', items: other })).status).toBe(409);
    expect((await p.api.post('/vendor-payments', { idempotency_key: 'old-9', items: other })).status).toBe(200);
  });

  it('are forgotten oldest first beyond LIMITS.idempotencyKeysPerAccount', async () => {
    lowerLimit('idempotencyKeysPerAccount', 2);
    const p = await Payables.start();
    const bill = await payable(p);
    const items = [{ bill_id: bill, payment_speed: 'standard' }];
    for (const key of ['k1', 'k2', 'k3']) expect((await p.api.post('/vendor-payments', { idempotency_key: key, items })).status).toBe(200);
    const other = [{ bill_id: bill, payment_speed: 'instant' }];
    expect((await p.api.post('/vendor-payments', { idempotency_key: 'k3', items: other })).status).toBe(409);
    expect((await p.api.post('/vendor-payments', { idempotency_key: 'k2', items: other })).status).toBe(409);
    expect((await p.api.post('/vendor-payments', { idempotency_key: 'k1', items: other })).status).toBe(200);
  });
});

describe('scenarios per account', () => {
  it(`answers 422 limit_reached past ${LIMITS.scenariosPerAccount} loaded scenarios and loads nothing`, async () => {
    const sb = await setup();
    const doc = (i: number) => ({ name: `s${i}`, rules: [{ match: { operation: 'listCustomers' }, delay_ms: 1 }] });
    for (let i = 0; i < LIMITS.scenariosPerAccount; i++) expect((await sb.http.post('/_sandbox/scenarios').send(doc(i))).status).toBe(201);
    const refused = await sb.http.post('/_sandbox/scenarios').send(doc(-1));
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'limit_reached', message: expect.stringContaining(`${LIMITS.scenariosPerAccount} scenarios`) });
    expect((await sb.http.get('/_sandbox/scenarios')).body.data).toHaveLength(LIMITS.scenariosPerAccount);
  });
});

describe('rate-limit buckets', () => {
  it('drops the bucket of a key idle for a whole window', async () => {
    const sb = await setup({ rateLimit: 100 });
    const production = await sb.token();
    const demo = await sb.token('demo');
    expect((await sb.as(production).get('/customers')).status).toBe(200);
    expect((await sb.as(demo, 'demo').get('/customers')).status).toBe(200);
    expect(sb.deps.rateLimiter.size).toBe(2);
    sb.time.now += LIMITS.rateLimitWindowMs + 1;
    expect((await sb.as(production).get('/customers')).status).toBe(200);
    expect(sb.deps.rateLimiter.size).toBe(1);
  });
});
