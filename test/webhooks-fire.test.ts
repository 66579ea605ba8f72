// POST /_sandbox/events makes the state each topic tells of through the domain, or moves or restates
// a named object, or refuses it (409, nothing changed); the exported receiver helper
// collects deliveries from a running sandbox, which retries on its own as (real) time passes.
import { afterEach, describe, expect, it } from '@jest/globals';
import { startSandbox, startWebhookReceiver, type RunningSandbox, type WebhookReceiver } from '../src/index.js';
import { eventLog, TOPICS, type Topic } from '../src/events/events.js';
import { builders, fakeCustomer } from '../src/webhooks/fire.js';
import { START, type Api } from './helpers.js';
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

/** The event as its deliveries carry it: the answer without what the firing made. */
const delivered = ({ made: _made, ...event }: Record<string, unknown>) => event;

describe('POST /_sandbox/events', () => {
  it('restates a topic for a named object already in its state, and delivers it like any event', async () => {
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
      made: [],
    });
    await w.settle();
    expect(w.receiver.deliveries.map((d) => d.body)).toEqual([delivered(res.body)]);
    expect(deliveryErrors(delivered(res.body))).toEqual([]);
    // The object itself did not change.
    expect((await w.api.get(`/customers/${customer.id}`)).body).toEqual(customer);
  });

  it('makes fresh objects for each firing without entity_id, as the Stripe CLI\'s fixtures do', async () => {
    w = await webhookSandbox();
    const { body: old } = await w.api.post('/customers', { name: 'Old' });
    const first = await fire({ topic: 'customer_archived' });
    const second = await fire({ topic: 'customer_archived' });
    for (const res of [first, second]) {
      expect(res.status).toBe(201);
      expect(res.body.made).toEqual([{ object: 'customer', id: res.body.entity_id }]);
      expect((await w.api.get(`/customers/${res.body.entity_id}`)).body.status).toBe('archived');
    }
    expect(first.body.entity_id).not.toBe(second.body.entity_id);
    expect((await w.api.get(`/customers/${old.id}`)).body.status).toBe('active');
  });

  it('creates realistic related objects through the domain: the domain\'s own event is the fired one', async () => {
    w = await webhookSandbox();
    await w.subscribe('customer_created');
    const res = await fire({ topic: 'customer_created' });
    expect(res.status).toBe(201);
    const list = (await w.api.get('/customers')).body.data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: res.body.entity_id, country: 'US', name: expect.any(String), email: expect.stringContaining('@') });
    // One customer_created, not two.
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

  it('refuses with 409, and undoes everything, a builder whose object and event would disagree', async () => {
    w = await webhookSandbox();
    const saved = builders.customer_archived;
    // A builder that forgot to archive: the event says archived, the customer is active.
    builders.customer_archived = (f) => {
      const customer = fakeCustomer(f.deps, f.account);
      return { entity_id: customer.id, data: () => ({ customer_id: customer.id, external_id: null, name: customer.name, email: customer.email, status: 'archived' }) };
    };
    try {
      const res = await fire({ topic: 'customer_archived' });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'invalid_state', message: expect.stringContaining('would disagree (its status is active, the event says archived)') });
      expect((await w.api.get('/customers')).body.data).toEqual([]);
      expect([...eventLog(w.account).values()]).toEqual([]);
    } finally {
      builders.customer_archived = saved;
    }
  });
});

/** Where the API shows the state a topic tells of, for the object the event is about. */
async function stateOf(api: Api, topic: Topic, id: string, data: Record<string, any>): Promise<Record<string, unknown>> {
  if (topic.startsWith('customer_') || topic === 'default_payment_method_changed') {
    const { body } = await api.get(`/customers/${id}`).expect(200);
    return { status: body.status, default_payment_method_id: body.default_payment_method_id };
  }
  if (topic.startsWith('invoice_')) return { status: (await api.get(`/invoices/${id}`).expect(200)).body.status };
  if (topic.startsWith('payment_method_')) return { found: (await api.get(`/customers/${data.customer_id}/payment-methods/${id}`)).status === 200 };
  if (topic.startsWith('payout_')) return { status: (await api.get(`/payouts/${id}`).expect(200)).body.status };
  const { body } = await api.get(`/payments?limit=500`).expect(200);
  const payment = body.data.find((p: { id: string }) => p.id === id);
  return { status: payment.status, refunded: payment.refunded_amount > 0, chargeback: payment.chargeback };
}

/** The state each topic tells of, as the API shows it. */
const AGREES: Record<Topic, (state: Record<string, unknown>, data: Record<string, any>) => Record<string, unknown>> = {
  customer_created: (_s, d) => ({ status: d.status }),
  customer_updated: (_s, d) => ({ status: d.status }),
  customer_archived: () => ({ status: 'archived' }),
  default_payment_method_changed: (_s, d) => ({ default_payment_method_id: d.payment_method_id }),
  invoice_created: (_s, d) => ({ status: d.status }),
  invoice_updated: (_s, d) => ({ status: d.status }),
  invoice_paid: () => ({ status: 'PAID' }),
  invoice_archived: () => ({ status: 'ARCHIVED' }),
  payment_method_added: () => ({ found: true }),
  payment_method_deleted: () => ({ found: false }),
  payment_succeeded: () => ({ status: 'succeeded' }),
  payment_failed: () => ({ status: 'failed' }),
  payment_refunded: () => ({ status: 'refunded', refunded: true }),
  payment_chargeback: () => ({ status: 'succeeded', chargeback: true }),
  payout_scheduled: () => ({ status: 'scheduled' }),
  payout_processing: () => ({ status: 'processing' }),
  payout_paid: () => ({ status: 'succeeded' }),
  payout_failed: () => ({ status: 'failed' }),
};

/** Where each kind of object a firing made is read back. */
const MADE_PATH: Record<string, (id: string, customer: string) => string | undefined> = {
  customer: (id) => `/customers/${id}`,
  invoice: (id) => `/invoices/${id}`,
  payout: (id) => `/payouts/${id}`,
  payment_method: (id, customer) => `/customers/${customer}/payment-methods/${id}`,
  payment: () => undefined,
};

describe('every topic', () => {
  it.each(TOPICS.map((t) => [t]))('%s makes its state through the domain: the object and the event agree, and everything made is real', async (topic) => {
    w = await webhookSandbox();
    await w.subscribe(topic);
    const res = await fire({ topic });
    expect(res.status).toBe(201);
    expect(res.body.topic).toBe(topic);
    expect(res.body.made.length).toBeGreaterThan(0);
    const state = await stateOf(w.api, topic, res.body.entity_id, res.body.data);
    expect(state).toMatchObject(AGREES[topic](state, res.body.data));
    expect(deliveryErrors(delivered(res.body))).toEqual([]);
    // Everything it made exists (a deleted payment method aside).
    const customer = res.body.made.find((m: { object: string }) => m.object === 'customer')?.id;
    const payments = (await w.api.get('/payments?limit=500').expect(200)).body.data.map((p: { id: string }) => p.id);
    for (const made of res.body.made as Array<{ object: string; id: string }>) {
      if (made.object === 'payment') expect(payments).toContain(made.id);
      else if (!(topic === 'payment_method_deleted' && made.object === 'payment_method')) await w.api.get(MADE_PATH[made.object](made.id, customer)!).expect(200);
    }
    await w.settle();
    const deliveries = w.receiver.deliveries.filter((d) => d.topic === topic);
    expect(deliveries.map((d) => d.body)).toContainEqual(delivered(res.body));
    for (const d of deliveries) expect(deliveryErrors(d.body)).toEqual([]);
    // Named, the object already in that state: the event is restated (the same data), nothing made or changed.
    if (topic !== 'payment_method_deleted') {
      const before = [...eventLog(w.account).values()].length;
      const named = await fire({ topic, entity_id: res.body.entity_id });
      expect([named.status, named.body.made]).toEqual([201, []]);
      // customer_updated restates the customer with nothing changed.
      expect(named.body).toMatchObject({ entity_id: res.body.entity_id, data: topic === 'customer_updated' ? { ...res.body.data, changed_fields: [] } : res.body.data });
      expect(named.body.idempotency_key).not.toBe(res.body.idempotency_key);
      expect([...eventLog(w.account).values()].length).toBe(before + 1);
      expect(await stateOf(w.api, topic, res.body.entity_id, res.body.data)).toEqual(state);
    }
    // The delivery history shows the same data, typed per topic by the document.
    const history = await w.api.get(`/webhooks/events?topic=${topic}`);
    expect(history.status).toBe(200);
    const record = history.body.data.find((r: { idempotency_key: string }) => r.idempotency_key === res.body.idempotency_key);
    expect(record).toMatchObject({ topic, entity_id: res.body.entity_id, data: res.body.data });
  });

  it('trigger invoice_paid makes a customer, a card, an invoice and its payment, settled now: the invoice answers PAID', async () => {
    w = await webhookSandbox();
    const res = await fire({ topic: 'invoice_paid' });
    expect(res.status).toBe(201);
    expect(res.body.made.map((m: { object: string }) => m.object)).toEqual(['customer', 'payment_method', 'invoice', 'payment', 'payout']);
    const invoiceId = res.body.made.find((m: { object: string }) => m.object === 'invoice').id;
    expect(res.body.entity_id).toBe(invoiceId);
    expect((await w.api.get(`/invoices/${invoiceId}`)).body.status).toBe('PAID');
    expect(res.body.data).toMatchObject({ invoice_id: invoiceId, status: 'PAID', payment_id: res.body.made.find((m: { object: string }) => m.object === 'payment').id });
    // The events of the way, in order, each once.
    expect([...eventLog(w.account).values()].map((e) => e.topic)).toEqual(['customer_created', 'payment_method_added', 'default_payment_method_changed', 'invoice_created', 'invoice_updated', 'payment_succeeded', 'invoice_paid', 'payout_scheduled']);
  });

  it('trigger payout_paid sends status succeeded, and the payout answers succeeded', async () => {
    w = await webhookSandbox();
    const res = await fire({ topic: 'payout_paid' });
    expect(res.body.data.status).toBe('succeeded');
    expect((await w.api.get(`/payouts/${res.body.entity_id}`)).body.status).toBe('succeeded');
  });

  it('fires invoice_paid for a named paid invoice with the payment that paid it', async () => {
    w = await webhookSandbox();
    const { body: customer } = await w.api.post('/customers', { name: 'Acme' });
    await w.api.post(`/customers/${customer.id}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault' }).expect(201);
    const { body: invoice } = await w.api.post('/invoices', { customer_id: customer.id, exclude_from_autopay: true, line_items: [{ description: 'Plan', quantity: 1, amount: 120 }] });
    const paid = await w.sb.http.post(`/_sandbox/invoices/${invoice.id}/pay`).send({});
    expect(paid.status).toBe(200);
    await w.sb.advance(2 * 3600).expect(200);
    expect((await w.api.get(`/invoices/${invoice.id}`)).body.status).toBe('PAID');
    const res = await fire({ topic: 'invoice_paid', entity_id: invoice.id });
    expect(res.status).toBe(201);
    expect(res.body.made).toEqual([]);
    expect(res.body.data).toMatchObject({ invoice_id: invoice.id, payment_id: paid.body.id, total: 120, status: 'PAID' });
    // The real invoice_paid of the settlement carried the same payment and paid_at.
    const account = w.sb.deps.store.account('ptn_default', 'production');
    const real = [...eventLog(account).values()].find((e) => e.topic === 'invoice_paid' && e.idempotency_key !== res.body.idempotency_key);
    expect(real?.data).toEqual(res.body.data);
    expect(deliveryErrors(delivered(res.body))).toEqual([]);
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

describe('a named object is moved when its state allows the topic, and refused (409, nothing changed) when not', () => {
  /** A customer with a card, and an invoice of `amount` (not charged by autopay). */
  async function unpaidInvoice(amount = 120, token = 'tok_visa') {
    const { body: customer } = await w!.api.post('/customers', { name: 'Named Co' }).expect(201);
    await w!.api.post(`/customers/${customer.id}/payment-methods/card`, { card_provider_token: token, provider: 'evervault' }).expect(201);
    const { body: invoice } = await w!.api.post('/invoices', { customer_id: customer.id, exclude_from_autopay: true, line_items: [{ description: 'Plan', quantity: 1, amount }] }).expect(201);
    return { customer, invoice };
  }
  const snapshot = () => JSON.stringify(w!.sb.deps.store.account('ptn_default', 'production').transaction(() => [...eventLog(w!.account).values()].map((e) => e.id)));

  it('invoice_paid for an unpaid invoice pays what is due by hand and settles it now', async () => {
    w = await webhookSandbox();
    const { invoice } = await unpaidInvoice();
    const res = await fire({ topic: 'invoice_paid', entity_id: invoice.id });
    expect(res.status).toBe(201);
    expect(res.body.made).toEqual([{ object: 'payment', id: res.body.data.payment_id }, { object: 'payout', id: expect.any(String) }]);
    expect((await w.api.get(`/invoices/${invoice.id}`)).body.status).toBe('PAID');
  });

  it.each([
    ['customer_archived', async () => (await w!.api.post('/customers', { name: 'Active' })).body.id, 'archived'],
    ['payment_refunded', async () => (await fire({ topic: 'payment_succeeded' })).body.entity_id, 'refunded'],
  ])('%s moves the named object', async (topic, make, status) => {
    w = await webhookSandbox();
    const id = await make();
    const res = await fire({ topic, entity_id: id });
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe(status);
  });

  const refusals: Array<[string, string, () => Promise<string>, RegExp]> = [
    ['invoice_paid', 'an archived invoice', async () => {
      const { invoice } = await unpaidInvoice();
      await w!.api.delete(`/invoices/${invoice.id}`).expect(200);
      return invoice.id;
    }, /the invoice is archived: restore it first/],
    ['invoice_paid', 'an invoice whose bank payment in flight will be returned at settlement', async () => {
      const { customer, invoice } = await unpaidInvoice();
      const bank = await w!.api.post(`/customers/${customer.id}/payment-methods/bank`, { account_data_type: 'us', us_account_data: { account_number: '000222222227', routing_number: '011000015' } }).expect(201);
      await w!.sb.http.post(`/_sandbox/invoices/${invoice.id}/pay`).send({ payment_method_id: bank.body.id }).expect(200);
      return invoice.id;
    }, /will fail \(insufficient_funds/],
    ['invoice_archived', 'a paid invoice', async () => (await fire({ topic: 'invoice_paid' })).body.entity_id, /the invoice is PAID/],
    ['payment_succeeded', 'a declined payment', async () => (await fire({ topic: 'payment_failed' })).body.entity_id, /the payment is failed/],
    ['payment_failed', 'a succeeded payment', async () => (await fire({ topic: 'payment_succeeded' })).body.entity_id, /only a payment in flight can fail/],
    ['payment_refunded', 'a declined payment', async () => (await fire({ topic: 'payment_failed' })).body.entity_id, /only a succeeded payment can be refunded/],
    ['payment_refunded', 'a disputed payment', async () => (await fire({ topic: 'payment_chargeback' })).body.entity_id, /chargeback was opened/],
    ['payout_scheduled', 'a processing payout', async () => (await fire({ topic: 'payout_processing' })).body.entity_id, /the payout is processing/],
    ['payout_failed', 'a payout that will be paid', async () => (await fire({ topic: 'payout_scheduled' })).body.entity_id, /this one would be paid/],
    ['payout_paid', 'a payout holding the failing test value', async () => {
      const failed = await fire({ topic: 'payout_failed' });
      return failed.body.entity_id;
    }, /holds a payment of 777.77|the payout failed/],
    ['default_payment_method_changed', 'an archived customer without payment methods', async () => {
      const { body: customer } = await w!.api.post('/customers', { name: 'Gone' }).expect(201);
      await w!.api.delete(`/customers/${customer.id}`).expect(200);
      return customer.id;
    }, /archived and has no payment method/],
  ];
  it.each(refusals)('%s for %s answers 409 naming why, and changes nothing', async (topic, _what, make, why) => {
    w = await webhookSandbox();
    const id = await make();
    const before = snapshot();
    const objects = JSON.stringify((await w.sb.http.get('/_sandbox/objects/invoices?limit=100')).body) + JSON.stringify((await w.sb.http.get('/_sandbox/objects/payments?limit=100')).body) + JSON.stringify((await w.sb.http.get('/_sandbox/objects/payouts?limit=100')).body);
    const res = await fire({ topic, entity_id: id });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'invalid_state', message: expect.stringMatching(new RegExp(`^Cannot fire ${topic} for ${id}: `)), validation_errors: { entity_id: expect.any(String) } });
    expect(res.body.message).toMatch(why);
    expect(res.body.message.split('Cannot fire')).toHaveLength(2);
    expect(snapshot()).toBe(before);
    expect(JSON.stringify((await w.sb.http.get('/_sandbox/objects/invoices?limit=100')).body) + JSON.stringify((await w.sb.http.get('/_sandbox/objects/payments?limit=100')).body) + JSON.stringify((await w.sb.http.get('/_sandbox/objects/payouts?limit=100')).body)).toBe(objects);
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
