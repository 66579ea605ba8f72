// Scenario documents through the control plane and --scenario: loading (JSON and YAML), refusal of
// bad documents, matching, every counter and action, account scoping, and seeded replay.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from '@jest/globals';
import { createDeps } from '../src/app.js';
import { eventLog } from '../src/events/events.js';
import { deliveryDuplicates, deliveryFault } from '../src/faults.js';
import { LIMITS } from '../src/limits.js';
import { loadDocument } from '../src/http/openapi.js';
import { SCENARIO_SLEEP } from '../src/scenarios/intercept.js';
import { setup, type Api, type TestSandbox } from './helpers.js';
import { webhookSandbox } from './webhooks-support.js';

let sb: TestSandbox;
let token: string;
let api: Api;

beforeEach(async () => {
  sb = await setup({ seed: 'scenarios' });
  token = await sb.token();
  api = sb.as(token);
});

function load(doc: unknown, bearer?: string) {
  const req = sb.http.post('/_sandbox/scenarios').send(doc as object);
  return bearer ? req.set('Authorization', `Bearer ${bearer}`) : req;
}

function loadYaml(text: string) {
  return sb.http.post('/_sandbox/scenarios').set('Content-Type', 'application/yaml').send(text);
}

async function customerCount(): Promise<number> {
  return (await api.get('/customers')).body.data.length;
}

function customerEvents(): number {
  return [...eventLog(sb.deps.store.account('ptn_default', 'production')).values()].length;
}

async function statuses(n: number, call: () => PromiseLike<{ status: number }>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call()).status);
  return out;
}

describe('loading scenario documents', () => {
  it('loads a JSON document, lists it, and applies it to the account with times', async () => {
    const res = await load({
      name: 'approval outage',
      description: 'Customer creation is refused twice, then works.',
      rules: [{ match: { method: 'POST', path: '/customers' }, times: 2, respond: { status: 422, code: 'invalid_state', message: 'Busy, try again' } }],
    });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^scn_/);
    const listed = await sb.http.get('/_sandbox/scenarios');
    expect(listed.body.data).toEqual([
      { id: res.body.id, name: 'approval outage', description: 'Customer creation is refused twice, then works.', scope: 'account', rules_count: 1, loaded_at: expect.any(String), counters: [{ matched: 0, fired: 0 }] },
    ]);
    const first = await api.post('/customers', { name: 'A' });
    expect(first.status).toBe(422);
    expect(first.body).toEqual({ code: 'invalid_state', message: 'Busy, try again', validation_errors: {} });
    expect((await api.post('/customers', { name: 'A' })).status).toBe(422);
    expect(await customerCount()).toBe(0);
    expect(customerEvents()).toBe(0);
    expect((await api.post('/customers', { name: 'A' })).status).toBe(201);
    expect(await customerCount()).toBe(1);
  });

  it('loads a YAML document (application/yaml) and fires on the nth match only', async () => {
    const res = await loadYaml([
      'name: invoice list throttled',
      'rules:',
      '  - match: { operation: listCustomers }',
      '    nth: 3',
      '    respond: { status: 429 }',
    ].join('\n'));
    expect(res.status).toBe(201);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await api.get('/customers'));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 429, 200, 200]);
    expect(answers[2].headers['retry-after']).toBe('1');
    expect(answers[2].body).toMatchObject({ code: 'rate_limit_exceeded', validation_errors: {} });
  });

  it.each([
    ['flow mappings', `{"a":`.repeat(5_000) + '1' + '}'.repeat(5_000)],
    ['flow sequences', `rules: ${'['.repeat(20_000)}${']'.repeat(20_000)}`],
    ['block mappings', Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1'],
    ['sequence dashes', `rules:\n  ${'- '.repeat(100)}x`],
  ])('refuses a text document of %s nested past LIMITS.valueDepth before parsing it, and loads nothing', async (_what, text) => {
    // Found by the fuzzer: thousands of levels ran the YAML parser out of stack inside V8's regular
    // expression compiler, a fatal error that ended the process.
    const res = await loadYaml(text);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'bad_request', message: expect.any(String), validation_errors: { body: 'nests deeper than 64 levels (counted on brackets, indentation and sequence dashes)' } });
    expect((await sb.http.get('/_sandbox/scenarios')).body.data).toEqual([]);
  });

  it('loads a text document nested up to the limit', async () => {
    const deepBody = `${'{"a":'.repeat(56)}1${'}'.repeat(56)}`;
    const res = await loadYaml(['name: deep body', 'rules:', '  - match: { operation: listCustomers }', `    respond: { status: 418, body: ${deepBody} }`].join('\n'));
    expect(res.status).toBe(201);
    expect((await api.get('/customers')).status).toBe(418);
  });

  it('fires from the nth match onwards, bounded by times', async () => {
    await load({ name: 'late failures', rules: [{ match: { operation: 'listCustomers' }, from: 2, times: 2, respond: { status: 503 } }] }).expect(201);
    expect(await statuses(5, () => api.get('/customers'))).toEqual([200, 503, 503, 200, 200]);
  });

  it('fires on every match when no counter is given, and answers a given body as written', async () => {
    await load({ name: 'teapot', rules: [{ match: { operation: 'getCustomer' }, respond: { status: 418, body: { hello: 'world' }, headers: { 'X-Scenario': 'teapot' } } }] }).expect(201);
    const res = await api.get('/customers/cus_nope');
    expect(res.status).toBe(418);
    expect(res.body).toEqual({ hello: 'world' });
    expect(res.headers['x-scenario']).toBe('teapot');
    expect((await api.get('/customers/cus_other')).status).toBe(418);
  });

  it('answers the documented example for a success status without running the handler', async () => {
    await load({ name: 'fake create', rules: [{ match: { operation: 'createCustomer' }, respond: { status: 201 } }] }).expect(201);
    const res = await api.post('/customers', { name: 'Ghost' });
    expect(res.status).toBe(201);
    expect(res.body.id).toEqual(expect.any(String));
    expect(res.body.name).not.toBe('Ghost');
    await sb.http.delete('/_sandbox/scenarios').expect(200);
    expect(await customerCount()).toBe(0);
  });

  const bad: Array<[string, unknown, string]> = [
    ['an unknown operation', { name: 'x', rules: [{ match: { operation: 'listUnicorns' }, respond: { status: 500 } }] }, 'rules[0].match.operation'],
    ['an unknown topic', { name: 'x', rules: [{ match: { topic: 'unicorn_born' }, fail_delivery: { status: 500 } }] }, 'rules[0].match.topic'],
    ['an unknown action', { name: 'x', rules: [{ match: { method: 'GET' }, explode: true }] }, 'rules[0].explode'],
    ['no action', { name: 'x', rules: [{ match: { method: 'GET' } }] }, 'rules[0]'],
    ['two actions', { name: 'x', rules: [{ match: { method: 'GET' }, delay_ms: 10, drop: 'reset' }] }, 'rules[0]'],
    ['a negative counter', { name: 'x', rules: [{ match: { method: 'GET' }, times: -1, respond: { status: 500 } }] }, 'rules[0].times'],
    ['a zero nth', { name: 'x', rules: [{ match: { method: 'GET' }, nth: 0, respond: { status: 500 } }] }, 'rules[0].nth'],
    ['a probability above 1', { name: 'x', rules: [{ match: { method: 'GET' }, probability: 1.5, respond: { status: 500 } }] }, 'rules[0].probability'],
    ['a negative probability', { name: 'x', rules: [{ match: { method: 'GET' }, probability: -0.1, respond: { status: 500 } }] }, 'rules[0].probability'],
    ['a status out of range', { name: 'x', rules: [{ match: { method: 'GET' }, respond: { status: 99 } }] }, 'rules[0].respond.status'],
    ['an unknown drop mode', { name: 'x', rules: [{ match: { method: 'GET' }, drop: 'explode' }] }, 'rules[0].drop'],
    ['fail_delivery without a topic', { name: 'x', rules: [{ match: { method: 'GET' }, fail_delivery: { status: 503 } }] }, 'rules[0].fail_delivery'],
    ['a topic rule that responds', { name: 'x', rules: [{ match: { topic: 'invoice_paid' }, respond: { status: 503 } }] }, 'rules[0].match.topic'],
    ['nth with from', { name: 'x', rules: [{ match: { method: 'GET' }, nth: 2, from: 3, respond: { status: 503 } }] }, 'rules[0].from'],
    ['a missing name', { rules: [{ match: { method: 'GET' }, respond: { status: 503 } }] }, 'name'],
    ['no rules', { name: 'x', rules: [] }, 'rules'],
    ['an unknown method', { name: 'x', rules: [{ match: { method: 'FETCH' }, respond: { status: 503 } }] }, 'rules[0].match.method'],
    ['a redirect status', { name: 'x', rules: [{ match: { method: 'GET' }, respond: { status: 302 } }] }, 'rules[0].respond.status'],
    ['a success status the named operation does not document', { name: 'x', rules: [{ match: { operation: 'createCustomer' }, respond: { status: 200 } }] }, 'rules[0].respond.status'],
    ['an error status the named operation does not document', { name: 'x', rules: [{ match: { operation: 'createCustomer' }, respond: { status: 404 } }] }, 'rules[0].respond.status'],
    ['a code the API never sends (HttpError.code lists them)', { name: 'x', rules: [{ match: { method: 'GET' }, respond: { status: 503, code: 'teapot' } }] }, 'rules[0].respond.code'],
    ['a header name that is not an RFC 7230 token', { name: 'x', rules: [{ match: { method: 'GET' }, respond: { status: 503, headers: { 'Bad Header': 'x' } } }] }, 'rules[0].respond.headers.Bad Header'],
    ['a header value with CR LF', { name: 'x', rules: [{ match: { method: 'GET' }, respond: { status: 503, headers: { 'X-Evil': 'a\r\nSet-Cookie: session=1' } } }] }, 'rules[0].respond.headers.X-Evil'],
    ['a header value with a control character', { name: 'x', rules: [{ match: { method: 'GET' }, respond: { status: 503, headers: { 'X-Bell': 'a\u0007' } } }] }, 'rules[0].respond.headers.X-Bell'],
    ['an empty topic list', { name: 'x', rules: [{ match: { topic: [] }, fail_delivery: { status: 503 } }] }, 'rules[0].match.topic'],
    ['a topic list with an unknown topic', { name: 'x', rules: [{ match: { topic: ['invoice_paid', 'unicorn_born'] }, fail_delivery: { status: 503 } }] }, 'rules[0].match.topic'],
    ['duplicate_delivery of 0 copies', { name: 'x', rules: [{ match: { topic: 'invoice_paid' }, duplicate_delivery: { count: 0 } }] }, 'rules[0].duplicate_delivery.count'],
    ['duplicate_delivery past the cap', { name: 'x', rules: [{ match: { topic: 'invoice_paid' }, duplicate_delivery: { count: LIMITS.webhookDuplicateCopies + 1 } }] }, 'rules[0].duplicate_delivery.count'],
    ['duplicate_delivery of a fraction', { name: 'x', rules: [{ match: { topic: 'invoice_paid' }, duplicate_delivery: { count: 1.5 } }] }, 'rules[0].duplicate_delivery.count'],
    ['duplicate_delivery without a count', { name: 'x', rules: [{ match: { topic: 'invoice_paid' }, duplicate_delivery: {} }] }, 'rules[0].duplicate_delivery.count'],
    ['duplicate_delivery with an unknown field', { name: 'x', rules: [{ match: { topic: 'invoice_paid' }, duplicate_delivery: { count: 1, delay_ms: 5 } }] }, 'rules[0].duplicate_delivery.delay_ms'],
    ['duplicate_delivery without a topic', { name: 'x', rules: [{ match: { operation: 'listCustomers' }, duplicate_delivery: { count: 1 } }] }, 'rules[0].duplicate_delivery'],
    ['timeout_after_delivery: false', { name: 'x', rules: [{ match: { topic: 'invoice_paid' }, timeout_after_delivery: false }] }, 'rules[0].timeout_after_delivery'],
    ['timeout_after_delivery without a topic', { name: 'x', rules: [{ match: {}, timeout_after_delivery: true }] }, 'rules[0].timeout_after_delivery'],
    ['wrong_secret as a string', { name: 'x', rules: [{ match: { topic: '*' }, wrong_secret: 'yes' }] }, 'rules[0].wrong_secret'],
    ['wrong_secret without a topic', { name: 'x', rules: [{ match: { method: 'POST' }, wrong_secret: true }] }, 'rules[0].wrong_secret'],
    ['two delivery actions', { name: 'x', rules: [{ match: { topic: '*' }, wrong_secret: true, duplicate_delivery: { count: 1 } }] }, 'rules[0]'],
  ];
  it.each(bad)('refuses %s with 400 naming the field, and loads nothing', async (_what, doc, field) => {
    const res = await load(doc);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
    expect(res.body.message).toEqual(expect.stringContaining('scenario'));
    expect(Object.keys(res.body.validation_errors)).toContain(field);
    expect((await sb.http.get('/_sandbox/scenarios')).body.data).toEqual([]);
  });

  it('words the respond refusals for a person: redirect, header name and value, undocumented success', async () => {
    const res = await load({ name: 'x', rules: [
      { match: { method: 'GET' }, respond: { status: 301 } },
      { match: { method: 'GET' }, respond: { status: 500, headers: { 'X(y)': 'v', 'X-Ok': 'tab\tand space are fine', 'X-Nl': 'a\nb' } } },
      { match: { topic: 'nope' }, fail_delivery: { status: 503 } },
    ] });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({
      'rules[0].respond.status': expect.stringMatching(/redirect/),
      'rules[1].respond.headers.X(y)': expect.stringMatching(/RFC 7230 token/),
      'rules[1].respond.headers.X-Nl': expect.stringMatching(/no CR, LF/),
      'rules[2].match.topic': expect.stringMatching(/webhook topic, "\*"/),
    });
    // The operation checks run on a document that fits the schema.
    const undocumented = await load({ name: 'x', rules: [{ match: { operation: 'createCustomer' }, respond: { status: 204 } }] });
    expect(undocumented.body.validation_errors).toEqual({
      'rules[0].respond.status': '204 is not an answer createCustomer documents (it documents 201, 400, 401, 403, 409, 413, 422, 429, 500, 503): use one of those, or give a respond.body',
    });
  });

  it('loads a success status without a body when the named operation documents it, and a given body for any status', async () => {
    await load({ name: 'ok', rules: [
      { match: { operation: 'createCustomer' }, nth: 1, respond: { status: 201, headers: { 'X-Scenario': 'fake-create' } } },
      { match: { operation: 'createCustomer' }, nth: 2, respond: { status: 202, body: { queued: true } } },
    ] }).expect(201);
    const first = await api.post('/customers', { name: 'A' });
    expect([first.status, first.headers['x-scenario']]).toEqual([201, 'fake-create']);
    const second = await api.post('/customers', { name: 'B' });
    expect([second.status, second.body]).toEqual([202, { queued: true }]);
    expect(await customerCount()).toBe(0);
  });

  it('answers 400 naming the rule, as Prefer does, when a rule without an operation gives a success status the request\'s operation does not document', async () => {
    const id = (await load({ name: 'ok everywhere', rules: [{ match: { method: 'POST' }, respond: { status: 200 } }] })).body.id;
    const res = await api.post('/customers', { name: 'Nope' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'bad_request',
      message: `Scenario ${id} rule 0 answers 200, which createCustomer does not document.`,
      validation_errors: { 'rules[0].respond.status': expect.stringMatching(/^200 is not an answer createCustomer documents \(it documents 201, 400, /) },
    });
    expect(await customerCount()).toBe(0);
    expect(customerEvents()).toBe(0);
    // An operation that documents 200 gets its documented example.
    const listed = await api.post(`/customers/cus_x/payment-methods/pm_x/fees`, { amount: '10' });
    expect(listed.status).toBe(200);
  });

  it('holds at most 100 documents per account: the 101st answers 422 and loads nothing', async () => {
    for (let i = 0; i < 100; i++) await load({ name: `doc ${i}`, rules: [{ match: { operation: 'listCustomers' }, delay_ms: 0 }] }).expect(201);
    const res = await load({ name: 'one too many', rules: [{ match: { operation: 'listCustomers' }, delay_ms: 0 }] });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('limit_reached');
    expect(res.body.validation_errors.body).toBe('this account already holds 100 scenario documents');
    expect((await sb.http.get('/_sandbox/scenarios')).body.data).toHaveLength(100);
  });

  it('refuses a missing body, naming the body', async () => {
    const res = await sb.http.post('/_sandbox/scenarios');
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty('body');
  });

  it('refuses YAML that does not parse, naming the body', async () => {
    const res = await loadYaml('name: [unclosed\nrules: {');
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.body).toMatch(/not valid YAML/);
  });

  it('deletes one scenario, then all of them; an unknown id is a 404', async () => {
    const a = (await load({ name: 'a', rules: [{ match: { operation: 'listCustomers' }, respond: { status: 500 } }] })).body.id;
    await load({ name: 'b', rules: [{ match: { operation: 'getCustomer' }, respond: { status: 500 } }] }).expect(201);
    await load({ name: 'c', rules: [{ match: { operation: 'createCustomer' }, respond: { status: 500 } }] }).expect(201);
    expect((await sb.http.delete(`/_sandbox/scenarios/${a}`)).body).toEqual({ deleted: 1 });
    expect((await api.get('/customers')).status).toBe(200);
    expect((await sb.http.delete(`/_sandbox/scenarios/${a}`)).status).toBe(404);
    expect((await sb.http.get('/_sandbox/scenarios')).body.data.map((s: { name: string }) => s.name)).toEqual(['b', 'c']);
    expect((await sb.http.delete('/_sandbox/scenarios')).body).toEqual({ deleted: 2 });
    expect((await api.post('/customers', { name: 'ok' })).status).toBe(201);
  });
});

describe('matching', () => {
  const cases: Array<[string, object, Array<[string, string, Record<string, string>?]>, number[]]> = [
    ['a path template', { path: '/customers/{customer_id}' }, [['GET', '/customers/cus_1'], ['GET', '/customers'], ['GET', '/v1/customers/cus_2']], [500, 200, 500]],
    ['a concrete path, with or without /v1', { path: '/customers/cus_1' }, [['GET', '/customers/cus_1'], ['GET', '/v1/customers/cus_1'], ['GET', '/customers/cus_2']], [500, 500, 404]],
    ['a method', { method: 'get' }, [['GET', '/customers'], ['POST', '/customers']], [500, 201]],
    ['an operation', { operation: 'createCustomer' }, [['GET', '/customers'], ['POST', '/customers']], [200, 500]],
    ['a header', { header: { 'X-Test-Case': 'fail-me' } }, [['GET', '/customers', { 'x-test-case': 'fail-me' }], ['GET', '/customers', { 'x-test-case': 'other' }], ['GET', '/customers']], [500, 200, 200]],
    ['every criterion at once', { method: 'POST', path: '/customers', header: { 'X-Test-Case': 'a' } }, [['POST', '/customers', { 'X-Test-Case': 'a' }], ['POST', '/customers'], ['GET', '/customers', { 'X-Test-Case': 'a' }]], [500, 201, 200]],
    ['everything (an empty match)', {}, [['GET', '/customers'], ['POST', '/customers']], [500, 500]],
  ];
  it.each(cases)('matches by %s', async (_what, match, requests, expected) => {
    await load({ name: 'm', rules: [{ match, respond: { status: 500 } }] }).expect(201);
    const got: number[] = [];
    for (const [method, path, headers] of requests) {
      const req = method === 'GET' ? sb.http.get(path) : sb.http.post(path).send({ name: 'N' });
      req.set('Authorization', `Bearer ${token}`);
      for (const [name, value] of Object.entries(headers ?? {})) req.set(name, value);
      got.push((await req).status);
    }
    expect(got).toEqual(expected);
  });
});

describe('actions', () => {
  it('delay_ms waits, then the request goes on normally', async () => {
    const waits: number[] = [];
    sb.deps.services.set(SCENARIO_SLEEP, async (ms: number) => { waits.push(ms); });
    await load({ name: 'slow', rules: [{ match: { method: 'POST', path: '/customers' }, delay_ms: 400 }, { match: { method: 'POST' }, delay_ms: 100 }] }).expect(201);
    const res = await api.post('/customers', { name: 'Slow Co' });
    expect(res.status).toBe(201);
    expect(waits).toEqual([500]);
    expect((await api.get(`/customers/${res.body.id}`)).body.name).toBe('Slow Co');
  });

  it('delay_ms really delays the answer', async () => {
    await load({ name: 'slow', rules: [{ match: { operation: 'listCustomers' }, delay_ms: 120 }] }).expect(201);
    const started = process.hrtime.bigint();
    expect((await api.get('/customers')).status).toBe(200);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeGreaterThanOrEqual(110);
  });

  it('drop: reset cuts the connection (ECONNRESET) and changes nothing', async () => {
    await load({ name: 'reset', rules: [{ match: { operation: 'createCustomer' }, nth: 1, drop: 'reset' }] }).expect(201);
    const error = await api.post('/customers', { name: 'Lost' }).then(() => undefined, (e: NodeJS.ErrnoException) => e);
    expect(error?.code).toBe('ECONNRESET');
    expect(await customerCount()).toBe(0);
    expect(customerEvents()).toBe(0);
    expect((await api.post('/customers', { name: 'Kept' })).status).toBe(201);
  });

  it('drop: empty closes the connection without a response', async () => {
    await load({ name: 'empty', rules: [{ match: { operation: 'createCustomer' }, times: 1, drop: 'empty' }] }).expect(201);
    const error = await api.post('/customers', { name: 'Lost' }).then(() => undefined, (e: NodeJS.ErrnoException) => e);
    expect(error).toBeDefined();
    expect(error?.message).toMatch(/socket hang up|ECONNRESET/);
    expect(await customerCount()).toBe(0);
  });

  it('a responding rule never changes state, even for a success status', async () => {
    await load({ name: 'x', rules: [{ match: { operation: 'createCustomer' }, respond: { status: 500, message: 'Database unavailable' } }] }).expect(201);
    const res = await api.post('/customers', { name: 'Nope' });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: 'internal_error', message: 'Database unavailable', validation_errors: {} });
    expect(await customerCount()).toBe(0);
    expect(customerEvents()).toBe(0);
  });

  it('fail_delivery matches every topic with "*" or several with a list, one counter per rule', async () => {
    await load({ name: 'outage', rules: [
      { match: { topic: ['invoice_paid', 'payout_paid'] }, times: 2, fail_delivery: { status: 500 } },
      { match: { topic: '*' }, times: 3, fail_delivery: { status: 503 } },
    ] }).expect(201);
    const account = sb.deps.store.account('ptn_default', 'production');
    const attempt = (topic: string) => deliveryFault(sb.deps, account, { topic, url: 'https://hooks.test/x', event_id: 'evt_1' });
    const topics = ['invoice_paid', 'customer_created', 'payout_paid', 'invoice_paid', 'customer_updated', 'payout_failed'];
    expect(topics.map(attempt)).toEqual([{ status: 500 }, { status: 503 }, { status: 500 }, { status: 503 }, { status: 503 }, undefined]);
    expect((await api.get('/customers')).status).toBe(200);
  });

  it('fail_delivery answers the webhook delivery hook per topic, with counters', async () => {
    await load({ name: 'outage', rules: [
      { match: { topic: 'invoice_paid' }, times: 2, fail_delivery: { status: 503 } },
      { match: { topic: 'payout_paid' }, fail_delivery: { timeout: true } },
    ] }).expect(201);
    const account = sb.deps.store.account('ptn_default', 'production');
    const attempt = (topic: string) => deliveryFault(sb.deps, account, { topic, url: 'https://hooks.test/x', event_id: 'evt_1' });
    expect([attempt('invoice_paid'), attempt('invoice_paid'), attempt('invoice_paid')]).toEqual([{ status: 503 }, { status: 503 }, undefined]);
    expect(attempt('payout_paid')).toEqual({ timeout: true });
    expect(attempt('customer_created')).toBeUndefined();
    // Topic rules never touch API requests.
    expect((await api.get('/customers')).status).toBe(200);
  });
});

describe('the delivery drills in the engine', () => {
  it('attempts meet fail_delivery, timeout_after_delivery and wrong_secret (the first that fires decides); duplicate rules count deliveries apart', async () => {
    await load({ name: 'drills', rules: [
      { match: { topic: 'invoice_paid' }, nth: 1, wrong_secret: true },
      { match: { topic: 'invoice_paid' }, times: 2, timeout_after_delivery: true },
      { match: { topic: '*' }, from: 4, fail_delivery: { status: 502 } },
      { match: { topic: ['invoice_paid', 'payout_paid'] }, nth: 2, duplicate_delivery: { count: 3 } },
    ] }).expect(201);
    const account = sb.deps.store.account('ptn_default', 'production');
    const facts = (topic: string) => ({ topic, url: 'https://hooks.test/x', event_id: 'evt_1' });
    const attempt = (topic: string) => deliveryFault(sb.deps, account, facts(topic));
    expect(['invoice_paid', 'invoice_paid', 'invoice_paid', 'invoice_paid', 'payout_paid'].map(attempt)).toEqual([
      { drill: 'wrong_secret' }, { drill: 'timeout_after_delivery' }, { drill: 'timeout_after_delivery' }, { status: 502 }, { status: 502 },
    ]);
    const delivered = (topic: string) => deliveryDuplicates(sb.deps, account, facts(topic));
    expect(['payout_paid', 'customer_created', 'invoice_paid', 'invoice_paid'].map(delivered)).toEqual([0, 0, 3, 0]);
    const counters = (await sb.http.get('/_sandbox/scenarios')).body.data[0].counters;
    expect(counters).toEqual([
      { matched: 4, fired: 1 }, { matched: 4, fired: 2 }, { matched: 5, fired: 2 }, { matched: 3, fired: 1 },
    ]);
  });
});

describe('the delivery drills with a probability', () => {
  it('replay the same attempts and deliveries for the same seed, and others for another', async () => {
    async function run(seed: string) {
      const box = await setup({ seed: 'drill-draws' });
      await box.http.post('/_sandbox/scenarios').send({ name: 'coin', seed, rules: [
        { match: { topic: '*' }, probability: 0.3, wrong_secret: true },
        { match: { topic: '*' }, probability: 0.3, timeout_after_delivery: true },
        { match: { topic: '*' }, probability: 0.5, duplicate_delivery: { count: 1 } },
      ] }).expect(201);
      const account = box.deps.store.account('ptn_default', 'production');
      const facts = { topic: 'invoice_paid', url: 'https://hooks.test/x', event_id: 'evt_1' };
      const attempts = Array.from({ length: 40 }, () => JSON.stringify(deliveryFault(box.deps, account, facts) ?? null));
      const copies = Array.from({ length: 40 }, () => deliveryDuplicates(box.deps, account, facts));
      return { attempts, copies };
    }
    const a = await run('drill-1');
    expect(await run('drill-1')).toEqual(a);
    expect(await run('drill-2')).not.toEqual(a);
    const count = (value: string) => a.attempts.filter((x) => x === value).length;
    expect(count('{"drill":"wrong_secret"}')).toBeGreaterThan(4);
    expect(count('{"drill":"timeout_after_delivery"}')).toBeGreaterThan(2);
    expect(count('null')).toBeGreaterThan(10);
    expect(a.copies.filter((n) => n === 1).length).toBeGreaterThan(10);
    expect(a.copies.filter((n) => n === 0).length).toBeGreaterThan(10);
  });
});

describe('the scenario schemas', () => {
  const ruleSchema = () => JSON.parse(readFileSync(new URL('../src/scenarios/scenario.schema.json', import.meta.url), 'utf8')).$defs;

  it('caps duplicate_delivery.count at the limit the queue and POST /_sandbox/events apply', () => {
    const { duplicateDelivery } = ruleSchema();
    expect(duplicateDelivery.properties.count).toMatchObject({ minimum: 1, maximum: LIMITS.webhookDuplicateCopies });
    const fire = loadDocument('control-plane').document.components?.schemas?.FireEventInput as { properties: Record<string, { maximum?: number }> };
    expect(fire.properties.duplicate.maximum).toBe(LIMITS.webhookDuplicateCopies);
  });

  it('the control-plane document describes every field and action of a rule, and the cap in words', () => {
    type Described = { $ref?: string; description?: string; properties?: Record<string, { description?: string }> };
    const schemas = loadDocument('control-plane').document.components?.schemas as Record<string, { properties: Record<string, Described> }>;
    // A field given by reference (an action's own schema) is read where the reference points.
    const followed = (node: Described): Described => (node.$ref ? { ...(schemas[node.$ref.split('/').pop()!] as Described), ...node } : node);
    const described = Object.fromEntries(Object.entries(schemas.ScenarioRule.properties).map(([k, v]) => [k, followed(v)]));
    expect(Object.keys(described).sort()).toEqual(Object.keys(ruleSchema().rule.properties).sort());
    expect(described.duplicate_delivery.properties?.count.description).toContain(`1 to ${LIMITS.webhookDuplicateCopies}`);
    for (const action of ['duplicate_delivery', 'timeout_after_delivery', 'wrong_secret']) expect(described[action].description).toMatch(/Counts (attempts|deliveries)/);
  });
});

describe('fail_delivery end to end', () => {
  it('a timed-out attempt follows the normal retry schedule; once the rule is spent the event is delivered', async () => {
    const w = await webhookSandbox();
    try {
      await w.sb.http.post('/_sandbox/scenarios').send({ name: 'slow receiver', rules: [{ match: { topic: 'customer_created' }, times: 2, fail_delivery: { timeout: true } }] }).expect(201);
      await w.subscribe('customer_created');
      const id = (await w.api.post('/customers', { name: 'Timed Out' })).body.id;
      await w.settle();
      expect(w.receiver.deliveries).toEqual([]);
      await w.sb.advance(90).expect(200);
      expect(w.receiver.deliveries).toEqual([]);
      await w.sb.advance(270).expect(200);
      expect(w.receiver.accepted('customer_created').map((d) => d.entity_id)).toEqual([id]);
      const attempts = (await w.sb.http.get('/_sandbox/webhooks/deliveries')).body.data.reverse();
      expect(attempts.map((a: { attempt: number; status_code: number | null; error: string | null }) => [a.attempt, a.status_code, a.error === null ? null : /timed out/.test(a.error)]))
        .toEqual([[1, null, true], [2, null, true], [3, 200, null]]);
    } finally {
      await w.close();
    }
  });
});

describe('duplicate_delivery end to end', () => {
  it('two rules for the topic: the first that fires decides the copies, and only its counter fires', async () => {
    const w = await webhookSandbox();
    try {
      await w.sb.http.post('/_sandbox/scenarios').send({ name: 'twice over', rules: [
        { match: { topic: 'customer_created' }, duplicate_delivery: { count: 2 } },
        { match: { topic: ['customer_created', 'customer_updated'] }, duplicate_delivery: { count: 1 } },
      ] }).expect(201);
      await w.subscribe('customer_created');
      const id = (await w.api.post('/customers', { name: 'Copied Twice' })).body.id;
      await w.settle();
      // The delivery and the first rule's two copies; the second rule's one copy is never sent.
      expect(w.receiver.deliveries.map((d) => d.entity_id)).toEqual([id, id, id]);
      const attempts = (await w.sb.http.get('/_sandbox/webhooks/deliveries')).body.data.reverse();
      expect(attempts.map((a: { attempt: number; drill: string | null }) => [a.attempt, a.drill])).toEqual([[1, 'duplicate_delivery'], [2, 'duplicate_delivery'], [3, 'duplicate_delivery']]);
      const counters = (await w.sb.http.get('/_sandbox/scenarios')).body.data[0].counters;
      expect(counters).toEqual([{ matched: 1, fired: 1 }, { matched: 1, fired: 0 }]);
    } finally {
      await w.close();
    }
  });
});

describe('probability', () => {
  const doc = { name: 'coin', rules: [{ match: { operation: 'listCustomers' }, probability: 0.5, respond: { status: 503 } }] };

  async function run(seed: string): Promise<number[]> {
    const box = await setup({ seed });
    const t = await box.token();
    await box.http.post('/_sandbox/scenarios').send(doc).expect(201);
    const out: number[] = [];
    for (let i = 0; i < 24; i++) out.push((await box.as(t).get('/customers')).status);
    return out;
  }

  it('replays identically for the same seed, and differs for another', async () => {
    const a = await run('replay-1');
    const b = await run('replay-1');
    const c = await run('replay-2');
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const failures = a.filter((s) => s === 503).length;
    expect(failures).toBeGreaterThan(4);
    expect(failures).toBeLessThan(20);
  });

  it('never fires at 0 and always fires at 1', async () => {
    await load({ name: 'p', rules: [
      { match: { operation: 'listCustomers' }, probability: 0, respond: { status: 500 } },
      { match: { operation: 'getCustomer' }, probability: 1, respond: { status: 503 } },
    ] }).expect(201);
    expect(await statuses(5, () => api.get('/customers'))).toEqual([200, 200, 200, 200, 200]);
    expect(await statuses(3, () => api.get('/customers/cus_x'))).toEqual([503, 503, 503]);
  });
});

describe('scope', () => {
  it('a scenario loaded with a token applies to that account only', async () => {
    const demo = await sb.token('demo');
    await load({ name: 'demo only', rules: [{ match: { operation: 'listCustomers' }, respond: { status: 503 } }] }, demo).expect(201);
    expect((await sb.as(demo, 'demo').get('/customers')).status).toBe(503);
    expect((await api.get('/customers')).status).toBe(200);
    expect((await sb.http.get('/_sandbox/scenarios')).body.data).toEqual([]);
    const partner = (await sb.http.post('/_sandbox/partners').send({ name: 'Other' })).body;
    const other = await sb.token('production', partner.credentials.production);
    expect((await sb.as(other).get('/customers')).status).toBe(200);
    // Resetting the demo account drops its scenarios.
    await sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${demo}`).expect(200);
    const fresh = await sb.token('demo');
    expect((await sb.as(fresh, 'demo').get('/customers')).status).toBe(200);
  });

  it('--scenario applies to every account, with counters per account; deleting it stops it until a full reset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scn-'));
    const file = join(dir, 'global.yaml');
    writeFileSync(file, 'name: everywhere\ndescription: second list fails\nrules:\n  - match: { operation: listCustomers }\n    nth: 2\n    respond: { status: 500 }\n');
    const box = await setup({ scenarios: [file] });
    const prod = box.as(await box.token());
    const demo = box.as(await box.token('demo'), 'demo');
    expect([(await prod.get('/customers')).status, (await prod.get('/customers')).status]).toEqual([200, 500]);
    expect([(await demo.get('/customers')).status, (await demo.get('/customers')).status]).toEqual([200, 500]);
    const listed = (await box.http.get('/_sandbox/scenarios')).body.data;
    expect(listed).toEqual([expect.objectContaining({ name: 'everywhere', scope: 'global', rules_count: 1, description: 'second list fails' })]);
    // Account-scoped delete-all leaves globals in place.
    expect((await box.http.delete('/_sandbox/scenarios')).body).toEqual({ deleted: 0 });
    expect((await box.http.delete(`/_sandbox/scenarios/${listed[0].id}`)).body).toEqual({ deleted: 1 });
    expect((await box.http.get('/_sandbox/scenarios')).body.data).toEqual([]);
    await box.http.post('/_sandbox/reset').expect(200);
    expect((await box.http.get('/_sandbox/scenarios')).body.data).toEqual([expect.objectContaining({ id: listed[0].id, scope: 'global' })]);
    const again = box.as(await box.token());
    expect([(await again.get('/customers')).status, (await again.get('/customers')).status]).toEqual([200, 500]);
  });

  it('with --data, account scenarios and their counters survive a restart, while --scenario counters start again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scn-'));
    const file = join(dir, 'data.json');
    const global = join(dir, 'global.yaml');
    writeFileSync(global, 'name: second list fails\nrules:\n  - match: { operation: listCustomers }\n    nth: 2\n    respond: { status: 500 }\n');
    const first = await setup({ dataFile: file, scenarios: [global], seed: 'persist' });
    const api1 = first.as(await first.token());
    await first.http.post('/_sandbox/scenarios').send({ name: 'own', rules: [{ match: { operation: 'getCustomer' }, nth: 2, respond: { status: 503 } }] }).expect(201);
    expect((await api1.get('/customers')).status).toBe(200);
    expect((await api1.get('/customers/cus_x')).status).toBe(404);
    await first.deps.store.close();

    const second = await setup({ dataFile: file, scenarios: [global], seed: 'persist' });
    const api2 = second.as(await second.token());
    expect((await second.http.get('/_sandbox/scenarios')).body.data.map((x: { name: string; scope: string }) => `${x.scope} ${x.name}`))
      .toEqual(['global second list fails', 'account own']);
    expect((await api2.get('/customers/cus_x')).status).toBe(503);
    expect(await statuses(3, () => api2.get('/customers'))).toEqual([200, 500, 200]);
    await second.deps.store.close();
  });

  it('--scenario replays the same draws for the same seed wherever the document is installed', async () => {
    const text = 'name: coin\nrules:\n  - match: { operation: listCustomers }\n    probability: 0.5\n    respond: { status: 503 }\n';
    async function run(dir: string) {
      const file = join(dir, 'coin.yaml');
      writeFileSync(file, text);
      const box = await setup({ seed: '42', scenarios: [file] });
      const t = await box.token();
      const out: number[] = [];
      for (let i = 0; i < 24; i++) out.push((await box.as(t).get('/customers')).status);
      return { id: (await box.http.get('/_sandbox/scenarios')).body.data[0].id, out };
    }
    // As in a repo clone, an npx install and the Docker image: same document, other paths.
    const clone = await run(mkdtempSync(join(tmpdir(), 'repo-')));
    const npx = await run(mkdtempSync(join(tmpdir(), 'npx-')));
    const image = await run(mkdtempSync(join(tmpdir(), 'app-')));
    expect(npx).toEqual(clone);
    expect(image).toEqual(clone);
    expect(clone.out.filter((s) => s === 503).length).toBeGreaterThan(4);
    expect(clone.out.filter((s) => s === 503).length).toBeLessThan(20);
  });

  it('--scenario NAME resolves a shipped document; a bad file stops the start with the reason', async () => {
    const deps = await createDeps({ scenarios: ['slow-api'], logLevel: 'silent' });
    expect(deps.services.get('scenarioEngine')).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'scn-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ name: 'bad', rules: [{ match: { method: 'GET' }, probability: 2, respond: { status: 500 } }] }));
    await expect(createDeps({ scenarios: [file], logLevel: 'silent' })).rejects.toThrow(/rules\[0\]\.probability/);
    await expect(createDeps({ scenarios: ['no-such-scenario'], logLevel: 'silent' })).rejects.toThrow(/no such file/);
  });
});
