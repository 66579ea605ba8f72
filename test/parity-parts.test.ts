// The parity suite's parts on their own: the catalogue as data (ids, the spec quotes, the
// gaps-and-choices rows it names), the client's limiter and 429 back-off on a fake fetch and clock,
// the other environment's address, the XML escaping, and the command's flags and exit codes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import { AREAS } from '../src/parity/case.js';
import { CASES } from '../src/parity/cases/index.js';
import { backoffMs, ParityClient, TokenError, type ClientClock } from '../src/parity/client.js';
import { parityCommand } from '../src/parity/command.js';
import { xmlEscape } from '../src/parity/report.js';
import { otherEnvironmentUrl, selectCases, UsageError } from '../src/parity/runner.js';
import { START } from './helpers.js';

function fakeClock() {
  const state = { now: START, sleeps: [] as number[] };
  const clock: ClientClock = { now: () => state.now, sleep: async (ms) => { state.sleeps.push(ms); state.now += ms; } };
  return { state, clock };
}

/** A fetch that answers from a list (the last answer repeats) and records when each request started. */
function scriptedFetch(answers: Array<{ status: number; headers?: Record<string, string>; body?: unknown }>, now: () => number) {
  const starts: number[] = [];
  const urls: string[] = [];
  const impl = (async (url: string | URL | Request) => {
    starts.push(now());
    urls.push(String(url));
    const answer = answers[Math.min(starts.length - 1, answers.length - 1)];
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), { status: answer.status, headers: answer.headers });
  }) as typeof fetch;
  return { impl, starts, urls };
}

const TOKEN = { status: 200, body: { access_token: 'aaa.bbb.ccc', token_type: 'Bearer', expires_in: 3600 } };

describe('the catalogue', () => {
  it('has unique ids named area/case, in a known area, each with a rule and a title', () => {
    const ids = CASES.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of CASES) {
      expect(AREAS).toContain(c.area);
      expect(c.id.startsWith(`${c.area}/`)).toBe(true);
      expect(c.title.length).toBeGreaterThan(15);
      expect(c.rule.section.length).toBeGreaterThan(3);
      expect(c.rule.quote.length).toBeGreaterThan(10);
    }
    expect(CASES.filter((c) => c.movesMoney).every((c) => c.area === 'money')).toBe(true);
  });

  it('names only rows that exist in docs/gaps-and-choices.md (by their first-column text)', () => {
    const doc = readFileSync(join(process.cwd(), 'docs', 'gaps-and-choices.md'), 'utf8');
    const rows = new Set(doc.split('\n').filter((line) => line.startsWith('| ')).map((line) => line.split('|')[1].trim()));
    const referenced = [...new Set(CASES.flatMap((c) => c.gaps ?? []))];
    expect(referenced.length).toBeGreaterThan(20);
    expect(referenced.filter((gap) => !rows.has(gap))).toEqual([]);
  });

  // The spec lives beside the repository (shared/), not in it: checked wherever it can be found.
  const specPath = [
    process.env.BILLING_SPEC,
    join(process.cwd(), '..', 'shared', 'spec', 'service-interface.md'),
    join(process.cwd(), '..', '..', 'shared', 'spec', 'service-interface.md'),
    '/work/shared/spec/service-interface.md',
  ].find((path): path is string => Boolean(path && existsSync(path)));

  (specPath ? it : it.skip)('quotes the service interface word for word, under headings it has', () => {
    const spec = readFileSync(specPath!, 'utf8');
    const headings = new Set(spec.split('\n').filter((l) => l.startsWith('#')).map((l) => l.replace(/^#+\s*/, '').trim()));
    const wrong = CASES.filter((c) => !spec.includes(c.rule.quote) || !c.rule.section.split(' > ').every((h) => headings.has(h)));
    expect(wrong.map((c) => `${c.id}: ${c.rule.section}: ${c.rule.quote}`)).toEqual([]);
  });

  it('selects by area or case id, and refuses an unknown name', () => {
    expect(selectCases(CASES, ['webhooks']).every((c) => c.area === 'webhooks')).toBe(true);
    expect(selectCases(CASES, ['bills/reject-draft-409', 'tokens']).map((c) => c.area)).toEqual([...selectCases(CASES, ['tokens']).map(() => 'tokens'), 'bills']);
    expect(() => selectCases(CASES, ['bils'])).toThrow(UsageError);
    expect(selectCases(CASES, undefined)).toHaveLength(CASES.length);
  });
});

describe('the client', () => {
  it('waits Retry-After (seconds or a date) on a 429, else backs off exponentially from 500 ms, at most 60 s', () => {
    expect(backoffMs('2', 0, 0)).toBe(2000);
    expect(backoffMs('0.5', 3, 0)).toBe(500);
    expect(backoffMs(new Date(10_000).toUTCString(), 0, 4000)).toBe(6000);
    expect([0, 1, 2, 3].map((attempt) => backoffMs(null, attempt, 0))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs('', 10, 0)).toBe(60_000);
    expect(backoffMs('3600', 0, 0)).toBe(60_000);
  });

  it('retries a 429 after its Retry-After and hands the case the answer that followed', async () => {
    const { state, clock } = fakeClock();
    const server = scriptedFetch([TOKEN, { status: 429, headers: { 'Retry-After': '2' } }, { status: 429, headers: { 'Retry-After': '2' } }, { status: 200, body: { data: [] } }], clock.now);
    const client = new ParityClient({ baseUrl: 'https://api.example.test/', clientId: 'id', clientSecret: 'secret', rate: 5, clock, fetch: server.impl });
    const answer = await client.get('/customers');
    expect(answer).toMatchObject({ status: 200, throttled: 2, body: { data: [] }, path: '/customers' });
    expect(state.sleeps).toEqual([2000, 2000]);
    expect(client.throttled).toBe(2);
    expect(server.urls[0]).toBe('https://api.example.test/oauth/token');
  });

  it('gives the 429 to the case after six retries', async () => {
    const { state, clock } = fakeClock();
    const server = scriptedFetch([TOKEN, { status: 429 }], clock.now);
    const client = new ParityClient({ baseUrl: 'https://api.example.test', clientId: 'id', clientSecret: 'secret', rate: 5, clock, fetch: server.impl });
    expect((await client.get('/customers')).status).toBe(429);
    expect(state.sleeps).toEqual([500, 1000, 2000, 4000, 8000, 16000]);
  });

  it.each([[5, 5, 1000], [2.5, 2, 800], [0.5, 1, 2000]])('at rate %d starts %d requests per %d ms at most, counting from the answers', async (rate, burst, windowMs) => {
    const { state, clock } = fakeClock();
    // Each answer takes 30 ms: the next window counts from when an answer came, not when its request left.
    const server = scriptedFetch([TOKEN, { status: 200, body: {} }], clock.now);
    const slow = (async (url: string, init: RequestInit) => {
      const res = await server.impl(url, init);
      state.now += 30;
      return res;
    }) as typeof fetch;
    const client = new ParityClient({ baseUrl: 'https://api.example.test', clientId: 'id', clientSecret: 'secret', rate, clock, fetch: slow });
    for (let i = 0; i < 19; i++) await client.get('/customers');
    // The server may count a request anywhere between its start and its answer: even counting each as late as possible, no window overflows.
    const answers = server.starts.map((s) => s + 30);
    for (let i = burst; i < server.starts.length; i++) expect(server.starts[i] - answers[i - burst]).toBeGreaterThan(windowMs);
    expect(state.now - START).toBeGreaterThanOrEqual(Math.floor(19 / burst) * windowMs);
  });

  it('never calls the control plane, and keeps the secret and tokens out of report text', async () => {
    const { clock } = fakeClock();
    const server = scriptedFetch([TOKEN], clock.now);
    const client = new ParityClient({ baseUrl: 'https://api.example.test', clientId: 'id', clientSecret: 's3cr3t-value', rate: 5, clock, fetch: server.impl });
    await expect(client.get('/_sandbox/clock')).rejects.toThrow(/never \/_sandbox/);
    await expect(client.get('/clock', { baseUrl: 'https://api.example.test/_sandbox' })).rejects.toThrow(/never \/_sandbox/);
    await client.accessToken();
    expect(client.redact('s3cr3t-value aaa.bbb.ccc {"access_token":"xyz","access_token":"cut sho')).toBe('*** *** {"access_token":"***","access_token":"***');
  });

  it('says why when the key gets no token', async () => {
    const { clock } = fakeClock();
    const server = scriptedFetch([{ status: 403, body: { code: 'invalid_client', message: 'no', validation_errors: {} } }], clock.now);
    const client = new ParityClient({ baseUrl: 'https://api.example.test', clientId: 'id', clientSecret: 'bad', rate: 5, clock, fetch: server.impl });
    await expect(client.accessToken()).rejects.toThrow(TokenError);
  });
});

describe('the other environment', () => {
  it.each([
    ['http://127.0.0.1:4010', 'http://127.0.0.1:4010/demo'],
    ['http://localhost:4010/v1/', 'http://localhost:4010/demo/v1'],
    ['http://127.0.0.1:4010/demo', 'http://127.0.0.1:4010'],
    ['https://sandbox.example.test/demo/v1', 'https://sandbox.example.test/v1'],
  ])('is derived from %s as %s', (base, other) => {
    expect(otherEnvironmentUrl(base)).toEqual({ url: other });
  });

  it('is not guessed for a host of its own (the real service): the isolation cases then skip saying so', () => {
    expect(otherEnvironmentUrl('https://api.example.test').why).toMatch(/--other-base-url/);
  });
});

it('escapes XML and drops what XML 1.0 cannot carry', () => {
  const text = xmlEscape('a<b> & "c" \'d\' \u0001\u0008 é \u{1F600}');
  expect(text).toBe('a&lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;  é \u{1F600}');
  expect(XMLValidator.validate(`<x a="${text}">${text}</x>`)).toBe(true);
});

describe('billing-sandbox parity (the command)', () => {
  let sb: RunningSandbox;
  let dir: string;
  const time = { now: START };
  const clock: ClientClock = { now: () => time.now, sleep: async (ms) => { time.now += ms; } };

  beforeAll(async () => {
    sb = await startSandbox({ port: 0, rateLimit: 0, logLevel: 'silent', overrides: { realNow: () => time.now } });
    dir = mkdtempSync(join(tmpdir(), 'parity-command-'));
  });
  afterAll(async () => {
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const codes: number[] = [];
    const command = parityCommand({ exit: (code) => codes.push(code), stdout: (t) => out.push(t), stderr: (t) => err.push(t), progress: false, clock });
    command.configureOutput({ writeOut: (t) => out.push(t), writeErr: (t) => err.push(t) });
    await command.parseAsync(args, { from: 'user' }).catch(() => undefined);
    return { code: codes.at(-1), out: out.join(''), err: err.join('') };
  }

  const key = () => ['--base-url', sb.url, '--client-id', sb.credentials.production.client_id, '--client-secret', sb.credentials.production.client_secret];

  it('runs the chosen areas, prints the table and writes the JSON and JUnit reports; 0 when nothing failed', async () => {
    const [json, xml] = [join(dir, 'report.json'), join(dir, 'junit.xml')];
    const result = await run([...key(), '--only', 'auth,webhooks', '--report', json, '--junit', xml, '--rate', '50']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^PASS {4}auth\/missing-token /m);
    expect(result.out).not.toMatch(/^(PASS|FAIL|SKIP) +(tokens|bills)\//m);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    expect(report).toMatchObject({ tool: 'billing-sandbox parity', base_url: sb.url, options: { rate: 50, only: ['auth', 'webhooks'], allow_money_movement: false }, summary: { failed: 0 } });
    expect(XMLValidator.validate(readFileSync(xml, 'utf8'))).toBe(true);
  }, 60_000);

  it('exits 1 when a case fails', async () => {
    await sb.loadScenario({ name: 'customers down', rules: [{ match: { operation: 'listCustomers' }, times: 1, respond: { status: 503 } }] });
    const result = await run([...key(), '--only', 'auth/token-accepted']);
    expect(result.code).toBe(1);
    expect(result.out).toContain('expected 200, observed 503 on GET /customers?limit=1');
    await sb.clearScenarios();
  }, 30_000);

  it('exits 3 naming the URL when nothing answers there, without running a case', async () => {
    const result = await run(['--base-url', 'http://127.0.0.1:1', '--client-id', 'x', '--client-secret', 'y', '--only', 'auth', '--report', join(dir, 'none.json')]);
    expect(result.code).toBe(3);
    expect(result.err).toMatch(/http:\/\/127\.0\.0\.1:1 could not be reached \(POST \/oauth\/token got no answer: .+\); check --base-url/);
    expect(result.out).toBe('');
    expect(existsSync(join(dir, 'none.json'))).toBe(false);
  });

  it.each([
    [['--client-id', 'x', '--client-secret', 'y'], /missing --base-url/],
    [['--base-url', 'http://127.0.0.1:1', '--client-id', 'x', '--client-secret', 'y', '--only', 'bils'], /unknown area or case bils/],
    [['--base-url', 'not a url'], /not an absolute http\(s\) URL/],
    [['--base-url', 'http://127.0.0.1:1', '--rate', '0'], /--rate must be/],
  ])('refuses %j with exit code 2 and the reason', async (args, reason) => {
    const result = await run(args);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(reason);
  });

  it('--list prints the catalogue with each case\'s spec section and sandbox choices', async () => {
    const result = await run(['--list', '--only', 'customers']);
    expect(result.code).toBe(0);
    expect(result.out).toContain('customers/archive-conflicts\tEndpoints > Customers and payment methods\t[Customer archive/restore conflicts]');
    expect(result.out.trim().split('\n')).toHaveLength(selectCases(CASES, ['customers']).length);
  });
});
