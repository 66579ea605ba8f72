// The HTTP edges every path family shares: URLs whose percent-encoding is malformed, and the
// requests Node refuses before express sees them (oversized headers, a malformed request line).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { setup, type TestSandbox } from './helpers.js';
import { raw } from './raw-http.js';
import { startSandbox, type RunningSandbox } from '../src/index.js';

let sb: TestSandbox;
let token: string;

beforeEach(async () => {
  sb = await setup({ seed: 'http-edges' });
  token = await sb.token();
});

const MALFORMED = ['%E0%A4%A', '%', '%zz', '%C0%AF'];

describe('malformed percent-encoding', () => {
  it('answers 400 with the HttpError body on the API (production, /demo, /v1), checkout, hosted pages and control plane', async () => {
    const created = await sb.as(token).post('/customers', { name: 'Kept' });
    expect(created.status).toBe(201);
    const paths = MALFORMED.flatMap((bad) => [
      `/customers/${bad}`,
      `/demo/customers/${bad}`,
      `/v1/customers/${bad}`,
      `/demo/v1/customers/${bad}/payment-methods`,
      `/checkout/payment-methods/${bad}/cvv`,
      `/hosted/invoices/${bad}/pay`,
      `/hosted/files/invoices/${bad}.pdf`,
      `/_sandbox/keys/${bad}`,
      `/_sandbox/scenarios/${bad}`,
      `/${bad}`,
    ]);
    for (const path of paths) {
      const res = await sb.http.get(path).set('Authorization', `Bearer ${token}`);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body).toEqual({ code: 'bad_request', message: expect.stringContaining('percent-encoding'), validation_errors: { path: expect.any(String) } });
    }
    // The checkout surface's errors keep their CORS headers, so a browser can read this one too.
    const checkout = await sb.http.get('/checkout/payment-methods/%zz/cvv').set('Origin', 'https://shop.example');
    expect(checkout.status).toBe(400);
    expect(checkout.headers['access-control-allow-origin']).toBe('*');
    // A write with a malformed id changes nothing.
    const write = await sb.http.post(`/customers/${created.body.id}%zz/archive`).set('Authorization', `Bearer ${token}`).send({});
    expect(write.status).toBe(400);
    expect((await sb.as(token).get(`/customers/${created.body.id}`)).body.status).toBe('active');
  });

  it('answers 400 naming the query for a malformed query string, on the API and the control plane', async () => {
    for (const path of ['/customers?company_name=%zz', '/customers?limit=1&name=%E0%A4%A', '/_sandbox/requests?path=%C0%AF', '/hosted/invoices/inv_1/pay?sig=%']) {
      const res = await sb.http.get(path).set('Authorization', `Bearer ${token}`);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body).toEqual({ code: 'bad_request', message: expect.stringContaining('percent-encoding'), validation_errors: { query: expect.any(String) } });
    }
  });

  it('still routes well-formed encodings: an encoded id is an unknown id, not a bad URL', async () => {
    const res = await sb.as(token).get('/customers/cus%5F%E2%82%AC');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    expect((await sb.as(token).get('/customers?company_name=caf%C3%A9+%25')).status).toBe(200);
  });
});

function parseAnswer(answer: string): { status: number; headers: string; body: unknown } {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), headers: head.toLowerCase(), body: body ? JSON.parse(body) : undefined };
}

describe('requests Node refuses before express', () => {
  let running: RunningSandbox;
  beforeAll(async () => {
    running = await startSandbox({ port: 0, logLevel: 'silent', realTimeTicks: false });
  });
  afterAll(async () => {
    await running.close();
  });

  it('answers headers over the limit with 431 and the HttpError body, then closes', async () => {
    const answer = parseAnswer(await raw(running.port, `GET /customers HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.headers).toContain('content-type: application/json');
    expect(answer.headers).toContain('connection: close');
    expect(answer.body).toEqual({ code: 'request_header_fields_too_large', message: expect.stringContaining('headers'), validation_errors: { headers: expect.any(String) } });
  });

  it('answers a malformed request line with 400 and the HttpError body', async () => {
    const answer = parseAnswer(await raw(running.port, 'THIS IS NOT HTTP\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ code: 'bad_request', message: expect.any(String), validation_errors: {} });
  });

  it('keeps serving after refusals and after a client that hangs up mid-request', async () => {
    const socket = connect(running.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    socket.write('GET /_sandbox/health HTTP/1.1\r\nHost: x\r\nX-Half: ');
    socket.destroy();
    const health = await fetch(`${running.url}/_sandbox/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', version: expect.any(String), reason: null, since: null });
  });
});
