// What a live stream may hold and leave: a stream that forwards (GET /_sandbox/stream?forward_to=URL)
// leaves nothing behind when it ends (no subscription, no registry entry, no bytes in the data file,
// no extra work for POST /webhooks), a restart sweeps what a crash left, and the stream slots are
// shared out: one partner cannot take them all, and the default partner keeps slots of its own.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { setup, type TestSandbox } from './helpers.js';
import { streamHub } from '../src/stream/feature.js';
import type { StreamSink } from '../src/stream/hub.js';
import { subscriptions } from '../src/webhooks/subscriptions.js';
import { Collection } from '../src/store/collection.js';
import { DEFAULT_PARTNER_ID } from '../src/auth/partners.js';
import { LIMITS } from '../src/limits.js';
import { ApiError } from '../src/errors.js';
import type { Account } from '../src/store/store.js';

jest.setTimeout(120_000); // hundreds of real streams on a loaded machine

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

/** Open a stream, wait for its `ready` line (or its refusal), and answer how to close it. */
async function openStream(base: string, query: string, headers: Record<string, string> = {}): Promise<{ status: number; body?: { code: string; message: string }; close(): void }> {
  const controller = new AbortController();
  cleanups.push(() => controller.abort());
  const res = await fetch(`${base}/_sandbox/stream${query}`, { headers, signal: controller.signal });
  if (res.status !== 200) return { status: res.status, body: (await res.json()) as { code: string; message: string }, close: () => controller.abort() };
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!text.includes('event: ready')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  return { status: 200, close: () => controller.abort() };
}

/** Wait (bounded, never a sleep) until the hub has no stream open. */
async function allClosed(sb: TestSandbox): Promise<void> {
  const hub = streamHub(sb.deps);
  for (let i = 0; i < 2000 && hub.open; i++) await new Promise((r) => setImmediate(r));
  expect(hub.open).toBe(0);
}

/** Every byte of the data file: its snapshot and log segments. */
function dataBytes(file: string): number {
  const dir = join(file, '..');
  return readdirSync(dir).filter((name) => name.startsWith('data.json')).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

/** How many stored objects one POST /webhooks reads (Collection.get calls): its work, counted, not timed. */
async function objectsReadBy(work: () => Promise<unknown>): Promise<number> {
  const spy = jest.spyOn(Collection.prototype, 'get');
  try {
    await work();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('a forwarding stream leaves nothing behind', () => {
  it('after 200 forwarding streams opened and closed, the subscriptions, the state and the data file are back to their baseline, and POST /webhooks reads as many objects as before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stream-bounds-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'data.json');
    const sb = await setup({ dataFile: file, seed: 'stream-bounds', allowHttpWebhooks: true });
    const base = await listen(sb);
    const token = await sb.token();
    const api = sb.as(token);
    const account = sb.deps.store.account(DEFAULT_PARTNER_ID, 'production');
    // A partner subscription made first: the forwarders' subscriptions come after it, in the middle of the order.
    await api.post('/webhooks', { endpoint_url: 'http://127.0.0.1:9/partner', topic: 'invoice_paid' }).expect(201);
    const forward = `?types=delivery&forward_to=${encodeURIComponent('http://127.0.0.1:9/cli')}`;
    const auth = { Authorization: `Bearer ${token}` };
    // One stream first: the registry's (empty) list then exists, as after any stream.
    (await openStream(base, forward, auth)).close();
    await allClosed(sb);
    const postWebhook = (n: number) => api.post('/webhooks', { endpoint_url: `http://127.0.0.1:9/probe-${n}`, topic: 'customer_created' }).expect(201)
      .then((res) => api.delete(`/webhooks/${res.body.id}`).expect(200));
    const readBefore = await objectsReadBy(() => postWebhook(0));
    await sb.deps.store.compact();
    const baseline = {
      size: subscriptions(account).size,
      ids: [...subscriptions(account).values()].map((s) => s.id),
      state: JSON.stringify(account.data.state),
      bytes: dataBytes(file),
    };

    // A removed subscription leaves its id in the collection's order as a tombstone until the
    // collection clears them (at most COMPACT_MIN, 1,024, in the middle of the order): a constant
    // bound on the order and the snapshot, whatever the number of streams. ~26 bytes an id.
    const tombstoneBound = 1024;
    const order = () => (account.data.collections.webhook_subscriptions.order.length);
    const sizes: number[] = [];
    for (let round = 0; round < 25; round++) {
      // 8 at once: a partner's own cap.
      const streams = await Promise.all(Array.from({ length: 8 }, () => openStream(base, forward, auth)));
      expect(streams.map((s) => s.status)).toEqual(Array(8).fill(200));
      // 8 streams x 18 topics, each a subscription while it is open.
      expect(subscriptions(account).size).toBe(baseline.size + 8 * 18);
      streams.forEach((s) => s.close());
      await allClosed(sb);
      expect(subscriptions(account).size).toBe(baseline.size);
      expect(order()).toBeLessThanOrEqual(baseline.size + tombstoneBound);
      if (round % 5 === 4) {
        await sb.deps.store.compact();
        sizes.push(dataBytes(file));
      }
    }

    expect(subscriptions(account).size).toBe(baseline.size);
    expect([...subscriptions(account).values()].map((s) => s.id)).toEqual(baseline.ids);
    expect([...subscriptions(account).values()].filter((s) => s.forwarder)).toEqual([]);
    expect(JSON.stringify(account.data.state)).toBe(baseline.state);
    // The partner's list is untouched, and POST /webhooks reads no more than it did.
    expect((await api.get('/webhooks')).body.data.map((s: { endpoint_url: string }) => s.endpoint_url)).toEqual(['http://127.0.0.1:9/probe-0', 'http://127.0.0.1:9/partner']);
    expect(await objectsReadBy(() => postWebhook(1))).toBe(readBefore);
    // The data file, compacted, holds what it held, besides the tombstones' ids (before the fix:
    // 3,600 deactivated subscriptions of some 330 bytes, 1.2 MB, growing with every stream).
    for (const bytes of sizes) expect(bytes).toBeLessThan(baseline.bytes + tombstoneBound * 26 + 600);
  });

  it('POST /webhooks reads only the active subscriptions: 150 deleted ones cost it nothing', async () => {
    const sb = await setup({ allowHttpWebhooks: true });
    const api = sb.as(await sb.token());
    const create = (n: number) => api.post('/webhooks', { endpoint_url: `http://127.0.0.1:9/h${n}`, topic: 'customer_created' }).expect(201);
    const first = await objectsReadBy(() => create(0));
    for (let n = 1; n <= 150; n++) await api.delete(`/webhooks/${(await create(n)).body.id}`).expect(200);
    // One active, the newest LIMITS.webhookDeletedSubscriptionsKept deleted kept.
    const account = sb.deps.store.account(DEFAULT_PARTNER_ID, 'production');
    expect(subscriptions(account).size).toBe(1 + LIMITS.webhookDeletedSubscriptionsKept);
    // The one active subscription is the only stored object the create reads besides its own checks.
    expect(await objectsReadBy(() => create(151))).toBe(first + 1);
  });

  it('a restart removes the forwarders a crash left, and those an earlier version only deactivated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stream-sweep-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'data.json');
    const sb = await setup({ dataFile: file, seed: 'sweep' });
    const base = await listen(sb);
    const token = await sb.token();
    await sb.as(token).post('/webhooks', { endpoint_url: 'https://example.test/partner', topic: 'invoice_paid' }).expect(201);
    const account = sb.deps.store.account(DEFAULT_PARTNER_ID, 'production');
    // What an earlier version left: deactivated forwarder subscriptions, no longer in any registry.
    account.transaction(() => {
      for (let i = 0; i < 50; i++) {
        subscriptions(account).insert({ id: account.newId('whs'), endpoint_url: 'http://127.0.0.1:9/old', topic: 'customer_created', is_active: false, partner_id: DEFAULT_PARTNER_ID, secret_key: null, created_at: account.clock.iso(), updated_at: account.clock.iso(), forwarder: 'stm_old' });
      }
    });
    // A stream still open when the process dies (its data written, its close never run).
    const stream = await openStream(base, `?forward_to=${encodeURIComponent('http://127.0.0.1:9/cli')}&topics=customer_created,invoice_paid`, { Authorization: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    expect(subscriptions(account).size).toBe(1 + 50 + 2);
    await sb.deps.store.flush();

    const restarted = await setup({ dataFile: file });
    const after = restarted.deps.store.account(DEFAULT_PARTNER_ID, 'production');
    expect([...subscriptions(after).values()].map((s) => [s.endpoint_url, s.is_active, s.forwarder])).toEqual([['https://example.test/partner', true, undefined]]);
    expect(after.data.state.stream_forwarders).toEqual([]);
  });
});

describe('stream slots are shared out', () => {
  async function partner(sb: TestSandbox, name: string): Promise<{ id: string; token: string }> {
    const made = (await sb.http.post('/_sandbox/partners').send({ name }).expect(201)).body;
    return { id: made.id, token: await sb.token('production', made.credentials.production) };
  }

  it('one partner holds at most 8 streams (429 naming the partner cap), and the default partner, the inspector and listen still open theirs', async () => {
    const sb = await setup();
    const base = await listen(sb);
    const busy = await partner(sb, 'Busy');
    const other = await partner(sb, 'Other');
    const as = (token: string) => ({ Authorization: `Bearer ${token}` });
    const mine = await Promise.all(Array.from({ length: LIMITS.streamConnectionsPerPartner }, () => openStream(base, '', as(busy.token))));
    expect(mine.map((s) => s.status)).toEqual(Array(8).fill(200));
    const ninth = await openStream(base, '', as(busy.token));
    expect(ninth.status).toBe(429);
    expect(ninth.body).toEqual({ code: 'too_many_streams', message: `Partner ${busy.id} has 8 streams open, the most one partner may have at once (of 32 on this sandbox); close one first.`, validation_errors: {} });
    // The demo environment of the same partner shares its cap.
    expect((await openStream(base, '', { 'X-Sandbox-Account': `${busy.id}:demo` })).status).toBe(429);
    // Others still get slots; the default partner (no token from loopback: as the inspector and listen connect) too.
    expect((await openStream(base, '', as(other.token))).status).toBe(200);
    expect((await openStream(base, '')).status).toBe(200);
    expect((await openStream(base, '', { 'X-Sandbox-Account': `${DEFAULT_PARTNER_ID}:demo` })).status).toBe(200);
    // A stream that ends gives its slot back.
    mine[0].close();
    for (let i = 0; i < 1000 && streamHub(sb.deps).openFor(busy.id) === 8; i++) await new Promise((r) => setImmediate(r));
    expect((await openStream(base, '', as(busy.token))).status).toBe(200);
  });

  it('other partners together leave the default partner its kept slots (429 naming them), and the server cap still holds', async () => {
    const sb = await setup();
    const base = await listen(sb);
    const hub = streamHub(sb.deps);
    Object.assign(hub.options, { maxStreams: 6, maxStreamsPerPartner: 3, defaultPartnerSlots: 2 });
    const a = await partner(sb, 'A');
    const b = await partner(sb, 'B');
    const as = (token: string) => ({ Authorization: `Bearer ${token}` });
    for (let i = 0; i < 3; i++) expect((await openStream(base, '', as(a.token))).status).toBe(200);
    expect((await openStream(base, '', as(b.token))).status).toBe(200);
    const refused = await openStream(base, '', as(b.token));
    expect(refused.status).toBe(429);
    expect(refused.body!.message).toBe(`The 4 stream slots open to partners other than the default one are all taken (2 of the 6 are kept for ${DEFAULT_PARTNER_ID}, the web inspector and listen); close one first.`);
    expect((await openStream(base, '')).status).toBe(200);
    expect((await openStream(base, '')).status).toBe(200);
    const full = await openStream(base, '');
    expect(full.status).toBe(429);
    expect(full.body!.message).toBe('At most 6 streams may be open at once on this sandbox; close one first.');
    expect(hub.open).toBe(6);
  });

  it('under any sequence of opens and closes, no cap is passed, a refusal names the cap that was reached, and the default partner always finds its kept slots', () => {
    const partners = [DEFAULT_PARTNER_ID, 'ptn_a', 'ptn_b', 'ptn_c', 'ptn_d'];
    return fc.assert(fc.asyncProperty(
      fc.record({ maxStreams: fc.integer({ min: 1, max: 12 }), maxStreamsPerPartner: fc.integer({ min: 1, max: 6 }), defaultPartnerSlots: fc.integer({ min: 0, max: 4 }) }),
      fc.array(fc.record({ open: fc.boolean(), partner: fc.integer({ min: 0, max: partners.length - 1 }) }), { maxLength: 60 }),
      async (options, steps) => {
        const sb = await setup();
        const hub = streamHub(sb.deps);
        Object.assign(hub.options, options);
        const kept = Math.min(options.defaultPartnerSlots, options.maxStreams);
        const open: Array<{ partner: string; close(): void }> = [];
        for (const step of steps) {
          const partnerId = partners[step.partner];
          if (!step.open) {
            const at = open.findIndex((s) => s.partner === partnerId);
            if (at >= 0) open.splice(at, 1)[0].close();
            continue;
          }
          const count = (p: string) => open.filter((s) => s.partner === p).length;
          // What should refuse it, checked before the attempt, in the order the hub checks.
          const expected = open.length >= options.maxStreams ? /^At most \d+ streams may be open at once on this sandbox/
            : count(partnerId) >= options.maxStreamsPerPartner ? new RegExp(`^Partner ${partnerId} has \\d+ streams open`)
              : partnerId !== DEFAULT_PARTNER_ID && open.length - count(DEFAULT_PARTNER_ID) >= options.maxStreams - kept ? /^The \d+ stream slots open to partners other than the default one are all taken/
                : undefined;
          const closeListeners: Array<() => void> = [];
          const sink: StreamSink = {
            writeHead: () => undefined, write: () => true, end: () => undefined, destroy: () => undefined,
            writableLength: 0, destroyed: false, on: (_e, l) => { closeListeners.push(l); },
          };
          const account = { partnerId, environment: 'production', id: `${partnerId}:production`, clock: { iso: () => new Date(0).toISOString() } } as unknown as Account;
          let refusal: string | undefined;
          try {
            hub.start(account, { socket: undefined } as never, sink, new Set(['event']));
            open.push({ partner: partnerId, close: () => closeListeners.forEach((l) => l()) });
          } catch (error) {
            expect(error).toBeInstanceOf(ApiError);
            expect((error as ApiError).status).toBe(429);
            refusal = (error as ApiError).message;
          }
          if (expected) expect(refusal).toMatch(expected);
          else expect(refusal).toBeUndefined();
          // The walls: the server's cap, each partner's, and the default partner's kept slots.
          expect(hub.open).toBe(open.length);
          expect(open.length).toBeLessThanOrEqual(options.maxStreams);
          for (const p of partners) expect(count(p)).toBeLessThanOrEqual(options.maxStreamsPerPartner);
          expect(open.filter((s) => s.partner !== DEFAULT_PARTNER_ID).length).toBeLessThanOrEqual(options.maxStreams - kept);
        }
        for (const s of open) s.close();
        expect(hub.open).toBe(0);
      },
    ), { numRuns: 40 });
  });
});
