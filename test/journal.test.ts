// The request journal: what an integration called, with what, and what it got back; newest first,
// filters, a bounded ring, redaction of secrets, per-account isolation and clearing.
import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from '@jest/globals';
import { keptHeaders, redactHeaders } from '../src/journal/redact.js';
import { setup, type Api, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
let token: string;
let api: Api;

beforeEach(async () => {
  sb = await setup({ seed: 'journal' });
  token = await sb.token();
  api = sb.as(token);
});

function journal(query = '', bearer?: string) {
  const req = sb.http.get(`/_sandbox/requests${query}`);
  return bearer ? req.set('Authorization', `Bearer ${bearer}`) : req;
}

describe('request journal', () => {
  it('lists a request whose JSON body was empty (read as {}), instead of answering 500 to every listing after it', async () => {
    const res = await sb.http.post('/customers/cus_missing/users').set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json').send('');
    expect(res.status).toBe(400);
    const listed = await journal('', token);
    expect(listed.status).toBe(200);
    expect(listed.body.data[0]).toMatchObject({ method: 'POST', path: '/customers/cus_missing/users', status: 400, request: { body: {} } });
  });

  it('records each API request newest first, with request, status and response', async () => {
    const created = await api.post('/customers', { name: 'Acme', email: 'a@acme.test' });
    await api.get(`/customers/${created.body.id}?`);
    await api.get('/customers/cus_missing');
    const res = await journal();
    expect(res.status).toBe(200);
    const [missing, got, post, tokenCall] = res.body.data;
    expect(missing).toMatchObject({ method: 'GET', path: '/customers/cus_missing', operation: 'getCustomer', status: 404, response: { body: { code: 'not_found' } } });
    expect(got).toMatchObject({ method: 'GET', path: `/customers/${created.body.id}`, status: 200, response: { body: { id: created.body.id } } });
    expect(post).toMatchObject({
      method: 'POST', path: '/customers', operation: 'createCustomer', status: 201,
      request: { body: { name: 'Acme', email: 'a@acme.test' }, query: {}, headers: { authorization: '***', 'content-type': 'application/json' } },
      response: { body: created.body },
    });
    expect(post.id).toMatch(/^req_/);
    expect(post.at).toBe('2026-03-02T09:00:00.000Z');
    expect(post.duration_ms).toBeGreaterThanOrEqual(0);
    expect(tokenCall).toMatchObject({ method: 'POST', path: '/oauth/token', operation: 'createToken', status: 200, response: { body: { access_token: '***', token_type: 'Bearer' } } });
    expect(res.body.data).toHaveLength(4);
    // Control-plane calls are not journaled.
    expect((await journal()).body.data).toHaveLength(4);
  });

  it('gives entries ids that follow the seed: the same requests under the same seed, the same ids, read as often as wanted', async () => {
    const run = async (box: TestSandbox) => {
      const as = box.as(await box.token());
      await as.post('/customers', { name: 'Acme' });
      await as.get('/customers');
      return (await box.http.get('/_sandbox/requests')).body.data.map((e: { id: string }) => e.id) as string[];
    };
    const box = await setup({ seed: 'journal' });
    const first = await run(box);
    const again = await run(await setup({ seed: 'journal' }));
    const other = await run(await setup({ seed: 'journal-2' }));
    expect(first).toHaveLength(3);
    expect(new Set(first).size).toBe(3);
    expect(again).toEqual(first);
    expect(other.some((id) => first.includes(id))).toBe(false);
    // Made on first read and kept: a second listing answers the same ids.
    expect((await box.http.get('/_sandbox/requests')).body.data.map((e: { id: string }) => e.id)).toEqual(first);
    // The derivation itself, so that a change of how entries are kept cannot change the ids a seed
    // gives: a SHA-256 of seed|account|journal|n, n counting the account's entries from 1 (the token call).
    const idOf = (n: number) => `req_${createHash('sha256').update(`journal|ptn_default:production|journal|${n}`).digest('hex').slice(0, 20)}`;
    expect(first).toEqual([idOf(3), idOf(2), idOf(1)]);
  });

  it('lists the headers as sent: names lower-case, repeated ones joined, a colon inside a value kept, credentials masked', async () => {
    await sb.http.get('/customers').set('Authorization', `Bearer ${token}`)
      .set('X-Note', 'a: b:c ').set('X-Api-Key', 'key_live_1').set('X-Client-Secret', 'cs_header_1').set('Constructor', 'plain')
      // An array is sent as the header repeated (node's setHeader); superagent's types allow it for Cookie only.
      .set('X-Dup', ['one', 'two'] as unknown as string);
    const [entry] = (await journal()).body.data;
    expect(entry.request.headers).toMatchObject({
      authorization: '***', 'x-note': 'a: b:c', 'x-api-key': '***', 'x-client-secret': '***', constructor: 'plain', 'x-dup': 'one, two',
    });
    expect(JSON.stringify(entry)).not.toContain(token);
    expect(JSON.stringify(entry)).not.toContain('cs_header_1');
  });

  it('keeps a request\'s credentials masked from its arrival: the kept headers text holds no token (secret-named headers are masked when listed)', () => {
    const kept = keptHeaders({ Host: 'h', authorization: `Bearer ${token}`, 'x-api-key': 'key_live_1', 'x-dup': ['1', '2'], 'x-absent': undefined, 'x-client-secret': 'cs_1' });
    expect(kept).toBe('host:h\nauthorization:***\nx-api-key:***\nx-dup:1, 2\nx-client-secret:cs_1');
    expect(redactHeaders(kept)).toEqual({ host: 'h', authorization: '***', 'x-api-key': '***', 'x-dup': '1, 2', 'x-client-secret': '***' });
    expect(redactHeaders('')).toEqual({});
  });

  it('stamps entries with the account clock', async () => {
    await sb.advance(3600 * 24).expect(200);
    await sb.as(token).get('/customers');
    expect((await journal('?limit=1')).body.data[0].at).toBe('2026-03-03T09:00:00.000Z');
  });

  it('filters by method, path (concrete or template, with or without /v1), status and limit', async () => {
    const a = (await api.post('/customers', { name: 'A' })).body.id;
    await api.post('/customers', { name: 'B' });
    await sb.http.get(`/v1/customers/${a}`).set('Authorization', `Bearer ${token}`);
    await api.get('/customers/cus_zzz');
    await api.get('/customers');
    const paths = async (q: string) => (await journal(q)).body.data.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
    expect(await paths('?method=post&path=/customers')).toEqual(['POST /customers', 'POST /customers']);
    expect(await paths('?path=/customers/{id}')).toEqual(['GET /customers/cus_zzz', `GET /v1/customers/${a}`]);
    expect(await paths(`?path=/customers/${a}`)).toEqual([`GET /v1/customers/${a}`]);
    expect(await paths(`?path=/v1/customers/${a}`)).toEqual([`GET /v1/customers/${a}`]);
    expect(await paths('?status=404')).toEqual(['GET /customers/cus_zzz']);
    expect(await paths('?limit=2')).toEqual(['GET /customers', 'GET /customers/cus_zzz']);
    expect((await journal('?limit=0')).status).toBe(400);
    expect((await journal('?status=abc')).body.validation_errors).toHaveProperty('status');
  });

  it('masks secrets: Authorization, client and webhook secrets, bank and card numbers, card tokens, cvv', async () => {
    const { client_id, client_secret } = sb.deps.config.credentials.production;
    await sb.http.post('/oauth/token').auth(client_id, client_secret).type('form').send({ grant_type: 'client_credentials' });
    const body = {
      name: 'Secretive',
      client_secret: 'cs_live_1',
      secret_key: 'whsec_1',
      card_provider_token: '{"number_secret":"ev:4242"}',
      cvv: '123',
      cvv_secret: 'ev:cvv',
      us_account_data: { account_number: '000123456789', routing_number: '011000015' },
      bank_account: { account_number: '987654321' },
      nested: [{ card_number: '4242424242424242' }],
    };
    // The request is refused by validation (unknown fields), which is journaled all the same.
    await api.post('/customers', body);
    const text = JSON.stringify((await journal()).body);
    for (const secret of [client_secret, 'cs_live_1', 'whsec_1', 'ev:4242', '"123"', 'ev:cvv', '000123456789', '987654321', '4242424242424242', token]) {
      expect(text).not.toContain(secret);
    }
    const [entry, tokenEntry] = (await journal()).body.data;
    expect(entry.request.body).toMatchObject({
      name: 'Secretive', client_secret: '***', secret_key: '***', card_provider_token: '***', cvv: '***', cvv_secret: '***',
      us_account_data: { account_number: '***', routing_number: '011000015' }, bank_account: { account_number: '***' }, nested: [{ card_number: '***' }],
    });
    expect(tokenEntry.request.headers.authorization).toBe('***');
    expect(tokenEntry.response.body.access_token).toBe('***');
  });

  it('lists a JSON body written by hand (a byte-order mark, spaces, an escape) parsed and masked', async () => {
    // As a client may send it: the body reader drops the byte-order mark before parsing, as body-parser does.
    const text = '\ufeff{\n  "name" : "Spaced \\u00e9",\n  "client_secret": "cs_spaced_1",\n  "nested": [ { "card_number": "4242424242424242" } ]\n}\n';
    const res = await sb.http.post('/customers').set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json').send(text);
    expect(res.status).toBe(400);
    const listed = (await journal()).body;
    expect(JSON.stringify(listed)).not.toContain('cs_spaced_1');
    expect(JSON.stringify(listed)).not.toContain('4242424242424242');
    expect(listed.data[0].request.body).toEqual({ name: 'Spaced \u00e9', client_secret: '***', nested: [{ card_number: '***' }] });
  });

  it('leaves out one User-Agent before the limit applies (the command line\'s own token requests), whether the request was kept small or large', async () => {
    const cli = 'billing-sandbox-cli/0.1.0';
    const tokenAs = (agent: string) => sb.http.post('/oauth/token').set('User-Agent', agent).auth('sandbox_client_id', 'sandbox_client_secret').type('form').send({ grant_type: 'client_credentials' }).expect(200);
    await api.post('/customers', { name: 'First' }).set('User-Agent', 'partner-app/1').expect(201);
    await tokenAs(cli);
    // A large body is copied at once (the other way a request is kept).
    await api.post('/customers', { name: 'x'.repeat(300_000) }).set('User-Agent', cli);
    await api.get('/customers').set('User-Agent', 'partner-app/1').expect(200);
    for (let i = 0; i < 3; i++) await tokenAs(cli);
    const rows = async (q: string) => (await journal(q).expect(200)).body.data.map((e: { method: string; path: string; request: { headers: Record<string, string> } }) => `${e.method} ${e.path} ${e.request.headers['user-agent'] ?? '-'}`);
    expect(await rows('?limit=2')).toEqual([`POST /oauth/token ${cli}`, `POST /oauth/token ${cli}`]);
    expect(await rows(`?limit=2&exclude_user_agent=${encodeURIComponent(cli)}`)).toEqual(['GET /customers partner-app/1', 'POST /customers partner-app/1']);
    // Exactly that agent: a prefix of it is another one.
    expect((await rows('?exclude_user_agent=billing-sandbox-cli')).length).toBe(8);
    expect((await journal('?exclude_user_agent=')).status).toBe(400);
  });

  it('shortens long strings such as base64 documents', async () => {
    await api.post('/customers', { name: 'x'.repeat(5000) });
    const [entry] = (await journal()).body.data;
    expect(entry.request.body.name.length).toBeLessThan(200);
    expect(entry.request.body.name).toMatch(/5000 characters/);
  });

  it('keeps only the newest journalSize entries', async () => {
    const box = await setup({ journalSize: 3 });
    const t = await box.token();
    for (const name of ['a', 'b', 'c', 'd']) await box.as(t).post('/customers', { name });
    const data = (await box.http.get('/_sandbox/requests')).body.data;
    expect(data.map((e: { request: { body: { name: string } } }) => e.request.body.name)).toEqual(['d', 'c', 'b']);
  });

  it('is per account, and DELETE clears it', async () => {
    const demo = await sb.token('demo');
    await sb.as(demo, 'demo').get('/customers');
    await api.get('/customers');
    expect((await journal('', demo)).body.data.map((e: { path: string }) => e.path)).toEqual(['/demo/customers', '/demo/oauth/token']);
    expect((await sb.http.delete('/_sandbox/requests')).body).toEqual({ deleted: 2 });
    expect((await journal()).body.data).toEqual([]);
    expect((await journal('', demo)).body.data).toHaveLength(2);
    await api.get('/customers');
    const [entry] = (await journal()).body.data;
    expect(entry.path).toBe('/customers');
  });

  it('records answers given by scenarios, Prefer and the rate limiter, and dropped connections as status 0', async () => {
    await api.get('/customers').set('Prefer', 'code=503');
    await sb.http.post('/_sandbox/scenarios').send({ name: 'r', rules: [{ match: { operation: 'createCustomer' }, nth: 1, drop: 'reset' }] }).expect(201);
    await api.post('/customers', { name: 'Lost' }).then(() => undefined, () => undefined);
    const data = (await journal()).body.data;
    expect(data[0]).toMatchObject({ method: 'POST', status: 0, response: { body: null }, request: { body: { name: 'Lost' } } });
    expect(data[1]).toMatchObject({ method: 'GET', status: 503, response: { body: { code: 'service_unavailable' } } });
    // ?status=0 finds the dropped connections (and only them); 1-99 is no status at all.
    const dropped = await journal('?status=0');
    expect(dropped.status).toBe(200);
    expect(dropped.body.data).toEqual([data[0]]);
    for (const bad of ['?status=50', '?status=-1', '?status=600']) {
      const res = await journal(bad);
      expect(res.status).toBe(400);
      expect(res.body.validation_errors).toHaveProperty('status');
    }

    const box = await setup({ rateLimit: 1 });
    const t = await box.token();
    box.time.now += 2000;
    await box.as(t).get('/customers');
    const limited = await box.as(t).get('/customers');
    expect(limited.status).toBe(429);
    const entries = (await box.http.get('/_sandbox/requests?status=429')).body.data;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ path: '/customers', operation: 'listCustomers', status: 429 });
  });

  it('does not record requests whose account is unknown', async () => {
    await sb.http.get('/customers').set('Authorization', 'Bearer forged.token.value');
    await sb.http.get('/customers');
    expect((await journal()).body.data.map((e: { path: string }) => e.path)).toEqual(['/oauth/token']);
  });

  it('an account reset empties its journal', async () => {
    await api.get('/customers');
    await sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${token}`).expect(200);
    expect((await journal()).body.data).toEqual([]);
  });
});
