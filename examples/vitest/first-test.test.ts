import { expect, test } from 'vitest';
import { startSandbox, startWebhookReceiver } from 'billing-sandbox';

test('a paid invoice reaches our webhook', async () => {
  const { api, control, close } = await startSandbox({ rateLimit: 0, allowHttpWebhooks: true });
  const receiver = await startWebhookReceiver();
  await api.POST('/webhooks', { body: { endpoint_url: `${receiver.url}/billing`, topic: 'invoice_paid' } });
  const customer = await api.POST('/customers', { body: { name: 'Acme Corp', email: 'ap@acme.test' } });
  await api.POST('/customers/{id}/payment-methods/card', { params: { path: { id: customer.id } }, body: { card_provider_token: 'tok_visa' } });
  const invoice = await api.POST('/invoices', { body: { customer_id: customer.id, line_items: [{ description: 'Plan', amount: 120 }] } });
  await control.clock.advance('2h');                   // autopay charged the card; the payment settles within the hour
  const paid = await receiver.waitFor('invoice_paid');
  expect(paid.data).toMatchObject({ invoice_id: invoice.id, status: 'PAID', total: 120 });
  await Promise.all([receiver.close(), close()]);
});
