// Vitest loads the package as Node does (an ES module from node_modules): a sandbox per file.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startSandbox } from 'billing-sandbox';

let sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: '42', rateLimit: 0 });
});
afterAll(() => sandbox?.close());

test('a token, a customer made and listed, a scripted 429 and the clock', async () => {
  const auth = { Authorization: `Bearer ${await sandbox.token()}` };
  const made = await fetch(`${sandbox.url}/customers`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Vitest Co', email: 'ap@vitest.test', external_id: 'vitest-1' }),
  });
  expect(made.status).toBe(201);
  const { id } = await made.json();
  await sandbox.loadScenario({ name: 'throttled once', rules: [{ match: { operation: 'listCustomers' }, nth: 2, respond: { status: 429 } }] });
  const first = await fetch(`${sandbox.url}/customers`, { headers: auth });
  expect((await first.json()).data.map((c) => c.id)).toContain(id);
  expect((await fetch(`${sandbox.url}/customers`, { headers: auth })).status).toBe(429);
  // The account clock runs a day ahead of real time once advanced by a day.
  expect(Date.parse(await sandbox.advanceClock(86_400)) - Date.now()).toBeGreaterThan(86_000_000);
});
