// Webhook durability with --data: the queue, retry schedule and pause survive a restart, and a
// delivery cut by the shutdown is sent again (two app instances over one data file).
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { at, webhookSandbox, type WebhookSandbox } from './webhooks-support.js';

let dir: string;
let file: string;
const open: WebhookSandbox[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'webhooks-data-'));
  file = join(dir, 'sandbox.json');
});

afterEach(async () => {
  for (const w of open.splice(0)) {
    await w.settle();
    await w.sb.deps.store.flush();
    await w.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

async function instance(): Promise<WebhookSandbox> {
  const w = await webhookSandbox({ dataFile: file, seed: 'durable' });
  open.push(w);
  return w;
}

/** The process "dies": what it wrote so far is on disk, and it never writes the file again. */
async function die(w: WebhookSandbox): Promise<void> {
  await w.sb.deps.store.flush();
  w.sb.deps.store.changed = () => undefined;
}

async function log(w: WebhookSandbox) {
  return ((await w.sb.http.get('/_sandbox/webhooks/deliveries')).body.data as Array<Record<string, unknown>>).reverse();
}

describe('durability with --data', () => {
  it('keeps the queue and the retry schedule across a restart, and delivers in order when the retry falls due', async () => {
    const a = await instance();
    a.receiver.respondWith(500);
    await a.api.post('/webhooks', { endpoint_url: `${a.receiver.url}/hooks`, topic: 'customer_created', secret_key: 'persisted-secret' }).expect(201);
    const first = (await a.api.post('/customers', { name: 'First' })).body.id;
    const second = (await a.api.post('/customers', { name: 'Second' })).body.id;
    await a.settle();
    expect(a.receiver.deliveries).toHaveLength(1);
    await die(a);

    const b = await instance();
    const statuses = (await b.api.get('/webhooks/events')).body.data.map((r: { entity_id: string; status: string }) => [r.entity_id, r.status]);
    expect(statuses).toEqual([[second, 'pending'], [first, 'failed']]);
    expect(await log(b)).toEqual([expect.objectContaining({ attempt: 1, status_code: 500, next_attempt_at: at(90) })]);
    await b.sb.advance(89).expect(200);
    expect(b.receiver.deliveries).toEqual([]);
    // The subscription kept its endpoint_url (a's receiver), so that receiver gets the retry.
    a.receiver.respondWith(200);
    await b.sb.advance(1).expect(200);
    expect(a.receiver.accepted().map((d) => [d.entity_id, d.secret])).toEqual([[first, 'persisted-secret'], [second, 'persisted-secret']]);
    expect((await b.api.get('/webhooks/events?status=sent')).body.data).toHaveLength(2);
  });

  it('keeps an account paused across a restart until POST /webhooks/retry', async () => {
    const a = await instance();
    a.receiver.respondWith(500);
    await a.api.post('/webhooks', { endpoint_url: `${a.receiver.url}/hooks`, topic: 'customer_created' }).expect(201);
    await a.api.post('/customers', { name: 'Stuck' }).expect(201);
    await a.settle();
    await a.sb.advance(20_000).expect(200);
    expect(a.receiver.deliveries).toHaveLength(6);
    await die(a);

    const b = await instance();
    a.receiver.respondWith(200);
    await b.sb.advance(86_400).expect(200);
    expect(a.receiver.deliveries).toHaveLength(6);
    const api = b.sb.as(await b.sb.token());
    expect((await api.post('/webhooks/retry')).body).toEqual({ success: true, resumed: 1 });
    await b.settle();
    expect(a.receiver.accepted()).toHaveLength(1);
  });

  it('sends again a delivery cut by the shutdown, and records the cut attempt', async () => {
    const held: http.ServerResponse[] = [];
    let requests = 0;
    let arrived!: () => void;
    const first = new Promise<void>((resolve) => { arrived = resolve; });
    const server = http.createServer((_req, res) => {
      requests += 1;
      if (requests === 1) {
        held.push(res);
        arrived();
      } else res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    try {
      const a = await instance();
      await a.api.post('/webhooks', { endpoint_url: url, topic: 'customer_created' }).expect(201);
      const id = (await a.api.post('/customers', { name: 'Cut' })).body.id;
      await first; // a's attempt is under way, and the process dies here
      await die(a);

      const b = await instance();
      await b.settle();
      expect(requests).toBe(2);
      const attempts = await log(b);
      expect(attempts).toEqual([
        expect.objectContaining({ attempt: 1, status_code: null, error: 'interrupted: the sandbox stopped during this attempt' }),
        expect.objectContaining({ attempt: 2, status_code: 200, error: null }),
      ]);
      expect((await b.api.get('/webhooks/events')).body.data).toEqual([expect.objectContaining({ entity_id: id, status: 'sent', attempts: 2 })]);
    } finally {
      for (const res of held) res.writeHead(200).end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
