// Example (quoted in docs/containers.md, "Testcontainers for Node"): the sandbox's image under
// Testcontainers with `billing-sandbox/testcontainers`: the same `api`, `control` and `partner()` as
// in-process, a scenario file of ours, webhooks to a receiver on this machine, and the events
// asserted through the control plane instead. Run by node's test runner (`node --test`); the same
// calls work in Jest or Vitest. CI runs it against podman's Docker-compatible API on the image it
// builds (scripts/containers.sh).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

// #region container
import { startWebhookReceiver } from 'billing-sandbox';
import { BillingSandboxContainer } from 'billing-sandbox/testcontainers';

const sandbox = await new BillingSandboxContainer(process.env.BILLING_SANDBOX_IMAGE ?? 'billing-sandbox:latest')
  .withFixtures('demo')                                               // a dataset the image ships
  .withScenario(new URL('list-throttled.yaml', import.meta.url).pathname)   // a file of ours, copied in
  .withRateLimit(0)
  .withWebhooksToHost()                                               // --allow-http-webhooks, host.docker.internal
  .start();                                                           // waits for GET /_sandbox/health
after(() => sandbox.close());                                         // stops and removes the container

test('a partner of its own: a token, one call, the events', async () => {
  const { api, control } = await sandbox.partner();                   // fresh keys and empty accounts
  const customer = await api.POST('/customers', { body: { name: 'Acme Corp', email: 'ap@acme.test' } });
  const events = await control.events.list({ topic: 'customer_created' });   // GET /_sandbox/events
  assert.deepEqual(events.data.map((e) => e.entity_id), [customer.id]);
});

test('webhooks to a receiver on this machine', async () => {
  const receiver = await startWebhookReceiver({ host: '0.0.0.0' });  // reachable from the container
  const { api } = await sandbox.partner();
  const endpoint_url = await sandbox.webhookUrl(`${receiver.url}/hooks`);   // http://host.docker.internal:<port>/hooks
  await api.POST('/webhooks', { body: { endpoint_url, topic: 'customer_created' } });
  await api.POST('/customers', { body: { name: 'Globex' } });
  const hook = await receiver.waitFor('customer_created', { timeoutMs: 10_000 });
  assert.equal(hook.data.name, 'Globex');
  await receiver.close();
});
// #endregion container

test('the demo fixtures and the scenario file are loaded for the default partner', async () => {
  assert.equal((await sandbox.api.GET('/customers', { params: { query: { limit: 100 } } })).data.length, 8);
  await sandbox.api.GET('/invoices');
  await assert.rejects(sandbox.api.GET('/invoices'), { status: 429 });
  assert.deepEqual((await sandbox.control.scenarios.list()).map((s) => s.name), ['list throttled once']);
});

test('the clock and trigger through the container', async () => {
  const { api, control } = await sandbox.partner();
  const { now } = await control.clock.advance('31d');
  assert.ok(Date.parse(now) > Date.now() + 30 * 86_400_000);
  const event = await control.trigger('customer_created');
  assert.match(event.entity_id, /^cus_/);
  assert.equal((await api.GET('/customers/{id}', { params: { path: { id: event.entity_id } } })).id, event.entity_id);
});
