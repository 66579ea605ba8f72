// Resource limits of the server as a whole (issue 12 item 6): partners per server, and the admin
// token guarding every control-plane operation of the document.
import { describe, expect, it } from '@jest/globals';
import { setup, storeJson } from './helpers.js';
import { documentOperations } from '../src/http/openapi.js';
import { LIMITS } from '../src/limits.js';

describe('partners per server', () => {
  it(`refuses partner ${LIMITS.partnersPerServer + 1} with 422 naming the limit, changes nothing, and a full reset makes room again`, async () => {
    const sb = await setup({ seed: 'limits-partners' });
    // The first 999 through the domain function (fast); the last one and the refusal through HTTP.
    for (let n = Object.keys(sb.deps.store.data.partners).length; n < LIMITS.partnersPerServer - 1; n++) sb.deps.partners.createPartner(`Bulk ${n}`, undefined);
    expect((await sb.http.post('/_sandbox/partners').send({ name: 'The last one' })).status).toBe(201);
    expect(Object.keys(sb.deps.store.data.partners)).toHaveLength(LIMITS.partnersPerServer);
    const keys = Object.keys(sb.deps.store.data.keys).length;
    const refused = await sb.http.post('/_sandbox/partners').send({ name: 'One too many' });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ code: 'unprocessable_entity', message: expect.stringContaining('at most 1000 partners'), validation_errors: {} });
    expect(Object.keys(sb.deps.store.data.partners)).toHaveLength(LIMITS.partnersPerServer);
    expect(Object.keys(sb.deps.store.data.keys)).toHaveLength(keys);
    expect((await sb.http.post('/_sandbox/reset')).body).toEqual({ reset: 'all' });
    expect((await sb.http.post('/_sandbox/partners').send({ name: 'After the reset' })).status).toBe(201);
  });
});

describe('a server with --admin-token', () => {
  it('refuses every control-plane operation of the document without the admin token (none, a wrong one, an API token), and changes nothing', async () => {
    const sb = await setup({ seed: 'limits-admin', adminToken: 'let-me-in' });
    const token = await sb.token();
    const created = await sb.as(token).post('/customers', { name: 'Kept' });
    expect(created.status).toBe(201);
    const before = storeJson(sb.deps.store.data);
    const operations = documentOperations('control-plane');
    expect(operations.length).toBeGreaterThanOrEqual(24);
    const refusals: string[] = [];
    for (const { operationId, path, method } of operations) {
      const url = path.replace(/\{[^}]+\}/g, 'x_1');
      for (const [how, headers] of [
        ['no token', {}],
        ['a wrong admin token', { 'X-Sandbox-Admin-Token': 'let-me-out' }],
        ['a wrong bearer', { Authorization: 'Bearer let-me-out' }],
        ['an API access token', { Authorization: `Bearer ${token}` }],
      ] as Array<[string, Record<string, string>]>) {
        const res = await sb.http[method as 'get' | 'post' | 'patch' | 'delete'](url).set(headers).send(method === 'get' || method === 'delete' ? undefined : {});
        refusals.push(`${operationId} with ${how}: ${res.status} ${res.body?.code}`);
      }
    }
    expect(refusals.filter((r) => !r.endsWith(': 401 unauthorized'))).toEqual([]);
    expect(storeJson(sb.deps.store.data)).toBe(before);
    // The same calls with the token do reach the operations.
    expect((await sb.http.get('/_sandbox/health').set('X-Sandbox-Admin-Token', 'let-me-in')).status).toBe(200);
    expect((await sb.as(token).get(`/customers/${created.body.id}`)).status).toBe(200);
  });
});
