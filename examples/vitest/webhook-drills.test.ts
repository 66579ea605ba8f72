// Example (quoted in docs/webhooks.md, "Duplicates and wrong secrets"): a receiver that checks the
// secret and deduplicates on idempotency_key, met by a wrong_secret and a duplicate_delivery drill.
// The stand-in for the partner's handler counts what it processed; checks follow the quoted part.
import { expect, test } from 'vitest';

// #region drills
import { startSandbox, startWebhookReceiver } from 'billing-sandbox';

const sandbox = await startSandbox({ port: 0, allowHttpWebhooks: true });
// Answers 401 to any bearer but this secret, as your receiver should:
const receiver = await startWebhookReceiver({ secret: 'whsec_test' });
const handled: string[] = [];                             // what your code processed, once per event
receiver.respondWith((delivery) => {
  if (!handled.includes(delivery.idempotency_key)) handled.push(delivery.idempotency_key);
  return 200;                                             // a duplicate is acknowledged, not processed again
});
const token = await sandbox.token();
const post = (path: string, body: object) => fetch(`${sandbox.url}${path}`, {
  method: 'POST',
  headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});
await post('/webhooks', { endpoint_url: `${receiver.url}/hooks`, topic: 'customer_created', secret_key: 'whsec_test' });
await sandbox.loadScenario({
  name: 'receiver drills',
  rules: [
    { match: { topic: 'customer_created' }, nth: 1, wrong_secret: true },                // first attempt: a wrong bearer
    { match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: 2 } },  // first event delivered: twice more
  ],
});

await post('/customers', { name: 'Acme Corp', email: 'ap@acme.test' });
await sandbox.advanceClock(90);                           // the retry falls due: delivered, then its two copies
receiver.deliveries.map((d) => d.status);                 // [401, 200, 200, 200]
const counts = receiver.countsByKey();                    // Map { 'evt_…' => 4 }: one event, four deliveries
const [duplicate] = receiver.duplicates({ accepted: true });   // { idempotency_key, count: 3, deliveries }
handled.length;                                           // 1: your code processed the event once
await receiver.close();
await sandbox.close();
// #endregion drills

test('the wrong secret was refused, the event was delivered three times and processed once', () => {
  expect(receiver.deliveries.map((d) => d.status)).toEqual([401, 200, 200, 200]);
  expect(receiver.deliveries[0].secret).not.toBe('whsec_test');
  expect([...counts.values()]).toEqual([4]);
  expect(duplicate.count).toBe(3);
  expect(new Set(duplicate.deliveries.map((d) => JSON.stringify(d.body))).size).toBe(1);
  expect(handled).toEqual([duplicate.idempotency_key]);
});
