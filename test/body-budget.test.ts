// The server's budget of request bodies being received at once (src/http/body-budget.ts), through
// real sockets on a listening sandbox: bodies whose headers have arrived hold their declared length
// until they are read or refused, a body past the budget answers 503 server_busy unread (and
// changes nothing), and every way a body ends (read, refused as too large or malformed, aborted)
// gives its bytes back: generated sequences of those endings are checked against a model of the count.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { connect, type Socket } from 'node:net';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import { LIMITS } from '../src/limits.js';
import { BODY_BUDGET_SERVICE, type BodyBudget } from '../src/http/body-budget.js';

jest.setTimeout(120_000); // real sockets

const MB = 1024 * 1024;
let sb: RunningSandbox;
let budget: BodyBudget;
let port: number;
let token: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, logLevel: 'silent', rateLimit: 0, realTimeTicks: false });
  budget = sb.deps.services.installed(BODY_BUDGET_SERVICE);
  port = Number(new URL(sb.url).port);
  const auth = await fetch(`${sb.url}/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  token = ((await auth.json()) as { access_token: string }).access_token;
});
const sockets: Socket[] = [];
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await sb.close();
});

/** Waits (bounded, on the server's own turns) until the budget holds `bytes`: sockets are real I/O. */
async function untilHeld(bytes: number): Promise<void> {
  for (let i = 0; i < 2000 && budget.bytes !== bytes; i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(budget.bytes).toBe(bytes);
}

interface Sender {
  socket: Socket;
  /** The status line and headers of the answer, once it has come (or undefined when the connection closed without one). */
  answer: Promise<{ status: number; head: string; body: string } | undefined>;
  closed: Promise<void>;
}

/** A client that sends a POST /customers's headers and `body` (perhaps less than it declares), then waits. */
function send(declared: number | 'chunked', body = ''): Sender {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {});
  const length = declared === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${declared}`;
  const chunk = declared === 'chunked' && body ? `${body.length.toString(16)}\r\n${body}\r\n` : body;
  socket.write(`POST /customers HTTP/1.1\r\nHost: sandbox\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${length}\r\n\r\n${chunk}`);
  let received = '';
  socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  // Bounded: an answer that never comes fails the case by name instead of the test's time-out.
  const timeout = (what: string) => new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within 10 s (${declared}, ${body.length} bytes sent)`)), 10_000).unref());
  const answered = new Promise<{ status: number; head: string; body: string } | undefined>((resolve) => {
    const check = () => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const head = received.slice(0, end);
      const size = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < end + 4 + size) return false;
      resolve({ status: Number(head.split(' ')[1]), head, body: received.slice(end + 4, end + 4 + size) });
      return true;
    };
    socket.on('data', check);
    socket.once('close', () => check() || resolve(undefined));
  });
  return { socket, get answer() { return Promise.race([answered, timeout('answer')]); }, closed };
}

/** A customer's body padded with spaces to exactly `bytes` (JSON allows them). */
const customerBody = (bytes: number, name = 'Budget Co') => {
  const text = JSON.stringify({ name, email: 'ap@budget.test' });
  return text + ' '.repeat(Math.max(0, bytes - text.length));
};

async function customerCount(): Promise<number> {
  const list = await fetch(`${sb.url}/customers?limit=100`, { headers: { authorization: `Bearer ${token}` } });
  return ((await list.json()) as { data: unknown[] }).data.length;
}

describe('the budget of request bodies being received at once', () => {
  it('holds each body\'s declared length; a body past the budget answers 503 server_busy unread, closes, and changes nothing', async () => {
    const full = Math.floor(LIMITS.bodyBytesInFlight / LIMITS.jsonBodyBytes);
    // Full to the byte: the largest bodies, and one that holds the rest.
    const holders = Array.from({ length: full }, () => send(LIMITS.jsonBodyBytes));
    const rest = LIMITS.bodyBytesInFlight - full * LIMITS.jsonBodyBytes;
    if (rest > 0) holders.push(send(rest));
    await untilHeld(LIMITS.bodyBytesInFlight);
    const before = await customerCount();

    const refused = send(LIMITS.jsonBodyBytes, '{"name":');
    const answer = await refused.answer;
    expect(answer?.status).toBe(503);
    expect(answer?.head).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(answer?.head).toMatch(/\r\nconnection: close\r\n/i);
    const error = JSON.parse(answer!.body) as { code: string; message: string; validation_errors: Record<string, string> };
    expect(error.code).toBe('server_busy');
    expect(error.validation_errors.body).toMatch(/256 MB/);
    await refused.closed; // the unread body is not taken as the next request
    // A small write that does not fit either: 503, and no customer is made; reads go on.
    const small = send(100, customerBody(100));
    const busy = await small.answer;
    expect([busy?.status, busy?.body]).toEqual([503, expect.stringContaining('server_busy')]);
    expect(await customerCount()).toBe(before);
    expect(budget.bytes).toBe(LIMITS.bodyBytesInFlight);

    // One holder goes away: its bytes come back, and the small write is made.
    holders[0]!.socket.destroy();
    await untilHeld(LIMITS.bodyBytesInFlight - LIMITS.jsonBodyBytes);
    const made = await send(100, customerBody(100, 'Made After')).answer;
    expect([made?.status, made?.body]).toEqual([201, expect.stringContaining('Made After')]);
    expect(await customerCount()).toBe(before + 1);
    for (const holder of holders) holder.socket.destroy();
    await untilHeld(0);
  });

  type Step =
    | { kind: 'open'; declared: number | 'chunked' }
    | { kind: 'finish' | 'abort'; index: number }
    | { kind: 'whole'; bytes: number; valid: boolean };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('open' as const), declared: fc.oneof(fc.integer({ min: 1, max: 20 * MB }), fc.constant(LIMITS.jsonBodyBytes), fc.constant('chunked' as const)) }),
    fc.record({ kind: fc.constantFrom('finish' as const, 'abort' as const), index: fc.nat() }),
    fc.record({ kind: fc.constant('whole' as const), bytes: fc.integer({ min: 60, max: 4000 }), valid: fc.boolean() }),
  );

  it('every way a body ends gives back what it held: generated sequences against a model of the count', async () => {
    let busy = 0;
    await fc.assert(
      // A run starts from some of the largest bodies held, so that runs meet the budget's edge.
      fc.asyncProperty(fc.integer({ min: 0, max: 18 }), fc.array(step, { minLength: 1, maxLength: 30 }), async (prefill, generated) => {
        const steps: Step[] = [...Array.from({ length: prefill }, () => ({ kind: 'open' as const, declared: LIMITS.jsonBodyBytes })), ...generated];
        const open: Array<{ sender: Sender; holds: number; declared: number | 'chunked' }> = [];
        let model = 0;
        try {
          for (const s of steps) {
            if (s.kind === 'open') {
              const holds = s.declared === 'chunked' ? LIMITS.jsonBodyBytes : Math.min(s.declared, LIMITS.jsonBodyBytes);
              const sender = send(s.declared);
              if (model + holds > LIMITS.bodyBytesInFlight) {
                busy += 1;
                expect((await sender.answer)?.status).toBe(503);
                sender.socket.destroy();
              } else {
                model += holds;
                open.push({ sender, holds, declared: s.declared });
              }
            } else if (s.kind === 'whole') {
              // A small body sent whole: read, then made (201) or refused as malformed (400); nothing stays held.
              const fits = model + s.bytes <= LIMITS.bodyBytesInFlight;
              const sender = send(s.bytes, s.valid ? customerBody(s.bytes) : `{${' '.repeat(s.bytes - 1)}`);
              const answer = await sender.answer;
              expect([answer?.status, answer?.body]).toEqual([!fits ? 503 : s.valid ? 201 : 400, expect.any(String)]);
              sender.socket.destroy();
            } else if (open.length) {
              const [held] = open.splice(s.index % open.length, 1);
              model -= held!.holds;
              if (s.kind === 'abort' || held!.declared === 'chunked') {
                held!.sender.socket.destroy();
              } else {
                // The rest of a declared body, all spaces: once it is all read, a 400 (not JSON), or a 413 when
                // it declared more than the limit (body-parser reads such a body off before it answers).
                const declared = held!.declared as number;
                held!.sender.socket.write(Buffer.alloc(declared, 0x20));
                expect((await held!.sender.answer)?.status).toBe(declared > LIMITS.jsonBodyBytes ? 413 : 400);
                held!.sender.socket.destroy();
              }
            }
            await untilHeld(model);
          }
        } finally {
          // Also after a failure, so that a shrunk run starts from an empty budget.
          for (const socket of sockets.splice(0)) socket.destroy();
          await untilHeld(0);
        }
      }),
      { numRuns: 25 },
    );
    expect(busy).toBeGreaterThan(0); // the runs went past the budget, not only under it
  });
});
