// Idempotency keys compare the request, not its spelling: the same body with its keys in another
// order replays the first answer; a different body is refused with 409 idempotency_key_reused.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { setup, type Api, type TestSandbox } from './helpers.js';
import { card, customer, invoice } from './receivables-helpers.js';

let sb: TestSandbox;
let api: Api;

beforeEach(async () => {
  sb = await setup({ seed: 'idempotency' });
  api = sb.as(await sb.token());
});

describe('Idempotency-Key on the checkout', () => {
  it('replays the first answer for the same body in another key order, and refuses another body with 409', async () => {
    const cus = await customer(api);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    const pm = await card(api, cus);
    const token = (await api.post('/checkout-auth/init', { customer_id: cus, invoice_id: inv.id })).body.token as string;
    const pay = (body: object) => sb.http.post('/checkout/payments').set({ Authorization: `Bearer ${token}`, 'Idempotency-Key': 'order-1' }).send(body);

    const first = await pay({ amount: '300.00', customer_id: cus, invoice_id: inv.id, payment_method: 'card', payment_method_id: pm });
    expect(first.status).toBe(201);
    // Same fields, another order (as another JSON encoder would write them).
    const reordered = await pay({ payment_method_id: pm, payment_method: 'card', invoice_id: inv.id, customer_id: cus, amount: '300.00' });
    expect(reordered.status).toBe(201);
    expect(reordered.body).toEqual(first.body);
    const other = await pay({ payment_method_id: pm, payment_method: 'card', invoice_id: inv.id, customer_id: cus, amount: '1.00' });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'idempotency_key_reused', validation_errors: { 'Idempotency-Key': expect.any(String) } });
    // One payment in all.
    expect((await api.get('/payments')).body.data).toHaveLength(1);
  });
});
