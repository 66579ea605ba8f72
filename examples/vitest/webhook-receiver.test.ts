// Example (quoted in docs/webhooks.md, "A receiver for your test suite"): a receiver subscribed to a
// topic, a delivery accepted, a delivery refused with 503 and its retry accepted once the account clock
// reaches it. Checks of what arrived follow the quoted part.
import { expect, test } from 'vitest';

// #region receiver
import { startSandbox, startWebhookReceiver } from 'billing-sandbox';

const sandbox = await startSandbox({ port: 0, allowHttpWebhooks: true });
const receiver = await startWebhookReceiver();            // http://127.0.0.1:<free port>
const { api } = sandbox;
await api.POST('/webhooks', { body: { endpoint_url: `${receiver.url}/hooks`, topic: 'customer_created', secret_key: 's3cret' } });

await api.POST('/customers', { body: { name: 'Acme Corp', email: 'ap@acme.test' } });
const hook = await receiver.waitFor('customer_created', { timeoutMs: 5000 });
hook.entity_id; hook.data.name; hook.secret;               // cus_...; 'Acme Corp' (typed per topic); 's3cret' (the Authorization header)

// A delivery that fails: answer 503 (a number, or a function deciding per delivery) ...
const refused = new Promise((resolve) => receiver.respondWith((delivery) => (resolve(delivery), 503)));
await api.POST('/customers', { body: { name: 'Globex', email: 'ap@globex.test' } });
await refused;                                             // the sandbox sent it and got 503
receiver.respondWith(200);                                 // ... then accept again:
await sandbox.control.clock.advance('90s');                // the first retry (90 s later) falls due and is delivered
const [first, second] = await receiver.waitForCount('customer_created', 2);   // two accepted deliveries
receiver.deliveries.map((d) => d.status);                  // [200, 503, 200]: every delivery, as answered
await receiver.close();
await sandbox.close();
// #endregion receiver

test('the receiver saw the first delivery, the refused one and its accepted retry', () => {
  expect(hook.entity_id).toMatch(/^cus_/);
  expect(hook.data).toMatchObject({ name: 'Acme Corp' });
  expect(hook.secret).toBe('s3cret');
  expect(receiver.deliveries.map((d) => d.status)).toEqual([200, 503, 200]);
  expect([first.entity_id, second.data]).toEqual([hook.entity_id, expect.objectContaining({ name: 'Globex' })]);
  expect(receiver.deliveries[2].idempotency_key).toBe(receiver.deliveries[1].idempotency_key);
});
