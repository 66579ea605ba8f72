// The partner API's own lane (src/app.ts): a request for an API path skips express's router, and the
// paths express serves come from the routes as they are registered, not from a list kept by hand. A
// feature route on a new path is reached; and for any path, the lane answers exactly as express's
// router alone would (a server that always takes express's router is the reference).
import { afterEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import request from 'supertest';
import { http } from '../src/node-http.js';
import type { Response } from 'express';
import { FEATURES } from '../src/app.js';
import type { Feature } from '../src/feature.js';
import { setup, type TestSandbox } from './helpers.js';

/** A feature with routes on paths no other feature uses: a page and a mounted middleware. */
const probe: Feature = {
  name: 'probe',
  routes(app) {
    app.get('/probe-area/:id', (req, res) => void res.json({ reached: req.params.id }));
    app.post('/probe-area/:id/act', (req, res) => void res.status(201).json({ acted: req.params.id }));
    app.use('/probe-mount', (req, res) => void res.json({ mounted: req.path }));
  },
};

/** A sandbox whose app was made with the probe feature registered (FEATURES is read when the app is made). */
async function withProbe(): Promise<TestSandbox> {
  FEATURES.push(probe);
  try {
    return await setup();
  } finally {
    FEATURES.splice(FEATURES.indexOf(probe), 1);
  }
}

/** The same app, but every request through express's router (app.handle with a callback never takes the lane). */
function expressOnly(sb: TestSandbox) {
  const core = sb.app as unknown as { handle(req: unknown, res: Response, callback: (error?: unknown) => void): void };
  return request(http.createServer((req, res) => core.handle(req, res as Response, () => res.writeHead(500).end('fell through'))));
}

let sb: TestSandbox | undefined;
afterEach(() => {
  sb = undefined;
});

describe('the paths express serves', () => {
  it('reaches a feature route on a new path, through the server', async () => {
    sb = await withProbe();
    await sb.http.get('/probe-area/42').expect(200, { reached: '42' });
    await sb.http.post('/probe-area/7/act').send({}).expect(201, { acted: '7' });
    // Express's own matching: case-insensitive, a trailing slash, a query string.
    await sb.http.get('/PROBE-AREA/42/?x=1').expect(200, { reached: '42' });
    await sb.http.get('/probe-mount/a/b').expect(200, { mounted: '/a/b' });
    await sb.http.get('/probe-mount').expect(200, { mounted: '/' });
    // Paths no route matches stay the API's: its 404 HttpError.
    for (const path of ['/probe-area', '/probe-areas/1', '/probe-mounted', '/demo/probe-area/1']) {
      const res = await sb.http.get(path).expect(404);
      expect([path, res.body.code]).toEqual([path, 'not_found']);
    }
  });

  it('keeps serving the routes express had before: the landing page, the documents, the control plane, hosted pages', async () => {
    sb = await setup();
    expect((await sb.http.get('/').expect(200)).headers['content-type']).toMatch(/^text\/html/);
    await sb.http.get('/openapi.yaml').expect(200);
    await sb.http.get('/_sandbox/openapi.json').expect(200);
    expect((await sb.http.get('/_sandbox/health').expect(200)).body.status).toBe('ok');
    // A hosted link that is not signed: the hosted page's refusal (an HTML page), not the API's JSON 404.
    const hosted = await sb.http.get('/hosted/invoices/inv_missing/pay');
    expect(hosted.headers['content-type']).toMatch(/^text\/html/);
    // And the API still goes by its lane: 401 without a token.
    expect((await sb.http.get('/customers').expect(401)).body.code).toBeDefined();
  });

  it('answers any path as express\'s router alone would (generated paths)', async () => {
    sb = await withProbe();
    const lane = sb.http;
    const reference = expressOnly(sb);
    const segment = fc.oneof(
      fc.constantFrom('', '_sandbox', 'hosted', 'openapi.yaml', 'openapi.json', 'probe-area', 'probe-mount', 'customers', 'demo', 'v1', 'checkout', 'health', 'ui', 'files', 'invoices', 'pay', 'PROBE-AREA', 'Hosted', '_SANDBOX'),
      fc.stringMatching(/^[a-z0-9_.~-]{1,8}$/),
    );
    const path = fc.tuple(fc.array(segment, { minLength: 0, maxLength: 4 }), fc.boolean(), fc.constantFrom('', '?limit=1', '?x=%20')).map(([parts, slash, query]) => `/${parts.join('/')}${slash && parts.length ? '/' : ''}${query}`);
    await fc.assert(
      fc.asyncProperty(path, async (p) => {
        const [viaLane, viaExpress] = await Promise.all([lane.get(p), reference.get(p)]);
        expect([p, viaLane.status, viaLane.headers['content-type']]).toEqual([p, viaExpress.status, viaExpress.headers['content-type']]);
        if (viaLane.body?.code) expect([p, viaLane.body.code]).toEqual([p, viaExpress.body.code]);
      }),
      { numRuns: 300, seed: 4040 },
    );
  });
});
