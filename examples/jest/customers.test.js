// Example partner test: the integration code in billing-client.js against the sandbox started by
// global-setup.js. Each file makes its own account, so files can run in parallel.
import { createCustomer } from './billing-client.js';
import { getToken, newAccount } from './sandbox.js';

let account;

beforeAll(async () => {
  account = await newAccount('jest example');
});

beforeEach(async () => {
  // This account back to empty (data, scenarios) before each test.
  await account.control('POST', '/reset');
  account.token = await getToken(account);
});

test('creates a customer that reads back the same', async () => {
  const { customer, attempts } = await createCustomer(account, { name: 'Acme Corp', external_id: 'acme-1' });
  expect(attempts).toBe(1);
  const res = await fetch(`${account.baseUrl}/customers/${customer.id}`, { headers: { Authorization: `Bearer ${account.token}` } });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual(customer);
});

test('retries through two 503s scripted by a scenario, and creates exactly one customer', async () => {
  const loaded = await account.control('POST', '/scenarios', {
    name: 'customer creation outage',
    rules: [{ match: { operation: 'createCustomer' }, times: 2, respond: { status: 503 } }],
  });
  expect(loaded.status).toBe(201);

  const { attempts } = await createCustomer(account, { name: 'Retry Ltd' });
  expect(attempts).toBe(3);
  const list = await fetch(`${account.baseUrl}/customers`, { headers: { Authorization: `Bearer ${account.token}` } });
  expect((await list.json()).data.map((c) => c.name)).toEqual(['Retry Ltd']);
});

test('gives up after its retries with the last error', async () => {
  await account.control('POST', '/scenarios', {
    name: 'customer creation down',
    rules: [{ match: { operation: 'createCustomer' }, respond: { status: 503 } }],
  });
  await expect(createCustomer(account, { name: 'Never Ltd' }, { retries: 1 })).rejects.toMatchObject({ status: 503 });
});

test('a token outlives a month on the account clock; expiring it through the control plane gives 401', async () => {
  await account.control('POST', '/clock/advance', { seconds: 31 * 86400 });
  const list = () => fetch(`${account.baseUrl}/customers`, { headers: { Authorization: `Bearer ${account.token}` } });
  expect((await list()).status).toBe(200);
  // Tokens live in real time; this is how a test exercises the client's renewal without waiting.
  await account.control('POST', '/tokens/expire');
  const res = await list();
  expect(res.status).toBe(401);
  expect((await res.json()).message).toBe('The access token has expired.');
});
