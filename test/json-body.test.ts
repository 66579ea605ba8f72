// The plain-body fast paths (src/http/json-body.ts) answer every body exactly as body-parser does. JSON, as json()
// does: each body below is sent once as `application/json` (the fast path) and once as
// `application/vnd.sandbox+json` (left to body-parser), and the two answers and the stored state match.
import { beforeEach, describe, expect, it } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { plainBodies, plainForm } from '../src/http/json-body.js';
import { setup, type TestSandbox } from './helpers.js';
import { answered, answers, raw, rawConnection } from './raw-http.js';
import { startSandbox } from '../src/index.js';

let sb: TestSandbox;
let token: string;

beforeEach(async () => {
  sb = await setup({ seed: 'json-body' });
  token = await sb.token();
});

const BODIES: Array<[string, string]> = [
  ['an object', '{"name":"Acme","email":"a@acme.test"}'],
  ['an object after whitespace', ' \n\t{"name":"Acme"}'],
  ['an object after a byte-order mark', '\ufeff{"name":"Acme"}'],
  ['non-ASCII text', '{"name":"Société Générale – Zürich"}'],
  ['an empty body', ''],
  ['whitespace only', '   '],
  ['an array', '[{"name":"Acme"}]'],
  ['a string at the top', '"Acme"'],
  ['a number at the top', '42'],
  ['null at the top', 'null'],
  ['malformed JSON', '{"name": '],
  ['a trailing comma', '{"name":"Acme",}'],
];

async function post(type: string, body: string) {
  const res = await sb.http.post('/customers').set('Authorization', `Bearer ${token}`).set('Content-Type', type).send(body);
  const listed = await sb.http.get('/customers').set('Authorization', `Bearer ${token}`);
  return { status: res.status, body: res.body as Record<string, unknown>, names: (listed.body.data as Array<{ name: string }>).map((c) => c.name) };
}

describe('the plain JSON body fast path', () => {
  it.each(BODIES)('answers %s as body-parser does', async (_name, body) => {
    const fast = await post('application/json', body);
    // The same sandbox state for the second request: a fresh one.
    sb = await setup({ seed: 'json-body' });
    token = await sb.token();
    const slow = await post('application/vnd.sandbox+json', body);
    expect({ ...fast, body: { ...fast.body, id: undefined, created_at: undefined } }).toEqual({ ...slow, body: { ...slow.body, id: undefined, created_at: undefined } });
  });

  it('reads a 40 kB body whole, and bodies that name charset=utf-8', async () => {
    const res = await sb.http.post('/customers').set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json; charset=UTF-8').send(`{"name":"${'x'.repeat(40_000)}"}`);
    // Over the name's 255-character limit: refused by validation, so the body was read whole and parsed.
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.validation_errors)).toEqual(['name']);
    const ok = await sb.http.post('/customers').set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json;charset="utf-8"').send('{"name":"Quoted"}');
    expect(ok.status).toBe(201);
    expect(ok.body.name).toBe('Quoted');
  });
});

// The plain form fast path (plainForm: the token endpoint's bodies) against body-parser's
// urlencoded({ extended: false }), each alone in an app of its own, fed the same bytes.
describe('the plain form body fast path', () => {
  const LIMIT = 1024 * 1024;
  const answer = (app: express.Express) => {
    app.post('/form', (req, res) => {
      res.json({ body: req.body as unknown });
    });
    app.use((error: { status?: number; type?: string; message: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(299).json({ error: { status: error.status, type: error.type, message: error.message } });
    });
    return app;
  };
  const reader = plainBodies(plainForm(LIMIT));
  const fast = answer(express().use((req, _res, next) => {
    if (!reader(req, (error) => next(error))) next(Object.assign(new Error('left to body-parser'), { status: 500, type: 'not.taken' }));
  }));
  const slow = answer(express().use(express.urlencoded({ extended: false, limit: LIMIT })));

  const FORMS: Array<[string, string]> = [
    ['the token request', 'grant_type=client_credentials'],
    ['an empty body', ''],
    ['a byte-order mark first', '\ufeffgrant_type=client_credentials'],
    ['a repeated field', 'scope=a&scope=b&scope=c'],
    ['percent-encoding and plus signs', 'name=%E2%82%AC+x%20y&q=a%2Bb'],
    ['a malformed escape', 'name=%ZZ&x=%E2%82'],
    ['raw UTF-8', 'société=Zürich'],
    ['prototype names', '__proto__=x&constructor=y&hasOwnProperty=z'],
    ['brackets', 'a[b]=1&c[]=2'],
    ['empty names and values', 'a&b=&=c&&'],
    ['1,000 parameters', Array.from({ length: 1000 }, (_, i) => `p${i}=${i}`).join('&')],
    ['1,001 parameters', Array.from({ length: 1001 }, (_, i) => `p${i}=${i}`).join('&')],
  ];
  it.each(FORMS)('answers %s as body-parser does', async (_name, form) => {
    const send = (app: express.Express) => request(app).post('/form').set('Content-Type', 'application/x-www-form-urlencoded').send(form);
    const [ours, theirs] = await Promise.all([send(fast), send(slow)]);
    expect(ours.body).not.toEqual({ error: expect.objectContaining({ type: 'not.taken' }) });
    expect({ status: ours.status, body: ours.body as unknown }).toEqual({ status: theirs.status, body: theirs.body as unknown });
  });

  it('takes forms that name charset=utf-8, and leaves other charsets, compressed and oversized forms to body-parser', async () => {
    const taken = await request(fast).post('/form').set('Content-Type', 'application/x-www-form-urlencoded; charset="UTF-8"').send('a=1');
    expect(taken.body).toEqual({ body: { a: '1' } });
    for (const [type, body] of [['application/x-www-form-urlencoded; charset=iso-8859-1', 'a=1'], ['application/x-www-form-urlencoded', `a=${'x'.repeat(LIMIT)}`]] as const) {
      const left = await request(fast).post('/form').set('Content-Type', type).send(body);
      expect(left.body.error.type).toBe('not.taken');
    }
    const gzip = await request(fast).post('/form').set('Content-Type', 'application/x-www-form-urlencoded').set('Content-Encoding', 'gzip').send('a=1');
    expect(gzip.body.error.type).toBe('not.taken');
  });
});

describe('when the body comes', () => {
  it('reads a body sent after the server took the head (Expect: 100-continue), in two writes, and bodies pipelined behind heads', async () => {
    const running = await startSandbox({ port: 0, logLevel: 'silent', seed: 'json-body-late', rateLimit: 0 });
    try {
      const bearer = await running.token();
      const head = (body: string, extra: string[] = []) => [
        'POST /customers HTTP/1.1', 'Host: sandbox', `Authorization: Bearer ${bearer}`, 'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`, ...extra, '', '',
      ].join('\r\n');

      // The server answers 100 Continue once it has read the head: the body reader has then found
      // no body yet, and must read it as it comes.
      const late = await rawConnection(running.port);
      const body = JSON.stringify({ name: 'Late Société', email: 'late@acme.test' });
      late.write(head(body, ['Expect: 100-continue']));
      expect((await late.readUntil(answered)).toString('latin1')).toMatch(/^HTTP\/1\.1 100 Continue/);
      late.write(body.slice(0, 9));
      late.write(body.slice(9));
      const [made] = answers(await late.readUntil(answered));
      expect(made).toMatchObject({ status: 201, body: { name: 'Late Société', email: 'late@acme.test' } });
      late.end();

      // Two requests with bodies in one write: each body goes with its own head.
      const first = JSON.stringify({ name: 'First' });
      const second = JSON.stringify({ name: 'Second', email: 'second@acme.test' });
      const both = answers(Buffer.from(await raw(running.port, head(first) + first + head(second, ['Connection: close']) + second)));
      expect(both.map((answer) => [answer.status, (answer.body as { name: string }).name])).toEqual([[201, 'First'], [201, 'Second']]);

      const { id } = made.body as { id: string };
      const stored = await (await fetch(`${running.url}/customers/${id}`, { headers: { authorization: `Bearer ${bearer}` } })).json() as { name: string; email: string };
      expect(stored).toMatchObject({ name: 'Late Société', email: 'late@acme.test' });
      const listed = await (await fetch(`${running.url}/customers`, { headers: { authorization: `Bearer ${bearer}` } })).json() as { data: Array<{ name: string }> };
      expect(listed.data.map((c) => c.name)).toEqual(['Second', 'First', 'Late Société']);
    } finally {
      await running.close();
    }
  });

  it('stores nothing from a body cut off mid-way, answers 400 on that connection, and goes on answering', async () => {
    const running = await startSandbox({ port: 0, logLevel: 'silent', seed: 'json-body-cut', rateLimit: 0 });
    try {
      const bearer = await running.token();
      const body = JSON.stringify({ name: 'Cut Off', email: 'cut@acme.test' });
      // Read as it comes in both: after 100 Continue, and with a first part already in the buffer.
      for (const expectContinue of [true, false]) {
        const cut = await rawConnection(running.port);
        cut.write([
          'POST /customers HTTP/1.1', 'Host: sandbox', `Authorization: Bearer ${bearer}`, 'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`, ...(expectContinue ? ['Expect: 100-continue'] : []), '', '',
        ].join('\r\n'));
        if (expectContinue) expect((await cut.readUntil(answered)).toString('latin1')).toMatch(/^HTTP\/1\.1 100 Continue/);
        cut.write(body.slice(0, 10));
        // The client gives up: its side closed with two thirds of the body unsent.
        cut.end();
        const [refused] = answers(await cut.readToClose());
        expect(refused).toMatchObject({ status: 400, body: { code: 'bad_request', message: expect.any(String) } });
      }
      const headers = { authorization: `Bearer ${bearer}` };
      const listed = await (await fetch(`${running.url}/customers`, { headers })).json() as { data: unknown[] };
      expect(listed.data).toEqual([]);
      // Never an API call: the journal holds the token request and the list, not the cut ones.
      const journal = await (await fetch(`${running.url}/_sandbox/requests`, { headers })).json() as { data: Array<{ method: string; path: string }> };
      expect(journal.data.map((entry) => `${entry.method} ${entry.path}`)).toEqual(['GET /customers', 'POST /oauth/token']);
      // The same client's next create, whole, is stored.
      const made = await fetch(`${running.url}/customers`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
      expect(made.status).toBe(201);
      expect((await (await fetch(`${running.url}/customers`, { headers })).json() as { data: Array<{ name: string }> }).data.map((c) => c.name)).toEqual(['Cut Off']);
    } finally {
      await running.close();
    }
  });
});
