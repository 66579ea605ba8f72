// Defects the schema-driven fuzzer (npm run fuzz) found, each pinned by a test through HTTP that
// failed before its fix. The fuzzer itself runs a slice in test/fuzz.test.ts.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { setup, type TestSandbox } from './helpers.js';
import { documentOperations } from '../src/http/openapi.js';
import { customer, invoice } from './receivables-helpers.js';

let sb: TestSandbox;
let token: string;

beforeEach(async () => {
  sb = await setup({ seed: 'fuzz-findings' });
  token = await sb.token();
});

async function checkoutToken(): Promise<string> {
  const api = sb.as(token);
  const cus = await customer(api);
  const inv = await invoice(api, cus);
  return (await api.post('/checkout-auth/init', { customer_id: cus, invoice_id: inv.id })).body.token;
}

describe('every operation documents the 400 it can answer', () => {
  it('answers an unknown query parameter with a documented 400 HttpError on every operation of both documents', async () => {
    const checkout = await checkoutToken();
    const basic = `Basic ${Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64')}`;
    const operations = [...documentOperations('openapi'), ...documentOperations('control-plane')];
    expect(operations.length).toBeGreaterThan(90);
    const answers: string[] = [];
    for (const { operationId, path, method, operation } of operations) {
      const url = `${path.replace(/\{[^}]+\}/g, 'x_1')}?not_a_field=1`;
      const security = JSON.stringify(operation.security ?? '');
      const auth = security.includes('checkoutToken') ? `Bearer ${checkout}` : security.includes('clientBasic') ? basic : `Bearer ${token}`;
      const res = await sb.http[method as 'get' | 'post' | 'patch' | 'delete'](url).set('Authorization', auth);
      answers.push(`${operationId} ${res.status} ${res.body?.code}`);
      // Before: 36 operations without a documented 400 answered 500 response_validation_failed.
      if (res.status !== 400) continue;
      expect({ operationId, body: res.body }).toEqual({ operationId, body: { code: 'bad_request', message: expect.any(String), validation_errors: expect.objectContaining({ not_a_field: expect.any(String) }) } });
    }
    expect(answers.filter((a) => !/ 400 bad_request$/.test(a))).toEqual([]);
  }, 120_000);
});
