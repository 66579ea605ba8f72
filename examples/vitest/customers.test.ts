// Example: a sandbox per test file, in-process: the typed `api` and `control` of startSandbox(), a
// reset before each test, a scenario and the account clock.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from 'billing-sandbox';

let sandbox: RunningSandbox;

beforeAll(async () => {
  // rateLimit: 0 because a test sends more than the real service's 5 requests a second.
  sandbox = await startSandbox({ port: 0, seed: '42', rateLimit: 0 });
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset()); // everything back to the start state, scenarios included

describe('customers against the sandbox', () => {
  it('creates, lists and archives a customer', async () => {
    const { api } = sandbox;
    const made = await api.POST('/customers', { body: { name: 'Acme Corp', email: 'billing@acme.test' } });
    expect((await api.GET('/customers')).data).toEqual([made]);
    const archived = await api.DELETE('/customers/{id}', { params: { path: { id: made.id } } }); // archives it
    expect(archived.status).toBe('archived');
  });

  it('answers a scripted 429 on the second list call, then recovers', async () => {
    const { api, control } = sandbox;
    await control.scenarios.load({
      name: 'list throttled once',
      rules: [{ match: { operation: 'listCustomers' }, nth: 2, respond: { status: 429 } }],
    });
    await api.GET('/customers');
    await expect(api.GET('/customers')).rejects.toMatchObject({ status: 429, code: expect.any(String) });
    expect((await api.GET('/customers')).data).toEqual([]);
  });

  it('moves the account clock a month on; the token keeps working (tokens live in real time)', async () => {
    const { now } = await sandbox.control.clock.advance('31d');
    expect(Date.parse(now)).toBeGreaterThan(Date.now() + 30 * 86400_000);
    expect((await sandbox.api.GET('/customers')).data).toEqual([]);
  });

  it('keeps the demo environment apart', async () => {
    const partner = await sandbox.partner({ environment: 'demo' });
    await partner.api.POST('/customers', { body: { name: 'Demo Co' } });
    expect(partner.apiUrl).toBe(`${sandbox.url}/demo`);
    expect((await sandbox.api.GET('/customers')).data).toEqual([]);
  });
});
