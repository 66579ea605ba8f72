// Answers written together (src/http/answer-batch.ts): the answers finished in one batch of ready
// requests are written once the batch is done. What a client must still see: on one connection, the
// answers in the order of its requests (pipelined requests are handled in the same batch); across
// connections, each answer carrying its own request's result; and an answer that a second one
// (an error raised after the first was sent) cannot replace while it waits for its batch.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { Response } from 'express';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import { send } from '../src/http/router.js';
import { answered, answers, rawConnection } from './raw-http.js';

let running: RunningSandbox;
let token: string;

beforeAll(async () => {
  // No rate limit: the concurrent requests below come faster than a partner's limit allows.
  running = await startSandbox({ port: 0, logLevel: 'silent', realTimeTicks: false, seed: 'answer-batch', rateLimit: 0 });
  token = await running.token();
});

afterAll(async () => {
  await running.close();
});

/** An HTTP/1.1 request's bytes; the last one of a pipeline closes the connection. */
function request(method: string, path: string, body?: unknown, close = false): string {
  const text = body === undefined ? '' : JSON.stringify(body);
  const headers = [`${method} ${path} HTTP/1.1`, 'Host: sandbox', `Authorization: Bearer ${token}`];
  if (body !== undefined) headers.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(text)}`);
  if (close) headers.push('Connection: close');
  return `${headers.join('\r\n')}\r\n\r\n${text}`;
}

/** A new connection the server reads: `send(bytes)` writes them in one write and resolves with everything read after, until it closes. */
async function connection(): Promise<{ send(bytes: string): Promise<Buffer> }> {
  const raw = await rawConnection(running.port);
  // One request answered first: the server has then accepted the connection and is reading it, so
  // what is written next reaches it together with what the other connections write.
  raw.write('GET /_sandbox/health HTTP/1.1\r\nHost: sandbox\r\n\r\n');
  await raw.readUntil(answered);
  return {
    send: (bytes) => {
      raw.write(bytes);
      return raw.readToClose();
    },
  };
}

async function exchange(bytes: string): Promise<Buffer> {
  const raw = await rawConnection(running.port);
  raw.write(bytes);
  return raw.readToClose();
}

describe('answers written together', () => {
  it('answers pipelined requests on one connection in their order, each with its own result', async () => {
    const bytes = await exchange([
      request('POST', '/customers', { name: 'Pipelined first' }),
      request('GET', '/customers/cus_missing'),
      request('POST', '/customers', { name: 'Pipelined second' }),
      request('GET', '/_sandbox/health', undefined, true),
    ].join(''));
    const [first, missing, second, health] = answers(bytes);
    expect(first).toMatchObject({ status: 201, body: { name: 'Pipelined first' } });
    expect(missing).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(second).toMatchObject({ status: 201, body: { name: 'Pipelined second' } });
    expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });
    // Both are stored, each under the id its own answer gave.
    for (const made of [first, second]) {
      const { id, name } = made.body as { id: string; name: string };
      const [read] = answers(await exchange(request('GET', `/customers/${id}`, undefined, true)));
      expect(read).toMatchObject({ status: 200, body: { id, name } });
    }
  });

  it('gives each of many concurrent connections the answer to its own request', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `Concurrent ${i}`);
    // Every connection open and read by the server first, then every request written in the same
    // turn: they reach the server together, and their answers are written in one batch.
    const connections = await Promise.all(names.map(() => connection()));
    const made = await Promise.all(connections.map((c, i) => c.send(request('POST', '/customers', { name: names[i] }, true)).then(answers)));
    expect(made.map(([answer]) => [answer.status, (answer.body as { name: string }).name])).toEqual(names.map((name) => [201, name]));
    // Every one is stored once, under the id its answer gave.
    for (const [answer] of made) {
      const { id, name } = answer.body as { id: string; name: string };
      const [read] = answers(await exchange(request('GET', `/customers/${id}`, undefined, true)));
      expect(read).toMatchObject({ status: 200, body: { id, name } });
    }
  });

  it('keeps the first answer a response was given: a second send() before the batch ends changes nothing', async () => {
    // What the error handler does when a step fails after the handler answered: it sends again.
    const server = createServer((_req, res) => {
      send(res as Response, { status: 201, body: { first: true } });
      send(res as Response, { status: 500, body: { code: 'internal_error', message: 'late' } });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(res.status).toBe(201);
      expect(res.headers.get('content-length')).toBe(String(JSON.stringify({ first: true }).length));
      expect(await res.json()).toEqual({ first: true });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
