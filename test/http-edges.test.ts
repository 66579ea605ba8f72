// The HTTP edges every path family shares: URLs whose percent-encoding is malformed, and the
// requests Node refuses before express sees them (oversized headers, a malformed request line).
import { beforeEach, describe, expect, it } from '@jest/globals';
import { setup, type TestSandbox } from './helpers.js';

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
