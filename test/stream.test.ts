// The live stream (GET /_sandbox/stream): Server-Sent Events of an account's webhook events, delivery
// attempts, journaled requests and clock advances; forwarders that ride the account's own ordered
// queue for as long as the stream is open; the caps (streams per server, unread bytes per client).
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParser } from 'eventsource-parser';
import { setup, type TestSandbox } from './helpers.js';
import { streamHub } from '../src/stream/feature.js';
import type { StreamSink } from '../src/stream/hub.js';
import { startWebhookReceiver, type WebhookReceiver } from '../src/testing/webhook-receiver.js';
import { eventLog } from '../src/events/events.js';
import type { WebhookQueue } from '../src/webhooks/queue.js';
import { subscriptions } from '../src/webhooks/subscriptions.js';

jest.setTimeout(60_000); // real sockets and a receiver per case: slow on a loaded machine

interface Message { type: string; data: Record<string, any> }

interface OpenStream {
  status: number;
  body: unknown;
  messages: Message[];
  /** Resolves once `count` messages of `type` have arrived (a real-time guard of 5 s fails the test instead of hanging). */
  next(type: string, count?: number): Promise<Message[]>;
  close(): void;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function listen(sb: TestSandbox): Promise<string> {
  const server: Server = createServer(sb.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function open(base: string, query = '', headers: Record<string, string> = {}): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(`${base}/_sandbox/stream${query}`, { headers, signal: controller.signal });
  const messages: Message[] = [];
  const waiters: Array<() => void> = [];
  const stream: OpenStream = {
    status: res.status,
    body: undefined,
    messages,
    next(type, count = 1) {
      const done = () => messages.filter((m) => m.type === type).length >= count;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${count} ${type} messages; got ${JSON.stringify(messages)}`)), 5000);
        const check = () => {
          if (!done()) return false;
          clearTimeout(timer);
          resolve(messages.filter((m) => m.type === type));
          return true;
        };
        if (!check()) waiters.push(check);
      });
    },
    close: () => controller.abort(),
  };
  cleanups.push(() => controller.abort());
  if (res.headers.get('content-type')?.startsWith('application/json')) {
    stream.body = await res.json();
    return stream;
  }
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const parser = createParser({
    onEvent: (event) => {
      messages.push({ type: event.event!, data: JSON.parse(event.data) });
      for (let i = waiters.length - 1; i >= 0; i--) if ((waiters[i] as () => boolean)()) waiters.splice(i, 1);
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted by the test
    }
  })();
  await stream.next('ready');
  return stream;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('GET /_sandbox/stream', () => {
  it('pushes the account\'s events, delivery attempts, journaled requests and clock advances as they happen', async () => {
    const sb = await setup({ allowHttpWebhooks: true });
    const base = await listen(sb);
    const token = await sb.token();
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const stream = await open(base, '', bearer(token));
    expect(stream.messages[0]).toEqual({ type: 'ready', data: { stream_id: expect.stringMatching(/^stm_/), partner_id: 'ptn_default', environment: 'production', now: new Date(sb.time.now).toISOString(), types: ['event', 'delivery', 'request', 'clock'], forward: null } });

    const sub = (await sb.as(token).post('/webhooks', { endpoint_url: `${receiver.url}/hooks`, topic: 'customer_created' }).expect(201)).body;
    const customer = (await sb.as(token).post('/customers', { name: 'Streamed Ltd' }).expect(201)).body;
    const [event] = await stream.next('event');
    const stored = [...eventLog(sb.deps.store.account('ptn_default', 'production')).newest()][0];
    expect(event.data).toEqual({ id: stored.id, idempotency_key: stored.idempotency_key, topic: 'customer_created', entity_id: customer.id, timestamp: stored.timestamp, data: stored.data });
    const [delivery] = await stream.next('delivery');
    expect(delivery.data).toMatchObject({
      event_id: stored.id, idempotency_key: stored.idempotency_key, topic: 'customer_created', entity_id: customer.id,
      subscription_id: sub.id, forwarder: null, url: `${receiver.url}/hooks`, attempt: 1, status_code: 200, error: null, delivered: true, next_attempt_at: null,
    });
    const requests = await stream.next('request', 2);
    expect(requests.map((r) => [r.data.method, r.data.path, r.data.template, r.data.status])).toEqual([['POST', '/webhooks', '/webhooks', 201], ['POST', '/customers', '/customers', 201]]);
    expect(requests[1].data).toEqual({ id: expect.stringMatching(/^req_/), at: expect.any(String), method: 'POST', path: '/customers', template: '/customers', operation: 'createCustomer', status: 201, duration_ms: expect.any(Number) });
    await sb.advance(3600, token).expect(200);
    const [clock] = await stream.next('clock');
    expect(clock.data).toEqual({ now: new Date(sb.time.now + 3600_000).toISOString(), offset_seconds: 3600 });
  });

  it('streams only the asked types, and only its own account (never the other environment\'s or partner\'s)', async () => {
    const sb = await setup();
    const base = await listen(sb);
    const production = await sb.token();
    const demo = await sb.token('demo');
    const events = await open(base, '?types=event', bearer(production));
    const demoStream = await open(base, '?types=event,request', bearer(demo));
    expect(demoStream.messages[0].data).toMatchObject({ environment: 'demo', types: ['event', 'request'] });
    await sb.as(demo, 'demo').post('/customers', { name: 'Demo Co' }).expect(201);
    await sb.as(production).post('/customers', { name: 'Prod Co' }).expect(201);
    await demoStream.next('request');
    const [prod] = await events.next('event');
    expect(prod.data.data.name).toBe('Prod Co');
    await sb.advance(60, production).expect(200);
    await sb.as(production).get('/customers').expect(200);
    // A later event proves the earlier request and clock messages would have arrived by now.
    await sb.as(production).post('/customers', { name: 'Prod Two' }).expect(201);
    await events.next('event', 2);
    expect(events.messages.map((m) => m.type)).toEqual(['ready', 'event', 'event']);
    expect(demoStream.messages.filter((m) => m.type === 'event').map((m) => m.data.data.name)).toEqual(['Demo Co']);
  });

  it.each([
    ['?types=event,nope', 'types'],
    ['?types=', 'types'],
    ['?forward_to=not-a-url', 'forward_to'],
    ['?forward_to=ftp://example.com/x', 'forward_to'],
    ['?forward_to=http://127.0.0.1:9/x&topics=invoice_payd', 'topics'],
    ['?topics=invoice_paid', 'topics'],
  ])('refuses %s with 400 naming %s, and opens nothing', async (query, field) => {
    const sb = await setup();
    const base = await listen(sb);
    const stream = await open(base, query);
    expect(stream.status).toBe(400);
    expect(stream.body).toMatchObject({ code: 'bad_request', validation_errors: { [field]: expect.any(String) } });
    expect(streamHub(sb.deps).open).toBe(0);
  });

  it('answers 401 for an expired token and 429 too_many_streams past the cap', async () => {
    const sb = await setup();
    const base = await listen(sb);
    const token = await sb.token();
    sb.time.now += 3600_000;
    expect((await open(base, '', bearer(token))).status).toBe(401);
    streamHub(sb.deps).options.maxStreams = 2;
    await open(base);
    await open(base);
    const third = await open(base);
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ code: 'too_many_streams', message: 'At most 2 streams may be open at once on this sandbox; close one first.' });
  });

  it('cuts a client that stops reading once its unread bytes pass the cap, instead of buffering for ever', async () => {
    const sb = await setup();
    const hub = streamHub(sb.deps);
    hub.options.bufferBytes = 4096;
    const account = sb.deps.store.account('ptn_default', 'production');
    // A response whose client reads nothing: every byte written stays queued.
    let queued = 0;
    let destroyed = false;
    const onClose: Array<() => void> = [];
    const sink: StreamSink = {
      writeHead: () => undefined,
      write: (chunk) => { queued += Buffer.byteLength(chunk); return false; },
      end: () => undefined,
      destroy: () => { destroyed = true; onClose.forEach((f) => f()); },
      get writableLength() { return queued; },
      get destroyed() { return destroyed; },
      on: (_event, listener) => { onClose.push(listener); },
    };
    hub.start(account, { socket: undefined } as never, sink, new Set(['request']));
    expect(hub.open).toBe(1);
    const token = await sb.token();
    for (let i = 0; i < 40 && !destroyed; i++) await sb.as(token).get('/customers').expect(200);
    expect(destroyed).toBe(true);
    expect(queued).toBeLessThan(4096 + 1024);
    expect(hub.open).toBe(0);
    // The API went on answering throughout.
    await sb.as(token).get('/customers').expect(200);
  });
});

describe('forwarding: GET /_sandbox/stream?forward_to=URL', () => {
  async function forwarding(config = {}) {
    const sb = await setup(config);
    const base = await listen(sb);
    const token = await sb.token();
    const receiver: WebhookReceiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    return { sb, base, token, receiver, api: sb.as(token) };
  }

  it('delivers every event of the topics to a plain-http URL through the account\'s ordered queue: real body and headers, in order', async () => {
    // No --allow-http-webhooks: a forwarder still reaches a local http URL.
    const { sb, base, token, receiver, api } = await forwarding();
    const stream = await open(base, `?types=event,delivery&forward_to=${encodeURIComponent(`${receiver.url}/local`)}&topics=customer_created,customer_updated`, { ...bearer(token), 'X-Sandbox-Forward-Secret': 'whsec_local' });
    const ready = stream.messages[0].data;
    expect(ready.forward).toEqual({ url: `${receiver.url}/local`, topics: ['customer_created', 'customer_updated'], subscription_ids: [expect.stringMatching(/^whs_/), expect.stringMatching(/^whs_/)] });
    const a = (await api.post('/customers', { name: 'A' }).expect(201)).body.id;
    const b = (await api.post('/customers', { name: 'B' }).expect(201)).body.id;
    await api.patch(`/customers/${a}`, { city: 'Austin' }).expect(200);
    await api.delete(`/customers/${b}`).expect(200); // customer_archived: not a forwarded topic
    await stream.next('delivery', 3);
    const account = sb.deps.store.account('ptn_default', 'production');
    const events = [...eventLog(account).newest()].reverse().filter((e) => e.topic !== 'customer_archived');
    expect(receiver.deliveries.map((d) => [d.topic, d.entity_id])).toEqual([['customer_created', a], ['customer_created', b], ['customer_updated', a]]);
    receiver.deliveries.forEach((d, i) => {
      expect(d.body).toEqual({ entity_id: events[i].entity_id, idempotency_key: events[i].idempotency_key, timestamp: events[i].timestamp, topic: events[i].topic, data: events[i].data });
      expect(d.secret).toBe('whsec_local');
      expect(d.path).toBe('/local');
      expect(d.headers['user-agent']).toMatch(/^billing-sandbox-webhooks\//);
    });
    const deliveries = stream.messages.filter((m) => m.type === 'delivery');
    expect(deliveries.map((m) => m.data.forwarder)).toEqual([ready.stream_id, ready.stream_id, ready.stream_id]);
    // The partner's own subscriptions list does not show the forwarder; its id cannot be deleted through the API.
    expect((await api.get('/webhooks')).body.data).toEqual([]);
    expect((await api.delete(`/webhooks/${ready.forward.subscription_ids[0]}`)).status).toBe(404);
  });

  it('retries on the account\'s schedule: a failing target holds the queue in order until it answers', async () => {
    const { sb, base, token, receiver, api } = await forwarding();
    const stream = await open(base, `?types=delivery&forward_to=${encodeURIComponent(`${receiver.url}/hooks`)}&topics=customer_created`, bearer(token));
    receiver.respondWith(503);
    const first = (await api.post('/customers', { name: 'First' }).expect(201)).body.id;
    const [failed] = await stream.next('delivery');
    expect(failed.data).toMatchObject({ entity_id: first, attempt: 1, status_code: 503, delivered: false, next_attempt_at: new Date(sb.time.now + 90_000).toISOString() });
    const second = (await api.post('/customers', { name: 'Second' }).expect(201)).body.id;
    receiver.respondWith(200);
    await sb.advance(89, token).expect(200);
    expect(receiver.deliveries).toHaveLength(1);
    await sb.advance(1, token).expect(200);
    await stream.next('delivery', 3);
    expect(receiver.deliveries.map((d) => [d.entity_id, d.status])).toEqual([[first, 503], [first, 200], [second, 200]]);
  });

  it('removes the forwarder when the stream closes: its pending deliveries leave the queue and the partner\'s flow again', async () => {
    const { sb, base, token, receiver, api } = await forwarding({ allowHttpWebhooks: true });
    const partner = await startWebhookReceiver();
    cleanups.push(() => partner.close());
    const stream = await open(base, `?types=delivery&forward_to=${encodeURIComponent(`${receiver.url}/down`)}&topics=customer_created`, bearer(token));
    receiver.respondWith(500);
    await api.post('/customers', { name: 'Held' }).expect(201);
    await stream.next('delivery');
    // The partner's own subscription, made after: its delivery waits behind the failing forwarder.
    await api.post('/webhooks', { endpoint_url: `${partner.url}/real`, topic: 'customer_created' }).expect(201);
    const later = (await api.post('/customers', { name: 'Later' }).expect(201)).body.id;
    expect(partner.deliveries).toHaveLength(0);
    const hub = streamHub(sb.deps);
    stream.close();
    for (let i = 0; i < 100 && hub.open; i++) await new Promise((r) => setImmediate(r));
    expect(hub.open).toBe(0);
    const account = sb.deps.store.account('ptn_default', 'production');
    await (sb.deps.services.get('webhooks') as WebhookQueue).idle(account);
    await partner.waitFor('customer_created');
    expect(partner.deliveries.map((d) => d.entity_id)).toEqual([later]);
    const history = (await api.get('/webhooks/events?topic=customer_created')).body.data;
    expect(history.filter((h: { endpoint_url: string }) => h.endpoint_url.endsWith('/down')).map((h: { status: string }) => h.status)).toEqual(['failed', 'failed']);
    expect(receiver.deliveries).toHaveLength(1);
  });

  it('keeps forwarding across an account reset', async () => {
    const { sb, base, token, receiver, api } = await forwarding();
    const stream = await open(base, `?types=delivery&forward_to=${encodeURIComponent(`${receiver.url}/hooks`)}&topics=customer_created`, bearer(token));
    await sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${token}`).expect(200);
    const after = (await api.post('/customers', { name: 'After Reset' }).expect(201)).body.id;
    await stream.next('delivery');
    expect(receiver.deliveries.map((d) => d.entity_id)).toEqual([after]);
  });

  it('leaves no forwarder behind after a restart on the same data file (no stream survives one)', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'forwarders-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'data.json');
    const { sb, base, token, receiver } = await forwarding({ dataFile: file, seed: 'fwd' });
    const stream = await open(base, `?types=delivery&forward_to=${encodeURIComponent(`${receiver.url}/hooks`)}&topics=customer_created,invoice_paid`, bearer(token));
    const ids = stream.messages[0].data.forward.subscription_ids as string[];
    await sb.deps.store.flush();
    const restarted = await setup({ dataFile: file });
    const account = restarted.deps.store.account('ptn_default', 'production');
    // Removed, not only deactivated: a stream leaves no subscription behind.
    expect(ids.map((id) => subscriptions(account).get(id))).toEqual([undefined, undefined]);
    expect(account.data.state.stream_forwarders).toEqual([]);
    await restarted.as(await restarted.token()).post('/customers', { name: 'After Restart' }).expect(201);
    expect(receiver.deliveries).toHaveLength(0);
  });
});
