// Example: the package's typed client. `api` is typed from the OpenAPI document the package ships
// (paths, parameters, bodies and answers), so a typo in a path or a field is a compile error
// (`npm run typecheck`), not a runtime surprise; `api.raw` is openapi-fetch's client itself.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, SandboxRequestError, type RunningSandbox } from 'billing-sandbox';

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: '7', rateLimit: 0 });
});
afterAll(() => sandbox.close());

it('creates and reads a customer with typed bodies and path parameters', async () => {
  const { api } = await sandbox.partner();
  const made = await api.POST('/customers', { body: { name: 'Typed Ltd', email: 'ap@typed.test', external_id: 'typed-1' } });
  const got = await api.GET('/customers/{id}', { params: { path: { id: made.id } } });
  expect(got).toEqual(made);
});

it('throws the HttpError, typed, for a missing customer', async () => {
  const { api } = await sandbox.partner();
  const error = await api.GET('/customers/{id}', { params: { path: { id: 'cus_00000000000000000000' } } }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(SandboxRequestError);
  expect(error).toMatchObject({ status: 404, code: 'not_found', body: { message: expect.any(String) } });
});

it('answers the status and headers through raw, without throwing', async () => {
  const { api } = await sandbox.partner();
  const { data, error, response } = await api.raw.GET('/customers', { params: { query: { limit: 0 } } });
  expect([data, response.status]).toEqual([undefined, 400]);
  expect(error).toMatchObject({ validation_errors: { limit: expect.any(String) } });
});
