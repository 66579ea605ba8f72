// POST /_sandbox/events fires topics as the real operation would; the exported receiver helper
// collects deliveries from a running sandbox, which retries on its own as (real) time passes.
import { afterEach, describe, expect, it } from '@jest/globals';
import { startSandbox, startWebhookReceiver, type RunningSandbox, type WebhookReceiver } from '../src/index.js';
import { eventLog, TOPICS } from '../src/events/events.js';
import { builders } from '../src/webhooks/fire.js';
import { START } from './helpers.js';
import { deliveryErrors, webhookSandbox, type WebhookSandbox } from './webhooks-support.js';

let w: WebhookSandbox | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const fire = (body: object, token?: string) => {
  const req = w!.sb.http.post('/_sandbox/events').send(body);
  return token ? req.set('Authorization', `Bearer ${token}`) : req;
};

describe('POST /_sandbox/events', () => {
  it('fires a topic for a named object from its current state, and delivers it like any event', async () => {
    w = await webhookSandbox();
    await w.subscribe('customer_updated');
    const { body: customer } = await w.api.post('/customers', { name: 'Acme', external_id: 'crm-1', email: 'a@acme.test' });
    const res = await fire({ topic: 'customer_updated', entity_id: customer.id });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      entity_id: customer.id,
      idempotency_key: expect.any(String),
      timestamp: '2026-03-02T09:00:00.000Z',
      topic: 'customer_updated',
      data: { customer_id: customer.id, external_id: 'crm-1', name: 'Acme', email: 'a@acme.test', status: 'active', changed_fields: [] },
    });
    await w.settle();
    expect(w.receiver.deliveries.map((d) => d.body)).toEqual([res.body]);
    expect(deliveryErrors(res.body)).toEqual([]);
    // The object itself did not change.
    expect((await w.api.get(`/customers/${customer.id}`)).body).toEqual(customer);
  });

  it('uses the most recent object of the kind when no entity_id is given', async () => {
    w = await webhookSandbox();
    await w.api.post('/customers', { name: 'Old' }).expect(201);
    const { body: newest } = await w.api.post('/customers', { name: 'New' });
    const res = await fire({ topic: 'customer_archived' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ entity_id: newest.id, topic: 'customer_archived', data: { name: 'New' } });
  });

  it('creates realistic related objects through the domain when the account has none', async () => {
    w = await webhookSandbox();
    await w.subscribe('customer_created');
    const res = await fire({ topic: 'customer_created' });
    expect(res.status).toBe(201);
    const list = (await w.api.get('/customers')).body.data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: res.body.entity_id, country: 'US', name: expect.any(String), email: expect.stringContaining('@') });
    // One customer_created, not two: the domain's own event is the fired one.
    const account = w.sb.deps.store.account('ptn_default', 'production');
    expect([...eventLog(account).values()].map((e) => e.topic)).toEqual(['customer_created']);
    await w.settle();
    expect(w.receiver.deliveries).toHaveLength(1);
    expect(deliveryErrors(w.receiver.deliveries[0].body)).toEqual([]);
  });

  it('acts on the account of the access token given', async () => {
    w = await webhookSandbox();
    const demoToken = await w.sb.token('demo');
    const demo = w.sb.as(demoToken, 'demo');
    const { body: demoCustomer } = await demo.post('/customers', { name: 'Demo Co' });
    expect((await fire({ topic: 'customer_updated', entity_id: demoCustomer.id })).status).toBe(404);
    const res = await fire({ topic: 'customer_updated', entity_id: demoCustomer.id }, demoToken);
    expect(res.status).toBe(201);
    expect(res.body.entity_id).toBe(demoCustomer.id);
  });

  it.each([
    ['an unknown entity', { topic: 'customer_updated', entity_id: 'cus_missing' }, 404, 'not_found'],
    ['an unknown topic', { topic: 'customer_exploded' }, 400, 'bad_request'],
    ['a missing topic', { entity_id: 'cus_x' }, 400, 'bad_request'],
    ['an empty entity_id', { topic: 'customer_updated', entity_id: '' }, 400, 'bad_request'],
  ])('answers %s with a clear error and records nothing', async (_label, body, status, code) => {
    w = await webhookSandbox();
    const res = await fire(body);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    const account = w.sb.deps.store.account('ptn_default', 'production');
    expect([...eventLog(account).values()]).toEqual([]);
  });

  it('answers 501 naming a topic that has no builder', async () => {
    w = await webhookSandbox();
    const saved = builders.customer_archived;
    delete builders.customer_archived;
    try {
      const res = await fire({ topic: 'customer_archived' });
      expect(res.status).toBe(501);
      expect(res.body).toMatchObject({ code: 'not_implemented', message: expect.stringContaining('customer_archived') });
    } finally {
      builders.customer_archived = saved;
    }
  });
});

describe('every topic', () => {
  it.each(TOPICS.map((t) => [t]))('%s fires from nothing, with related objects made through the domain, and matches the document', async (topic) => {
    w = await webhookSandbox();
    await w.subscribe(topic);
    const res = await fire({ topic });
    expect(res.status).toBe(201);
    expect(res.body.topic).toBe(topic);
    expect(deliveryErrors(res.body)).toEqual([]);
    await w.settle();
    const delivered = w.receiver.deliveries.filter((d) => d.topic === topic);
    expect(delivered.map((d) => d.body)).toContainEqual(res.body);
    for (const d of delivered) expect(deliveryErrors(d.body)).toEqual([]);
    // Firing again re-uses the object now present instead of making another.
    const again = await fire({ topic });
    expect(again.status).toBe(201);
    expect(again.body.entity_id).toBe(res.body.entity_id);
    expect(again.body.idempotency_key).not.toBe(res.body.idempotency_key);
    // And naming it gives the same entity.
    const named = await fire({ topic, entity_id: res.body.entity_id });
    expect(named.status).toBe(201);
    expect(named.body).toMatchObject({ entity_id: res.body.entity_id, data: again.body.data });
    // The delivery history shows the same data, typed per topic by the document (the strict
    // response check refuses a field the topic's WebhookData schema does not list).
    const history = await w.api.get(`/webhooks/events?topic=${topic}`);
    expect(history.status).toBe(200);
    const record = history.body.data.find((r: { idempotency_key: string }) => r.idempotency_key === res.body.idempotency_key);
    expect(record).toMatchObject({ topic, entity_id: res.body.entity_id, data: res.body.data });
  });

  it('fires invoice_paid for a named invoice with the payment that paid it', async () => {
    w = await webhookSandbox();
    const { body: customer } = await w.api.post('/customers', { name: 'Acme' });
    await w.api.post(`/customers/${customer.id}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault' }).expect(201);
    const { body: invoice } = await w.api.post('/invoices', { customer_id: customer.id, exclude_from_autopay: true, line_items: [{ description: 'Plan', quantity: 1, amount: 120 }] });
    expect(invoice.id).toMatch(/^inv_/);
    const paid = await w.sb.http.post(`/_sandbox/invoices/${invoice.id}/pay`).send({});
    expect(paid.status).toBe(200);
    await w.sb.advance(2 * 3600).expect(200);
    expect((await w.api.get(`/invoices/${invoice.id}`)).body.status).toBe('PAID');
    const res = await fire({ topic: 'invoice_paid', entity_id: invoice.id });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ invoice_id: invoice.id, payment_id: paid.body.id, total: 120, status: 'PAID' });
    // The real invoice_paid of the settlement carried the same payment and paid_at.
    const account = w.sb.deps.store.account('ptn_default', 'production');
    const real = [...eventLog(account).values()].find((e) => e.topic === 'invoice_paid' && e.idempotency_key !== res.body.idempotency_key);
    expect(real?.data).toEqual(res.body.data);
    expect(deliveryErrors(res.body)).toEqual([]);
  });

  it('delivers the events of a settling payment in order, stamped when they happened on the clock', async () => {
    w = await webhookSandbox();
    for (const topic of ['payment_succeeded', 'invoice_paid', 'payout_scheduled', 'invoice_updated']) await w.subscribe(topic, `/${topic}`);
    const { body: customer } = await w.api.post('/customers', { name: 'Acme' });
    await w.api.post(`/customers/${customer.id}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault' }).expect(201);
    const { body: invoice } = await w.api.post('/invoices', { customer_id: customer.id, line_items: [{ description: 'Plan', quantity: 2, amount: 50 }] });
    await w.settle();
    await w.sb.advance(2 * 3600).expect(200);
    const got = w.receiver.deliveries.map((d) => [d.topic, d.timestamp]);
    const settled = got.find(([topic]) => topic === 'payment_succeeded')?.[1];
    expect(settled).toBeDefined();
    expect(got.filter(([, ts]) => ts === settled).map(([topic]) => topic)).toEqual(['payment_succeeded', 'invoice_paid', 'payout_scheduled']);
    expect(w.receiver.deliveries.find((d) => d.topic === 'invoice_paid')?.data).toMatchObject({ invoice_id: invoice.id, status: 'PAID' });
    for (const d of w.receiver.deliveries) expect(deliveryErrors(d.body)).toEqual([]);
  });

  it.each([
    ['invoice_updated', 'inv_missing'], ['payment_succeeded', 'pay_missing'], ['payout_paid', 'po_missing'],
    ['payment_method_added', 'pm_missing'], ['default_payment_method_changed', 'cus_missing'],
  ])('%s for an unknown entity %s answers 404', async (topic, entityId) => {
    w = await webhookSandbox();
    const res = await fire({ topic, entity_id: entityId });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('the exported receiver helper with a running sandbox', () => {
  let sandbox: RunningSandbox | undefined;
  let receiver: WebhookReceiver | undefined;
  afterEach(async () => {
    await sandbox?.close();
    await receiver?.close();
    sandbox = receiver = undefined;
  });

  it('collects deliveries, waits for a topic, and sees the retry a running sandbox makes as time passes', async () => {
    const time = { now: START };
    sandbox = await startSandbox({ port: 0, rateLimit: 0, allowHttpWebhooks: true, logLevel: 'silent', overrides: { realNow: () => time.now } });
    receiver = await startWebhookReceiver({ respond: 503 });
    const token = await sandbox.token();
    const call = (method: string, path: string, body?: object) =>
      fetch(`${sandbox!.url}${path}`, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    expect((await call('POST', '/webhooks', { endpoint_url: `${receiver.url}/in`, topic: 'customer_created', secret_key: 's3cret' })).status).toBe(201);
    const created = await (await call('POST', '/customers', { name: 'Live Co' })).json() as { id: string };
    // The first attempt fails (503); nothing is accepted yet.
    await expect(receiver.waitFor('customer_created', { timeoutMs: 300 })).rejects.toThrow(/no delivery of customer_created within 300 ms; received: customer_created\(503\)/);
    receiver.respondWith(200);
    time.now += 90_000; // the scheduler ticks every second of real time and finds the retry due
    const got = await receiver.waitFor('customer_created', { timeoutMs: 5000 });
    expect(got).toMatchObject({ entity_id: created.id, secret: 's3cret', path: '/in', status: 200 });
    expect(receiver.deliveries.map((d) => d.status)).toEqual([503, 200]);
    expect(receiver.accepted('customer_created')).toHaveLength(1);
    const two = receiver.waitForCount('customer_created', 2, { timeoutMs: 5000 });
    await call('POST', '/customers', { name: 'Second Co' });
    expect((await two).map((d) => d.data.name)).toEqual(['Live Co', 'Second Co']);
  });
});
