// Prefer: code=NNN forced responses: realistic HttpError bodies, documented success examples, no
// state change, and clear refusals of codes that make no sense for the operation.
import { beforeEach, describe, expect, it } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { defaultPrincipal } from '../src/app.js';
import { accessTokenSecurity, checkoutTokenSecurity, clientBasicSecurity } from '../src/auth/security.js';
import { createBackend } from '../src/http/openapi.js';
import { OperationRouter } from '../src/http/router.js';
import { preferInterceptor, scenarioInterceptor } from '../src/scenarios/intercept.js';
import { eventLog } from '../src/events/events.js';
import { setup, type Api, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
let api: Api;

beforeEach(async () => {
  sb = await setup();
  api = sb.as(await sb.token());
});

function eventCount(): number {
  return [...eventLog(sb.deps.store.account('ptn_default', 'production')).values()].length;
}

describe('Prefer: code=NNN', () => {
  // PATCH /bills/{id} documents all of these.
  const errors: Array<[number, string]> = [
    [400, 'bad_request'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [409, 'invalid_state'],
    [422, 'unprocessable_entity'],
    [429, 'rate_limit_exceeded'],
    [500, 'internal_error'],
    [503, 'service_unavailable'],
  ];
  it.each(errors)('answers %i with a realistic HttpError (%s) and changes nothing', async (status, code) => {
    const vendor = (await api.post('/vendors', { name: 'Forced Supply' }).expect(201)).body;
    const bill = (await api.post('/bills', { vendor_id: vendor.id, amount: 10 }).expect(201)).body;
    const res = await api.patch(`/bills/${bill.id}`, { amount: 99 }).set('Prefer', `code=${status}`);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ code, message: expect.any(String), validation_errors: {} });
    // No placeholder left unfilled ("{limit}"); the 429 names startSandbox({ rateLimit: 0 }).
    expect(res.body.message).not.toMatch(/\{[a-z_]+\}/);
    expect((await api.get(`/bills/${bill.id}`)).body.amount).toBe(10);
  });

  it('creates nothing when a creation is forced to fail', async () => {
    const res = await api.post('/customers', { name: 'Forced' }).set('Prefer', 'code=503');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect((await api.get('/customers')).body.data).toEqual([]);
    expect(eventCount()).toBe(0);
  });

  it('sends Retry-After with a forced 429, worded with the key\'s limit', async () => {
    const res = await api.get('/customers').set('Prefer', 'code=429');
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body.message).toMatch(/5 requests per second/);
  });

  it('answers a documented success status with the operation\'s documented example, and changes nothing', async () => {
    const res = await api.post('/customers', { name: 'Real name' }).set('Prefer', 'code=201');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: expect.any(String), name: expect.any(String) });
    expect(res.body.name).not.toBe('Real name');
    expect((await api.get(`/customers/${res.body.id}`)).status).toBe(404);
    expect((await api.get('/customers')).body.data).toEqual([]);
    expect(eventCount()).toBe(0);
  });

  it('works on reads, among other preferences, and with the /v1 and /demo prefixes', async () => {
    const res = await api.get('/customers').set('Prefer', 'return=minimal, code=200');
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
    const demo = await sb.token('demo');
    const viaDemo = await sb.http.get('/demo/v1/customers/cus_x').set('Authorization', `Bearer ${demo}`).set('Prefer', 'code=404');
    expect(viaDemo.status).toBe(404);
  });

  it('also answers for an operation without a handler, which otherwise answers 501', async () => {
    // A router over the whole document with no handlers at all: every operation is "not built".
    const router = new OperationRouter({
      deps: sb.deps,
      backend: createBackend('openapi'),
      handlers: {},
      security: { oauth2: accessTokenSecurity(sb.deps), checkoutToken: checkoutTokenSecurity(sb.deps), clientBasic: clientBasicSecurity(sb.deps) },
      anonymous: (state) => defaultPrincipal(state.environment),
      interceptors: [preferInterceptor, scenarioInterceptor],
    });
    const bare = express();
    bare.use(express.json());
    bare.use((req, res, next) => void Promise.resolve(router.handle(req, res, 'production', req.path)).catch(next));
    const token = await sb.token();
    const plain = await request(bare).get('/customers').set('Authorization', `Bearer ${token}`);
    expect(plain.status).toBe(501);
    expect(plain.body.code).toBe('not_implemented');
    const forced = await request(bare).get('/customers').set('Authorization', `Bearer ${token}`).set('Prefer', 'code=200');
    expect(forced.status).toBe(200);
    expect(forced.body.data).toEqual(expect.any(Array));
    const failed = await request(bare).post('/bills/bill_1/submit').set('Authorization', `Bearer ${token}`).set('Prefer', 'code=409');
    expect(failed.status).toBe(409);
    expect(failed.body.code).toBe('invalid_state');
  });

  const refusals: Array<[string, string]> = [
    ['code=abc', 'not a number'],
    ['code=99', 'below 200'],
    ['code=600', 'above 599'],
    ['code=302', 'a redirect'],
    ['code=200', 'an undocumented success status of createCustomer'],
    ['code=404', 'an error status createCustomer does not document'],
    ['code=418', 'a status no operation documents'],
    ['code=504', 'a status no operation documents'],
  ];
  it.each(refusals)('refuses Prefer: %s (%s) with 400 naming Prefer, and creates nothing', async (prefer) => {
    const res = await api.post('/customers', { name: 'X' }).set('Prefer', prefer);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty('Prefer');
    expect((await api.get('/customers')).body.data).toEqual([]);
  });

  it('names the statuses the operation does document when it refuses one', async () => {
    const res = await api.get('/customers').set('Prefer', 'code=404');
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.Prefer).toBe('code=404 is not an answer listCustomers documents (it documents 200, 400, 401, 403, 429, 500, 503)');
  });

  it('answers DELETE /webhooks/{id} with an example that reads like a real deletion (is_active false)', async () => {
    const sub = (await api.post('/webhooks', { endpoint_url: 'https://hooks.partner.example/billing', topic: 'invoice_paid' })).body;
    const real = await api.delete(`/webhooks/${sub.id}`);
    expect(real.status).toBe(200);
    const forced = await api.delete('/webhooks/whs_any').set('Prefer', 'code=200');
    expect(forced.status).toBe(200);
    expect(Object.keys(forced.body).sort()).toEqual(Object.keys(real.body).sort());
    expect([forced.body.is_active, real.body.is_active]).toEqual([false, false]);
  });

  it('still authenticates first: a forced answer needs a valid token', async () => {
    const res = await sb.http.get('/customers').set('Prefer', 'code=200');
    expect(res.status).toBe(401);
  });

  it('forces the token endpoint too, without issuing a token', async () => {
    const { client_id, client_secret } = sb.deps.config.credentials.production;
    const res = await sb.http.post('/oauth/token').auth(client_id, client_secret).type('form').send({ grant_type: 'client_credentials' }).set('Prefer', 'code=503');
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
  });
});
