// The programmatic API: startSandbox() on a free port and its helpers (token, reset, advanceClock,
// loadScenario, clearScenarios, saveSnapshot, restoreSnapshot, close), exercised over real HTTP as a
// partner's test runner would.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:net';
import { SandboxRequestError, startSandbox, type RunningSandbox } from '../src/index.js';

let sb: RunningSandbox;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: '7', rateLimit: 0, logLevel: 'silent' });
});
afterAll(async () => {
  await sb.close();
});

async function call(method: string, path: string, token?: string, body?: unknown) {
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('startSandbox', () => {
  it('listens on a free loopback port and answers health, a token and an API call', async () => {
    expect(sb.port).toBeGreaterThan(0);
    expect(sb.url).toBe(`http://127.0.0.1:${sb.port}`);
    expect(await call('GET', '/_sandbox/health')).toEqual({ status: 200, body: { status: 'ok', version: expect.any(String), reason: null, since: null } });
    const token = await sb.token();
    const made = await call('POST', '/customers', token, { name: 'Acme Corp', external_id: 'acme-api-1' });
    expect(made.status).toBe(201);
    const got = await call('GET', `/customers/${made.body.id}`, token);
    expect(got).toEqual({ status: 200, body: made.body });
  });

  it('serves both lanes from one server whose requests are born with express\'s methods (landing page, API, a body error)', async () => {
    // startSandbox's server makes its requests and responses with express's prototypes (expressMessageClasses):
    // the API lane uses them as they are, express's router (the landing page) sets its own.
    const landing = await fetch(`${sb.url}/`);
    expect(landing.status).toBe(200);
    expect(landing.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await landing.text()).toContain('billing-sandbox');
    const token = await sb.token();
    const malformed = await fetch(`${sb.url}/customers`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{"name":' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 'bad_request', validation_errors: { body: 'is not valid JSON' } });
    const missing = await call('GET', '/customers/cus_missing', token);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
    // The landing page again after API requests: the express lane still answers on the same connection pool.
    expect((await fetch(`${sb.url}/`)).status).toBe(200);
  });

  it('gives demo tokens that work on /demo and are refused on the production paths', async () => {
    const demo = await sb.token('demo');
    expect((await call('GET', '/demo/customers', demo)).status).toBe(200);
    expect((await call('GET', '/customers', demo)).status).toBe(401);
    expect(sb.credentials.demo.client_id).toBe('sandbox_demo_client_id');
  });

  it('reset() empties everything; reset({environment}) empties one account only', async () => {
    const prod = await sb.token();
    const demo = await sb.token('demo');
    await call('POST', '/customers', prod, { name: 'Kept in production' });
    await call('POST', '/demo/customers', demo, { name: 'Gone from demo' });

    await sb.reset({ environment: 'demo' });
    expect((await call('GET', '/demo/customers', demo)).body.data).toEqual([]);
    const prodList = await call('GET', '/customers', prod);
    expect(prodList.body.data.map((c: { name: string }) => c.name)).toContain('Kept in production');

    await sb.reset();
    const fresh = await sb.token();
    expect((await call('GET', '/customers', fresh)).body.data).toEqual([]);
  });

  it('advanceClock() moves the selected account clock only, and tokens outlive it (they live in real time)', async () => {
    await sb.reset();
    const token = await sb.token();
    const before = Date.parse((await call('GET', '/_sandbox/clock')).body.now);
    const now = await sb.advanceClock(2 * 3600);
    expect(Date.parse(now) - before).toBeGreaterThanOrEqual(2 * 3600 * 1000);
    expect(Date.parse((await call('GET', '/_sandbox/clock')).body.now)).toBeGreaterThanOrEqual(Date.parse(now));
    // Two hours on the account clock, none of real time: the token still works.
    expect((await call('GET', '/customers', token)).status).toBe(200);

    const demo = await sb.token('demo');
    const demoBefore = Date.parse((await call('GET', '/_sandbox/clock', demo)).body.now);
    expect(demoBefore).toBeLessThan(Date.parse(now));
    const demoNow = await sb.advanceClock(86400, { environment: 'demo' });
    expect(Date.parse(demoNow) - demoBefore).toBeGreaterThanOrEqual(86400 * 1000);
  });

  it.each([
    ['a negative number of seconds', -5],
    ['NaN (sent as null)', Number.NaN],
  ])('advanceClock() rejects %s with the 400 HttpError and moves nothing', async (_what, seconds) => {
    const before = Date.parse((await call('GET', '/_sandbox/clock')).body.now);
    const error = await sb.advanceClock(seconds).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxRequestError);
    expect(error).toMatchObject({ status: 400, body: { code: expect.any(String) } });
    const after = Date.parse((await call('GET', '/_sandbox/clock')).body.now);
    expect(after - before).toBeLessThan(60_000);
  });

  it('loadScenario() applies rules to that account until clearScenarios()', async () => {
    await sb.reset();
    const token = await sb.token();
    const loaded = await sb.loadScenario({
      name: 'customer list outage',
      rules: [{ match: { method: 'GET', path: '/customers' }, times: 1, respond: { status: 503 } }],
    });
    expect(loaded.id).toEqual(expect.any(String));
    expect((await call('GET', '/customers', token)).status).toBe(503);
    expect((await call('GET', '/customers', token)).status).toBe(200);
    // YAML text is accepted too.
    await sb.loadScenario('name: yaml rule\nrules:\n  - match: { operation: listCustomers }\n    respond: { status: 429 }\n');
    expect((await call('GET', '/customers', token)).status).toBe(429);
    expect(await sb.clearScenarios()).toBe(2);
    expect((await call('GET', '/customers', token)).status).toBe(200);
    // A bad document is refused with 400 naming the field.
    const bad = await sb.loadScenario({ name: 'bad', rules: [{ match: {}, respond: { status: 99 } }] }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, body: { validation_errors: expect.any(Object) } });
  });

  it('saveSnapshot() keeps an account (replacing one of that name) and restoreSnapshot() brings it back, into either account', async () => {
    await sb.reset();
    const token = await sb.token();
    const made = (await call('POST', '/customers', token, { name: 'Snapshotted' })).body;
    const saved = await sb.saveSnapshot('programmatic');
    expect(saved).toEqual({ bytes: expect.any(Number), counts: { customers: 1, events: 1 } });
    expect((await sb.saveSnapshot('programmatic')).counts).toEqual(saved.counts);
    await call('POST', '/customers', token, { name: 'After' });
    await sb.restoreSnapshot('programmatic');
    expect((await call('GET', '/customers', token)).body.data.map((c: { id: string }) => c.id)).toEqual([made.id]);
    await sb.restoreSnapshot('programmatic', { environment: 'demo' });
    expect((await call('GET', '/demo/customers', await sb.token('demo'))).body.data.map((c: { id: string }) => c.id)).toEqual([made.id]);
    const missing = await sb.restoreSnapshot('no-such-snapshot').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });
});

describe('startSandbox options', () => {
  it('loads fixtures and --scenario documents given as options', async () => {
    const loaded = await startSandbox({ port: 0, seed: '3', rateLimit: 0, logLevel: 'silent', fixtures: 'demo', scenarios: ['slow-api'] });
    try {
      const token = await loaded.token();
      const res = await fetch(`${loaded.url}/_sandbox/scenarios`, { headers: { Authorization: `Bearer ${token}` } });
      const list = (await res.json()) as { data: { name: string; scope: string }[] };
      expect(list.data).toEqual([expect.objectContaining({ name: 'slow API', scope: 'global' })]);
      const started = Date.now();
      const customers = await fetch(`${loaded.url}/customers?limit=100`, { headers: { Authorization: `Bearer ${token}` } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
      expect(((await customers.json()) as { data: unknown[] }).data.length).toBe(8);
    } finally {
      await loaded.close();
    }
  });

  it('sends the admin token itself when the control plane requires one', async () => {
    const guarded = await startSandbox({ port: 0, rateLimit: 0, logLevel: 'silent', adminToken: 'adm-secret' });
    try {
      expect((await fetch(`${guarded.url}/_sandbox/clock`)).status).toBe(401);
      const now = await guarded.advanceClock(60);
      expect(Date.parse(now)).toBeGreaterThan(Date.now() + 50_000);
      await guarded.reset();
    } finally {
      await guarded.close();
    }
  });

  it('uses the configured credentials for token()', async () => {
    const custom = await startSandbox({
      port: 0,
      rateLimit: 0,
      logLevel: 'silent',
      credentials: { production: { client_id: 'my_id', client_secret: 'my_secret' }, demo: { client_id: 'd_id', client_secret: 'd_secret' } },
    });
    try {
      const token = await custom.token();
      expect((await fetch(`${custom.url}/customers`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
      const basic = Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64');
      const refused = await fetch(`${custom.url}/oauth/token`, {
        method: 'POST',
        headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      expect(refused.status).toBe(403);
    } finally {
      await custom.close();
    }
  });

  it('rejects when the port is taken, and close() is safe to call twice', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      await expect(startSandbox({ port, logLevel: 'silent' })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      blocker.close();
    }
    const once = await startSandbox({ port: 0, logLevel: 'silent' });
    await once.close();
    await once.close();
    await expect(fetch(`${once.url}/_sandbox/health`)).rejects.toThrow();
  });
});

describe('startSandbox refuses options it does not know', () => {
  it.each([
    [{ data: 'x.json' }, 'unknown option data; did you mean dataFile?'],
    [{ prot: 0 }, 'unknown option prot; did you mean port?'],
    [{ adminTokne: 't' }, 'unknown option adminTokne; did you mean adminToken?'],
    [{ scenario: ['slow-api'] }, 'unknown option scenario; did you mean scenarios?'],
    [{ tokenTTL: 5 }, 'unknown option tokenTTL; did you mean tokenTtl?'],
  ])('%j is refused naming the option and the nearest valid one', async (options, message) => {
    const attempt = startSandbox({ port: 0, ...(options as object) });
    await expect(attempt).rejects.toThrow(TypeError);
    await expect(attempt).rejects.toThrow(message);
  });

  it('names every unknown option at once, lists the valid ones, and starts nothing (no data file is written)', async () => {
    const { existsSync, mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'options-'));
    try {
      const file = join(dir, 'x.json');
      const attempt = startSandbox({ port: 0, data: file, logLevell: 'silent' } as never);
      await expect(attempt).rejects.toThrow(/^unknown option data; did you mean dataFile\?; unknown option logLevell; did you mean logLevel\? \(startSandbox options: port, host, dataFile, .*overrides\)$/);
      expect(existsSync(file)).toBe(false);
      // The right spelling persists.
      const sandbox = await startSandbox({ port: 0, dataFile: file, logLevel: 'silent' });
      await sandbox.close();
      expect(existsSync(file)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
