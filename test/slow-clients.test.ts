// Clients that ask for big answers and never read them (src/http/send-guard.ts): through real
// sockets on a listening sandbox, each such client is dropped within a bounded time by one of the
// three rules (its own cap, the server's cap, the send time-out), the bytes the server holds for
// them never pass the server's cap, and a client that reads is served meanwhile. Small limits keep
// the cases fast; one case runs with the defaults, its clock moved instead of waited for.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { connect, type Socket } from 'node:net';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import { LIMITS } from '../src/limits.js';
import { SEND_GUARD_SERVICE, type SendGuard, type SendLimits } from '../src/http/send-guard.js';
import { batchedBytes, endInBatch } from '../src/http/answer-batch.js';
import type { ServerResponse } from 'node:http';

jest.setTimeout(60_000); // real sockets, many megabytes through loopback: slow on a loaded machine

const MB = 1024 * 1024;
const sandboxes: RunningSandbox[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const sandbox of sandboxes.splice(0)) await sandbox.close();
});

async function start(options: { sendLimits?: SendLimits; now?: () => number } = {}): Promise<{ sb: RunningSandbox; guard: SendGuard; document: string }> {
  const sb = await startSandbox({
    port: 0,
    logLevel: 'silent',
    rateLimit: 0,
    realTimeTicks: false,
    ...(options.sendLimits ? { sendLimits: options.sendLimits } : {}),
    ...(options.now ? { overrides: { realNow: options.now } } : {}),
  });
  sandboxes.push(sb);
  const guard = sb.deps.services.installed(SEND_GUARD_SERVICE);
  // The served API document: a big answer (about 270 kB) that costs the server nothing to make.
  const document = await (await fetch(`${sb.url}/openapi.yaml`)).text();
  return { sb, guard, document };
}

interface Hog {
  socket: Socket;
  /** Resumes reading and resolves once the server has closed the connection, with what was read. */
  drain(): Promise<{ bytes: number; error?: string }>;
}

/**
 * A client that sends `count` requests for `path` at once (pipelined) and never reads: its socket
 * is paused before anything arrives, so the kernel's buffers fill and the rest waits in the server.
 */
async function hog(port: number, count: number, path = '/openapi.yaml', headers = ''): Promise<Hog> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.pause();
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let error: string | undefined;
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: sandbox\r\n${headers}\r\n`.repeat(count));
  return {
    socket,
    drain: () => new Promise((resolve) => {
      let bytes = 0;
      socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
      socket.once('close', () => resolve({ bytes, error }));
      socket.resume();
    }),
  };
}

/** Wait until `check` holds, polling; fails after `ms` of real time instead of hanging. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const droppedIn = (guard: SendGuard) => Object.values(guard.stats().dropped).reduce((a, b) => a + b, 0);

/** A reading client's calls while `busy` holds: each health check's time, and the document read whole each time. */
async function readingClient(url: string, document: string, busy: () => boolean): Promise<{ calls: number; slowestMs: number }> {
  let calls = 0;
  let slowestMs = 0;
  do {
    const started = performance.now();
    const health = await fetch(`${url}/_sandbox/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    slowestMs = Math.max(slowestMs, performance.now() - started);
    expect(await (await fetch(`${url}/openapi.yaml`)).text()).toBe(document);
    calls += 1;
  } while (busy());
  return { calls, slowestMs };
}

describe('clients that do not read their answers', () => {
  it('drops 48 clients that pipeline big answers and never read, never holding more than the caps, while a reading client is served', async () => {
    const limits = { sendTimeoutMs: 2_000, connectionQueuedBytes: 2 * MB, totalQueuedBytes: 8 * MB };
    const { sb, guard, document } = await start({ sendLimits: limits });
    // Each asks for 32 documents (about 8.7 MB): past the kernel's buffers and the connection's cap.
    const hogs = await Promise.all(Array.from({ length: 48 }, () => hog(sb.port, 32)));
    const reading = readingClient(sb.url, document, () => droppedIn(guard) < hogs.length);
    await until(() => droppedIn(guard) >= hogs.length, 20_000, 'every non-reading client dropped');
    const { calls, slowestMs } = await reading;

    const stats = guard.stats();
    // Each went past its own cap with its waiting answers, or found the server's cap full of the
    // bytes of connections dropped before it (let go once their sockets close): dropped at once.
    expect(stats.dropped.connection).toBeGreaterThan(0);
    expect(stats.dropped).toEqual({ connection: stats.dropped.connection, total: 48 - stats.dropped.connection, timeout: 0 });
    expect(stats.peakQueuedBytes).toBeLessThanOrEqual(limits.totalQueuedBytes);
    expect(stats.peakQueuedBytes).toBeGreaterThan(0);
    expect(stats).toMatchObject({ connections: 0, queuedBytes: 0 });
    // Meanwhile the reading client had every answer whole, the health check quickly.
    expect(calls).toBeGreaterThan(0);
    expect(slowestMs).toBeLessThan(2_000);
    // Each dropped client, reading at last, finds its connection closed short of its 32 answers.
    for (const { bytes } of await Promise.all(hogs.map((h) => h.drain()))) expect(bytes).toBeLessThan(32 * document.length);
    // The server goes on: a new client is answered.
    expect((await fetch(`${sb.url}/_sandbox/health`)).status).toBe(200);
  });

  it('keeps the sum under the server cap by dropping the stalest clients first, and the time-out drops the rest', async () => {
    const limits = { sendTimeoutMs: 1_500, connectionQueuedBytes: 12 * MB, totalQueuedBytes: 24 * MB };
    const { sb, guard, document } = await start({ sendLimits: limits });
    // One after another, so that the first are the stalest: each holds several MB the kernel cannot take.
    const hogs: Hog[] = [];
    for (let i = 0; i < 40; i++) {
      hogs.push(await hog(sb.port, 32));
      expect(guard.stats().queuedBytes).toBeLessThanOrEqual(limits.totalQueuedBytes);
    }
    await until(() => guard.stats().connections + droppedIn(guard) === hogs.length, 10_000, 'every client held or dropped');
    const held = guard.stats();
    expect(held.dropped.connection).toBe(0);
    expect(held.dropped.total).toBeGreaterThan(0);
    // The newest are still open and held (under the caps), waiting for the time-out.
    expect(held.connections).toBeGreaterThan(0);
    expect(hogs.at(-1)!.socket.destroyed).toBe(false);
    const reading = readingClient(sb.url, document, () => guard.stats().connections > 0);
    await until(() => guard.stats().connections === 0, 10_000, 'the remaining clients dropped by the send time-out');
    await reading;
    const stats = guard.stats();
    expect(stats.dropped.timeout).toBe(held.connections);
    expect(stats.dropped.total + stats.dropped.timeout).toBe(40);
    expect(stats.peakQueuedBytes).toBeLessThanOrEqual(limits.totalQueuedBytes);
    // A dropped connection's bytes count until its socket closes, which may be a turn after the drop.
    await until(() => guard.stats().queuedBytes === 0, 10_000, 'every dropped client\'s bytes given back as its socket closed');
  });

  it('drops clients that pipeline journal pages (an async handler\'s answers) and never read, within the cap', async () => {
    // The pipelined requests of many connections resume together after the handler's await, so
    // connections dropped early in that turn are still open (their bytes in memory) while later
    // ones are answered: their bytes count until their sockets close, and the cap holds.
    const limits = { sendTimeoutMs: 1_000, connectionQueuedBytes: 4 * MB, totalQueuedBytes: 8 * MB };
    const { sb, guard } = await start({ sendLimits: limits });
    const token = await sb.token();
    const filler = JSON.stringify({ name: 'filler', notes: Array.from({ length: 8 }, (_, i) => `${i}`.padEnd(1000, 'x')) });
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${sb.url}/customers`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: filler });
      expect(res.status).toBe(400);
    }
    const page = await (await fetch(`${sb.url}/_sandbox/requests?limit=100`)).text();
    expect(page.length).toBeGreaterThan(500_000);
    // 16 pages of about 770 kB each: more than the kernel's buffers take for a client that does not read.
    const hogs = await Promise.all(Array.from({ length: 24 }, () => hog(sb.port, 16, '/_sandbox/requests?limit=100')));
    // Answered after the requests sent before it were read (the server reads in arrival order).
    expect((await fetch(`${sb.url}/_sandbox/health`)).status).toBe(200);
    await until(() => droppedIn(guard) === hogs.length, 20_000, 'every non-reading client dropped');
    const stats = guard.stats();
    expect(stats.peakQueuedBytes).toBeLessThanOrEqual(limits.totalQueuedBytes);
    expect(droppedIn(guard)).toBe(hogs.length);
    for (const { bytes } of await Promise.all(hogs.map((h) => h.drain()))) expect(bytes).toBeLessThan(16 * page.length);
  });

  it('records the API answers of a dropped connection in the journal as cut (status 0, no body)', async () => {
    const { sb, guard } = await start({ sendLimits: { sendTimeoutMs: 2_000, connectionQueuedBytes: 256 * 1024, totalQueuedBytes: 8 * MB } });
    const token = await sb.token();
    for (let batch = 0; batch < 5; batch++) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => fetch(`${sb.url}/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Customer ${batch}-${i}`.padEnd(200, '.') }),
      }).then((res) => expect(res.status).toBe(201))));
    }
    // Pages of 100 customers (tens of kB each), 16 at once on one connection: past its 256 kB.
    await hog(sb.port, 16, '/customers?limit=100', `Authorization: Bearer ${token}\r\n`);
    await until(() => guard.stats().dropped.connection === 1, 10_000, 'the connection dropped');
    type Entry = { status: number; path: string; response: { body: unknown } };
    const list = async (query: string) => ((await (await fetch(`${sb.url}/_sandbox/requests?limit=50&method=GET&${query}`)).json()) as { data: Entry[] }).data;
    const pages = await list('path=/customers');
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.every((entry) => entry.status === 0 || entry.status === 200)).toBe(true);
    const cut = await list('path=/customers&status=0');
    expect(cut.length).toBeGreaterThan(0);
    for (const entry of cut) expect(entry.response.body).toBeNull();
    // The answers the client could take before the drop are there whole.
    for (const entry of pages.filter((e) => e.status === 200)) expect((entry.response.body as { data: unknown[] }).data).toBeDefined();
  });

  it('does not drop a client that reads its big answers slowly, pausing for less than the time-out', async () => {
    const limits = { sendTimeoutMs: 2_500, connectionQueuedBytes: 24 * MB, totalQueuedBytes: 64 * MB };
    const { sb, guard, document } = await start({ sendLimits: limits });
    const slow = await hog(sb.port, 64);
    // Reads 1 MB, then stops for 250 ms, and again: 17 MB in sixteen stops or more, the whole read
    // well past the time-out. (The kernels hold megabytes between the server and the client, so the
    // server sees a client take bytes only once it has taken a good part of those.)
    let bytes = 0;
    let burst = 0;
    slow.socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      burst += chunk.length;
      if (burst < MB) return;
      burst = 0;
      slow.socket.pause();
      setTimeout(() => slow.socket.resume(), 250);
    });
    const started = Date.now();
    slow.socket.resume();
    await until(() => bytes >= 64 * (document.length + 100), 30_000, 'the slow reader has all 64 answers');
    expect(Date.now() - started).toBeGreaterThan(1.5 * limits.sendTimeoutMs);
    expect(guard.stats().dropped).toEqual({ connection: 0, total: 0, timeout: 0 });
    expect(slow.socket.destroyed).toBe(false);
  });

  it('with the default limits: holds a non-reading client until 30 s pass without it taking a byte, then drops it', async () => {
    const clock = { now: Date.now() };
    const { sb, guard } = await start({ now: () => clock.now });
    expect(guard.stats().limits).toEqual({ sendTimeoutMs: LIMITS.sendTimeoutMs, connectionQueuedBytes: LIMITS.connectionQueuedBytes, totalQueuedBytes: LIMITS.totalQueuedBytes });
    expect(LIMITS.sendTimeoutMs).toBe(30_000);
    const idle = await hog(sb.port, 40);
    await until(() => guard.stats().queuedBytes > 0, 5_000, 'answers waiting in the server');
    const held = guard.stats();
    expect(held).toMatchObject({ connections: 1, dropped: { connection: 0, total: 0, timeout: 0 } });
    expect(held.queuedBytes).toBeLessThanOrEqual(LIMITS.connectionQueuedBytes);
    // The guard looks once a second of real time: after one look it has seen the kernel take its
    // last bytes; from there, 29 s on the clock without a byte taken: still held.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    clock.now += 29_000;
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(guard.stats().connections).toBe(1);
    clock.now += 1_000;
    await until(() => guard.stats().dropped.timeout === 1, 3_000, 'dropped by the default send time-out');
    expect(guard.stats()).toMatchObject({ connections: 0, queuedBytes: 0 });
    expect((await idle.drain()).bytes).toBeLessThan(40 * 271_000);
  });

  it('sets the server time-outs from the limits table, idle time-out off', async () => {
    // startSandbox does not hand out its server: read its settings from a server made the same way.
    const { createApp, createDeps, createSandboxServer } = await import('../src/app.js');
    const deps = await createDeps({ logLevel: 'silent' });
    const server = createSandboxServer(createApp(deps));
    expect({ keepAlive: server.keepAliveTimeout, headers: server.headersTimeout, request: server.requestTimeout, idle: server.timeout }).toEqual({
      keepAlive: LIMITS.keepAliveTimeoutMs,
      headers: LIMITS.headersTimeoutMs,
      request: LIMITS.requestTimeoutMs,
      idle: 0,
    });
    deps.services.closeAll();
    await deps.store.close();
  });
});

describe('answers held for the end of their batch', () => {
  /** A response that records when it was ended. */
  const response = (ended: string[], name: string) => ({ end: () => void ended.push(name) }) as unknown as ServerResponse;

  it('holds small answers for the batch, and writes at once the one that would pass the budget, with the batch so far', async () => {
    const ended: string[] = [];
    const small = 'x'.repeat(100);
    endInBatch(response(ended, 'a'), small);
    endInBatch(response(ended, 'b'), small);
    expect(ended).toEqual([]);
    expect(batchedBytes()).toBe(200);
    endInBatch(response(ended, 'big'), 'y'.repeat(LIMITS.answerBatchBytes));
    expect(ended).toEqual(['a', 'b', 'big']);
    expect(batchedBytes()).toBe(0);
    endInBatch(response(ended, 'c'), small);
    expect(ended).toHaveLength(3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toEqual(['a', 'b', 'big', 'c']);
  });

});
