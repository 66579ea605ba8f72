// Webhook subscriptions: HTTPS only unless allowed, the secret never shown, filters, soft delete.
import { afterEach, describe, expect, it } from '@jest/globals';
import { setup } from './helpers.js';
import { webhookSandbox, type WebhookSandbox } from './webhooks-support.js';

let w: WebhookSandbox | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe('subscriptions without --allow-http-webhooks', () => {
  it('refuses a plain http endpoint with 400 naming the flag, and stores nothing', async () => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    const res = await api.post('/webhooks', { endpoint_url: 'http://127.0.0.1:9/hooks', topic: 'invoice_paid' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
    expect(res.body.message).toContain('HTTPS');
    expect(res.body.message).toContain('--allow-http-webhooks');
    expect(res.body.validation_errors).toEqual({ endpoint_url: 'must be an HTTPS URL' });
    expect((await api.get('/webhooks')).body.data).toEqual([]);
    const https = await api.post('/webhooks', { endpoint_url: 'https://hooks.partner.example/billing', topic: 'invoice_paid' });
    expect(https.status).toBe(201);
  });

  const url = 'https://hooks.partner.example/x';
  it.each([
    ['an ftp endpoint', { endpoint_url: 'ftp://hooks.partner.example/x', topic: 'invoice_paid' }, 'endpoint_url'],
    ['a relative endpoint', { endpoint_url: 'not a url', topic: 'invoice_paid' }, 'endpoint_url'],
    ['an endpoint over 2048 characters', { endpoint_url: `${url}/${'a'.repeat(2100)}`, topic: 'invoice_paid' }, 'endpoint_url'],
    ['an unknown topic', { endpoint_url: url, topic: 'invoice_exploded' }, 'topic'],
    ['a missing topic', { endpoint_url: url }, 'topic'],
    ['a missing endpoint', { topic: 'invoice_paid' }, 'endpoint_url'],
    ['an empty secret', { endpoint_url: url, topic: 'invoice_paid', secret_key: '' }, 'secret_key'],
    ['a blank secret', { endpoint_url: url, topic: 'invoice_paid', secret_key: '   ' }, 'secret_key'],
    ['an unknown field', { endpoint_url: url, topic: 'invoice_paid', extra: 1 }, 'extra'],
  ])('refuses %s with 400 naming the field', async (_label, body, field) => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    const res = await api.post('/webhooks', body);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty(field);
    expect((await api.get('/webhooks')).body.data).toEqual([]);
  });
});

describe('subscriptions', () => {
  it('stores the secret but shows only its last four characters, in every answer', async () => {
    w = await webhookSandbox();
    const res = await w.api.post('/webhooks', { endpoint_url: 'https://hooks.partner.example/billing', topic: 'invoice_paid', secret_key: 'whsec_top_secret_f00d' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^whs_/),
      endpoint_url: 'https://hooks.partner.example/billing',
      topic: 'invoice_paid',
      is_active: true,
      partner_id: 'ptn_default',
      secret_last_4_digits: 'f00d',
      created_at: '2026-03-02T09:00:00.000Z',
      updated_at: '2026-03-02T09:00:00.000Z',
    });
    const list = await w.api.get('/webhooks');
    const deleted = await w.api.delete(`/webhooks/${res.body.id}`);
    for (const text of [JSON.stringify(res.body), JSON.stringify(list.body), JSON.stringify(deleted.body)]) {
      expect(text).not.toContain('top_secret');
    }
    const none = await w.api.post('/webhooks', { endpoint_url: 'https://hooks.partner.example/other', topic: 'invoice_paid' });
    expect(none.body.secret_last_4_digits).toBeNull();
  });

  it('lists newest first with topic and is_active filters and cursor pagination', async () => {
    w = await webhookSandbox();
    const a = await w.subscribe('invoice_paid', '/a');
    const b = await w.subscribe('customer_created', '/b');
    const c = await w.subscribe('invoice_paid', '/c');
    await w.api.delete(`/webhooks/${a.id}`).expect(200);
    const ids = async (q: string) => (await w!.api.get(`/webhooks${q}`)).body.data.map((s: { id: string }) => s.id);
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids('?topic=invoice_paid')).toEqual([c.id, a.id]);
    expect(await ids('?is_active=true')).toEqual([c.id, b.id]);
    expect(await ids('?is_active=false')).toEqual([a.id]);
    expect(await ids('?topic=invoice_paid&is_active=true')).toEqual([c.id]);
    const first = await w.api.get('/webhooks?limit=2');
    expect(first.body).toMatchObject({ has_next_page: true, has_previous_page: false });
    const second = await w.api.get(`/webhooks?limit=2&after=${first.body.end_cursor}`);
    expect(second.body.data.map((s: { id: string }) => s.id)).toEqual([a.id]);
    expect(second.body).toMatchObject({ has_next_page: false, has_previous_page: true });
    const bad = await w.api.get('/webhooks?topic=nope');
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty('topic');
  });

  it('delete returns the subscription deactivated; a second delete and unknown ids answer 404', async () => {
    w = await webhookSandbox();
    const sub = await w.subscribe('customer_created');
    const res = await w.api.delete(`/webhooks/${sub.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: sub.id, is_active: false });
    expect((await w.api.get('/webhooks')).body.data[0]).toMatchObject({ id: sub.id, is_active: false });
    const again = await w.api.delete(`/webhooks/${sub.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
    expect((await w.api.delete('/webhooks/whs_missing')).status).toBe(404);
    // A deleted subscription receives nothing.
    await w.api.post('/customers', { name: 'Acme' }).expect(201);
    await w.settle();
    expect(w.receiver.deliveries).toEqual([]);
  });

  it('keeps subscriptions per account: another partner and the demo environment see none of them', async () => {
    w = await webhookSandbox();
    const sub = await w.subscribe('customer_created');
    const demo = w.sb.as(await w.sb.token('demo'), 'demo');
    expect((await demo.get('/webhooks')).body.data).toEqual([]);
    expect((await demo.delete(`/webhooks/${sub.id}`)).status).toBe(404);
    const partner = await w.sb.http.post('/_sandbox/partners').send({ name: 'Other' });
    const other = w.sb.as(await w.sb.token('production', partner.body.credentials.production));
    expect((await other.get('/webhooks')).body.data).toEqual([]);
    expect((await other.delete(`/webhooks/${sub.id}`)).status).toBe(404);
    expect((await w.api.get('/webhooks')).body.data).toHaveLength(1);
  });

  it('needs the webhooks scopes', async () => {
    w = await webhookSandbox();
    const key = await w.sb.http.post('/_sandbox/partners/ptn_default/keys').send({ environment: 'production', scopes: ['webhooks:read'] });
    expect(key.status).toBe(201);
    const reader = w.sb.as(await w.sb.token('production', key.body));
    expect((await reader.get('/webhooks')).status).toBe(200);
    expect((await reader.get('/webhooks/events')).status).toBe(200);
    const write = await reader.post('/webhooks', { endpoint_url: 'https://hooks.partner.example/x', topic: 'invoice_paid' });
    expect(write.status).toBe(403);
    expect((await reader.post('/webhooks/retry')).status).toBe(403);
  });
});
