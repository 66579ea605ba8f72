// The auth matrix: the token endpoint's 400/403 cases, and every 401 and 403 an API call can get.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { SignJWT, UnsecuredJWT } from 'jose';
import { setup, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await setup();
});

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('POST /oauth/token', () => {
  it('issues a one-hour Bearer JWT naming partner, environment, client and scopes', async () => {
    const res = await sb.http.post('/oauth/token').set('Authorization', basic('sandbox_client_id', 'sandbox_client_secret')).type('form').send('grant_type=client_credentials');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
    const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ partner_id: 'ptn_default', environment: 'production', client_id: 'sandbox_client_id', scope: 'read write' });
    expect(claims.exp - claims.iat).toBe(3600);
  });

  it.each([
    ['no Authorization header', undefined],
    ['a Bearer instead of Basic header', 'Bearer abc'],
    ['Basic without a colon', `Basic ${Buffer.from('nocolon').toString('base64')}`],
    ['an unknown client_id', basic('nobody', 'sandbox_client_secret')],
    ['a wrong client_secret', basic('sandbox_client_id', 'wrong')],
    ['demo credentials on the production path', basic('sandbox_demo_client_id', 'sandbox_demo_client_secret')],
  ])('answers 403 for %s', async (_name, header) => {
    const req = sb.http.post('/oauth/token').type('form').send('grant_type=client_credentials');
    if (header) req.set('Authorization', header);
    const res = await req;
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'invalid_client', message: expect.any(String), validation_errors: {} });
  });

  it.each([
    ['a missing grant_type', ''],
    ['another grant_type', 'grant_type=password'],
  ])('answers 400 for %s, naming grant_type', async (_name, form) => {
    const res = await sb.http.post('/oauth/token').set('Authorization', basic('sandbox_client_id', 'sandbox_client_secret')).type('form').send(form);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty('grant_type');
  });

  it('issues demo tokens on the demo path and under /v1 and /demo/v1', async () => {
    for (const path of ['/demo/oauth/token', '/demo/v1/oauth/token']) {
      const res = await sb.http.post(path).set('Authorization', basic('sandbox_demo_client_id', 'sandbox_demo_client_secret')).type('form').send('grant_type=client_credentials');
      expect(res.status).toBe(200);
    }
    const v1 = await sb.http.post('/v1/oauth/token').set('Authorization', basic('sandbox_client_id', 'sandbox_client_secret')).type('form').send('grant_type=client_credentials');
    expect(v1.status).toBe(200);
  });
});

describe('access tokens on the API', () => {
  const signingKey = () => new TextEncoder().encode(sb.deps.store.data.meta.signing_key);

  it('accepts a valid token under / and /v1', async () => {
    const token = await sb.token();
    expect((await sb.http.get('/customers').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    expect((await sb.http.get('/v1/customers').set('Authorization', `Bearer ${token}`)).status).toBe(200);
  });

  it.each<[string, (sb: TestSandbox, token: string) => Promise<string | undefined>]>([
    ['no token', async () => undefined],
    ['a malformed token', async () => 'not-a-jwt'],
    ['a tampered token', async (_sb, token) => {
      const [h, p, s] = token.split('.');
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
      claims.partner_id = 'ptn_default';
      claims.scope = 'read write admin';
      return [h, Buffer.from(JSON.stringify(claims)).toString('base64url'), s].join('.');
    }],
    ['an alg:none token', async (_sb, token) => {
      const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
      return new UnsecuredJWT(claims).encode();
    }],
    ['a token signed with another key', async (_sb, token) => {
      const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
      return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('another-key'));
    }],
  ])('answers 401 for %s', async (_name, make) => {
    const token = await make(sb, await sb.token());
    const req = sb.http.get('/customers');
    if (token) req.set('Authorization', `Bearer ${token}`);
    const res = await req;
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthorized', message: expect.any(String), validation_errors: {} });
  });

  it('answers 401 once the token has expired in real time, and a new token works', async () => {
    const token = await sb.token();
    sb.time.now += 3599 * 1000;
    expect((await sb.as(token).get('/customers')).status).toBe(200);
    sb.time.now += 1000;
    const expired = await sb.as(token).get('/customers');
    expect(expired.status).toBe(401);
    expect(expired.body.message).toMatch(/expired/);
    expect((await sb.as(await sb.token()).get('/customers')).status).toBe(200);
  });

  it('answers 401 for a production token on a demo path and the other way round', async () => {
    const production = await sb.token('production');
    const demo = await sb.token('demo');
    expect((await sb.http.get('/demo/customers').set('Authorization', `Bearer ${production}`)).status).toBe(401);
    expect((await sb.http.get('/customers').set('Authorization', `Bearer ${demo}`)).status).toBe(401);
    expect((await sb.http.get('/demo/v1/customers').set('Authorization', `Bearer ${demo}`)).status).toBe(200);
  });

  it('answers 401 for tokens of a revoked key, and the key can no longer get tokens', async () => {
    const partner = (await sb.http.post('/_sandbox/partners').send({ name: 'Revoker' })).body;
    const credentials = partner.credentials.production;
    const token = await sb.token('production', credentials);
    expect((await sb.as(token).get('/customers')).status).toBe(200);
    // Revoked with the partner's own token: without one, the control plane reaches only the default partner.
    const revoked = await sb.http.post(`/_sandbox/keys/${credentials.client_id}/revoke`).set('Authorization', `Bearer ${token}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    expect(revoked.body).not.toHaveProperty('client_secret');
    expect((await sb.as(token).get('/customers')).status).toBe(401);
    const again = await sb.http.post('/oauth/token').set('Authorization', basic(credentials.client_id, credentials.client_secret)).type('form').send('grant_type=client_credentials');
    expect(again.status).toBe(403);
  });

  it('answers 403 when the key lacks the scope, and allows what its scopes cover', async () => {
    const key = (await sb.http.post('/_sandbox/partners/ptn_default/keys').send({ environment: 'production', name: 'read only', scopes: ['customers:read'] })).body;
    expect(key).toMatchObject({ environment: 'production', name: 'read only', scopes: ['customers:read'], client_secret: expect.any(String) });
    const api = sb.as(await sb.token('production', key));
    expect((await api.get('/customers')).status).toBe(200);
    const write = await api.post('/customers', { name: 'x' });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ code: 'forbidden', message: expect.stringContaining('customers:write') });
    expect((await sb.as(await sb.token()).get('/customers')).body.data).toEqual([]);
    // The generic "write" scope covers every area's write.
    const writer = (await sb.http.post('/_sandbox/partners/ptn_default/keys').send({ environment: 'production', scopes: ['write'] })).body;
    expect((await sb.as(await sb.token('production', writer)).post('/customers', { name: 'y' })).status).toBe(201);
  });

  it('keeps the signing key out of reach: a token re-signed with it for another audience is refused', async () => {
    const checkout = await new SignJWT({ partner_id: 'ptn_default', environment: 'production', client_id: 'sandbox_client_id', scope: 'read write' })
      .setProtectedHeader({ alg: 'HS256' }).setIssuer('billing-sandbox').setAudience('checkout').setExpirationTime('1h').sign(signingKey());
    expect((await sb.http.get('/customers').set('Authorization', `Bearer ${checkout}`)).status).toBe(401);
  });
});

describe('the scope table', () => {
  // The spec's table for invoices, bills and checkout, and the sandbox's choice for the other areas.
  const cases: Array<[string, string, string, string]> = [
    ['invoices:read', 'get', '/invoices', 'post /invoices'],
    ['invoices:write', 'post', '/invoices', 'get /invoices'],
    ['accounts_payable:read', 'get', '/bills', 'post /bills'],
    ['accounts_payable:write', 'post', '/bills', 'get /bills'],
    ['checkout:read', 'get', '/card-form/credentials', 'post /checkout-auth/init'],
    ['checkout:write', 'post', '/checkout-auth/init', 'get /card-form/credentials'],
    ['payouts:read', 'get', '/payouts', 'get /payments'],
    ['payments:read', 'get', '/payments', 'post /payments/request'],
    ['webhooks:read', 'get', '/webhooks', 'post /webhooks'],
    ['customers:write', 'post', '/customers', 'get /customers'],
  ];

  it.each(cases)('a key with only %s passes %s %s and gets 403 on %s', async (scope, method, path, refused) => {
    const key = (await sb.http.post('/_sandbox/partners/ptn_default/keys').send({ environment: 'production', scopes: [scope] })).body;
    const token = await sb.token('production', key);
    const allowed = await sb.http[method as 'get'](path).set('Authorization', `Bearer ${token}`).send(method === 'get' ? undefined : {});
    expect(allowed.status).not.toBe(403);
    expect(allowed.status).not.toBe(401);
    const [refusedMethod, refusedPath] = refused.split(' ');
    const denied = await sb.http[refusedMethod as 'get'](refusedPath).set('Authorization', `Bearer ${token}`).send(refusedMethod === 'get' ? undefined : {});
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('forbidden');
  });
});

describe('keys on the control plane', () => {
  it('renames a key without showing its secret', async () => {
    const res = await sb.http.patch('/_sandbox/keys/sandbox_client_id').send({ name: 'CI key' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ client_id: 'sandbox_client_id', name: 'CI key', environment: 'production', revoked_at: null });
    expect(JSON.stringify(res.body)).not.toContain('sandbox_client_secret');
    expect((await sb.http.patch('/_sandbox/keys/unknown').send({ name: 'x' })).status).toBe(404);
  });

  it('answers 404 for keys of an unknown partner and 400 for a bad environment', async () => {
    expect((await sb.http.post('/_sandbox/partners/ptn_nope/keys').send({ environment: 'production' })).status).toBe(404);
    const bad = await sb.http.post('/_sandbox/partners/ptn_default/keys').send({ environment: 'staging' });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty('environment');
  });

  it('requires the admin token on the control plane when one is configured', async () => {
    const locked = await setup({ adminToken: 'let-me-in' });
    expect((await locked.http.get('/_sandbox/health')).status).toBe(401);
    expect((await locked.http.get('/_sandbox/health').set('Authorization', 'Bearer let-me-in')).status).toBe(200);
    const token = await locked.token();
    const clock = await locked.http.get('/_sandbox/clock').set('X-Sandbox-Admin-Token', 'let-me-in').set('Authorization', `Bearer ${token}`);
    expect(clock.status).toBe(200);
  });
});
