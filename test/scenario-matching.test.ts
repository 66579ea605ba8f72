// The scenario matcher's finer rules (src/scenarios/engine.ts) that mutation testing (npm run
// mutate, issue 19) showed no test pinned: a rule that could act after an earlier rule ended the
// request neither acts nor uses up its `times`, though the match still counts for `nth`; a document's
// own seed drives its draws; concrete paths ignore a trailing slash and the /demo and /v1 prefixes;
// deleting an account scenario leaves the others' counters alone.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { SCENARIO_SLEEP } from '../src/scenarios/intercept.js';
import { setup, type Api, type TestSandbox } from './helpers.js';

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
