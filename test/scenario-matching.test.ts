// The scenario matcher's finer rules (src/scenarios/engine.ts) that mutation testing (npm run
// mutate, issue 19) showed no test pinned: a rule that could act after an earlier rule ended the
// request neither acts nor uses up its `times`, though the match still counts for `nth`; a document's
// own seed drives its draws; concrete paths ignore a trailing slash and the /demo and /v1 prefixes;
// deleting an account scenario leaves the others' counters alone.
import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiPath, type ScenarioEngine } from '../src/scenarios/engine.js';
import { SCENARIO_ENGINE, SCENARIO_SLEEP } from '../src/scenarios/intercept.js';
import { lowerLimit, setup, type Api, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
let token: string;
let api: Api;

beforeEach(async () => {
  sb = await setup({ seed: 'matching' });
  token = await sb.token();
  api = sb.as(token);
});

function load(doc: object, bearer = token) {
  return sb.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${bearer}`).send(doc);
}

async function statuses(n: number, call: () => PromiseLike<{ status: number }>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call()).status);
  return out;
}

describe('a request already ended by an earlier rule', () => {
  it('a later respond rule does not act and keeps its times for the next request', async () => {
    await load({ name: 'two', rules: [
      { match: { operation: 'listCustomers' }, times: 1, respond: { status: 500 } },
      { match: { operation: 'listCustomers' }, times: 1, respond: { status: 503 } },
    ] }).expect(201);
    expect(await statuses(3, () => api.get('/customers'))).toEqual([500, 503, 200]);
  });

  it('a later rule still counts the match: nth: 2 fires on the second request even though the first was ended by another rule', async () => {
    await load({ name: 'nth', rules: [
      { match: { operation: 'listCustomers' }, nth: 1, respond: { status: 500 } },
      { match: { operation: 'listCustomers' }, nth: 2, respond: { status: 503 } },
    ] }).expect(201);
    expect(await statuses(3, () => api.get('/customers'))).toEqual([500, 503, 200]);
  });

  it('a later delay is not waited and keeps its times; an earlier delay is waited and the request then ends', async () => {
    const waits: number[] = [];
    sb.deps.services.set(SCENARIO_SLEEP, async (ms: number) => { waits.push(ms); });
    await load({ name: 'order', rules: [
      { match: { operation: 'listCustomers' }, times: 1, delay_ms: 40 },
      { match: { operation: 'listCustomers' }, times: 1, respond: { status: 503 } },
      { match: { operation: 'listCustomers' }, times: 1, delay_ms: 300 },
    ] }).expect(201);
    expect((await api.get('/customers')).status).toBe(503);
    expect(waits).toEqual([40]);
    expect((await api.get('/customers')).status).toBe(200);
    expect(waits).toEqual([40, 300]);
    expect((await api.get('/customers')).status).toBe(200);
    expect(waits).toEqual([40, 300]);
  });

  it('a drop rule ends the request like a respond rule: the next rule keeps its times', async () => {
    await load({ name: 'drop-first', rules: [
      { match: { operation: 'listCustomers' }, times: 1, drop: 'reset' },
      { match: { operation: 'listCustomers' }, times: 1, respond: { status: 503 } },
    ] }).expect(201);
    const error = await api.get('/customers').then(() => undefined, (e: NodeJS.ErrnoException) => e);
    expect(error?.code).toBe('ECONNRESET');
    expect(await statuses(2, () => api.get('/customers'))).toEqual([503, 200]);
  });
});

describe('probability draws', () => {
  const coin = (seed: number) => ({ name: 'coin', seed, rules: [{ match: { operation: 'listCustomers' }, probability: 0.5, respond: { status: 503 } }] });

  async function draws(seed: number): Promise<number[]> {
    const box = await setup({ seed: 'matching' });
    const t = await box.token();
    await box.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${t}`).send(coin(seed)).expect(201);
    return statuses(24, () => box.as(t).get('/customers'));
  }

  it('come from the document\'s own seed when it has one: the same seed replays, another differs', async () => {
    const seven = await draws(7);
    expect(await draws(7)).toEqual(seven);
    expect(await draws(8)).not.toEqual(seven);
  });
});

describe('concrete paths', () => {
  it('ignore a trailing slash and the /v1 prefix on the rule, and the /demo prefix of the request', async () => {
    const demoToken = await sb.token('demo');
    const demo = sb.as(demoToken, 'demo');
    await load({ name: 'slash', rules: [{ match: { path: '/v1/customers/' }, respond: { status: 503 } }] }, demoToken).expect(201);
    expect((await demo.get('/customers')).status).toBe(503);
    expect((await demo.get('/customers/cus_1')).status).toBe(404);
    expect((await api.get('/customers')).status).toBe(200); // the production account has no such scenario
  });
});

describe('removing scenarios', () => {
  it('deleting one account scenario leaves the other\'s counters where they were', async () => {
    const first = await load({ name: 'a', rules: [{ match: { operation: 'listCustomers' }, nth: 2, respond: { status: 500 } }] });
    const second = await load({ name: 'b', rules: [{ match: { operation: 'getCustomer' }, nth: 2, respond: { status: 503 } }] });
    expect((await api.get('/customers')).status).toBe(200);
    expect((await api.get('/customers/cus_x')).status).toBe(404);
    await sb.http.delete(`/_sandbox/scenarios/${second.body.id}`).set('Authorization', `Bearer ${token}`).expect(200, { deleted: 1 });
    expect((await api.get('/customers')).status).toBe(500);
    expect((await api.get('/customers/cus_x')).status).toBe(404);
    const list = await sb.http.get('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`);
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([first.body.id]);
    expect((await sb.http.delete('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`)).body).toEqual({ deleted: 1 });
    expect((await sb.http.delete('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`)).body).toEqual({ deleted: 0 });
  });
});

describe('the matcher\'s smaller rules', () => {
  const list = async (box: TestSandbox, bearer: string) =>
    (await box.http.get('/_sandbox/scenarios').set('Authorization', `Bearer ${bearer}`)).body.data as Array<{ id: string; scope: string }>;

  it('strip one /demo and then one /v1 prefix and every trailing slash from a path, and nothing further in', () => {
    expect(['/demo', '/v1', '/demo/v1', '/demo/v1/', '/', '//'].map(apiPath)).toEqual(['/', '/', '/', '/', '/', '/']);
    expect(apiPath('/demo/v1/bills//')).toBe('/bills');
    expect(apiPath('/demov1/bills')).toBe('/demov1/bills');
    expect(apiPath('/v1/demo/bills')).toBe('/demo/bills');
    expect(apiPath('/customers/demo/v1')).toBe('/customers/demo/v1');
  });

  it('match a header sent more than once as its values joined by ", "', async () => {
    await load({ name: 'twice', rules: [{ match: { operation: 'listCustomers', header: { 'x-test': 'a, b' } }, respond: { status: 503 } }] }).expect(201);
    const engine = sb.deps.services.get(SCENARIO_ENGINE) as ScenarioEngine;
    const account = sb.deps.store.account('ptn_default', 'production');
    const facts = (value: string | string[]) => ({ operationId: 'listCustomers', method: 'GET', path: '/customers', template: '/customers', headers: { 'x-test': value } });
    expect(engine.decide(account, facts(['a', 'b'])).terminal).toMatchObject({ kind: 'respond' });
    expect(engine.decide(account, facts(['a'])).terminal).toBeUndefined();
  });

  it('match a header named like a property every object has (constructor, __proto__) only when the request sends it', async () => {
    // Sent as JSON text: an object literal's `__proto__` would set the prototype instead of a key.
    const doc = '{"name":"inherited names","rules":[{"match":{"operation":"listCustomers","header":{"constructor":"yes"}},"respond":{"status":503}},{"match":{"operation":"listCustomers","header":{"toString":"yes"}},"respond":{"status":500}}]}';
    const loaded = await sb.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`).type('application/json').send(doc);
    expect(loaded.status).toBe(201);
    const counters = async () => ((await sb.http.get('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`)).body.data[0].counters);
    expect((await api.get('/customers')).status).toBe(200);
    expect(await counters()).toEqual([{ matched: 0, fired: 0 }, { matched: 0, fired: 0 }]);
    expect((await api.get('/customers').set('Constructor', 'yes')).status).toBe(503);
    expect(await counters()).toEqual([{ matched: 1, fired: 1 }, { matched: 0, fired: 0 }]);
    expect((await api.get('/customers').set('Constructor', 'no')).status).toBe(200);
    expect(await counters()).toEqual([{ matched: 1, fired: 1 }, { matched: 0, fired: 0 }]);
  });

  it('refuse a header name no request can carry (`__proto__`, which Node drops, or one that is not an HTTP token), naming it, loading nothing', async () => {
    for (const name of ['__proto__', '__PROTO__', 'x test', 'x:test', '']) {
      const doc = JSON.stringify({ name: 'unreachable', rules: [{ match: { operation: 'listCustomers', header: { 'x-ok': 'yes' } }, respond: { status: 503 } }] })
        .replace('"x-ok"', JSON.stringify(name));
      const refused = await sb.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`).type('application/json').send(doc);
      expect([name, refused.status, refused.body.code]).toEqual([name, 400, 'bad_request']);
      expect(Object.keys(refused.body.validation_errors).join(' ')).toMatch(/rules.*header/);
    }
    expect((await sb.http.get('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`)).body.data).toEqual([]);
  });

  it('refuse a header value no request can carry (spaces or tabs around it, a control character), naming it; accept an empty one and inner spaces', async () => {
    const loadWith = (value: string) => sb.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`)
      .send({ name: 'values', rules: [{ match: { operation: 'listCustomers', header: { 'x-test': value } }, respond: { status: 503 } }] });
    for (const value of [' yes', 'yes ', '\tyes', 'a\nb', 'a\rb', 'a\u0000b', 'a\u007fb']) {
      const refused = await loadWith(value);
      expect([JSON.stringify(value), refused.status, refused.body.code]).toEqual([JSON.stringify(value), 400, 'bad_request']);
      expect(refused.body.validation_errors).toEqual({ "rules[0].match.header.x-test": expect.stringContaining('Node trims such a value or refuses the request') });
    }
    expect((await sb.http.get('/_sandbox/scenarios').set('Authorization', `Bearer ${token}`)).body.data).toEqual([]);
    await loadWith('a b\tc').expect(201);
    expect((await api.get('/customers').set('X-Test', 'a b\tc')).status).toBe(503);
  });

  it('give --scenario documents ids of 20 hex digits from the seed and their place: distinct, and the same on the next start', async () => {
    const box = await setup({ seed: 'globals', scenarios: ['slow-api', 'slow-api'] });
    const ids = (await list(box, await box.token())).map((s) => s.id);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^scn_[0-9a-f]{20}$/);
    expect(ids[0]).not.toBe(ids[1]);
    const again = await setup({ seed: 'globals', scenarios: ['slow-api', 'slow-api'] });
    expect((await list(again, await again.token())).map((s) => s.id)).toEqual(ids);
    const other = await setup({ seed: 'other', scenarios: ['slow-api', 'slow-api'] });
    expect((await list(other, await other.token())).map((s) => s.id)).not.toContain(ids[0]);
  });

  it('remove only the global scenario named, the other still applying', async () => {
    const box = await setup({ seed: 'globals', scenarios: ['slow-api', 'slow-api'] });
    const bearer = await box.token();
    const [first, second] = (await list(box, bearer)).map((s) => s.id);
    await box.http.delete(`/_sandbox/scenarios/${first}`).set('Authorization', `Bearer ${bearer}`).expect(200, { deleted: 1 });
    expect((await list(box, bearer)).map((s) => s.id)).toEqual([second]);
    expect((await box.http.delete(`/_sandbox/scenarios/${first}`).set('Authorization', `Bearer ${bearer}`)).status).toBe(404);
  });

  it(`load at most LIMITS.globalScenarios --scenario documents, and say so past it`, async () => {
    lowerLimit('globalScenarios', 2);
    const box = await setup({ scenarios: ['slow-api', 'slow-api'] });
    expect(await list(box, await box.token())).toHaveLength(2);
    await expect(setup({ scenarios: ['slow-api', 'slow-api', 'slow-api'] })).rejects.toThrow('At most 2 documents of --scenario (SANDBOX_SCENARIOS, startSandbox option scenarios) can be loaded at start (got 3).');
  });

  it('give account scenarios ids of 20 hex digits, and refuse one past LIMITS.scenariosPerAccount saying what to do', async () => {
    lowerLimit('scenariosPerAccount', 2);
    const ids = [(await load({ name: 'one', rules: [{ match: { operation: 'getCustomer' }, respond: { status: 503 } }] })).body.id, (await load({ name: 'two', rules: [{ match: { operation: 'getCustomer' }, respond: { status: 503 } }] })).body.id];
    for (const id of ids) expect(id).toMatch(/^scn_[0-9a-f]{20}$/);
    expect(ids[0]).not.toBe(ids[1]);
    const refused = await load({ name: 'three', rules: [{ match: { operation: 'getCustomer' }, respond: { status: 503 } }] });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      code: 'limit_reached',
      message: 'The account has 2 scenarios loaded, the most it may have; remove some (DELETE /_sandbox/scenarios or /_sandbox/scenarios/{id}) before loading another.',
      validation_errors: { body: 'this account already holds 2 scenario documents' },
    });
  });

  it('note nothing for a request no rule matches: no log line, no write to the data file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'matching-')), 'sandbox.json');
    const box = await setup({ dataFile: file });
    const bearer = await box.token();
    await box.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${bearer}`).send({ name: 'other', rules: [{ match: { operation: 'getCustomer' }, respond: { status: 503 } }] }).expect(201);
    await box.deps.store.flush();
    const debug = jest.spyOn(box.deps.log, 'debug');
    expect((await box.as(bearer).get('/customers')).status).toBe(200);
    expect(box.deps.store.pending).toBe(false);
    expect(debug.mock.calls.filter((call) => call[1] === 'scenario rules fired')).toEqual([]);
    expect((await box.as(bearer).get('/customers/cus_x')).status).toBe(503);
    expect(box.deps.store.pending).toBe(true);
    expect(debug.mock.calls.filter((call) => call[1] === 'scenario rules fired')).toHaveLength(1);
    await box.deps.store.close();
  });
});
