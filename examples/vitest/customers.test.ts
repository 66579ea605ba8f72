// Example: a sandbox per test file, in-process, with the programmatic helpers for tokens, reset,
// scenarios and the clock.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from 'billing-sandbox';

let sandbox: RunningSandbox;
let token: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: '42', rateLimit: 0 });
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(async () => {
  await sandbox.reset(); // everything back to the start state, scenarios included
  token = await sandbox.token();
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('customers against the sandbox', () => {
  it('creates, lists and archives a customer', async () => {
    const made = await api('POST', '/customers', { name: 'Acme Corp', email: 'billing@acme.test' });
    expect(made.status).toBe(201);
    expect((await api('GET', '/customers')).body.data).toEqual([made.body]);
    const archived = await api('DELETE', `/customers/${made.body.id}`); // archives it
    expect(archived.body.status).toBe('archived');
  });

  it('answers a scripted 429 on the second list call, then recovers', async () => {
    await sandbox.loadScenario({
      name: 'list throttled once',
      rules: [{ match: { operation: 'listCustomers' }, nth: 2, respond: { status: 429 } }],
    });
    expect((await api('GET', '/customers')).status).toBe(200);
    const throttled = await api('GET', '/customers');
    expect(throttled.status).toBe(429);
    expect(throttled.body.code).toEqual(expect.any(String));
    expect((await api('GET', '/customers')).status).toBe(200);
  });

  it('moves the account clock a month on; the token keeps working (tokens live in real time)', async () => {
    const now = await sandbox.advanceClock(31 * 86400);
    expect(Date.parse(now)).toBeGreaterThan(Date.now() + 30 * 86400_000);
    expect((await api('GET', '/customers')).status).toBe(200);
  });

  it('keeps the demo environment apart', async () => {
    const demoToken = await sandbox.token('demo');
    const res = await fetch(`${sandbox.url}/demo/customers`, { headers: { Authorization: `Bearer ${demoToken}` } });
    expect(res.status).toBe(200);
    const wrong = await fetch(`${sandbox.url}/customers`, { headers: { Authorization: `Bearer ${demoToken}` } });
    expect(wrong.status).toBe(401);
  });
});
