// The log a person reads: one access line per request with exactly method, path, status, ms, account
// and operation (JSON when not on a terminal, one pretty line on one), the level by outcome, and no
// credential, token, header, query string or body in any line.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createApp, createDeps } from '../src/app.js';
import { ApiError, Errors } from '../src/errors.js';
import { ACCESS_FIELDS, createLogger } from '../src/log.js';
import { START } from './helpers.js';

function sink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

async function sandboxLoggingTo(logger: ReturnType<typeof createLogger>) {
  const deps = await createDeps({ rateLimit: 0, validateResponses: true, logLevel: 'info' }, { realNow: () => START, logger });
  return request(createApp(deps));
}

describe('access lines', () => {
  it('are one JSON line per request with the six fields, and carry no secret, header, query or body', async () => {
    const out = sink();
    const http = await sandboxLoggingTo(createLogger('info', { pretty: false, destination: out.stream }));
    const token = (await http.post('/oauth/token').auth('sandbox_client_id', 'sandbox_client_secret').type('form').send({ grant_type: 'client_credentials' })).body.access_token as string;
    const made = await http.post('/customers').set('Authorization', `Bearer ${token}`).send({ name: 'Log Reader', email: 'reader@log.test' });
    expect(made.status).toBe(201);
    await http.get('/customers?company_name=Log%20Reader').set('Authorization', `Bearer ${token}`).expect(200);
    await http.get('/customers').set('Authorization', `Bearer ${token}`).set('Prefer', 'code=503').expect(503);
    await http.get('/no-such-path').expect(404);
    await http.get('/openapi.json').expect(200);

    const entries = out.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries).toHaveLength(6);
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(['level', 'time', 'reqId', 'msg', ...ACCESS_FIELDS].sort());
      expect(typeof entry.ms).toBe('number');
    }
    expect(entries.map((e) => [e.level, e.method, e.path, e.status, e.account, e.operation])).toEqual([
      [30, 'POST', '/oauth/token', 200, 'ptn_default:production', 'createToken'],
      [30, 'POST', '/customers', 201, 'ptn_default:production', 'createCustomer'],
      [30, 'GET', '/customers', 200, 'ptn_default:production', 'listCustomers'],
      [40, 'GET', '/customers', 503, 'ptn_default:production', 'listCustomers'],
      [30, 'GET', '/no-such-path', 404, null, null],
      [30, 'GET', '/openapi.json', 200, null, null],
    ]);
    expect(entries[1].msg).toMatch(/^POST \/customers 201 \d+ ms \(ptn_default:production createCustomer\)$/);
    const text = out.lines.join('\n');
    for (const secret of ['sandbox_client_secret', token, 'reader@log.test', made.body.id, 'Bearer', 'authorization', 'Log Reader', 'company_name']) {
      expect([secret, text.includes(secret)]).toEqual([secret, false]);
    }
  });

  it('are one readable line each on a terminal (pino-pretty), without the fields repeated as JSON', async () => {
    const out = sink();
    const http = await sandboxLoggingTo(createLogger('info', { pretty: true, destination: out.stream }));
    await http.get('/no-such-path').expect(404);
    expect(out.lines).toHaveLength(1);
    // eslint-disable-next-line no-control-regex
    const plain = out.lines[0].replace(/\x1b\[[0-9;]*m/g, '');
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/no-such-path 404 \d+ ms$/);
  });

  it('are absent at --log-level warn and silent', async () => {
    for (const level of ['warn', 'silent']) {
      const out = sink();
      const http = await sandboxLoggingTo(createLogger(level, { pretty: false, destination: out.stream }));
      await http.get('/no-such-path').expect(404);
      expect([level, out.lines]).toEqual([level, []]);
    }
  });
});

describe('the log examples in docs/running.md', () => {
  const example = (name: string) => readFileSync(new URL(`../examples/logs/${name}`, import.meta.url), 'utf8').trim();

  it('show an access line with exactly the fields a live one has', async () => {
    const out = sink();
    const http = await sandboxLoggingTo(createLogger('info', { pretty: false, destination: out.stream }));
    await http.get('/no-such-path').expect(404);
    const live = JSON.parse(out.lines[0]);
    const shown = JSON.parse(example('access-line.json'));
    expect(Object.keys(shown)).toEqual(Object.keys(live));
    expect(shown.msg).toBe(`${shown.method} ${shown.path} ${shown.status} ${shown.ms} ms (${shown.account} ${shown.operation})`);
  });

  it('show pretty lines in the format a terminal gets', () => {
    for (const line of example('pretty.txt').split('\n')) {
      expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN): [A-Z]+ \/\S* \d{3} \d+ ms \(\S+ \w+\)$/);
    }
  });
});

describe('logged errors', () => {
  it("name their type by the error's name, which the minified command line keeps, not by its class's", () => {
    const out = sink();
    const log = createLogger('info', { pretty: false, destination: out.stream });
    // As the bundle's minifier leaves a class: a made-up class name, the error's own name set.
    class Qz extends Error {
      constructor(message: string) {
        super(message);
        this.name = 'WriteRefused';
      }
    }
    log.error({ err: new Qz('disk full') }, 'writing the data file failed');
    log.error({ err: new ApiError(Errors.notFound) }, 'refused');
    log.error({ err: new TypeError('x is not a function') }, 'unexpected error');
    const types = out.lines.map((line) => (JSON.parse(line) as { err: { type: string; message: string; stack: string } }).err);
    expect(types.map((err) => err.type)).toEqual(['WriteRefused', 'ApiError', 'TypeError']);
    expect(types[0]).toMatchObject({ message: 'disk full', stack: expect.stringContaining('disk full') });
  });
});

describe('health checks', () => {
  it('log at debug, not as an access line at info: a container asks every few seconds', async () => {
    const atInfo = sink();
    const http = await sandboxLoggingTo(createLogger('info', { pretty: false, destination: atInfo.stream }));
    for (let i = 0; i < 5; i++) await http.get('/_sandbox/health').expect(200);
    await http.get('/no-such-path').expect(404);
    expect(atInfo.lines.map((line) => (JSON.parse(line) as { path: string }).path)).toEqual(['/no-such-path']);

    const atDebug = sink();
    const logger = createLogger('debug', { pretty: false, destination: atDebug.stream });
    const deps = await createDeps({ rateLimit: 0, logLevel: 'debug' }, { realNow: () => START, logger });
    await request(createApp(deps)).get('/_sandbox/health').expect(200);
    const entries = atDebug.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((e) => e.path === '/_sandbox/health');
    expect(entries.map((e) => [e.level, e.method, e.status])).toEqual([[20, 'GET', 200]]);
  });
});
