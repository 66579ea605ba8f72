// The delivery drills that test a receiver's duplicate and secret handling, through HTTP with a real
// local receiver: duplicate_delivery (copies of a delivered event before the next one),
// timeout_after_delivery (an answer counted as a time-out, so the event comes again on the retry
// schedule) and wrong_secret (a wrong bearer; any answer is a failed attempt), each with its counters
// and topics; POST /_sandbox/events `duplicate`; ordering across all of them; a restart with --data
// in the middle of a duplicate run; the receiver helper's counts per idempotency_key.
import { afterEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createLogger } from '../src/log.js';
import { LIMITS } from '../src/limits.js';
import { eventLog } from '../src/events/events.js';
import { wrongSecret } from '../src/webhooks/drills.js';
import { startWebhookReceiver, type ReceivedWebhook } from '../src/testing/webhook-receiver.js';
import { at, webhookSandbox, webhookSandboxesClosedAfterEach, type WebhookSandbox } from './webhooks-support.js';

const releases: Array<() => void> = [];
const sandbox = webhookSandboxesClosedAfterEach(() => {
  for (const release of releases.splice(0)) release();
});

async function scenario(w: WebhookSandbox, rules: unknown[], seed?: string): Promise<void> {
  const res = await w.sb.http.post('/_sandbox/scenarios').send({ name: 'drill', ...(seed ? { seed } : {}), rules });
  expect(res.status).toBe(201);
}

async function customer(w: WebhookSandbox, name: string): Promise<string> {
  const res = await w.api.post('/customers', { name });
  expect(res.status).toBe(201);
  return res.body.id;
}

interface Attempt {
  id: string;
  event_id: string;
  topic: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  at: string;
  next_attempt_at: string | null;
  drill: string | null;
  duplicate_of: string | null;
}

/** The attempt log, oldest first. */
async function attempts(w: WebhookSandbox, query = ''): Promise<Attempt[]> {
  const res = await w.sb.http.get(`/_sandbox/webhooks/deliveries${query}`);
  expect(res.status).toBe(200);
  return (res.body.data as Attempt[]).slice().reverse();
}

async function history(w: WebhookSandbox) {
  const res = await w.api.get('/webhooks/events');
  expect(res.status).toBe(200);
  return (res.body.data as Array<{ entity_id: string; idempotency_key: string; status: string; attempts: number; last_error: string | null; next_attempt_at: string | null }>).slice().reverse();
}

async function advance(w: WebhookSandbox, seconds: number): Promise<void> {
  await w.sb.advance(seconds).expect(200);
  await w.fresh();
}

/** Each delivery as `entity_id status`, in arrival order. */
const arrivals = (w: WebhookSandbox) => w.receiver.deliveries.map((d) => `${d.entity_id} ${d.status}`);

/** Bounded real wait for something the sandbox does on its own (a real socket exchange). */
function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The receiver holds its answer to the nth delivery (1 = the first) until released; the others get 200. */
function holdNth(w: WebhookSandbox, n: number): { arrived: Promise<void>; release: () => void } {
  let arrive!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((resolve) => { arrive = resolve; });
  const answered = new Promise<number>((resolve) => { release = () => resolve(200); });
  releases.push(release);
  let count = 0;
  w.receiver.respondWith(() => {
    count += 1;
    if (count !== n) return 200;
    arrive();
    return answered;
  });
  return { arrived: within(arrived, `delivery ${n} at the receiver`), release };
}

describe('duplicate_delivery', () => {
  it('sends the delivered event N more times, same body and key, before the next event; the history shows one delivery with N+1 marked attempts', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: 2 } }]);
    await w.subscribe('customer_created', '/hooks', 'whsec_live_4f9Kq2');
    const first = await customer(w, 'Twice Told');
    const second = await customer(w, 'Once Only');
    await w.settle();

    expect(arrivals(w)).toEqual([`${first} 200`, `${first} 200`, `${first} 200`, `${second} 200`]);
    const [original, ...copies] = w.receiver.deliveries.slice(0, 3);
    for (const copy of copies) {
      expect(JSON.stringify(copy.body)).toBe(JSON.stringify(original.body));
      expect(copy.secret).toBe('whsec_live_4f9Kq2');
    }
    const key = original.idempotency_key;
    expect(w.receiver.countsByKey()).toEqual(new Map([[key, 3], [w.receiver.deliveries[3].idempotency_key, 1]]));
    expect(w.receiver.duplicates().map((d) => [d.idempotency_key, d.count, d.deliveries.length])).toEqual([[key, 3, 3]]);

    expect((await history(w)).map((h) => [h.entity_id, h.status, h.attempts, h.last_error])).toEqual([[first, 'sent', 3, null], [second, 'sent', 1, null]]);
    const log = await attempts(w);
    expect(log.map((a) => [a.event_id === key, a.attempt, a.status_code, a.error, a.drill, a.next_attempt_at])).toEqual([
      [true, 1, 200, null, 'duplicate_delivery', null],
      [true, 2, 200, null, 'duplicate_delivery', null],
      [true, 3, 200, null, 'duplicate_delivery', null],
      [false, 1, 200, null, null, null],
    ]);
    expect(log.map((a) => a.duplicate_of)).toEqual([null, log[0].id, log[0].id, null]);
    // The event_id filter finds the drill's attempts alone.
    expect((await attempts(w, `?event_id=${key}`)).map((a) => a.id)).toEqual(log.slice(0, 3).map((a) => a.id));
  });

  it('holds the next event until the copies are done: a second event waits while a copy is under way', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: 1 } }]);
    await w.subscribe('customer_created');
    const copy = holdNth(w, 2);
    const first = await customer(w, 'First');
    await copy.arrived;
    // The copy is at the receiver (which holds its answer), and a second event is recorded meanwhile.
    const second = await customer(w, 'Second');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(w.receiver.deliveries.map((d) => d.entity_id)).toEqual([first]);
    copy.release();
    await w.settle();
    expect(arrivals(w)).toEqual([`${first} 200`, `${first} 200`, `${second} 200`]);
  });

  // Mutant: settleCopy's `if (!dropped)` -> `if (true)`: the last copy's outcome took the next
  // subscription's delivery off the queue (its own was gone already), so that one was never sent.
  it('deleting the subscription while its last copy is under way: the copy is recorded and the next subscription\'s delivery still goes', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: 1 } }]);
    const a = await w.subscribe('customer_created', '/a');
    await w.subscribe('customer_created', '/b');
    const copy = holdNth(w, 2);
    const first = await customer(w, 'First');
    await copy.arrived;
    await w.api.delete(`/webhooks/${a.id}`).expect(200);
    copy.release();
    await w.settle();
    expect(w.receiver.deliveries.map((d) => [d.path, d.entity_id, d.status])).toEqual([['/a', first, 200], ['/a', first, 200], ['/b', first, 200]]);
    const log = await attempts(w);
    expect(log.map((x) => [x.status_code, x.drill, x.duplicate_of])).toEqual([[200, 'duplicate_delivery', null], [200, 'duplicate_delivery', log[0].id], [200, null, null]]);
    expect((await history(w)).map((r) => r.status)).toEqual(['sent', 'sent']);
  });

  it('records a copy the receiver refuses, does not retry it, and the event stays delivered while the queue goes on', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, times: 1, duplicate_delivery: { count: 2 } }]);
    await w.subscribe('customer_created');
    // The partner's receiver answers 409 to an event it has seen: the wrong answer to a duplicate.
    const seen = new Set<string>();
    w.receiver.respondWith((d) => (seen.has(d.idempotency_key) ? 409 : (seen.add(d.idempotency_key), 200)));
    const first = await customer(w, 'Refused Copies');
    const second = await customer(w, 'Next');
    await w.settle();
    expect(arrivals(w)).toEqual([`${first} 200`, `${first} 409`, `${first} 409`, `${second} 200`]);
    const log = await attempts(w);
    expect(log.slice(1, 3).map((a) => [a.status_code, a.drill, a.next_attempt_at])).toEqual([[409, 'duplicate_delivery', null], [409, 'duplicate_delivery', null]]);
    expect(log[1].error).toMatch(/receiver answered 409 to a duplicate of a delivered event .*not retried/);
    expect((await history(w)).map((h) => [h.entity_id, h.status, h.attempts])).toEqual([[first, 'sent', 3], [second, 'sent', 1]]);
    await advance(w, 3 * 3600);
    expect(w.receiver.deliveries).toHaveLength(4);
  });

  it('counts deliveries, not attempts: nth 1 duplicates the first event once a retry delivers it', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: 1 } }]);
    await w.subscribe('customer_created');
    w.receiver.respondWith(503);
    const first = await customer(w, 'Late');
    await w.settle();
    w.receiver.respondWith(200);
    await advance(w, 90);
    expect(arrivals(w)).toEqual([`${first} 503`, `${first} 200`, `${first} 200`]);
    expect((await attempts(w)).map((a) => [a.attempt, a.drill])).toEqual([[1, null], [2, 'duplicate_delivery'], [3, 'duplicate_delivery']]);
  });

  it('honours from and times, and the topics of the rule (a list), with one counter for all of them', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: ['customer_created', 'customer_updated'] }, from: 2, times: 2, duplicate_delivery: { count: 1 } }]);
    await w.subscribe('customer_created');
    await w.subscribe('customer_updated');
    await w.subscribe('invoice_created');
    const a = await customer(w, 'A');
    await w.api.patch(`/customers/${a}`, { city: 'Austin' }).expect(200);
    const b = await customer(w, 'B');
    const c = await customer(w, 'C');
    await w.settle();
    expect(w.receiver.deliveries.map((d) => `${d.topic} ${d.entity_id}`)).toEqual([
      `customer_created ${a}`,
      `customer_updated ${a}`, `customer_updated ${a}`,
      `customer_created ${b}`, `customer_created ${b}`,
      `customer_created ${c}`,
    ]);
    const counters = (await w.sb.http.get('/_sandbox/scenarios')).body.data[0].counters;
    expect(counters).toEqual([{ matched: 4, fired: 2 }]);
  });

  it('with a probability, replays the same copies for the same seed', async () => {
    async function run(seed: string): Promise<number[]> {
      const w = await sandbox({ seed: 'drills' });
      await scenario(w, [{ match: { topic: '*' }, probability: 0.5, duplicate_delivery: { count: 1 } }], seed);
      await w.subscribe('customer_created');
      for (let i = 0; i < 16; i++) await customer(w, `P${i}`);
      await w.settle();
      return [...w.receiver.countsByKey().values()];
    }
    const a = await run('coin-1');
    expect(await run('coin-1')).toEqual(a);
    expect(a).toHaveLength(16);
    const copied = a.filter((n) => n === 2).length;
    expect(copied).toBeGreaterThan(2);
    expect(copied).toBeLessThan(14);
    expect(a.every((n) => n === 1 || n === 2)).toBe(true);
  });

  it('a copy is no attempt of the queue: fail_delivery, wrong_secret and timeout rules never meet it', async () => {
    const w = await sandbox();
    await scenario(w, [
      { match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: 2 } },
      { match: { topic: 'customer_created' }, from: 2, fail_delivery: { status: 503 } },
    ]);
    await w.subscribe('customer_created');
    const first = await customer(w, 'Copied');
    await w.settle();
    expect(arrivals(w)).toEqual([`${first} 200`, `${first} 200`, `${first} 200`]);
    expect((await w.sb.http.get('/_sandbox/scenarios')).body.data[0].counters).toEqual([{ matched: 1, fired: 1 }, { matched: 1, fired: 0 }]);
  });

  it('a subscription deleted during the copies receives no more of them, and the next event goes', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: 3 } }]);
    const doomed = await w.subscribe('customer_created', '/doomed');
    const copy = holdNth(w, 2);
    const first = await customer(w, 'Cut Short');
    await copy.arrived;
    await w.api.delete(`/webhooks/${doomed.id}`).expect(200);
    await w.subscribe('customer_created', '/kept');
    const second = await customer(w, 'After');
    copy.release();
    await w.settle();
    expect(w.receiver.deliveries.map((d) => `${d.path} ${d.entity_id}`)).toEqual([`/doomed ${first}`, `/doomed ${first}`, `/kept ${second}`]);
    expect((await history(w)).map((h) => [h.entity_id, h.status])).toEqual([[first, 'sent'], [second, 'sent']]);
  });
});

describe('POST /_sandbox/events with duplicate (what `trigger --duplicate N` calls)', () => {
  it('delivers the fired event N more times to every subscription of its topic, before the next event', async () => {
    const w = await sandbox();
    await w.subscribe('customer_created', '/a');
    await w.subscribe('customer_created', '/b');
    const fired = await w.sb.http.post('/_sandbox/events').send({ topic: 'customer_created', duplicate: 2 });
    expect(fired.status).toBe(201);
    const next = await customer(w, 'Next');
    await w.settle();
    const key = fired.body.idempotency_key;
    expect(w.receiver.deliveries.map((d) => `${d.path} ${d.idempotency_key === key ? 'fired' : d.entity_id}`)).toEqual([
      '/a fired', '/a fired', '/a fired', '/b fired', '/b fired', '/b fired', `/a ${next}`, `/b ${next}`,
    ]);
    expect(w.receiver.countsByKey({ topic: 'customer_created' }).get(key)).toBe(6);
    expect((await attempts(w, `?event_id=${key}`)).map((a) => a.drill)).toEqual(Array(6).fill('duplicate_delivery'));
  });

  it.each([
    [0, 'must be at least 1'],
    [LIMITS.webhookDuplicateCopies + 1, `must be at most ${LIMITS.webhookDuplicateCopies}`],
    [1.5, 'must be integer'],
    ['2', 'must be integer'],
  ])('refuses duplicate %p with 400 naming the field, and fires nothing', async (duplicate, message) => {
    const w = await sandbox();
    await w.subscribe('customer_created');
    const account = w.sb.deps.store.account('ptn_default', 'production');
    const res = await w.sb.http.post('/_sandbox/events').send({ topic: 'customer_created', duplicate });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({ duplicate: message });
    expect(eventLog(account).size).toBe(0);
  });

  it('refuses with 422 naming duplicate when no subscription would receive the event, and fires nothing', async () => {
    const w = await sandbox();
    await w.subscribe('invoice_paid');
    const account = w.sb.deps.store.account('ptn_default', 'production');
    const res = await w.sb.http.post('/_sandbox/events').send({ topic: 'customer_created', duplicate: 1 });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ code: 'unprocessable_entity', message: expect.stringMatching(/No active subscription of customer_created .*Nothing was fired/), validation_errors: { duplicate: 'needs an active subscription of customer_created' } });
    // The customer the event would have made, and its own event, were undone with it.
    expect(eventLog(account).size).toBe(0);
    expect((await w.api.get('/customers')).body.data).toEqual([]);
  });
});

describe('timeout_after_delivery', () => {
  it('the receiver gets the body and answers, the attempt counts as a time-out, and the retry 90 s later delivers the same event again, before the next', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, times: 1, timeout_after_delivery: true }]);
    await w.subscribe('customer_created');
    const first = await customer(w, 'Slow Ack');
    const second = await customer(w, 'Waits');
    await w.settle();
    expect(arrivals(w)).toEqual([`${first} 200`]);
    const [attempt] = await attempts(w);
    expect(attempt).toMatchObject({ attempt: 1, status_code: null, drill: 'timeout_after_delivery', next_attempt_at: at(90), duplicate_of: null });
    expect(attempt.error).toBe('timed out after 10000 ms (scenario timeout_after_delivery): the receiver got the body and answered 200, counted as no answer in time, so the event is sent again');
    expect((await history(w)).map((h) => [h.entity_id, h.status, h.next_attempt_at])).toEqual([[first, 'failed', at(90)], [second, 'pending', null]]);

    await advance(w, 89);
    expect(w.receiver.deliveries).toHaveLength(1);
    await advance(w, 1);
    expect(arrivals(w)).toEqual([`${first} 200`, `${first} 200`, `${second} 200`]);
    expect(JSON.stringify(w.receiver.deliveries[1].body)).toBe(JSON.stringify(w.receiver.deliveries[0].body));
    expect(w.receiver.duplicates().map((d) => [d.deliveries[0].entity_id, d.count])).toEqual([[first, 2]]);
    expect((await attempts(w)).map((a) => [a.attempt, a.status_code, a.drill])).toEqual([[1, null, 'timeout_after_delivery'], [2, 200, null], [1, 200, null]]);
  });

  it('follows the retry schedule (30 s x 3^n) on every attempt it counts, and pauses after the fifth retry', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, timeout_after_delivery: true }]);
    await w.subscribe('customer_created');
    await customer(w, 'Never Acknowledged');
    await w.settle();
    const due = [90, 270, 810, 2430, 7290];
    let elapsed = 0;
    for (const delay of due) {
      await advance(w, delay - 1);
      expect(w.receiver.deliveries).toHaveLength(due.indexOf(delay) + 1);
      await advance(w, 1);
      elapsed += delay;
    }
    expect(w.receiver.deliveries).toHaveLength(6);
    expect(new Set(w.receiver.deliveries.map((d) => d.idempotency_key)).size).toBe(1);
    const log = await attempts(w);
    let when = 0;
    expect(log.map((a) => a.next_attempt_at)).toEqual([...due.map((d) => at((when += d))), null]);
    expect(log.every((a) => a.drill === 'timeout_after_delivery' && a.status_code === null)).toBe(true);
    expect(elapsed).toBe(when);
    // Paused: nothing more until POST /webhooks/retry, which sends it again (still timing out).
    await advance(w, 86_400);
    expect(w.receiver.deliveries).toHaveLength(6);
    expect((await w.api.post('/webhooks/retry')).body).toEqual({ success: true, resumed: 1 });
    await w.settle();
    expect(w.receiver.deliveries).toHaveLength(7);
  });

  it('an attempt the receiver does not answer in time stays a plain time-out, marked', async () => {
    const w = await sandbox();
    w.queue.options.timeoutMs = 100;
    await scenario(w, [{ match: { topic: 'customer_created' }, times: 1, timeout_after_delivery: true }]);
    await w.subscribe('customer_created');
    const silent = holdNth(w, 1);
    await customer(w, 'Silent');
    await w.settle();
    silent.release();
    const [attempt] = await attempts(w);
    expect(attempt).toMatchObject({ status_code: null, error: 'timed out after 100 ms (scenario timeout_after_delivery)', drill: 'timeout_after_delivery', next_attempt_at: at(90) });
  });
});

describe('wrong_secret', () => {
  it('a receiver checking the secret answers 401 to a realistic wrong bearer; the attempt fails and the retry 90 s later carries the right one', async () => {
    const w = await sandbox();
    const real = 'whsec_live_4f9Kq2ZtX8';
    const checking = await startWebhookReceiver({ secret: real });
    try {
      await scenario(w, [{ match: { topic: 'customer_created' }, nth: 1, wrong_secret: true }]);
      await w.api.post('/webhooks', { endpoint_url: `${checking.url}/hooks`, topic: 'customer_created', secret_key: real }).expect(201);
      const first = await customer(w, 'Checked');
      const second = await customer(w, 'Behind');
      await w.settle();
      expect(checking.deliveries.map((d) => `${d.entity_id} ${d.status}`)).toEqual([`${first} 401`]);
      const wrong = checking.deliveries[0].secret as string;
      expect(wrong).not.toBe(real);
      expect(wrong).toMatch(/^[a-z]{5}_[a-z]{4}_[0-9][a-z][0-9][A-Z][a-z][0-9][A-Z][a-z][A-Z][0-9]$/);
      const [attempt] = await attempts(w);
      expect(attempt).toMatchObject({ attempt: 1, status_code: 401, error: 'receiver answered 401 to a wrong secret (scenario wrong_secret)', drill: 'wrong_secret', next_attempt_at: at(90) });

      await advance(w, 90);
      expect(checking.deliveries.map((d) => `${d.entity_id} ${d.status} ${d.secret === real}`)).toEqual([`${first} 401 false`, `${first} 200 true`, `${second} 200 true`]);
      expect((await history(w)).map((h) => [h.entity_id, h.status, h.attempts])).toEqual([[first, 'sent', 2], [second, 'sent', 1]]);
    } finally {
      await checking.close();
    }
  });

  it('a receiver that accepts the wrong secret (2xx) is the bug the drill exposes: a failed attempt, retried, and the history says why', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, times: 1, wrong_secret: true }]);
    await w.subscribe('customer_created', '/hooks', 'right-secret-0001');
    const first = await customer(w, 'Too Trusting');
    await w.settle();
    expect(arrivals(w)).toEqual([`${first} 200`]);
    const [attempt] = await attempts(w);
    expect(attempt).toMatchObject({ status_code: 200, drill: 'wrong_secret', next_attempt_at: at(90) });
    expect(attempt.error).toMatch(/^receiver accepted a wrong secret: it answered 200 to a delivery whose Authorization bearer was not the subscription's secret_key/);
    const [record] = await history(w);
    expect(record).toMatchObject({ status: 'failed', attempts: 1, next_attempt_at: at(90), last_error: attempt.error });
    await advance(w, 90);
    expect(w.receiver.deliveries.map((d) => d.secret)).toEqual([expect.not.stringMatching(/^right-secret-0001$/), 'right-secret-0001']);
    expect((await history(w))[0]).toMatchObject({ status: 'sent', attempts: 2, last_error: null });
  });

  it('sends a made-up bearer to a subscription without a secret', async () => {
    const w = await sandbox();
    await scenario(w, [{ match: { topic: 'customer_created' }, times: 1, wrong_secret: true }]);
    await w.subscribe('customer_created');
    await customer(w, 'No Secret');
    await w.settle();
    await advance(w, 90);
    expect(w.receiver.deliveries.map((d) => d.secret)).toEqual([expect.stringMatching(/^[A-Za-z0-9]{32}$/), null]);
  });

  it('never writes the wrong secret (nor the real one) to the history, the attempt log, the journal, the logs or the data file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drills-data-'));
    try {
      const w = await sandbox({ dataFile: join(dir, 'sandbox.json') });
      let logged = '';
      (w.sb.deps as { log: unknown }).log = createLogger('trace', { pretty: false, destination: new Writable({ write(chunk, _encoding, done) { logged += String(chunk); done(); } }) });
      const real = 'whsec_never_written_7Hq';
      await scenario(w, [{ match: { topic: 'customer_created' }, times: 2, wrong_secret: true }]);
      await w.subscribe('customer_created', '/hooks', real);
      await customer(w, 'Secretive');
      await w.settle();
      await advance(w, 90);
      await advance(w, 270);
      const wrongs = w.receiver.deliveries.slice(0, 2).map((d) => d.secret as string);
      expect(w.receiver.deliveries.map((d) => d.secret === real)).toEqual([false, false, true]);
      expect(new Set(wrongs).size).toBe(2);
      await w.sb.deps.store.flush();
      const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile()).map((f) => readFileSync(join(f.parentPath, f.name), 'utf8')).join('\n');
      const answers = [
        (await w.sb.http.get('/_sandbox/webhooks/deliveries')).text,
        (await w.api.get('/webhooks/events')).text,
        (await w.api.get('/webhooks')).text,
        (await w.sb.http.get('/_sandbox/requests?limit=100')).text,
        (await w.sb.http.get('/_sandbox/events')).text,
      ].join('\n');
      // The scans do read what they scan: the file holds the customer and the real secret (stored so
      // that deliveries after a restart carry it), the log the attempts.
      expect(files).toContain('Secretive');
      expect(files).toContain(real);
      expect(logged).toMatch(/webhook attempt/);
      for (const secret of wrongs) {
        expect(answers).not.toContain(secret);
        expect(logged).not.toContain(secret);
        expect(files).not.toContain(secret);
      }
      expect(answers).not.toContain(real);
      expect(logged).not.toContain(real);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a wrong secret keeps the real one\'s shape, is never the real one, and is the same for the same seed (generated secrets)', () => {
    const visible = fc.string({ unit: fc.constantFrom(...Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i))), minLength: 1, maxLength: 256 });
    const kind = (c: string) => (/[a-z]/.test(c) ? 'a' : /[A-Z]/.test(c) ? 'A' : /[0-9]/.test(c) ? '0' : c);
    fc.assert(fc.property(visible, fc.string(), (real, seed) => {
      const wrong = wrongSecret(real, seed);
      expect(wrong).not.toBe(real);
      expect(wrong).toBe(wrongSecret(real, seed));
      expect(wrong).toHaveLength(real.length);
      expect(/^[\x21-\x7e]+$/.test(wrong)).toBe(true);
      // Each letter a letter of its case, each digit a digit, the rest kept (one may change to differ).
      const differs = [...real].filter((c, i) => kind(c) !== kind(wrong[i]));
      expect(differs.length).toBeLessThanOrEqual(1);
    }), { numRuns: 500 });
    expect(wrongSecret(null, 'x')).toMatch(/^[A-Za-z0-9]{32}$/);
  });
});

describe('ordering across the drills', () => {
  it('a wrong secret, a time-out after delivery and a duplicate, each in its place of the one ordered queue', async () => {
    const w = await sandbox();
    await scenario(w, [
      { match: { topic: 'customer_created' }, nth: 1, wrong_secret: true },
      { match: { topic: 'customer_updated' }, nth: 1, timeout_after_delivery: true },
      { match: { topic: 'customer_created' }, nth: 2, duplicate_delivery: { count: 1 } },
    ]);
    await w.subscribe('customer_created', '/hooks', 'whsec_order_1');
    await w.subscribe('customer_updated', '/hooks', 'whsec_order_1');
    const a = await customer(w, 'A');
    await w.api.patch(`/customers/${a}`, { city: 'Austin' }).expect(200);
    const b = await customer(w, 'B');
    const c = await customer(w, 'C');
    await w.settle();
    const seen = () => w.receiver.deliveries.map((d) => `${d.topic.replace('customer_', '')} ${d.entity_id} ${d.secret === 'whsec_order_1' ? 'secret' : 'WRONG'}`);
    expect(seen()).toEqual([`created ${a} WRONG`]);
    await advance(w, 90);
    expect(seen()).toEqual([`created ${a} WRONG`, `created ${a} secret`, `updated ${a} secret`]);
    await advance(w, 90);
    expect(seen()).toEqual([
      `created ${a} WRONG`, `created ${a} secret`,
      `updated ${a} secret`, `updated ${a} secret`,
      `created ${b} secret`, `created ${b} secret`,
      `created ${c} secret`,
    ]);
    expect((await attempts(w)).map((x) => x.drill)).toEqual(['wrong_secret', null, 'timeout_after_delivery', null, 'duplicate_delivery', 'duplicate_delivery', null]);
    expect((await history(w)).every((h) => h.status === 'sent')).toBe(true);
  });
});

describe('a restart with --data in the middle of a duplicate run', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // Mutants: settleCopy's clearing of `in_flight` (`!== null` -> false / `=== null`, `{ in_flight: null }` -> {}):
  // the copy's attempt stayed "in flight", and the next start recorded a cut copy that never was.
  it('after the copies are done, a restart finds nothing cut: no attempt is added and nothing is sent again', async () => {
    dir = mkdtempSync(join(tmpdir(), 'drills-restart-'));
    const file = join(dir, 'sandbox.json');
    const a = await sandbox({ dataFile: file, seed: 'durable-drill' });
    await scenario(a, [{ match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: 1 } }]);
    await a.subscribe('customer_created');
    const id = await customer(a, 'Copied');
    await a.settle();
    expect(arrivals(a)).toEqual([`${id} 200`, `${id} 200`]);
    await a.sb.deps.store.flush();
    a.sb.deps.store.changed = () => undefined;

    const b = await sandbox({ dataFile: file, seed: 'durable-drill' });
    await b.settle();
    await advance(b, 20_000);
    expect(arrivals(a)).toHaveLength(2);
    expect((await attempts(b)).map((x) => [x.status_code, x.error, x.drill])).toEqual([[200, null, 'duplicate_delivery'], [200, null, 'duplicate_delivery']]);
  });

  /**
   * A receiver at /hooks and /other that answers 200, except the second request (the first copy of
   * the first delivery), which it holds: the process dies while that copy is under way.
   */
  async function receiverHoldingTheFirstCopy() {
    const held: http.ServerResponse[] = [];
    const arrivals: Array<{ path: string; entity_id: string; body: string }> = [];
    let arrived!: () => void;
    const copyArrived = new Promise<void>((resolve) => { arrived = resolve; });
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => { body += String(chunk); });
      req.on('end', () => {
        arrivals.push({ path: String(req.url), entity_id: (JSON.parse(body) as { entity_id: string }).entity_id, body });
        if (arrivals.length === 2) {
          held.push(res);
          arrived();
        } else res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      base, arrivals, copyArrived,
      async close() {
        for (const res of held) res.writeHead(500).end();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }

  /** A sandbox on `file` whose first customer_created delivery gets `copies` copies, subscribed at each path. */
  async function duplicating(file: string, base: string, copies: number, paths: string[]) {
    const a = await webhookSandbox({ dataFile: file, seed: 'durable-drill' });
    await a.sb.http.post('/_sandbox/scenarios').send({ name: 'dup', rules: [{ match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: copies } }] }).expect(201);
    const subs: string[] = [];
    for (const path of paths) subs.push((await a.api.post('/webhooks', { endpoint_url: `${base}${path}`, topic: 'customer_created' }).expect(201)).body.id);
    return { a, subs };
  }

  /** The process dies here: what it wrote is on disk, and nothing more reaches the file. */
  async function die(a: WebhookSandbox): Promise<void> {
    await a.sb.deps.store.flush();
    a.sb.deps.store.changed = () => undefined;
    await a.close();
  }

  it('sends the cut copy again, then the rest of the copies, then the next event: nothing lost or reordered', async () => {
    dir = mkdtempSync(join(tmpdir(), 'drills-restart-'));
    const file = join(dir, 'sandbox.json');
    const receiver = await receiverHoldingTheFirstCopy();
    try {
      const { a } = await duplicating(file, receiver.base, 2, ['/hooks']);
      const first = (await a.api.post('/customers', { name: 'Copied' })).body.id;
      const second = (await a.api.post('/customers', { name: 'Queued' })).body.id;
      await receiver.copyArrived;
      await die(a);

      const b = await sandbox({ dataFile: file, seed: 'durable-drill' });
      await b.settle();
      expect(receiver.arrivals.map((x) => x.entity_id)).toEqual([first, first, first, first, second]);
      expect(new Set(receiver.arrivals.slice(0, 4).map((x) => x.body)).size).toBe(1);
      const log = await attempts(b);
      expect(log.map((x) => [x.attempt, x.status_code, x.error, x.drill, x.duplicate_of === log[0].id])).toEqual([
        [1, 200, null, 'duplicate_delivery', false],
        [2, null, 'interrupted: the sandbox stopped during this attempt', 'duplicate_delivery', true],
        [3, 200, null, 'duplicate_delivery', true],
        [4, 200, null, 'duplicate_delivery', true],
        [1, 200, null, null, false],
      ]);
      expect((await history(b)).map((h) => [h.entity_id, h.status, h.attempts])).toEqual([[first, 'sent', 4], [second, 'sent', 1]]);
    } finally {
      await receiver.close();
    }
  });

  // Mutants: dropSubscription's clearing of the copies (`kept[0] !== head && state.copies` and its
  // parts, `{ copies: null }` -> {}): copies cleared when another subscription goes sent the head
  // again as if never delivered; copies kept when the head's own subscription goes were sent to the
  // next delivery in place of its own attempt.
  it.each<[string, number, Array<[string, 'first' | 'second']>]>([
    ['another subscription', 1, [['/hooks', 'first'], ['/hooks', 'first'], ['/hooks', 'first'], ['/hooks', 'first'], ['/hooks', 'second']]],
    ['the subscription of the event being copied', 0, [['/hooks', 'first'], ['/hooks', 'first'], ['/other', 'first'], ['/other', 'second']]],
  ])('after a restart mid-copies, deleting %s before the run: the copies go on only while their delivery heads the queue', async (_label, deleted, expected) => {
    dir = mkdtempSync(join(tmpdir(), 'drills-restart-'));
    const file = join(dir, 'sandbox.json');
    const receiver = await receiverHoldingTheFirstCopy();
    try {
      const { a, subs } = await duplicating(file, receiver.base, 2, ['/hooks', '/other']);
      const ids = { first: (await a.api.post('/customers', { name: 'Copied' })).body.id, second: (await a.api.post('/customers', { name: 'Queued' })).body.id };
      await receiver.copyArrived;
      await die(a);

      const b = await sandbox({ dataFile: file, seed: 'durable-drill' });
      await b.api.delete(`/webhooks/${subs[deleted]}`).expect(200);
      await b.settle();
      expect(receiver.arrivals.map((x) => [x.path, x.entity_id])).toEqual(expected.map(([path, name]) => [path, ids[name]]));
      // Every delivery that reached its receiver is recorded sent once; the deleted subscription's others failed.
      const records = await history(b);
      expect(records.filter((h) => h.status === 'sent')).toHaveLength(deleted ? 2 : 3);
      expect(records.filter((h) => h.status !== 'sent').map((h) => h.status)).toEqual(deleted ? ['failed', 'failed'] : ['failed']);
    } finally {
      await receiver.close();
    }
  });
});

describe('the receiver helper counts deliveries per idempotency_key', () => {
  it('countsByKey and duplicates narrow by topic and by accepted deliveries; secret answers 401 to any other bearer', async () => {
    const receiver = await startWebhookReceiver({ secret: 's3cret' });
    try {
      const post = (body: object, secret: string | null, status?: number) => fetch(`${receiver.url}/h`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(secret ? { Authorization: `Bearer ${secret}` } : {}), ...(status ? { 'X-Status': String(status) } : {}) },
        body: JSON.stringify(body),
      }).then((r) => r.status);
      receiver.respondWith((d) => Number(d.headers['x-status'] ?? 200));
      const one = { topic: 'invoice_paid', idempotency_key: 'k1', entity_id: 'inv_1', timestamp: 't', data: {} };
      const two = { topic: 'customer_created', idempotency_key: 'k2', entity_id: 'cus_1', timestamp: 't', data: {} };
      expect([
        await post(one, 's3cret'), await post(one, 's3cret', 500), await post(two, 's3cret'),
        await post(one, 'wrong'), await post(two, null), await post(two, 's3cret'),
      ]).toEqual([200, 500, 200, 401, 401, 200]);
      expect(receiver.countsByKey()).toEqual(new Map([['k1', 3], ['k2', 3]]));
      expect([...receiver.countsByKey().keys()]).toEqual(['k1', 'k2']);
      expect(receiver.countsByKey({ accepted: true })).toEqual(new Map([['k1', 1], ['k2', 2]]));
      expect(receiver.countsByKey({ topic: 'invoice_paid' })).toEqual(new Map([['k1', 3]]));
      const dups = receiver.duplicates({ accepted: true });
      expect(dups.map((d) => [d.idempotency_key, d.topic, d.count, d.deliveries.map((x: ReceivedWebhook) => x.status)])).toEqual([['k2', 'customer_created', 2, [200, 200]]]);
      expect(receiver.deliveries.map((d) => d.secret)).toEqual(['s3cret', 's3cret', 's3cret', 'wrong', null, 's3cret']);
      receiver.clear();
      expect(receiver.countsByKey().size).toBe(0);
      expect(receiver.duplicates()).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});
