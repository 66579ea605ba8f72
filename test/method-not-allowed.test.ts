// A path of either document called with a method it does not list answers 405 with an Allow header
// naming the methods it does (as Prism does), held to the documents' shared MethodNotAllowed
// answer (their root's x-unrouted-responses); a path they do not list answers 404. Every path, every other method, and generated ids.
import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type request from 'supertest';
import { eventLog } from '../src/events/events.js';
import { loadDocument } from '../src/http/openapi.js';
import { responseCheckerFor, UNROUTED } from '../src/http/response-check.js';
import { RouteMatcher } from '../src/http/route-match.js';
import { setup, type TestSandbox } from './helpers.js';

type DocName = 'openapi' | 'control-plane';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const ORDER = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'];

/**
 * The methods a concrete path takes: those of every path of the document it matches (each `{name}`
 * one segment), upper case in the Allow header's order. `/bills/upload` lists POST, and is also a
 * `/bills/{id}` (GET, PATCH, DELETE).
 */
function methodsFor(doc: DocName, url: string): string[] {
  const paths = loadDocument(doc).document.paths as Record<string, Record<string, unknown>>;
  const methods = new Set<string>();
  for (const [template, item] of Object.entries(paths)) {
    const pattern = new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+')}$`);
    if (pattern.test(url)) for (const method of Object.keys(item)) methods.add(method);
  }
  return ORDER.filter((m) => methods.has(m)).map((m) => m.toUpperCase());
}

/** Each path of a document, filled with ids, with the methods it takes. */
function pathsOf(doc: DocName, id: (name: string) => string = (name) => `${name}_1`): Array<{ path: string; url: string; allowed: string[] }> {
  return Object.keys(loadDocument(doc).document.paths ?? {}).map((path) => {
    const url = fill(path, id);
    return { path, url, allowed: methodsFor(doc, url) };
  });
}

const fill = (template: string, value: (name: string) => string) => template.replace(/\{([^}]+)\}/g, (_all, name: string) => value(name));

let sb: TestSandbox;
let token: string;
beforeAll(async () => {
  sb = await setup();
  token = await sb.token();
});

const send = (method: string, url: string): request.Test => {
  const req = (sb.http as unknown as Record<string, (u: string) => request.Test>)[method](url).set('Authorization', `Bearer ${token}`);
  return method === 'get' || method === 'delete' ? req : req.send({ name: 'Should not exist' });
};

const cases = (['openapi', 'control-plane'] as const).flatMap((doc) => pathsOf(doc).flatMap(({ url, allowed }) =>
  METHODS.filter((m) => !allowed.includes(m.toUpperCase())).map((method) => [doc, method.toUpperCase(), url, allowed] as const)));

describe('undocumented methods', () => {
  it('there is a method to try on most paths', () => {
    expect(cases.length).toBeGreaterThan(150);
  });

  it.each(cases)('%s: %s %s answers 405 with Allow: the methods the path takes; nothing is recorded', async (_doc, method, url, allowed) => {
    const res = await send(method.toLowerCase(), url);
    expect([url, res.status]).toEqual([url, 405]);
    expect(res.headers.allow).toBe(allowed.join(', '));
    // The strict response check (validateResponses) passed it: a body the shared response refuses would be a 500.
    expect(res.body).toEqual({
      code: 'method_not_allowed',
      message: `${method} is not a method of ${url}: it takes ${allowed.join(', ')}.`,
      validation_errors: { method: `must be one of ${allowed.join(', ')}` },
    });
    expect([...eventLog(sb.deps.store.account('ptn_default', 'production')).values()]).toEqual([]);
  });

  it('the same under the /demo and /v1 prefixes, and for any id in the path (generated)', async () => {
    const templated = Object.keys(loadDocument('openapi').document.paths ?? {}).filter((path) => path.includes('{'));
    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...templated), fc.constantFrom('', '/demo', '/v1', '/demo/v1'), fc.stringMatching(/^[A-Za-z0-9_~-]{1,40}$/),
      async (path, prefix, id) => {
        const url = fill(path, () => id);
        const allowed = methodsFor('openapi', url);
        fc.pre(!allowed.includes('PUT'));
        const res = await sb.http.put(`${prefix}${url}`).send({});
        expect([url, res.status]).toEqual([url, 405]);
        expect(res.headers.allow).toBe(allowed.join(', '));
      },
    ), { numRuns: 60 });
  });

  it('a path neither document lists answers 404 not_found, with no Allow header', async () => {
    for (const url of ['/no-such-path', '/customers/cus_1/nothing', '/_sandbox/no-such-path', '/demo/v1/nope']) {
      const res = await sb.http.put(url).send({});
      expect([url, res.status, res.body.code, res.headers.allow]).toEqual([url, 404, 'not_found', undefined]);
    }
  });

  it('the matcher names the methods of every template the path matches, in a fixed order', () => {
    const operations = [
      { method: 'post', path: '/things' }, { method: 'get', path: '/things' },
      { method: 'delete', path: '/things/{id}' }, { method: 'get', path: '/things/{id}' }, { method: 'patch', path: '/things/{id}' },
    ].map((o) => ({ ...o, operationId: `${o.method} ${o.path}` })) as unknown as ConstructorParameters<typeof RouteMatcher>[0];
    const matcher = new RouteMatcher(operations);
    expect(matcher.match('PUT', '/things')).toBe(405);
    expect(matcher.allowedMethods('/things')).toEqual(['GET', 'POST']);
    expect(matcher.match('POST', '/things/t_1')).toBe(405);
    expect(matcher.allowedMethods('/things/t_1')).toEqual(['GET', 'PATCH', 'DELETE']);
    expect(matcher.match('GET', '/other')).toBe(404);
    expect(matcher.allowedMethods('/other')).toEqual([]);
  });

  it.each(['openapi', 'control-plane'] as const)('%s documents 405 at its root (x-unrouted-responses), and the response check holds answers without an operation to it', (doc) => {
    const document = loadDocument(doc).document as unknown as Record<string, any>;
    const unrouted = document['x-unrouted-responses'];
    expect(Object.keys(unrouted)).toEqual(['404', '405']);
    expect(unrouted['404']).toEqual({ $ref: '#/components/responses/NotFound' });
    expect(unrouted['405'].headers.Allow.schema.type).toBe('string');
    expect(unrouted['405'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/HttpError' });
    const checker = responseCheckerFor(loadDocument(doc).document);
    expect(checker.check(UNROUTED, 405, { code: 'method_not_allowed', message: 'm', validation_errors: { method: 'must be one of GET' } })).toBeNull();
    expect(checker.check(UNROUTED, 405, { code: 'method_not_allowed', message: 'm', validation_errors: {}, extra: 1 })).not.toBeNull();
    expect(checker.check(UNROUTED, 418, { code: 'bad_request', message: 'm', validation_errors: {} })).not.toBeNull();
  });
});
