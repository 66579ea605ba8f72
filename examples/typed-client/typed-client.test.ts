// Example: the generated, typed client against a sandbox. A typo in a path or a field is a compile
// error (`npm run typecheck`), not a runtime surprise.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from 'billing-sandbox';
import { billingClient } from './client.js';

let sandbox: RunningSandbox;
let client: Awaited<ReturnType<typeof billingClient>>;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: '7', rateLimit: 0 });
  client = await billingClient(sandbox.url, sandbox.credentials.production);
});
afterAll(async () => {
  await sandbox.close();
});

it('creates and reads a customer with typed bodies and path parameters', async () => {
  const { data: made, error, response } = await client.POST('/customers', {
    body: { name: 'Typed Ltd', email: 'ap@typed.test', external_id: 'typed-1' },
  });
  expect(error).toBeUndefined();
  expect(response.status).toBe(201);
  const { data: got } = await client.GET('/customers/{id}', { params: { path: { id: made!.id } } });
  expect(got).toEqual(made);
});

it('gets the HttpError body, typed, for a missing customer', async () => {
  const { data, error, response } = await client.GET('/customers/{id}', { params: { path: { id: 'cus_00000000000000000000' } } });
  expect(data).toBeUndefined();
  expect(response.status).toBe(404);
  expect(error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
});

it('gets a 400 naming the field for bad input', async () => {
  const { error, response } = await client.GET('/customers', { params: { query: { limit: 0 } } });
  expect(response.status).toBe(400);
  expect(error).toMatchObject({ validation_errors: expect.objectContaining({ limit: expect.any(String) }) });
});
