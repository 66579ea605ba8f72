// The plain-JSON fast path (src/http/json-body.ts) answers every body exactly as body-parser's json()
// does: each body below is sent once as `application/json` (the fast path) and once as
// `application/vnd.sandbox+json` (left to body-parser), and the two answers and the stored state match.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { setup, type TestSandbox } from './helpers.js';

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
