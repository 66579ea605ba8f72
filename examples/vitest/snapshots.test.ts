// Example (quoted in docs/snapshots.md, "Set up once, restore before each test"): the account is set up
// once (a customer, an invoice, a webhook subscription), saved as a snapshot, and restored before
// every test, so each test starts from the same account whatever the one before it did.
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { startSandbox, type RunningSandbox } from 'billing-sandbox';

let sandbox: RunningSandbox;
let token: string;
let acme: { id: string };

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

// #region restore-per-test
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: '42', rateLimit: 0 });
  token = await sandbox.token();
  // The slow part, once: whatever every test needs, made through the API.
  acme = (await api('POST', '/customers', { name: 'Acme Corp', email: 'ap@acme.test' })).body;
  await api('POST', '/invoices', { customer_id: acme.id, line_items: [{ description: 'Plan', quantity: 1, amount: 120 }] });
  await api('POST', '/webhooks', { endpoint_url: 'https://hooks.example.com/billing', topic: 'invoice_paid', secret_key: 'whsec_42' });
  await sandbox.saveSnapshot('after-setup');       // the default production account, with its clock and queue
});

beforeEach(async () => {
  await sandbox.restoreSnapshot('after-setup');    // every test starts from exactly that account
});
// #endregion restore-per-test

afterAll(async () => {
  await sandbox.close();
});

test('a test archives the customer and moves the clock a month on', async () => {
  expect((await api('DELETE', `/customers/${acme.id}`)).body.status).toBe('archived');
  await sandbox.advanceClock(30 * 86_400);
  expect((await api('GET', '/customers')).body.data).toHaveLength(1);
});

test('the next test finds the customer active again, and the clock back where the set-up left it', async () => {
  expect((await api('GET', `/customers/${acme.id}`)).body.status).toBe('active');
  const clock = await (await fetch(`${sandbox.url}/_sandbox/clock`, { headers: { Authorization: `Bearer ${token}` } })).json();
  expect(clock.offset_seconds).toBe(0);
  // New objects get fresh ids: the counter goes on from the snapshot's.
  const made = (await api('POST', '/customers', { name: 'Globex' })).body;
  expect(made.id).not.toBe(acme.id);
});
