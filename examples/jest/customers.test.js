// Example partner test: the integration code in billing-client.js against the sandbox started by
// global-setup.js. Each file makes its own partner, so files can run in parallel.
import { createCustomer } from './billing-client.js';
import { newPartner } from './sandbox.js';

let partner;
let account; // what billing-client.js is given: the API's base URL and an access token

beforeAll(async () => {
  partner = await newPartner('jest example');
});

beforeEach(async () => {
  await partner.control.reset(); // this account back to empty (data, scenarios) before each test
  account = { baseUrl: partner.apiUrl, token: await partner.token() };
});

test('creates a customer that reads back the same', async () => {
  const { customer, attempts } = await createCustomer(account, { name: 'Acme Corp', external_id: 'acme-1' });
  expect(attempts).toBe(1);
  expect(await partner.api.GET('/customers/{id}', { params: { path: { id: customer.id } } })).toEqual(customer);
});

test('retries through two 503s scripted by a scenario, and creates exactly one customer', async () => {
  await partner.control.scenarios.load({
    name: 'customer creation outage',
    rules: [{ match: { operation: 'createCustomer' }, times: 2, respond: { status: 503 } }],
  });
  const { attempts } = await createCustomer(account, { name: 'Retry Ltd' });
  expect(attempts).toBe(3);
  expect((await partner.api.GET('/customers')).data.map((c) => c.name)).toEqual(['Retry Ltd']);
});

test('gives up after its retries with the last error', async () => {
  await partner.control.scenarios.load({
    name: 'customer creation down',
    rules: [{ match: { operation: 'createCustomer' }, respond: { status: 503 } }],
  });
  await expect(createCustomer(account, { name: 'Never Ltd' }, { retries: 1 })).rejects.toMatchObject({ status: 503 });
});

test('a token outlives a month on the account clock; expiring it through the control plane gives 401', async () => {
  await partner.control.clock.advance('31d');
  const list = () => partner.api.raw.GET('/customers', { headers: { Authorization: `Bearer ${account.token}` } });
  expect((await list()).response.status).toBe(200);
  // Tokens live in real time; this is how a test exercises the client's renewal without waiting.
  await partner.control.tokens.expire();
  const { response, error } = await list();
  expect(response.status).toBe(401);
  expect(error.message).toBe('The access token has expired.');
});
