// POST /oauth/token at its edges: credentials are checked first (403 invalid_client, whatever the
// body), then the content type (415 for anything but a form), then the form; the optional OAuth
// `scope` narrows a token to part of the key's scopes; the document declares every answer.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { setup, type TestSandbox } from './helpers.js';
import { loadDocument } from '../src/http/openapi.js';
import { LIMITS } from '../src/limits.js';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await setup({ seed: 'token-endpoint' });
});

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const DEFAULT = basic('sandbox_client_id', 'sandbox_client_secret');

describe('credentials first', () => {
  it('answers 403 invalid_client to a JSON body without a Basic header, naming no field', async () => {
    const res = await sb.http.post('/oauth/token').send({ grant_type: 'client_credentials', unexpected: true });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 'invalid_client', message: expect.stringContaining('Basic'), validation_errors: {} });
  });

  it('answers 403 invalid_client to client credentials in the form body: only the Basic header is read', async () => {
    const res = await sb.http.post('/oauth/token').type('form')
      .send({ grant_type: 'client_credentials', client_id: 'sandbox_client_id', client_secret: 'sandbox_client_secret' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 'invalid_client', message: expect.stringMatching(/form body.*Basic|Basic.*form body/), validation_errors: {} });
    expect(JSON.stringify(res.body)).not.toContain('sandbox_client_secret');
  });

  it('answers 403 to wrong credentials before looking at a malformed form', async () => {
    const res = await sb.http.post('/oauth/token').set('Authorization', basic('sandbox_client_id', 'wrong')).type('form').send('grant_type=password&extra=1');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('invalid_client');
  });
});

describe('content type', () => {
  it.each([
    ['a JSON body', 'application/json', JSON.stringify({ grant_type: 'client_credentials' })],
    ['a malformed JSON body', 'application/json', '{"grant_type":'],
    ['a text body', 'text/plain', 'grant_type=client_credentials'],
  ])('answers 415 to %s with valid credentials, and issues no token', async (_what, type, body) => {
    const res = await sb.http.post('/oauth/token').set('Authorization', DEFAULT).set('Content-Type', type).send(body);
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ code: 'unsupported_media_type', message: expect.stringContaining('application/x-www-form-urlencoded'), validation_errors: { 'Content-Type': expect.any(String) } });
    expect(res.body).not.toHaveProperty('access_token');
  });

  it('answers 400 (not 415) when there is no body at all, and names grant_type for an empty form', async () => {
    const none = await sb.http.post('/oauth/token').set('Authorization', DEFAULT);
    expect(none.status).toBe(400);
    expect(none.body.validation_errors).toHaveProperty('body');
    const empty = await sb.http.post('/oauth/token').set('Authorization', DEFAULT).type('form').send('');
    expect(empty.status).toBe(400);
    expect(empty.body.validation_errors).toHaveProperty('grant_type');
  });

  it('answers 413 for a form over the limit, with the form limit in the message', async () => {
    const res = await sb.http.post('/oauth/token').set('Authorization', DEFAULT).type('form').send(`grant_type=client_credentials&pad=${'a'.repeat(LIMITS.formBodyBytes + 10)}`);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('1 MB') });
  });
});

describe('the scope form field', () => {
  const token = (scope: string | undefined, auth = DEFAULT) =>
    sb.http.post('/oauth/token').set('Authorization', auth).type('form').send(scope === undefined ? 'grant_type=client_credentials' : `grant_type=client_credentials&scope=${encodeURIComponent(scope)}`);

  it('narrows the token to the requested scopes: an operation outside them answers 403', async () => {
    const res = await token('customers:read');
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.access_token).scope).toBe('customers:read');
    const api = sb.as(res.body.access_token);
    expect((await api.get('/customers')).status).toBe(200);
    const write = await api.post('/customers', { name: 'Refused' });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('forbidden');
    expect((await api.get('/invoices')).status).toBe(403);
    // Nothing was created by the refused write.
    expect((await sb.as(await sb.token()).get('/customers')).body.data).toEqual([]);
  });

  it('accepts several space-separated scopes, and no scope (or an empty one) keeps the key\'s', async () => {
    const both = await token('customers:read invoices:read');
    expect(decodeJwt(both.body.access_token).scope).toBe('customers:read invoices:read');
    expect((await sb.as(both.body.access_token).get('/invoices')).status).toBe(200);
    expect(decodeJwt((await token(undefined)).body.access_token).scope).toBe('read write');
    expect(decodeJwt((await token('')).body.access_token).scope).toBe('read write');
  });

  it('names at most five refused scopes, each cut at 40 characters, however long the asked scope is', async () => {
    // Found by the fuzzer: a scope near the form's 1,024 characters was echoed whole, past the 1,000 of a message.
    const asked = ['x'.repeat(900), ...Array.from({ length: 9 }, (_, i) => `area${i}:read`)].join(' ');
    const res = await token(asked);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.scope).toBe(`${'x'.repeat(40)}…, area0:read, area1:read, area2:read, area3:read and 5 more are not a scope of the API`);
  });

  it('answers 400 invalid_scope for an unknown scope or one the key was not granted', async () => {
    const unknown = await token('customers:read customers:delete');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ code: 'invalid_scope', message: expect.any(String), validation_errors: { scope: expect.stringContaining('customers:delete') } });

    const key = (await sb.http.post('/_sandbox/partners/ptn_default/keys').send({ environment: 'production', scopes: ['customers:read', 'write'] })).body;
    const auth = basic(key.client_id, key.client_secret);
    expect((await token('customers:read', auth)).status).toBe(200);
    // `write` covers every area's write scope.
    expect(decodeJwt((await token('invoices:write', auth)).body.access_token).scope).toBe('invoices:write');
    for (const scope of ['invoices:read', 'read']) {
      const refused = await token(scope, auth);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'invalid_scope', validation_errors: { scope: expect.stringContaining(scope) } });
    }
  });
});

describe('the document', () => {
  it('declares every status the token endpoint answers, the form content type only, and the scope field', () => {
    const operation = (loadDocument('openapi').document.paths as Record<string, Record<string, any>>)['/oauth/token'].post;
    expect(Object.keys(operation.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
    expect(operation.requestBody.content['application/x-www-form-urlencoded'].schema.properties).toHaveProperty('scope');
    for (const status of ['200', '400', '403', '413', '415', '429']) expect(Object.keys(operation.responses)).toContain(status);
  });

  it('journals a refused token request under the account of the key it names', async () => {
    await sb.http.post('/oauth/token').set('Authorization', DEFAULT).send({ grant_type: 'client_credentials' });
    await sb.http.post('/oauth/token').set('Authorization', basic('nobody', 'x')).type('form').send('grant_type=client_credentials');
    const entries = (await sb.http.get('/_sandbox/requests')).body.data;
    expect(entries.map((e: { status: number; request: { headers: Record<string, string> } }) => [e.status, e.request.headers.authorization])).toEqual([[415, '***']]);
  });
});
