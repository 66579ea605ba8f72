// Example (quoted in docs/first-test.md): the first test, in-process. A customer with a card, an
// invoice that autopay charges, the account clock moved past the card's settlement, and the
// invoice_paid webhook received by a local receiver. Checks of what arrived follow the quoted part.
import { afterAll, expect, test } from 'vitest';

// #region first-test
import { startSandbox, startWebhookReceiver } from 'billing-sandbox';

const sandbox = await startSandbox({ port: 0, allowHttpWebhooks: true, rateLimit: 0 });
const receiver = await startWebhookReceiver();            // records every delivery it gets
const token = await sandbox.token();
const post = async (path: string, body: object) => {
  const res = await fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
};

await post('/webhooks', { endpoint_url: `${receiver.url}/hooks`, topic: 'invoice_paid' });
const customer = await post('/customers', { name: 'Acme Corp', email: 'ap@acme.test' });
await post(`/customers/${customer.id}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault' });
const invoice = await post('/invoices', {                 // autopay charges the default card at once
  customer_id: customer.id,
  line_items: [{ description: 'Consulting', quantity: 2, amount: 150 }],
});
await sandbox.advanceClock(2 * 3600);                      // processing after 1 min, a card settles 1 h later
const paid = await receiver.waitFor('invoice_paid', { timeoutMs: 5000 });
// #endregion first-test

afterAll(async () => {
  await receiver.close();
  await sandbox.close();
});

test('the invoice_paid webhook names the invoice, paid in full', () => {
  expect(invoice.status).toBe('RECEIVED'); // autopay's payment is in flight as the invoice is answered
  expect(paid.entity_id).toBe(invoice.id);
  expect(paid.data).toMatchObject({ invoice_id: invoice.id, customer_id: customer.id, status: 'PAID', total: 300 });
  expect(paid.data.payment_id).toMatch(/^\w+_/);
});
