// Partner-scoped control-plane calls (keys of a partner) are authorised by a token of that partner
// or the admin token; with no token they reach only the default partner. Another partner's keys
// answer 404, as if they did not exist. A server reachable beyond loopback without an admin token
// warns at start.
import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import pino from 'pino';
import { setup, type TestSandbox } from './helpers.js';
import { startSandbox } from '../src/index.js';

let sb: TestSandbox;

interface Created { id: string; credentials: Record<'production' | 'demo', { client_id: string; client_secret: string }> }

async function partner(box: TestSandbox, name: string, admin?: string): Promise<Created & { token: string }> {
  const req = box.http.post('/_sandbox/partners').send({ name });
  const res = admin ? await req.set('X-Sandbox-Admin-Token', admin) : await req;
  expect(res.status).toBe(201);
  return { ...res.body, token: await box.token('production', res.body.credentials.production) };
}

const keysOf = (box: TestSandbox, partnerId: string) => Object.values(box.deps.store.data.keys).filter((k) => k.partner_id === partnerId);

beforeEach(async () => {
  sb = await setup({ seed: 'control-partners' });
});

describe('partner-scoped control-plane calls', () => {
  it('refuses another partner\'s keys with 404 without a token or with another partner\'s token, and changes nothing', async () => {
    const a = await partner(sb, 'A');
    const b = await partner(sb, 'B');
    const aKey = a.credentials.production.client_id;
    const before = JSON.stringify(keysOf(sb, a.id));
    for (const auth of [undefined, `Bearer ${b.token}`]) {
      const as = <T extends { set(name: string, value: string): T }>(req: T) => (auth ? req.set('Authorization', auth) : req);
      const mint = await as(sb.http.post(`/_sandbox/partners/${a.id}/keys`)).send({ environment: 'production', name: 'stolen' });
      expect(mint.status).toBe(404);
      expect(mint.body).toMatchObject({ code: 'not_found', message: `No partner with id ${a.id}.` });
      const rename = await as(sb.http.patch(`/_sandbox/keys/${aKey}`)).send({ name: 'renamed' });
      expect(rename.status).toBe(404);
      expect(rename.body).toMatchObject({ code: 'not_found', message: `No key with client_id ${aKey}.` });
      const revoke = await as(sb.http.post(`/_sandbox/keys/${aKey}/revoke`));
      expect(revoke.status).toBe(404);
      // The same answer as for a partner or key that does not exist: nothing is revealed.
      expect((await as(sb.http.post('/_sandbox/partners/ptn_nope/keys')).send({ environment: 'production' })).body.message).toBe('No partner with id ptn_nope.');
    }
    expect(JSON.stringify(keysOf(sb, a.id))).toBe(before);
    // A's own token still works on the API.
    expect((await sb.as(a.token).get('/customers')).status).toBe(200);
    // B's token cannot reach the default partner's keys either.
    expect((await sb.http.patch('/_sandbox/keys/sandbox_client_id').set('Authorization', `Bearer ${b.token}`).send({ name: 'x' })).status).toBe(404);
  });

  it('lets a partner\'s own token (either environment) create, rename and revoke its keys', async () => {
    const a = await partner(sb, 'A');
    const demoToken = await sb.token('demo', a.credentials.demo);
    const minted = await sb.http.post(`/_sandbox/partners/${a.id}/keys`).set('Authorization', `Bearer ${a.token}`).send({ environment: 'demo', name: 'CI' });
    expect(minted.status).toBe(201);
    expect(minted.body).toMatchObject({ partner_id: a.id, environment: 'demo', name: 'CI' });
    const renamed = await sb.http.patch(`/_sandbox/keys/${minted.body.client_id}`).set('Authorization', `Bearer ${demoToken}`).send({ name: 'CI 2' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('CI 2');
    const revoked = await sb.http.post(`/_sandbox/keys/${minted.body.client_id}/revoke`).set('Authorization', `Bearer ${a.token}`);
    expect(revoked.status).toBe(200);
    expect(sb.deps.store.data.keys[minted.body.client_id].revoked_at).not.toBeNull();
    // And A's token does not reach the default partner.
    expect((await sb.http.post('/_sandbox/partners/ptn_default/keys').set('Authorization', `Bearer ${a.token}`).send({ environment: 'production' })).status).toBe(404);
  });

  it('acts on the default partner without a token, and on any partner with the admin token', async () => {
    const own = await sb.http.post('/_sandbox/partners/ptn_default/keys').send({ environment: 'production', name: 'default' });
    expect(own.status).toBe(201);
    expect((await sb.http.patch(`/_sandbox/keys/${own.body.client_id}`).send({ name: 'renamed' })).body.name).toBe('renamed');

    const locked = await setup({ seed: 'control-partners-admin', adminToken: 'let-me-in' });
    const a = await partner(locked, 'A', 'let-me-in');
    const minted = await locked.http.post(`/_sandbox/partners/${a.id}/keys`).set('Authorization', 'Bearer let-me-in').send({ environment: 'production' });
    expect(minted.status).toBe(201);
    const revoked = await locked.http.post(`/_sandbox/keys/${a.credentials.production.client_id}/revoke`).set('X-Sandbox-Admin-Token', 'let-me-in');
    expect(revoked.status).toBe(200);
    expect(keysOf(locked, a.id)).toHaveLength(3);
  });
});

describe('the start-up warning', () => {
  async function warningsFor(host: string, adminToken?: string): Promise<string[]> {
    const logger = pino({ level: 'silent' });
    const warn = jest.spyOn(logger, 'warn');
    const running = await startSandbox({ host, port: 0, adminToken, realTimeTicks: false, overrides: { logger } });
    await running.close();
    return warn.mock.calls.map((call) => call.map(String).join(' '));
  }

  it('warns when the server listens beyond loopback without an admin token', async () => {
    expect((await warningsFor('0.0.0.0')).join('\n')).toMatch(/--admin-token/);
    expect(await warningsFor('0.0.0.0', 'secret')).toEqual([]);
    expect(await warningsFor('127.0.0.1')).toEqual([]);
  });
});
