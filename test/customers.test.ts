// Customers end to end: create, read, patch, archive and restore, users, filters and events.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { eventLog } from '../src/events/events.js';
import { setup, type Api, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
let api: Api;

beforeEach(async () => {
  sb = await setup();
  api = sb.as(await sb.token());
});

function events(topic?: string) {
  const account = sb.deps.store.account('ptn_default', 'production');
  return [...eventLog(account).values()].filter((e) => !topic || e.topic === topic);
}

describe('customers', () => {
  it('creates a customer and reads it back, with a customer_created event', async () => {
    const res = await api.post('/customers', { name: 'Acme Corp', email: 'billing@acme.test', external_id: 'acme-1', country: 'US' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Acme Corp', email: 'billing@acme.test', status: 'active', default_payment_method_id: null });
    expect(res.body.id).toMatch(/^cus_/);
    const got = await api.get(`/customers/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(events('customer_created')).toEqual([
      expect.objectContaining({ entity_id: res.body.id, data: expect.objectContaining({ customer_id: res.body.id, status: 'active' }) }),
    ]);
  });

  it('shows every field it never set as null, as invoices do, in the answer, the list and a user', async () => {
    const res = await api.post('/customers', { name: 'Bare Co' });
    expect(res.status).toBe(201);
    const never = ['legal_name', 'ein', 'email', 'external_id', 'street_address', 'sub_premise', 'city', 'state', 'postal_code', 'country', 'default_payment_method_id', 'customer_integration_id'];
    for (const field of never) expect(res.body).toHaveProperty(field, null);
    expect((await api.get('/customers')).body.data[0]).toEqual(res.body);
    const user = await api.post(`/customers/${res.body.id}/users`, { email: 'only@bare.test' });
    expect(user.status).toBe(201);
    expect(user.body).toMatchObject({ email: 'only@bare.test', first_name: null, last_name: null, job_title: null, phone: null });
  });

  it('refuses a second customer with the same external_id with 400 bad_request and stores nothing', async () => {
    await api.post('/customers', { name: 'A', external_id: 'dup' }).expect(201);
    const res = await api.post('/customers', { name: 'B', external_id: 'dup' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'bad_request', message: 'This external id is already used', validation_errors: { external_id: expect.any(String) } });
    const list = await api.get('/customers');
    expect(list.body.data.map((c: { name: string }) => c.name)).toEqual(['A']);
  });

  it('treats an external_id spelled "null" as any other, apart from customers without one', async () => {
    await api.post('/customers', { name: 'No external id' }).expect(201);
    await api.post('/customers', { name: 'Null text', external_id: 'null' }).expect(201);
    const again = await api.post('/customers', { name: 'Null text again', external_id: 'null' });
    expect(again.status).toBe(400);
    expect(again.body.validation_errors).toEqual({ external_id: 'is already used by another customer' });
  });

  it('names the offending fields of an invalid body and changes nothing', async () => {
    const res = await api.post('/customers', { name: 42, email: 'not-an-email', nickname: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
    expect(Object.keys(res.body.validation_errors).sort()).toEqual(['email', 'name', 'nickname']);
    expect((await api.get('/customers')).body.data).toEqual([]);
  });

  it('answers malformed JSON with 400 naming the body', async () => {
    const res = await sb.http.post('/customers').set('Authorization', `Bearer ${await sb.token()}`).set('Content-Type', 'application/json').send('{"name": ');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'bad_request', validation_errors: { body: 'is not valid JSON' } });
  });

  it('patches only the given fields and records customer_updated with the changed fields', async () => {
    const { body: customer } = await api.post('/customers', { name: 'Old', city: 'Austin' });
    const res = await api.patch(`/customers/${customer.id}`, { name: 'New' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'New', city: 'Austin' });
    expect(events('customer_updated')[0].data).toMatchObject({ changed_fields: ['name'] });
    const bad = await api.patch(`/customers/${customer.id}`, { email: 'x@y.test' });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty('email');
  });

  it('archives and restores following the state table; a second archive is refused with 400', async () => {
    const { body: customer } = await api.post('/customers', { name: 'Acme' });
    const archived = await api.delete(`/customers/${customer.id}`);
    expect(archived.status).toBe(200);
    expect(archived.body.status).toBe('archived');
    expect(events('customer_archived')).toHaveLength(1);
    const again = await api.delete(`/customers/${customer.id}`);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: 'invalid_state' });
    expect(again.body.message).toContain('allowed: restore');
    const restored = await api.post(`/customers/${customer.id}/restore`);
    expect(restored.body.status).toBe('active');
    expect((await api.get(`/customers/${customer.id}`)).body.status).toBe('active');
    expect((await api.post(`/customers/${customer.id}/restore`)).status).toBe(400);
  });

  it('answers 404 for unknown ids', async () => {
    for (const res of [await api.get('/customers/cus_nope'), await api.patch('/customers/cus_nope', { name: 'x' }), await api.delete('/customers/cus_nope')]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it('filters by company_name and created_at window', async () => {
    await api.post('/customers', { name: 'Globex' }).expect(201);
    sb.time.now += 1200_000;
    const middle = (await api.post('/customers', { name: 'Initech', legal_name: 'Initech LLC' })).body;
    sb.time.now += 1200_000;
    await api.post('/customers', { name: 'Globe Trotters' }).expect(201);
    const byName = await api.get('/customers?company_name=glob');
    expect(byName.body.data.map((c: { name: string }) => c.name)).toEqual(['Globe Trotters', 'Globex']);
    const byWindow = await api.get(`/customers?created_at_start=${encodeURIComponent(middle.created_at)}&created_at_end=${encodeURIComponent(middle.created_at)}`);
    expect(byWindow.body.data.map((c: { id: string }) => c.id)).toEqual([middle.id]);
    // Either bound alone: the window is open on the other side (both inclusive).
    const names = (res: { body: { data: Array<{ name: string }> } }) => res.body.data.map((c) => c.name);
    expect(names(await api.get(`/customers?created_at_end=${encodeURIComponent(middle.created_at)}`))).toEqual(['Initech', 'Globex']);
    expect(names(await api.get(`/customers?created_at_start=${encodeURIComponent(middle.created_at)}`))).toEqual(['Globe Trotters', 'Initech']);
    expect((await api.get('/customers?created_at_start=')).status).toBe(400);
    const badDate = await api.get('/customers?created_at_start=yesterday');
    expect(badDate.status).toBe(400);
    expect(badDate.body.validation_errors).toHaveProperty('created_at_start');
  });
});

describe('customer users', () => {
  it('creates and lists users of one customer only', async () => {
    const { body: a } = await api.post('/customers', { name: 'A' });
    const { body: b } = await api.post('/customers', { name: 'B' });
    const user = await api.post(`/customers/${a.id}/users`, { email: 'ann@a.test', first_name: 'Ann', last_name: 'Lee' });
    expect(user.status).toBe(201);
    expect(user.body).toMatchObject({ email: 'ann@a.test', first_name: 'Ann' });
    await api.post(`/customers/${b.id}/users`, { email: 'bob@b.test' }).expect(201);
    const list = await api.get(`/customers/${a.id}/users`);
    expect(list.body.data.map((u: { email: string }) => u.email)).toEqual(['ann@a.test']);
    expect(list.body).toMatchObject({ has_next_page: false, has_previous_page: false });
  });

  it('refuses a duplicate email with 422 and a missing email with 400', async () => {
    const { body: a } = await api.post('/customers', { name: 'A' });
    await api.post(`/customers/${a.id}/users`, { email: 'ann@a.test' }).expect(201);
    const dup = await api.post(`/customers/${a.id}/users`, { email: 'ANN@a.test' });
    expect(dup.status).toBe(422);
    expect(dup.body.validation_errors).toHaveProperty('email');
    const missing = await api.post(`/customers/${a.id}/users`, { first_name: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.validation_errors).toEqual({ email: 'is required' });
    expect((await api.get(`/customers/${a.id}/users`)).body.data).toHaveLength(1);
  });

  it('answers 404 for users of an unknown customer', async () => {
    expect((await api.get('/customers/cus_missing/users')).status).toBe(404);
    expect((await api.post('/customers/cus_missing/users', { email: 'a@b.test' })).status).toBe(404);
  });
});

describe('seeded ids', () => {
  it('name the same objects across versions: the first customer and its event under seed "pinned-ids" keep these ids', async () => {
    const box = await setup({ seed: 'pinned-ids' });
    const as = box.as(await box.token());
    const made = (await as.post('/customers', { name: 'Pinned' })).body;
    // `prefix_` and the first 20 hex characters of SHA-256("seed|account|n"): literals, so a change of derivation shows.
    expect(made.id).toBe('cus_7f0d702cccff40667728');
    const event = eventLog(box.deps.store.account('ptn_default', 'production')).oldest();
    expect(event).toMatchObject({ id: 'evt_2f0ebc5a863f11b7a323', entity_id: made.id, topic: 'customer_created' });
  });
});
