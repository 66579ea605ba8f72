// Webhook delivery: real HTTP POSTs in order, retries at the spec's times on the account clock,
// pause after the fifth retry, resume 10 per run, history statuses, faults and bad receivers.
import { afterEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DELIVERY_FAULTS, type DeliveryFaultHook } from '../src/faults.js';
import { subscriptions } from '../src/webhooks/subscriptions.js';
import { at, deliveryErrors, webhookSandbox, type WebhookSandbox } from './webhooks-support.js';

let w: WebhookSandbox;
const servers: http.Server[] = [];
afterEach(async () => {
  await w?.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function rawServer(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function attemptsLog(query = '') {
  const res = await w.sb.http.get(`/_sandbox/webhooks/deliveries${query}`);
  expect(res.status).toBe(200);
  return res.body.data as Array<{ event_id: string; topic: string; attempt: number; status_code: number | null; error: string | null; at: string; next_attempt_at: string | null; url: string }>;
}

async function history(query = '') {
  const res = await w.api.get(`/webhooks/events${query}`);
  expect(res.status).toBe(200);
  return res.body;
}

async function customer(name: string): Promise<string> {
  const res = await w.api.post('/customers', { name, email: `${name.toLowerCase()}@example.com` });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('delivery', () => {
  it('posts the event with the secret as a bearer token, in the documented shape, and records it as sent', async () => {
    w = await webhookSandbox();
    const sub = await w.subscribe('customer_created', '/billing', 'whsec_abc_1234');
    const id = await customer('Acme');
    await w.settle();
    const [got] = w.receiver.deliveries;
    expect(w.receiver.deliveries).toHaveLength(1);
    expect(got.path).toBe('/billing');
    expect(got.secret).toBe('whsec_abc_1234');
    expect(got.headers['content-type']).toBe('application/json');
    expect(Object.keys(got.body).sort()).toEqual(['data', 'entity_id', 'idempotency_key', 'timestamp', 'topic']);
    expect(got.body).toMatchObject({ entity_id: id, topic: 'customer_created', timestamp: at(0), data: { customer_id: id, name: 'Acme', status: 'active' } });
    expect(deliveryErrors(got.body)).toEqual([]);
    const records = (await history()).data;
    expect(records).toEqual([expect.objectContaining({
      subscription_id: sub.id, entity_id: id, idempotency_key: got.idempotency_key, topic: 'customer_created',
      status: 'sent', attempts: 1, last_error: null, last_attempt_at: at(0), next_attempt_at: null, data: got.body.data,
    })]);
    expect(await attemptsLog()).toEqual([expect.objectContaining({ event_id: got.idempotency_key, attempt: 1, status_code: 200, error: null, at: at(0), next_attempt_at: null })]);
  });

  it('sends no Authorization header without a secret, and every active subscription of the topic gets its own copy', async () => {
    w = await webhookSandbox();
    await w.subscribe('customer_updated', '/one');
    await w.subscribe('customer_updated', '/two', 'sekret-2');
    await w.subscribe('customer_archived', '/other');
    const id = await customer('Acme');
    await w.api.patch(`/customers/${id}`, { city: 'Austin' }).expect(200);
    await w.settle();
    expect(w.receiver.deliveries.map((d) => [d.path, d.topic, d.secret])).toEqual([['/one', 'customer_updated', null], ['/two', 'customer_updated', 'sekret-2']]);
    expect(w.receiver.deliveries[0].headers.authorization).toBeUndefined();
    expect(w.receiver.deliveries[0].idempotency_key).toBe(w.receiver.deliveries[1].idempotency_key);
    for (const d of w.receiver.deliveries) expect(deliveryErrors(d.body)).toEqual([]);
    // customer_created had no subscription: it is not in the history (the history is of deliveries).
    expect((await history()).data.map((r: { topic: string }) => r.topic)).toEqual(['customer_updated', 'customer_updated']);
  });

  it('retries at exactly 90 s, 270 s, 810 s, 2430 s and 7290 s after each failure, then pauses', async () => {
    w = await webhookSandbox();
    w.receiver.respondWith(500);
    await w.subscribe('customer_created');
    await customer('Acme');
    await w.settle();
    const expected = [0, 90, 360, 1170, 3600, 10890];
    for (let i = 1; i < expected.length; i++) {
      const gap = expected[i] - expected[i - 1];
      await w.sb.advance(gap - 1).expect(200);
      expect(w.receiver.deliveries).toHaveLength(i);
      await w.sb.advance(1).expect(200);
      expect(w.receiver.deliveries).toHaveLength(i + 1);
    }
    const log = (await attemptsLog()).reverse();
    expect(log.map((a) => a.at)).toEqual(expected.map(at));
    expect(log.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(log.map((a) => a.status_code)).toEqual([500, 500, 500, 500, 500, 500]);
    expect(log.map((a) => a.next_attempt_at)).toEqual([...expected.slice(1).map(at), null]);
    // Paused: nothing more, however long the clock runs.
    await w.sb.advance(7 * 86_400).expect(200);
    expect(w.receiver.deliveries).toHaveLength(6);
    const [record] = (await history()).data;
    expect(record).toMatchObject({ status: 'failed', attempts: 6, last_error: 'receiver answered 500', last_attempt_at: at(10890), next_attempt_at: null });
  });

  it('holds the order across failures: a later event waits until the earlier one is delivered', async () => {
    w = await webhookSandbox();
    let calls = 0;
    w.receiver.respondWith(() => (++calls <= 2 ? 503 : 200));
    await w.subscribe('customer_created');
    await w.subscribe('customer_updated');
    const a = await customer('First');
    await w.api.patch(`/customers/${a}`, { name: 'First Renamed' }).expect(200);
    const c = await customer('Third');
    await w.settle();
    expect(w.receiver.deliveries.map((d) => d.status)).toEqual([503]);
    const pending = await history('?status=pending');
    expect(pending.data.map((r: { topic: string }) => r.topic)).toEqual(['customer_created', 'customer_updated']);
    expect((await history('?status=failed')).data).toHaveLength(1);
    await w.sb.advance(90).expect(200);
    expect(w.receiver.deliveries.map((d) => d.status)).toEqual([503, 503]);
    await w.sb.advance(270).expect(200);
    expect(w.receiver.deliveries.map((d) => [d.topic, d.entity_id, d.status])).toEqual([
      ['customer_created', a, 503], ['customer_created', a, 503],
      ['customer_created', a, 200], ['customer_updated', a, 200], ['customer_created', c, 200],
    ]);
    expect((await history('?status=sent')).data).toHaveLength(3);
    expect((await history('?status=pending')).data).toEqual([]);
    // The next failure starts a fresh retry counter.
    w.receiver.respondWith(500);
    await customer('Fourth');
    await w.settle();
    expect((await attemptsLog('?limit=1'))[0]).toMatchObject({ attempt: 1, next_attempt_at: at(360 + 90) });
  });

  it('POST /webhooks/retry resets the counter and resumes in order, 10 per run, the rest in following 30 s cycles', async () => {
    w = await webhookSandbox();
    w.receiver.respondWith(500);
    await w.subscribe('customer_created');
    const ids = [await customer('C0')];
    await w.settle();
    await w.sb.advance(20_000).expect(200);
    expect(w.receiver.deliveries).toHaveLength(6);
    for (let i = 1; i < 25; i++) ids.push(await customer(`C${i}`));
    await w.settle();
    expect(w.receiver.deliveries).toHaveLength(6); // paused: new events only queue
    expect((await history('?status=pending&limit=100')).data).toHaveLength(24);
    w.receiver.respondWith(200);
    const res = await w.api.post('/webhooks/retry');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, resumed: 25 });
    await w.settle();
    const accepted = () => w.receiver.accepted('customer_created').map((d) => d.entity_id);
    expect(accepted()).toEqual(ids.slice(0, 10));
    await w.sb.advance(29).expect(200);
    expect(accepted()).toHaveLength(10);
    await w.sb.advance(1).expect(200);
    expect(accepted()).toEqual(ids.slice(0, 20));
    await w.sb.advance(30).expect(200);
    expect(accepted()).toEqual(ids);
    expect((await history('?status=sent&limit=100')).data).toHaveLength(25);
    const retried = (await history('?limit=100')).data.at(-1);
    expect(retried).toMatchObject({ entity_id: ids[0], status: 'sent', attempts: 7, last_error: null });
  });

  it('a retry after a pause that fails again starts the schedule from 90 s', async () => {
    w = await webhookSandbox();
    w.receiver.respondWith(500);
    await w.subscribe('customer_created');
    await customer('C0');
    await w.settle();
    await w.sb.advance(20_000).expect(200);
    const now = 20_000;
    expect((await w.api.post('/webhooks/retry')).body).toEqual({ success: true, resumed: 1 });
    await w.settle();
    expect((await attemptsLog('?limit=1'))[0]).toMatchObject({ attempt: 7, at: at(now), next_attempt_at: at(now + 90) });
    expect((await w.api.post('/webhooks/retry')).body.resumed).toBe(1);
    // An empty queue resumes nothing.
    w.receiver.respondWith(200);
    await w.settle();
    await w.sb.advance(90).expect(200);
    expect((await w.api.post('/webhooks/retry')).body).toEqual({ success: true, resumed: 0 });
  });

  it('honours the scenario fault hook: the attempt fails as the hook says and nothing reaches the receiver', async () => {
    w = await webhookSandbox();
    const seen: Array<{ topic: string; url: string; event_id: string }> = [];
    let faults = [{ status: 503 }, { timeout: true as const }];
    const hook: DeliveryFaultHook = (_account, attempt) => {
      seen.push(attempt);
      return faults.shift();
    };
    w.sb.deps.services.set(DELIVERY_FAULTS, hook);
    await w.subscribe('customer_created', '/x');
    await customer('Acme');
    await w.settle();
    await w.sb.advance(90).expect(200);
    expect(w.receiver.deliveries).toEqual([]);
    await w.sb.advance(270).expect(200);
    expect(w.receiver.deliveries).toHaveLength(1);
    const log = (await attemptsLog()).reverse();
    expect(log.map((a) => [a.status_code, a.error])).toEqual([
      [503, 'receiver answered 503 (scenario fail_delivery)'],
      [null, 'timed out after 10000 ms (scenario fail_delivery)'],
      [200, null],
    ]);
    expect(seen[0]).toEqual({ topic: 'customer_created', url: `${w.receiver.url}/x`, event_id: w.receiver.deliveries[0].idempotency_key });
    faults = [];
  });
});

describe('scenarios', () => {
  it('a fail_delivery rule loaded through the control plane fails the attempts it counts, then delivery goes on', async () => {
    w = await webhookSandbox();
    const loaded = await w.sb.http.post('/_sandbox/scenarios').send({
      name: 'receiver outage',
      rules: [{ match: { topic: 'customer_created' }, times: 2, fail_delivery: { status: 503 } }],
    });
    expect(loaded.status).toBe(201);
    await w.subscribe('customer_created');
    await customer('Acme');
    await w.settle();
    await w.sb.advance(90).expect(200);
    expect(w.receiver.deliveries).toEqual([]);
    await w.sb.advance(270).expect(200);
    expect(w.receiver.accepted()).toHaveLength(1);
    expect((await attemptsLog()).map((a) => a.status_code)).toEqual([200, 503, 503]);
  });
});

describe('connections to a receiver', () => {
  /** A receiver that notes, for each delivery, which connection (client port) it came on. */
  async function portsReceiver(onRequest?: (req: http.IncomingMessage, res: http.ServerResponse, nthOnSocket: number) => void) {
    const seen: number[] = [];
    const perSocket = new WeakMap<object, number>();
    const url = await rawServer((req, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      req.resume();
      req.on('end', () => {
        if (onRequest) return onRequest(req, res, n);
        seen.push(req.socket.remotePort!);
        res.writeHead(200).end('ok');
      });
    });
    return { url, seen };
  }

  it('sends consecutive deliveries over one kept-alive connection', async () => {
    w = await webhookSandbox();
    const receiver = await portsReceiver();
    expect((await w.api.post('/webhooks', { endpoint_url: `${receiver.url}/hooks`, topic: 'customer_created' })).status).toBe(201);
    for (const name of ['Acme', 'Bolt', 'Cask', 'Dune', 'Ember']) await customer(name);
    await w.settle();
    expect(receiver.seen).toHaveLength(5);
    expect(new Set(receiver.seen).size).toBe(1);
    const log = await attemptsLog();
    expect(log.map((a) => [a.attempt, a.status_code, a.error])).toEqual(Array(5).fill([1, 200, null]));
  });

  it('sends to the url as written: an IPv6 host, the path with its query, and credentials in the url as Basic', async () => {
    w = await webhookSandbox();
    const got: Array<{ url: string; authorization: string | undefined; host: string | undefined }> = [];
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        got.push({ url: req.url!, authorization: req.headers.authorization, host: req.headers.host });
        res.writeHead(200).end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '::1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    const url = `http://hook%20user:p%40ss@[::1]:${port}/in/box?tenant=7&x=%2F`;
    expect((await w.api.post('/webhooks', { endpoint_url: url, topic: 'customer_created' })).status).toBe(201);
    await customer('Acme');
    await customer('Bolt');
    await w.settle();
    const basic = `Basic ${Buffer.from('hook user:p@ss').toString('base64')}`;
    expect(got).toEqual(Array(2).fill({ url: '/in/box?tenant=7&x=%2F', authorization: basic, host: `[::1]:${port}` }));
    expect((await attemptsLog()).map((a) => [a.status_code, a.error])).toEqual([[200, null], [200, null]]);
  });

  it('a kept-alive connection the receiver dropped costs no failed attempt: the delivery goes again on a new one', async () => {
    w = await webhookSandbox();
    const delivered: string[] = [];
    // Every connection serves one delivery; a second request on it is met with a closed connection,
    // as a receiver whose idle time-out ran out just as the request went out.
    const receiver = await portsReceiver((req, res, nthOnSocket) => {
      if (nthOnSocket > 1) return req.socket.destroy();
      delivered.push(req.socket.remotePort!.toString());
      res.writeHead(200, { Connection: 'keep-alive' }).end('ok');
    });
    expect((await w.api.post('/webhooks', { endpoint_url: `${receiver.url}/hooks`, topic: 'customer_created' })).status).toBe(201);
    for (const name of ['Acme', 'Bolt', 'Cask']) await customer(name);
    await w.settle();
    expect(delivered).toHaveLength(3);
    expect(new Set(delivered).size).toBe(3);
    const log = await attemptsLog();
    expect(log.map((a) => [a.attempt, a.status_code, a.error])).toEqual(Array(3).fill([1, 200, null]));
    expect((await history()).data.map((d: { status: string }) => d.status)).toEqual(['sent', 'sent', 'sent']);
  });
});

describe('receivers that misbehave', () => {
  it.each([
    ['a redirect (not followed)', 'redirect', /^receiver answered 302; redirects are not followed$/, 302],
    ['a connection closed without an answer', 'hangup', /^connection error: ECONNRESET$/, null],
    ['an answer that never comes (time-out)', 'hang', /^timed out after 200 ms$/, null],
    ['a refused connection', 'refused', /^connection error: ECONNREFUSED$/, null],
  ])('%s is a failed attempt and the queue moves on after it', async (_label, kind, error, status) => {
    w = await webhookSandbox();
    w.queue.options.timeoutMs = 200;
    let target = '';
    const redirectTarget = await rawServer((_req, res) => res.writeHead(200).end());
    if (kind === 'redirect') target = await rawServer((_req, res) => res.writeHead(302, { Location: `${redirectTarget}/got` }).end());
    if (kind === 'hangup') target = await rawServer((req) => req.socket.destroy());
    if (kind === 'hang') target = await rawServer(() => undefined);
    // Port 1 (tcpmux) has no listener: a port freed by closing a server could be taken by another
    // process before the attempt, and answer it.
    if (kind === 'refused') target = 'http://127.0.0.1:1';
    await w.api.post('/webhooks', { endpoint_url: `${target}/hooks`, topic: 'customer_created' }).expect(201);
    await customer('Acme');
    await w.settle();
    const [attempt] = await attemptsLog();
    expect(attempt.status_code).toBe(status);
    expect(attempt.error).toMatch(error);
    expect(attempt.next_attempt_at).toBe(at(90));
    expect((await history()).data[0]).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('an attempt under way never blocks API requests', async () => {
    w = await webhookSandbox();
    const held: http.ServerResponse[] = [];
    let arrived: () => void = () => undefined;
    const target = await rawServer((_req, res) => {
      held.push(res);
      arrived();
    });
    const next = () => new Promise<void>((resolve) => { arrived = resolve; });
    await w.api.post('/webhooks', { endpoint_url: `${target}/slow`, topic: 'customer_created' }).expect(201);
    const first = next();
    await customer('First');
    await first;
    const started = Date.now();
    for (let i = 0; i < 3; i++) await customer(`More${i}`);
    expect((await w.api.get('/customers')).body.data).toHaveLength(4);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(held).toHaveLength(1); // still the first attempt, unanswered: the rest wait their turn
    for (let i = 0; i < 4; i++) {
      const coming = next();
      held.shift()!.writeHead(204).end();
      if (i < 3) await coming;
    }
    await w.settle();
    expect((await history('?status=sent')).data).toHaveLength(4);
  });

  it('does not read a huge answer past the cap, and a 2xx with an endless body is delivered', async () => {
    w = await webhookSandbox();
    let written = 0;
    const target = await rawServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      const pump = () => {
        while (written < 512 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
      };
      res.on('drain', pump);
      res.on('close', () => undefined);
      pump();
    });
    await w.api.post('/webhooks', { endpoint_url: `${target}/big`, topic: 'customer_created' }).expect(201);
    await customer('Acme');
    await w.settle();
    expect((await history()).data[0]).toMatchObject({ status: 'sent', attempts: 1 });
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('secrets a header cannot carry', () => {
  it.each([['a non-ASCII character', 'whsec_\u2713_1234'], ['a line break', 'whsec_a\nb'], ['a space', 'whsec a'], ['257 characters', 'x'.repeat(257)]])(
    'refuses a secret_key with %s with 400 and stores nothing', async (_label, secret) => {
      w = await webhookSandbox();
      const res = await w.api.post('/webhooks', { endpoint_url: `${w.receiver.url}/hooks`, topic: 'customer_created', secret_key: secret });
      expect(res.status).toBe(400);
      expect(res.body.validation_errors).toHaveProperty('secret_key');
      expect((await w.api.get('/webhooks')).body.data).toEqual([]);
    });

  it('turns a stored secret Node cannot send (from an older data file) into failed attempts on the retry schedule, and keeps serving', async () => {
    w = await webhookSandbox();
    const sub = await w.subscribe('customer_created', '/hooks', 'whsec_fine_1234');
    // What an older version could have stored: a secret with a character no header may carry.
    w.account.transaction(() => subscriptions(w.account).update(sub.id, { secret_key: 'whsec_\u2713_1234' }));
    await customer('Acme');
    await w.settle();
    const [attempt] = await attemptsLog();
    expect(attempt).toMatchObject({ attempt: 1, status_code: null, error: 'request not sent: ERR_INVALID_CHAR', next_attempt_at: at(90) });
    expect(w.receiver.deliveries).toEqual([]);
    // The sandbox still answers, and the next attempt waits for its time.
    await customer('Serving');
    expect(await attemptsLog()).toHaveLength(1);
    await w.sb.advance(90).expect(200);
    expect((await attemptsLog()).map((a) => a.attempt)).toEqual([2, 1]);
  });
});

describe('history', () => {
  it('filters by topic, status and time window, and pages with cursors', async () => {
    w = await webhookSandbox();
    await w.subscribe('customer_created');
    await w.subscribe('customer_updated');
    const a = await customer('A');
    await w.settle();
    w.sb.time.now += 3600_000;
    await w.fresh();
    await w.api.patch(`/customers/${a}`, { city: 'Austin' }).expect(200);
    await w.settle();
    w.sb.time.now += 3600_000;
    await w.fresh();
    w.receiver.respondWith(500);
    await customer('B');
    await customer('C');
    await w.settle();
    const topics = (body: { data: Array<{ topic: string; status: string }> }) => body.data.map((r) => `${r.topic}:${r.status}`);
    expect(topics(await history())).toEqual(['customer_created:pending', 'customer_created:failed', 'customer_updated:sent', 'customer_created:sent']);
    expect(topics(await history('?topic=customer_updated'))).toEqual(['customer_updated:sent']);
    expect(topics(await history('?status=sent'))).toEqual(['customer_updated:sent', 'customer_created:sent']);
    expect(topics(await history('?status=failed&topic=customer_created'))).toEqual(['customer_created:failed']);
    const hour = encodeURIComponent(at(3600));
    expect(topics(await history(`?from_date=${hour}&to_date=${hour}`))).toEqual(['customer_updated:sent']);
    expect(topics(await history(`?from_date=${hour}`))).toHaveLength(3);
    expect(topics(await history(`?to_date=${hour}`))).toHaveLength(2);
    const first = await history('?limit=3');
    expect(first).toMatchObject({ has_next_page: true, has_previous_page: false });
    const second = await history(`?limit=3&after=${first.end_cursor}`);
    expect(topics(second)).toEqual(['customer_created:sent']);
    const back = await history(`?limit=3&before=${second.start_cursor}`);
    expect(back.data.map((r: { id: string }) => r.id)).toEqual(first.data.map((r: { id: string }) => r.id));
    for (const bad of ['?status=lost', '?topic=nope', '?from_date=yesterday', '?limit=0', '?after=garbage']) {
      const res = await w.api.get(`/webhooks/events${bad}`);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.validation_errors).length).toBeGreaterThan(0);
    }
  });

  it('deleting the subscription that holds the queue drops its events (failed) and lets the rest go', async () => {
    w = await webhookSandbox();
    const dead = await w.api.post('/webhooks', { endpoint_url: 'http://127.0.0.1:9/dead', topic: 'customer_created' });
    await w.subscribe('customer_updated');
    const a = await customer('A');
    await w.api.patch(`/customers/${a}`, { city: 'Austin' }).expect(200);
    await w.settle();
    expect(w.receiver.deliveries).toEqual([]);
    await w.api.delete(`/webhooks/${dead.body.id}`).expect(200);
    await w.settle();
    expect(w.receiver.accepted().map((d) => d.topic)).toEqual(['customer_updated']);
    const created = (await history('?topic=customer_created')).data[0];
    expect(created).toMatchObject({ status: 'failed', last_error: 'subscription deleted before delivery', next_attempt_at: null });
    await w.sb.advance(90).expect(200);
    expect(w.receiver.deliveries).toHaveLength(1);
  });
});

describe('isolation', () => {
  it("one partner's events never reach another partner's receivers, nor the other environment's", async () => {
    w = await webhookSandbox();
    await w.subscribe('customer_created', '/default');
    const partner = await w.sb.http.post('/_sandbox/partners').send({ name: 'Other' });
    const otherToken = await w.sb.token('production', partner.body.credentials.production);
    const other = w.sb.as(otherToken);
    await other.post('/webhooks', { endpoint_url: `${w.receiver.url}/other`, topic: 'customer_created' }).expect(201);
    const demo = w.sb.as(await w.sb.token('demo'), 'demo');
    await demo.post('/webhooks', { endpoint_url: `${w.receiver.url}/demo`, topic: 'customer_created' }).expect(201);
    await customer('Mine');
    await w.settle();
    const otherAccount = w.sb.deps.store.account(partner.body.id, 'production');
    await w.settle(otherAccount);
    expect(w.receiver.deliveries.map((d) => d.path)).toEqual(['/default']);
    await other.post('/customers', { name: 'Theirs' }).expect(201);
    await w.settle(otherAccount);
    expect(w.receiver.accepted('customer_created').map((d) => [d.path, d.data.name])).toEqual([['/default', 'Mine'], ['/other', 'Theirs']]);
    expect((await other.get('/webhooks/events')).body.data).toHaveLength(1);
    expect((await demo.get('/webhooks/events')).body.data).toEqual([]);
    const otherLog = await w.sb.http.get('/_sandbox/webhooks/deliveries').set('Authorization', `Bearer ${otherToken}`);
    expect(otherLog.body.data.map((d: { url: string }) => d.url)).toEqual([`${w.receiver.url}/other`]);
  });
});
