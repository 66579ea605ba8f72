// The first test against a running sandbox (a container, `npx billing-sandbox` or `npm start`): a
// customer with a card, an invoice that autopay charges, the account clock moved past the card's
// settlement, and the invoice_paid webhook received here. Node 22, no dependencies:
//
//   BASE_URL=http://127.0.0.1:4010 node first-test.mjs
//
// The sandbox must accept plain-http receivers (SANDBOX_ALLOW_HTTP_WEBHOOKS=1 or --allow-http-webhooks).
// RECEIVER_HOST is the name the sandbox reaches this script by: host.docker.internal from a container.
import { createServer } from 'node:http';

const BASE_URL = process.env.BASE_URL ?? 'http://127.0.0.1:4010';
const RECEIVER_HOST = process.env.RECEIVER_HOST ?? '127.0.0.1';
const CLIENT_ID = process.env.CLIENT_ID ?? 'sandbox_client_id';
const CLIENT_SECRET = process.env.CLIENT_SECRET ?? 'sandbox_client_secret';

// A receiver that resolves on the first invoice_paid delivery.
let received;
const paid = new Promise((resolve) => { received = resolve; });
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => { body += chunk; });
  req.on('end', () => {
    res.end();
    const delivery = JSON.parse(body);
    if (delivery.topic === 'invoice_paid') received(delivery);
  });
});
const loopback = ['127.0.0.1', 'localhost'].includes(RECEIVER_HOST);
await new Promise((resolve) => receiver.listen(0, loopback ? '127.0.0.1' : '0.0.0.0', resolve));

/** One call; a 429 is retried after its Retry-After, as a partner's client should. */
async function call(method, path, body, authorization = `Bearer ${token}`) {
  for (;;) {
    const res = await fetch(`${BASE_URL}${path}`, {
      method,
      headers: { Authorization: authorization, ...(body && !(body instanceof URLSearchParams) && { 'Content-Type': 'application/json' }) },
      body: body instanceof URLSearchParams ? body : body && JSON.stringify(body),
    });
    if (res.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(res.headers.get('retry-after') ?? 1)));
      continue;
    }
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  }
}
const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
const { access_token: token } = await call('POST', '/oauth/token', new URLSearchParams({ grant_type: 'client_credentials' }), basic);

try {
  await call('POST', '/_sandbox/reset');                   // this account back to empty
  await call('POST', '/webhooks', { endpoint_url: `http://${RECEIVER_HOST}:${receiver.address().port}/hooks`, topic: 'invoice_paid' });
  const customer = await call('POST', '/customers', { name: 'Acme Corp', email: 'ap@acme.test' });
  await call('POST', `/customers/${customer.id}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault' });
  const invoice = await call('POST', '/invoices', {        // autopay charges the default card at once
    customer_id: customer.id,
    line_items: [{ description: 'Consulting', quantity: 2, amount: 150 }],
  });
  await call('POST', '/_sandbox/clock/advance', { seconds: 2 * 3600 });   // the card settles

  const late = new Promise((_, reject) => setTimeout(() => reject(new Error('no invoice_paid within 10 s')), 10_000).unref());
  const delivery = await Promise.race([paid, late]);
  if (delivery.entity_id !== invoice.id || delivery.data.status !== 'PAID') throw new Error(`unexpected delivery: ${JSON.stringify(delivery)}`);
  console.log(`invoice_paid received for ${invoice.id}: ${delivery.data.total} ${delivery.data.currency}, payment ${delivery.data.payment_id}`);
} finally {
  receiver.close();
}
