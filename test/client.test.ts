// The test client (src/client/): startSandbox()'s and connect()'s `api` (typed from the document,
// errors thrown as SandboxRequestError, the token got and renewed), `control` (clock, trigger,
// scenarios, reset, events, deliveries, journal), partner() isolation, and durations, over real HTTP
// against a listening sandbox, as a partner's test runner uses them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createServer, type AddressInfo } from 'node:net';
import { connect, DurationError, openConnection, parseDuration, SandboxRequestError, startSandbox, startWebhookReceiver, type RunningSandbox, type SandboxConnection, type WebhookReceiver } from '../src/index.js';
import { parseDuration as cliParseDuration } from '../src/cli/clock.js';
import { CliError, EXIT } from '../src/cli/errors.js';

let sb: RunningSandbox;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 'client', rateLimit: 0, allowHttpWebhooks: true, logLevel: 'silent' });
});
afterAll(async () => {
  await sb.close();
});

/** A loopback port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A fetch that counts what it sends, by method and path. */
function countingFetch() {
  const sent: string[] = [];
  const send: typeof fetch = (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    sent.push(`${request.method} ${new URL(request.url).pathname}`);
    return fetch(request);
  };
  return { sent, fetch: send };
}

describe('api: typed calls that throw SandboxRequestError', () => {
  it('creates and reads back a customer, the answers as the document types them', async () => {
    const { api } = await sb.partner();
    const made = await api.POST('/customers', { body: { name: 'Typed Ltd', email: 'ap@typed.test', external_id: 'typed-1' } });
    const got = await api.GET('/customers/{id}', { params: { path: { id: made.id } } });
    expect(got).toEqual(made);
    const page = await api.GET('/customers', { params: { query: { limit: 10 } } });
    expect(page.data.map((c) => c.id)).toEqual([made.id]);
  });

  it('throws a SandboxRequestError carrying the HttpError for a 404, and the 400 names the field', async () => {
    const { api } = await sb.partner();
    const missing = await api.GET('/customers/{id}', { params: { path: { id: 'cus_00000000000000000000' } } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SandboxRequestError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', body: { code: 'not_found', message: expect.any(String) }, request: 'GET /customers/cus_00000000000000000000' });
    const invalid = await api.GET('/customers', { params: { query: { limit: 0 } } }).catch((e: unknown) => e as SandboxRequestError);
    expect(invalid).toMatchObject({ status: 400, body: { validation_errors: { limit: expect.any(String) } } });
    expect((invalid as Error).message).toMatch(/^GET \/customers\?limit=0 answered 400 bad_request: .+ \(limit .+\)$/);
  });

  it('raw answers { data, error, response } for every status without throwing', async () => {
    const { api } = await sb.partner();
    const { data, error, response } = await api.raw.GET('/customers/{id}', { params: { path: { id: 'cus_00000000000000000000' } } });
    expect([data, response.status, error?.code]).toEqual([undefined, 404, 'not_found']);
  });

  it('names the URL and the cause when nothing answers', async () => {
    const dead = openConnection({ origin: `http://127.0.0.1:${await closedPort()}`, environment: 'production', credentials: sb.credentials.production, fetch });
    await expect(dead.api.GET('/customers')).rejects.toThrow(`POST ${dead.url}/oauth/token: no answer from the sandbox (ECONNREFUSED)`);
  });
});

describe('api: the access token', () => {
  it('asks for one token and reuses it while it lives', async () => {
    const made = await sb.partner();
    const counted = countingFetch();
    const conn = openConnection({ origin: sb.url, environment: 'production', credentials: made.credentials.production, fetch: counted.fetch });
    await Promise.all([conn.api.GET('/customers'), conn.api.GET('/customers'), conn.api.GET('/invoices')]);
    await conn.api.GET('/customers');
    expect(counted.sent.filter((s) => s === 'POST /oauth/token')).toHaveLength(1);
  });

  it('renews it before expires_in runs out (real time, moved by the test)', async () => {
    const made = await sb.partner();
    const counted = countingFetch();
    let now = Date.now();
    const conn = openConnection({ origin: sb.url, environment: 'production', credentials: made.credentials.production, fetch: counted.fetch, now: () => now });
    const first = await conn.token();
    now += 3600_000 - 61_000; // more than a minute before expiry: still the same
    expect(await conn.token()).toBe(first);
    now += 2_000; // within the last minute: a new one, before any request is refused
    await conn.api.GET('/customers');
    expect(counted.sent).toEqual(['POST /oauth/token', 'POST /oauth/token', 'GET /customers']);
    expect(await conn.token()).not.toBe(first);
  });

  it('after tokens are expired through the control plane, the next call gets a new token and succeeds', async () => {
    const made = await sb.partner();
    const counted = countingFetch();
    const conn = openConnection({ origin: sb.url, environment: 'production', credentials: made.credentials.production, fetch: counted.fetch });
    const before = await conn.token();
    await conn.control.tokens.expire();
    const page = await conn.api.GET('/customers');
    expect(page.data).toEqual([]);
    expect(await conn.token()).not.toBe(before);
    // The client dropped its own token with the others: a new one, and no refused request.
    expect(counted.sent.slice(-3)).toEqual(['POST /_sandbox/tokens/expire', 'POST /oauth/token', 'GET /customers']);
  });

  it('a token refused with 401 (expired by someone else) is dropped, and the request sent once more with a new one', async () => {
    const made = await sb.partner();
    const counted = countingFetch();
    const conn = openConnection({ origin: sb.url, environment: 'production', credentials: made.credentials.production, fetch: counted.fetch });
    const other = openConnection({ origin: sb.url, environment: 'production', credentials: made.credentials.production, fetch });
    const before = await conn.token();
    await other.control.tokens.expire();
    expect((await conn.api.GET('/customers')).data).toEqual([]);
    expect(await conn.token()).not.toBe(before);
    expect(counted.sent.slice(-3)).toEqual(['GET /customers', 'POST /oauth/token', 'GET /customers']);
    // The refused request is in the journal, then the retried one.
    expect((await conn.control.journal({ path: '/customers' })).map((entry) => entry.status)).toEqual([200, 401]);
  });

  it('a refused key is a SandboxRequestError from the token endpoint, not a retry loop', async () => {
    const counted = countingFetch();
    const conn = openConnection({ origin: sb.url, environment: 'production', credentials: { client_id: 'sandbox_client_id', client_secret: 'wrong' }, fetch: counted.fetch });
    await expect(conn.api.GET('/customers')).rejects.toMatchObject({ status: 403, code: 'invalid_client', request: 'POST /oauth/token (client_id sandbox_client_id)' });
    expect(counted.sent).toEqual(['POST /oauth/token']);
  });
});

describe('connect(): a sandbox already running', () => {
  it('gives the interface startSandbox() gives, for the default partner by default', async () => {
    const conn = await connect({ baseUrl: sb.url });
    expect([conn.url, conn.apiUrl, conn.environment, conn.clientId]).toEqual([sb.url, sb.url, 'production', 'sandbox_client_id']);
    const made = await conn.api.POST('/customers', { body: { name: 'Seen By Both' } });
    expect((await sb.api.GET('/customers/{id}', { params: { path: { id: made.id } } })).name).toBe('Seen By Both');
    await conn.close(); // holds nothing: the sandbox keeps running
    expect((await sb.control.health()).status).toBe('ok');
    await sb.control.reset();
  });

  it("finds a demo key's environment, and acts on that account", async () => {
    const made = await sb.partner();
    const conn = await connect({ baseUrl: `${sb.url}/`, clientId: made.credentials.demo.client_id, clientSecret: made.credentials.demo.client_secret });
    expect([conn.environment, conn.apiUrl]).toEqual(['demo', `${sb.url}/demo`]);
    await conn.api.POST('/customers', { body: { name: 'Demo Only' } });
    expect((await made.api.GET('/customers')).data).toEqual([]);
    expect((await conn.api.GET('/customers')).data.map((c) => c.name)).toEqual(['Demo Only']);
  });

  it('fails at once, with a clear message, for a URL with a path, nothing listening, or a wrong secret', async () => {
    await expect(connect({ baseUrl: `${sb.url}/v1` })).rejects.toThrow(/baseUrl is the sandbox's origin .* got the path \/v1/);
    await expect(connect({ baseUrl: 'ftp://example' })).rejects.toThrow(/baseUrl must be an http or https URL/);
    const nobody = `http://127.0.0.1:${await closedPort()}`;
    await expect(connect({ baseUrl: nobody })).rejects.toThrow(`GET ${nobody}/_sandbox/health: no answer from the sandbox (ECONNREFUSED)`);
    await expect(connect({ baseUrl: sb.url, clientSecret: 'wrong' })).rejects.toMatchObject({ status: 403, code: 'invalid_client', request: 'POST /oauth/token (client_id sandbox_client_id)' });
  });

  it('sends the admin token to the control plane when the sandbox has one, and is refused without it', async () => {
    const guarded = await startSandbox({ port: 0, rateLimit: 0, adminToken: 'admin-s3cret', logLevel: 'silent' });
    try {
      expect((await guarded.control.clock.advance('1h')).offset_seconds).toBeGreaterThan(3599);
      const partner = await guarded.partner({ name: 'Guarded Co' });
      expect(partner.name).toBe('Guarded Co');
      const withToken = await connect({ baseUrl: guarded.url, adminToken: 'admin-s3cret' });
      await withToken.control.reset();
      const without = await connect({ baseUrl: guarded.url }).catch((e: unknown) => e);
      expect(without).toMatchObject({ status: 401, request: 'GET /_sandbox/health' });
    } finally {
      await guarded.close();
    }
  });
});

describe('control: the typed control plane', () => {
  let p: SandboxConnection;
  beforeAll(async () => {
    p = await sb.partner({ name: 'control tests' });
  });

  it("clock.advance('31d') moves this account's clock 31 days, and only this account's", async () => {
    const before = await p.control.clock.now();
    const moved = await p.control.clock.advance('31d');
    // Offsets are real numbers (real time moves on between the calls): 31 days, give or take a second.
    expect(Math.abs(moved.offset_seconds - before.offset_seconds - 31 * 86_400)).toBeLessThan(1);
    expect(Math.abs(Date.parse(moved.now) - Date.parse(before.now) - 31 * 86_400_000)).toBeLessThan(2_000);
    expect(Math.abs((await sb.control.clock.now()).offset_seconds)).toBeLessThan(60);
    const to = new Date(Date.parse(moved.now) + 86_400_000);
    expect(Date.parse((await p.control.clock.advanceTo(to)).now)).toBe(to.getTime());
  });

  it('refuses a duration that is not one before sending anything', async () => {
    const counted = countingFetch();
    const conn = openConnection({ origin: sb.url, environment: 'production', credentials: sb.credentials.production, fetch: counted.fetch });
    expect(() => conn.control.clock.advance('31 days')).toThrow(DurationError);
    expect(() => conn.control.clock.advance(0)).toThrow(/does not move the clock forward/);
    expect(counted.sent).toEqual([]);
  });

  it('trigger fires a typed event that events.list and the receiver see', async () => {
    const receiver = await startWebhookReceiver();
    try {
      await p.api.POST('/webhooks', { body: { endpoint_url: `${receiver.url}/hooks`, topic: 'customer_created' } });
      const customer = await p.api.POST('/customers', { body: { name: 'Trigger Co' } });
      const event = await p.control.trigger('customer_created', { entityId: customer.id });
      expect(event).toMatchObject({ topic: 'customer_created', entity_id: customer.id, data: { name: 'Trigger Co' } });
      const listed = await p.control.events.list({ topic: 'customer_created', entity_id: customer.id });
      expect(listed.data.map((e) => e.topic)).toEqual(['customer_created', 'customer_created']);
      const delivered = await receiver.waitFor('customer_created', { count: 2 });
      expect(delivered.data.name).toBe('Trigger Co');
      const attempts = await p.control.webhooks.deliveries({ topic: 'customer_created' });
      expect(attempts.map((a) => a.status_code)).toEqual([200, 200]);
    } finally {
      await receiver.close();
    }
  });

  it('loads scenarios as objects or YAML text, lists, removes and clears them', async () => {
    const q = await sb.partner();
    const loaded = await q.control.scenarios.load({ name: 'throttled', rules: [{ match: { operation: 'listCustomers' }, respond: { status: 429 } }] });
    await expect(q.api.GET('/customers')).rejects.toMatchObject({ status: 429 });
    await q.control.scenarios.remove(loaded.id);
    expect((await q.api.GET('/customers')).data).toEqual([]);
    await q.control.scenarios.load('name: from yaml\nrules:\n  - match: { operation: listInvoices }\n    respond: { status: 503 }\n');
    await q.control.scenarios.load('{"name":"from json","rules":[{"match":{"operation":"listVendors"},"respond":{"status":500}}]}');
    expect((await q.control.scenarios.list()).map((s) => s.name)).toEqual(['from yaml', 'from json']);
    expect(await q.control.scenarios.clear()).toBe(2);
    await expect(q.control.scenarios.load('name: [unclosed')).rejects.toMatchObject({ status: 400 });
  });

  it('reset empties this account only; the journal lists its requests', async () => {
    const a = await sb.partner();
    const b = await sb.partner();
    await a.api.POST('/customers', { body: { name: 'A' } });
    await b.api.POST('/customers', { body: { name: 'B' } });
    expect((await a.control.journal({ path: '/customers' })).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['POST /customers 201']);
    await a.control.reset();
    expect((await a.api.GET('/customers')).data).toEqual([]);
    expect((await b.api.GET('/customers')).data.map((c) => c.name)).toEqual(['B']);
  });

  it('saves this account as a snapshot and restores it, leaving other accounts alone', async () => {
    const q = await sb.partner();
    const other = await sb.partner();
    await q.api.POST('/customers', { body: { name: 'Before' } });
    const saved = await q.control.snapshots.save('client-test');
    expect(saved.counts.customers).toBe(1);
    await q.api.POST('/customers', { body: { name: 'After' } });
    await other.api.POST('/customers', { body: { name: 'Elsewhere' } });
    await q.control.snapshots.restore('client-test');
    expect((await q.api.GET('/customers')).data.map((c) => c.name)).toEqual(['Before']);
    expect((await other.api.GET('/customers')).data.map((c) => c.name)).toEqual(['Elsewhere']);
    expect((await q.control.snapshots.list()).map((snapshot) => snapshot.name)).toEqual(['client-test']);
    await q.control.snapshots.remove('client-test');
    await expect(q.control.snapshots.restore('client-test')).rejects.toMatchObject({ status: 404 });
  });

  it('pays an invoice as its customer would; the untyped paths are there too', async () => {
    const q = await sb.partner();
    const customer = await q.api.POST('/customers', { body: { name: 'Payer', email: 'ap@payer.test' } });
    await q.api.POST('/customers/{id}/payment-methods/card', { params: { path: { id: customer.id } }, body: { card_provider_token: 'tok_visa' } });
    const invoice = await q.api.POST('/invoices', { body: { customer_id: customer.id, exclude_from_autopay: true, line_items: [{ description: 'Plan', amount: 100 }] } });
    const payment = await q.control.invoices.pay(invoice.id);
    expect([payment.status, payment.invoice_id]).toEqual(['pending', invoice.id]);
    await q.control.clock.advance('2h'); // a card payment settles within the hour
    expect((await q.api.GET('/invoices/{id}', { params: { path: { id: invoice.id } } })).status).toBe('PAID');
    expect((await q.control.events.list({ entity_id: invoice.id, topic: 'invoice_paid' })).data).toHaveLength(1);
    const accounts = await q.control.GET('/_sandbox/accounts');
    expect(accounts.data.length).toBeGreaterThan(1);
  });
});

describe('partner(): a fresh partner per test', () => {
  it('has its own keys and empty accounts, and its own rate limit', async () => {
    const a = await sb.partner({ name: 'Isolated A' });
    const b = await sb.partner();
    expect(a.name).toBe('Isolated A');
    expect([a.clientId, a.credentials.production.client_id, a.environment]).toEqual([a.credentials.production.client_id, expect.stringMatching(/^ck_/), 'production']);
    await a.api.POST('/customers', { body: { name: 'Only A' } });
    expect((await b.api.GET('/customers')).data).toEqual([]);
    expect((await sb.api.GET('/customers', { params: { query: { limit: 100 } } })).data.map((c) => c.name)).not.toContain('Only A');
    // One request a second for a partner, its token request included: the call right after it is a 429.
    const slow = await sb.partner({ rateLimit: 1 });
    await expect(slow.api.GET('/customers')).rejects.toMatchObject({ status: 429, code: 'rate_limit_exceeded', message: expect.stringContaining('the limit is 1 requests per second') });
    const unlimited = await sb.partner({ rateLimit: 0 });
    expect(await Promise.all(Array.from({ length: 20 }, () => unlimited.api.GET('/customers').then((page) => page.data.length)))).toEqual(Array(20).fill(0));
  });

  it('acts on its demo account when asked', async () => {
    const d = await sb.partner({ environment: 'demo' });
    expect([d.environment, d.apiUrl, d.clientId]).toEqual(['demo', `${sb.url}/demo`, d.credentials.demo.client_id]);
    await d.api.POST('/customers', { body: { name: 'Demo Co' } });
    expect((await d.control.events.list({ topic: 'customer_created' })).data).toHaveLength(1);
  });
});

describe('durations', () => {
  const units = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
  it('a sum of number-unit parts is its seconds (generated)', () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom('s', 'm', 'h', 'd') as fc.Arbitrary<keyof typeof units>), { minLength: 1, maxLength: 4 }),
      (parts) => {
        const text = parts.map(([n, unit]) => `${n}${unit}`).join('');
        const seconds = parts.reduce((sum, [n, unit]) => sum + n * units[unit], 0);
        if (seconds === 0) expect(() => parseDuration(text)).toThrow(DurationError);
        else expect(parseDuration(text)).toBe(seconds);
      },
    ));
  });

  it('anything else is a DurationError naming the input, and the command line turns it into a usage error', () => {
    fc.assert(fc.property(fc.string({ maxLength: 12 }).filter((s) => !/^(\d+[smhd])+$/.test(s)), (text) => {
      expect(() => parseDuration(text)).toThrow(new DurationError(`"${text}" is not a duration: use a number and a unit, e.g. 90s, 15m, 2h, 30d (or 1d12h)`));
    }));
    const cli = (() => {
      try {
        return cliParseDuration('1w');
      } catch (error) {
        return error;
      }
    })();
    expect(cli).toBeInstanceOf(CliError);
    expect(cli).toMatchObject({ exitCode: EXIT.usage, message: expect.stringContaining('"1w" is not a duration') });
    expect(parseDuration(90)).toBe(90);
    for (const bad of [0, -1, Number.NaN, Infinity]) expect(() => parseDuration(bad)).toThrow(DurationError);
  });
});

describe('types (checked by tsc in npm test; the function is never run)', () => {
  // Each @ts-expect-error line must be an error: a typo in a path, a field or a topic fails the build.
  async function typeChecks(conn: SandboxConnection, receiver: WebhookReceiver) {
    // @ts-expect-error an undocumented path
    await conn.api.GET('/customer');
    // @ts-expect-error a path parameter is required
    await conn.api.GET('/customers/{id}');
    // @ts-expect-error a field the create body does not have
    await conn.api.POST('/customers', { body: { name: 'x', nmae: 'y' } });
    const customer = await conn.api.POST('/customers', { body: { name: 'x' } });
    const id: string = customer.id;
    // @ts-expect-error the answer is a Customer, not any
    const wrong: number = customer.name;
    // @ts-expect-error not a topic
    await conn.control.trigger('invoice_payed');
    const paid = await receiver.waitFor('invoice_paid');
    const payment: string = paid.data.payment_id;
    const topic: 'invoice_paid' = paid.topic;
    // @ts-expect-error an invoice_paid delivery's data has no customer name
    const name: string = paid.data.name;
    for (const delivery of receiver.deliveries) if (delivery.topic === 'customer_created') void delivery.data.name;
    const advanced: number = (await conn.control.clock.advance('31d')).ran;
    return [id, wrong, payment, topic, name, advanced];
  }

  it('compiles', () => {
    expect(typeof typeChecks).toBe('function');
  });
});
