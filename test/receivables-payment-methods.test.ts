// Payment methods: cards from provider tokens, bank accounts, the default method, cvv, fees, events.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { setup, type Api, type TestSandbox } from './helpers.js';
import { accountOf, bank, card, control, customer, events, invoice } from './receivables-helpers.js';
import { customers } from '../src/domain/customers/customers.js';
import { loadDocument } from '../src/http/openapi.js';

let sb: TestSandbox;
let api: Api;
let cus: string;

beforeEach(async () => {
  sb = await setup();
  api = sb.as(await sb.token());
  cus = await customer(api);
});

describe('cards', () => {
  it('derives brand, last4 and expiry deterministically from the token; the first method becomes the default', async () => {
    const id = await card(api, cus, 'tok_mastercard');
    const got = await api.get(`/customers/${cus}/payment-methods/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id, type: 'card', brand: 'mastercard', last4: '4444', default: true, bank_name: null, account_last4: null });
    expect(got.body.exp_month).toMatch(/^(0[1-9]|1[0-2])$/);
    expect(Number(got.body.exp_year)).toBeGreaterThan(2026);
    expect((await api.get(`/customers/${cus}`)).body.default_payment_method_id).toBe(id);
    // Same token, same details (another customer).
    const other = await customer(api, 'Other');
    const again = await api.get(`/customers/${other}/payment-methods/${await card(api, other, 'tok_mastercard')}`);
    expect([again.body.exp_month, again.body.exp_year]).toEqual([got.body.exp_month, got.body.exp_year]);
    expect(events(sb, 'payment_method_added')[0]).toMatchObject({ entity_id: id, data: { payment_method_id: id, customer_id: cus, type: 'card', default: true } });
    expect(events(sb, 'default_payment_method_changed')[0].data).toEqual({ customer_id: cus, payment_method_id: id, previous_payment_method_id: null });
  });

  // The README's test values: each good card token gives its brand and last4, and its payments succeed.
  it.each([
    ['tok_visa', 'visa', '4242'],
    ['tok_mastercard', 'mastercard', '4444'],
    ['tok_amex', 'amex', '8431'],
    ['tok_discover', 'discover', '1117'],
  ])('card token %s is a %s card ending %s whose payment succeeds', async (token, brand, last4) => {
    const id = await card(api, cus, token);
    expect((await api.get(`/customers/${cus}/payment-methods/${id}`)).body).toMatchObject({ id, type: 'card', brand, last4 });
    const bearer = await sb.token();
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    expect((await control(sb, bearer).post(`/invoices/${inv.id}/pay`, { payment_method_id: id })).status).toBe(200);
    await sb.advance(3660).expect(200);
    const [payment] = (await sb.as(await sb.token()).get(`/payments?invoice_id=${inv.id}`)).body.data;
    expect(payment).toMatchObject({ status: 'succeeded', failure_reason: null });
  });

  it('reads the embeddable checkout\'s JSON token: last four digits of number_secret and the given expiry', async () => {
    const token = JSON.stringify({ number_secret: 'ev:num_5555555555554444', holder_name_secret: 'ev:name', expiry_month: '7', expiry_year: '2030' });
    const id = await card(api, cus, token);
    expect((await api.get(`/customers/${cus}/payment-methods/${id}`)).body).toMatchObject({ last4: '4444', exp_month: '07', exp_year: '2030', brand: 'mastercard' });
  });

  it.each([
    ['an empty token', { card_provider_token: '' }, 'card_provider_token'],
    ['an unknown provider', { card_provider_token: 'tok_visa', provider: 'stripe' }, 'provider'],
    ['a JSON token that is not JSON', { card_provider_token: '{"number_secret":' }, 'card_provider_token'],
    ['an expired JSON token', { card_provider_token: JSON.stringify({ number_secret: 'ev:4242', expiry_month: '01', expiry_year: '2025' }) }, 'card_provider_token.expiry_year'],
    ['an unknown field', { card_provider_token: 'tok_visa', number: '4242424242424242' }, 'number'],
  ])('refuses %s with 400 and adds nothing', async (_what, body, field) => {
    const res = await api.post(`/customers/${cus}/payment-methods/card`, body);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty([field]);
    expect((await api.get(`/customers/${cus}/payment-methods`)).body.data).toEqual([]);
    expect(events(sb, 'payment_method_added')).toEqual([]);
  });
});

describe('bank accounts', () => {
  it('adds US and CA accounts keeping only the last four digits', async () => {
    const us = await bank(api, cus, '000123456789');
    const ca = await api.post(`/customers/${cus}/payment-methods/bank`, {
      account_data_type: 'ca', institution_name: 'Banque Sandbox', ca_account_data: { account_number: '1234567', institution_code: '001', transit_number: '12345' },
    });
    expect(ca.status).toBe(201);
    const list = await api.get(`/customers/${cus}/payment-methods`);
    expect(list.body).toEqual({ data: [expect.objectContaining({ id: ca.body.id, type: 'ach', account_last4: '4567', account_data_type: 'ca', default: false }), expect.objectContaining({ id: us, type: 'ach', bank_name: 'First Sandbox Bank', account_last4: '6789', account_data_type: 'us', default: true })] });
    const stored = JSON.stringify(accountOf(sb).data);
    expect(stored).not.toContain('000123456789');
    expect(stored).not.toContain('1234567"');
  });

  it.each([
    ['no data block', { account_data_type: 'us' }, 'us_account_data'],
    ['the other block', { account_data_type: 'us', ca_account_data: { account_number: '1234567', institution_code: '001', transit_number: '12345' } }, 'us_account_data'],
    ['both blocks', { account_data_type: 'ca', us_account_data: { account_number: '123456', routing_number: '011000015' }, ca_account_data: { account_number: '1234567', institution_code: '001', transit_number: '12345' } }, 'us_account_data'],
    ['a short routing number', { account_data_type: 'us', us_account_data: { account_number: '123456', routing_number: '0110' } }, 'us_account_data.routing_number'],
    ['an unknown account_data_type', { account_data_type: 'uk', us_account_data: { account_number: '123456', routing_number: '011000015' } }, 'account_data_type'],
  ])('refuses %s with 400 and adds nothing', async (_what, body, field) => {
    const res = await api.post(`/customers/${cus}/payment-methods/bank`, body);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty([field]);
    expect((await api.get(`/customers/${cus}/payment-methods`)).body.data).toEqual([]);
  });
});

describe('how many methods a customer holds', () => {
  it('refuses the 101st payment method with 422 naming the customer, and adds nothing', async () => {
    const cus = await customer(api);
    for (let i = 0; i < 100; i++) await card(api, cus);
    const res = await api.post(`/customers/${cus}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault' });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.validation_errors)).toEqual(['customer_id']);
    const listed = await api.get(`/customers/${cus}/payment-methods`);
    expect(listed.body.data).toHaveLength(100);
    // Deleting one makes room again.
    expect((await api.delete(`/customers/${cus}/payment-methods/${listed.body.data[0].id}`)).status).toBe(201);
    expect((await api.post(`/customers/${cus}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault' })).status).toBe(201);
  });
});

describe('default, delete, cvv and fees', () => {
  it('moves the default with default_payment_method_changed, and deleting the default leaves none', async () => {
    const first = await card(api, cus);
    const second = await bank(api, cus);
    const res = await api.patch(`/customers/${cus}/payment-methods/${second}/default`);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ response: 'Default payment method updated' });
    expect((await api.get(`/customers/${cus}`)).body.default_payment_method_id).toBe(second);
    expect((await api.get(`/customers/${cus}/payment-methods/${first}`)).body.default).toBe(false);
    expect(events(sb, 'default_payment_method_changed').at(-1)?.data).toEqual({ customer_id: cus, payment_method_id: second, previous_payment_method_id: first });
    await api.patch(`/customers/${cus}/payment-methods/${second}/default`).expect(201);
    expect(events(sb, 'default_payment_method_changed')).toHaveLength(2);
    const del = await api.delete(`/customers/${cus}/payment-methods/${second}`);
    expect(del.status).toBe(201);
    expect(del.body).toEqual({ response: 'Payment method deleted' });
    expect(events(sb, 'payment_method_deleted')[0]).toMatchObject({ entity_id: second, data: { default: true } });
    expect((await api.get(`/customers/${cus}`)).body.default_payment_method_id).toBeNull();
    expect((await api.get(`/customers/${cus}/payment-methods/${second}`)).status).toBe(404);
    expect((await api.get(`/customers/${cus}/payment-methods`)).body.data.map((m: { id: string }) => m.id)).toEqual([first]);
  });

  it('answers 404 for a method of another customer or an unknown customer', async () => {
    const other = await customer(api, 'Other');
    const theirs = await card(api, other);
    expect((await api.get(`/customers/${cus}/payment-methods/${theirs}`)).status).toBe(404);
    expect((await api.delete(`/customers/${cus}/payment-methods/${theirs}`)).status).toBe(404);
    expect((await api.patch(`/customers/${cus}/payment-methods/${theirs}/default`)).status).toBe(404);
    expect((await api.get('/customers/cus_nope/payment-methods')).status).toBe(404);
    expect(customers(accountOf(sb)).get(other)?.default_payment_method_id).toBe(theirs);
  });

  it('takes a CVV for cards only', async () => {
    const c = await card(api, cus);
    const b = await bank(api, cus);
    const ok = await api.post(`/customers/${cus}/payment-methods/${c}/cvv`, { cvv_secret: 'ev:cvv', product_type: 'invoice', provider: 'evervault' });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ success: true });
    const bad = await api.post(`/customers/${cus}/payment-methods/${b}/cvv`, { cvv_secret: 'ev:cvv' });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty('card_id');
    expect((await api.post(`/customers/${cus}/payment-methods/${c}/cvv`, {})).status).toBe(400);
  });

  it('quotes fees as decimal strings: cards 2.9% + 0.30, bank accounts 0.8% capped at 5.00, borne by the partner', async () => {
    const c = await card(api, cus);
    const b = await bank(api, cus);
    const quote = await api.post(`/customers/${cus}/payment-methods/${c}/fees`, { amount: '100.00', currency: 'USD' });
    expect(quote.status).toBe(200);
    expect(quote.body).toEqual({
      fee_percentage_for_customer: '0.00', fee_percentage_for_partner: '2.90', fixed_fee_amount_customer: '0.00',
      fixed_fee_amount_partner: '0.30', relative_fee_amount_customer: '0.00', relative_fee_amount_partner: '2.90',
    });
    const ach = await api.post(`/customers/${cus}/payment-methods/${b}/fees`, { amount: '2000' });
    expect(ach.body).toMatchObject({ fee_percentage_for_partner: '0.80', relative_fee_amount_partner: '5.00', fixed_fee_amount_partner: '0.00' });
    const bad = await api.post(`/customers/${cus}/payment-methods/${c}/fees`, { amount: '-1' });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty('amount');
    const huge = await api.post(`/customers/${cus}/payment-methods/${c}/fees`, { amount: '1'.repeat(30) });
    expect(huge.status).toBe(400);
    expect(huge.body.validation_errors).toHaveProperty('amount');
  });

  it('answers the documented example request for a card with exactly the documented example quote', async () => {
    const operation = loadDocument('openapi').document.paths?.['/customers/{id}/payment-methods/{card_id}/fees']?.post as unknown as {
      requestBody: { content: { 'application/json': { example: object } } };
      responses: { '200': { content: { 'application/json': { example: object } } } };
    };
    const c = await card(api, cus);
    const res = await api.post(`/customers/${cus}/payment-methods/${c}/fees`, operation.requestBody.content['application/json'].example);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(operation.responses['200'].content['application/json'].example);
  });
});
