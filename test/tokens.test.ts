// Access tokens as a partner sees them (src/auth/tokens.ts): the JWT's header and claims, expiry an
// hour after issue as real time passes, the two 401 messages (expired, invalid), tokens whose
// payload is not a claims object, and the scope claim a key's scopes become. Time moves only by the
// injected real time here (no clock advance), so these hold whichever clock decides token expiry.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { ACCESS_AUDIENCE, TokenSigner, tokenRequestInit, type AccessClaims } from '../src/auth/tokens.js';
import { lowerLimit, setup, START, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await setup();
});

const get = (token: string, path = '/customers') => sb.http.get(path).set('Authorization', `Bearer ${token}`);
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('access tokens', () => {
  it('are HS256 JWTs issued by billing-sandbox for partner-api, naming the client as subject, issued now and expiring 3600 s later, each with its own jti', async () => {
    const token = await sb.token();
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(token);
    const iat = START / 1000;
    expect(claims).toEqual({
      partner_id: 'ptn_default',
      environment: 'production',
      client_id: 'sandbox_client_id',
      scope: 'read write',
      gen: 0, // the account's token generation (POST /_sandbox/tokens/expire moves it on)
      iss: 'billing-sandbox',
      aud: 'partner-api',
      sub: 'sandbox_client_id',
      iat,
      exp: iat + 3600,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    sb.time.now += 1500; // iat is whole seconds, rounded down
    const later = decodeJwt(await sb.token());
    expect([later.iat, later.exp]).toEqual([iat + 1, iat + 3601]);
    expect(later.jti).not.toBe(claims.jti);
  });

  it('expire 3600 s after issue as real time passes: accepted at 3599 s, 401 "has expired" from 3600 s', async () => {
    const token = await sb.token();
    sb.time.now += 3599_000;
    expect((await get(token)).status).toBe(200);
    sb.time.now += 1000;
    const expired = await get(token);
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ code: 'unauthorized', message: 'The access token has expired.', validation_errors: {} });
    expect((await get(await sb.token())).status).toBe(200);
  });

  it('a token that fails verification for any other reason is 401 "is invalid"', async () => {
    const token = await sb.token();
    const [header, payload, signature] = token.split('.');
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const bad of [`${header}.${payload}.${flipped}`, `${header}.${b64({ ...decodeJwt(token), scope: 'admin' })}.${signature}`]) {
      const res = await get(bad);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 'unauthorized', message: 'The access token is invalid.', validation_errors: {} });
    }
  });

  it.each([
    ['two parts', () => 'abc.def'],
    ['four parts', (t: string) => `${t}.extra`],
    ['a payload that is not JSON', (t: string) => `${t.split('.')[0]}.${b64('{not json')}.${t.split('.')[2]}`],
    ['a payload of JSON null', (t: string) => `${t.split('.')[0]}.${b64('null')}.${t.split('.')[2]}`],
    ['a payload that is a number', (t: string) => `${t.split('.')[0]}.${b64('42')}.${t.split('.')[2]}`],
    ['a payload naming no partner', (t: string) => `${t.split('.')[0]}.${b64({ client_id: 'sandbox_client_id' })}.${t.split('.')[2]}`],
    ['a payload naming an unknown partner', (t: string) => `${t.split('.')[0]}.${b64({ ...decodeJwt(t), partner_id: 'ptn_nobody' })}.${t.split('.')[2]}`],
  ])('a token with %s is 401 invalid, never a 500', async (_label, make) => {
    const res = await get(make(await sb.token()));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthorized', message: 'The access token is invalid.' });
  });

  it('carry a key\'s scopes space-separated, and the generic read and write cover every area\'s reads and writes', async () => {
    const key = async (scopes: string[]) => {
      const res = await sb.http.post('/_sandbox/partners/ptn_default/keys').send({ environment: 'production', scopes });
      expect(res.status).toBe(201);
      return sb.token('production', res.body);
    };
    const mixed = await key(['customers:read', 'invoices:write']);
    expect(decodeJwt(mixed).scope).toBe('customers:read invoices:write');
    expect((await get(mixed)).status).toBe(200);
    expect((await get(mixed, '/invoices')).status).toBe(403);
    const reader = await key(['read']);
    expect(decodeJwt(reader).scope).toBe('read');
    expect((await get(reader, '/bills')).status).toBe(200);
    expect((await get(reader, '/webhooks')).status).toBe(200);
    const write = await sb.http.post('/customers').set('Authorization', `Bearer ${reader}`).send({ name: 'Nope' });
    expect(write.status).toBe(403);
    expect(write.body.message).toBe('This operation needs the scope customers:write.');
  });
});

// Below HTTP on purpose: the verified-token cache changes only how fast a request is answered, so no
// response shows whether it remembers, forgets or mixes up tokens; the signer's own methods do.
describe('the verified-token cache and the signer', () => {
  const now = new Date(START);
  const claims = (partner_id: string): AccessClaims => ({ partner_id, environment: 'production', client_id: `${partner_id}_client`, scope: 'read' });

  it('remembers each verified token under its own audience and text, until its exp', async () => {
    const signer = new TokenSigner('cache-test-secret', 60);
    const [a, b] = [await signer.signAccess(claims('ptn_a'), START), await signer.signAccess(claims('ptn_b'), START)];
    expect(signer.cached(a, ACCESS_AUDIENCE, now)).toBeUndefined();
    await signer.verifyAccess(a, now);
    await signer.verifyAccess(b, now);
    expect(signer.cached<AccessClaims>(a, ACCESS_AUDIENCE, now)?.partner_id).toBe('ptn_a');
    expect(signer.cached<AccessClaims>(b, ACCESS_AUDIENCE, now)?.partner_id).toBe('ptn_b');
    expect(signer.cached(a, 'checkout', now)).toBeUndefined();
    expect(signer.cached(a, ACCESS_AUDIENCE, new Date(START + 59_999))).toBeDefined();
    expect(signer.cached(a, ACCESS_AUDIENCE, new Date(START + 60_000))).toBeUndefined();
    await expect(signer.verifyAccess(a, new Date(START + 60_000))).rejects.toMatchObject({ status: 401, message: 'The access token has expired.' });
  });

  it(`keeps at most LIMITS.verifiedTokens tokens, forgetting the oldest first`, async () => {
    lowerLimit('verifiedTokens', 2);
    const signer = new TokenSigner('cache-test-secret');
    const tokens = [await signer.signAccess(claims('ptn_1'), START), await signer.signAccess(claims('ptn_2'), START), await signer.signAccess(claims('ptn_3'), START)];
    const held = () => tokens.map((t) => signer.cached(t, ACCESS_AUDIENCE, now) !== undefined);
    await signer.verifyAccess(tokens[0], now);
    await signer.verifyAccess(tokens[1], now);
    expect(held()).toEqual([true, true, false]);
    await signer.verifyAccess(tokens[2], now);
    expect(held()).toEqual([false, true, true]);
  });

  it('signs tokens for other audiences (checkout, signed links) as HS256 JWTs issued now, expiring when asked', async () => {
    const signer = new TokenSigner('cache-test-secret');
    const token = await signer.signFor('checkout', { invoice_id: 'inv_1' }, START + 1500, START / 1000 + 900);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(decodeJwt(token)).toEqual({ invoice_id: 'inv_1', iss: 'billing-sandbox', aud: 'checkout', iat: START / 1000 + 1, exp: START / 1000 + 900 });
    expect(await signer.verifyFor('checkout', 'checkout', now).catch((e: { status: number }) => e.status)).toBe(401);
    expect(await signer.verifyFor<{ invoice_id: string }>(token, 'checkout', now)).toMatchObject({ invoice_id: 'inv_1' });
  });

  it('peeks at the claims of anything shaped like a JWT whose payload is a JSON object, and at nothing else', async () => {
    const signer = new TokenSigner('cache-test-secret');
    const token = await signer.signAccess(claims('ptn_peek'), START);
    const [header, , signature] = token.split('.');
    const withPayload = (text: string) => `${header}.${Buffer.from(text).toString('base64url')}.${signature}`;
    expect(TokenSigner.peek(token)).toMatchObject({ partner_id: 'ptn_peek' });
    expect(TokenSigner.peek(withPayload('{"partner_id":"ptn_x"}'))).toEqual({ partner_id: 'ptn_x' });
    for (const text of ['null', '42', '"ptn_x"', 'true', '{not json']) expect(TokenSigner.peek(withPayload(text))).toBeUndefined();
    expect(TokenSigner.peek(`${header}.${token.split('.')[1]}`)).toBeUndefined();
    expect(TokenSigner.peek(`${token}.extra`)).toBeUndefined();
  });

  it('asks POST /oauth/token for a key the way the spec does: Basic credentials, a form body', () => {
    expect(tokenRequestInit('id_1', 's3cret')).toEqual({
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from('id_1:s3cret').toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
  });
});
