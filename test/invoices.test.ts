// Invoices end to end: create, list filters, status on the clock, archive and restore, links, events.
import { describe, expect, it } from '@jest/globals';
import { useSession, type Api, type TestSandbox } from './helpers.js';
import { control, customer, events, invoice, syncedInvoice } from './receivables-helpers.js';

let sb: TestSandbox;
let api: Api;
let token: string;
/** Advance the default account's clock; the session's token keeps working (tokens live in real time). */
const { advance } = useSession((session) => ({ sb, api, token } = session));

describe('creating invoices', () => {
  it('computes totals from line items, numbers the invoice, defaults due_date to today and records invoice_created', async () => {
    const cus = await customer(api);
    const res = await api.post('/invoices', { customer_id: cus, line_items: [{ description: 'Hours', quantity: 3, amount: 99.5 }, { amount: 20 }] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      customer_id: cus, status: 'UPCOMING', currency: 'USD', due_date: '2026-03-02', invoice_number: 'INV-000001',
      sub_total: 318.5, total: 318.5, pdf_uploaded: false, source: 'api',
      line_items: [{ description: 'Hours', quantity: 3, amount: 99.5, total: 298.5 }, { description: null, quantity: 1, amount: 20, total: 20 }],
    });
    expect((await api.get(`/invoices/${res.body.id}`)).body).toEqual(res.body);
    const second = await invoice(api, cus);
    expect(second.invoice_number).toBe('INV-000002');
    expect(events(sb, 'invoice_created').map((e) => e.entity_id)).toEqual([res.body.id, second.id]);
    expect(events(sb, 'invoice_created')[0].data).toMatchObject({ invoice_id: res.body.id, status: 'UPCOMING', total: 318.5 });
  });

  it.each([
    ['a missing customer_id', { line_items: [{ amount: 1 }] }, 400, 'customer_id'],
    ['no line items', { customer_id: 'CUS', line_items: [] }, 400, 'line_items'],
    ['a currency other than USD', { customer_id: 'CUS', currency: 'EUR', line_items: [{ amount: 1 }] }, 400, 'currency'],
    ['a negative amount', { customer_id: 'CUS', line_items: [{ amount: -5 }] }, 400, 'line_items[0].amount'],
    ['a fraction of a cent', { customer_id: 'CUS', line_items: [{ amount: 1.005 }] }, 400, 'line_items[0].amount'],
    ['a zero quantity', { customer_id: 'CUS', line_items: [{ amount: 5, quantity: 0 }] }, 400, 'line_items[0].quantity'],
    ['an amount beyond the sandbox limit', { customer_id: 'CUS', line_items: [{ amount: 1e300, quantity: 2 }] }, 400, 'line_items[0].amount'],
    ['a total beyond the sandbox limit', { customer_id: 'CUS', line_items: [{ amount: 600000000 }, { amount: 600000000 }] }, 400, 'line_items'],
    ['a malformed due_date', { customer_id: 'CUS', due_date: '03/31/2026', line_items: [{ amount: 5 }] }, 400, 'due_date'],
    ['an unknown customer', { customer_id: 'cus_nope', line_items: [{ amount: 5 }] }, 422, 'customer_id'],
  ])('refuses %s and stores nothing', async (_what, body, status, field) => {
    const cus = await customer(api);
    const res = await api.post('/invoices', JSON.parse(JSON.stringify(body).replace('"CUS"', JSON.stringify(cus))));
    expect(res.status).toBe(status);
    expect(res.body.validation_errors).toHaveProperty([field]);
    expect((await api.get('/invoices')).body.data).toEqual([]);
    expect(events(sb, 'invoice_created')).toEqual([]);
  });

  it('refuses an invoice for an archived customer with 422', async () => {
    const cus = await customer(api);
    await api.delete(`/customers/${cus}`).expect(200);
    const res = await api.post('/invoices', { customer_id: cus, line_items: [{ amount: 5 }] });
    expect(res.status).toBe(422);
    expect(res.body.validation_errors).toEqual({ customer_id: 'is archived' });
  });

  it('does not see another account\'s or environment\'s invoices', async () => {
    const inv = await invoice(api, await customer(api));
    const demo = sb.as(await sb.token('demo'), 'demo');
    expect((await demo.get(`/invoices/${inv.id}`)).status).toBe(404);
    expect((await demo.get('/invoices')).body.data).toEqual([]);
  });
});

describe('invoice status on the clock', () => {
  it('becomes OVERDUE when the day after the due date begins, with invoice_updated', async () => {
    const inv = await invoice(api, await customer(api), { due_date: '2026-03-03' });
    await advance(86_400); // 2026-03-03 09:00: due today, not overdue
    expect((await api.get(`/invoices/${inv.id}`)).body.status).toBe('UPCOMING');
    await advance(15 * 3600); // 2026-03-04 00:00
    expect((await api.get(`/invoices/${inv.id}`)).body.status).toBe('OVERDUE');
    // ?status= walks a status index, which follows the change made on the clock.
    expect((await api.get('/invoices?status=OVERDUE')).body.data.map((i: { id: string }) => i.id)).toEqual([inv.id]);
    expect((await api.get('/invoices?status=UPCOMING')).body.data).toEqual([]);
    expect(events(sb, 'invoice_updated').map((e) => [e.entity_id, e.data.status, e.timestamp])).toEqual([[inv.id, 'OVERDUE', '2026-03-04T00:00:00.000Z']]);
  });

  it('creates an invoice with a past due date as OVERDUE', async () => {
    const inv = await invoice(api, await customer(api), { due_date: '2026-02-01' });
    expect(inv.status).toBe('OVERDUE');
  });
});

describe('archive and restore', () => {
  it('archives with invoice_archived and restores to the status it would have now', async () => {
    const inv = await invoice(api, await customer(api), { due_date: '2026-03-05' });
    const archived = await api.delete(`/invoices/${inv.id}`);
    expect(archived.status).toBe(200);
    expect(archived.body.status).toBe('ARCHIVED');
    expect(events(sb, 'invoice_archived')).toHaveLength(1);
    const again = await api.delete(`/invoices/${inv.id}`);
    expect(again.status).toBe(400);
    expect(again.body.message).toMatch(/allowed: restore\.$/);
    await advance(4 * 86_400); // past the due date while archived
    expect((await api.get(`/invoices/${inv.id}`)).body.status).toBe('ARCHIVED');
    const restored = await api.post(`/invoices/${inv.id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.status).toBe('OVERDUE');
    expect((await api.post(`/invoices/${inv.id}/restore`)).status).toBe(400);
  });

  it('restores a not-yet-due invoice to UPCOMING and it still becomes OVERDUE later', async () => {
    const inv = await invoice(api, await customer(api), { due_date: '2026-03-04' });
    await api.delete(`/invoices/${inv.id}`).expect(200);
    expect((await api.post(`/invoices/${inv.id}/restore`)).body.status).toBe('UPCOMING');
    await advance(3 * 86_400);
    expect((await api.get(`/invoices/${inv.id}`)).body.status).toBe('OVERDUE');
  });

  it('answers 404 for unknown invoices', async () => {
    for (const res of [await api.get('/invoices/inv_nope'), await api.delete('/invoices/inv_nope'), await api.post('/invoices/inv_nope/restore'),
      await api.get('/invoices/inv_nope/payment-link'), await api.get('/invoices/inv_nope/pdf-link')]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });
});

describe('listing invoices', () => {
  it('filters by customer, number, status, created_at and due_date windows, newest first with cursors', async () => {
    const a = await customer(api, 'Alpha');
    const b = await customer(api, 'Beta');
    const first = await invoice(api, a, { due_date: '2026-03-10' });
    sb.time.now += 600_000;
    const second = await invoice(api, b, { due_date: '2026-04-10' });
    sb.time.now += 600_000;
    const third = await invoice(api, a, { due_date: '2026-05-10' });
    await api.delete(`/invoices/${third.id}`).expect(200);
    const ids = async (q: string) => (await api.get(`/invoices${q}`)).body.data.map((i: { id: string }) => i.id);
    expect(await ids('')).toEqual([third.id, second.id, first.id]);
    expect(await ids(`?customer_id=${a}`)).toEqual([third.id, first.id]);
    expect(await ids('?invoice_number=INV-000002')).toEqual([second.id]);
    expect(await ids(`?invoice_number=INV-000002&customer_id=${a}`)).toEqual([]);
    expect(await ids('?status=ARCHIVED')).toEqual([third.id]);
    expect(await ids('?status=UPCOMING')).toEqual([second.id, first.id]);
    expect(await ids(`?created_at_start=${encodeURIComponent(second.created_at)}`)).toEqual([third.id, second.id]);
    expect(await ids('?due_date_start=2026-04-01&due_date_end=2026-04-10')).toEqual([second.id]);
    expect(await ids('?due_date_end=2026-03-10T00:00:00Z')).toEqual([first.id]);
    const page1 = await api.get('/invoices?limit=2');
    expect(page1.body).toMatchObject({ has_next_page: true, has_previous_page: false });
    const page2 = await api.get(`/invoices?limit=2&after=${page1.body.end_cursor}`);
    expect(page2.body.data.map((i: { id: string }) => i.id)).toEqual([first.id]);
    const bad = await api.get('/invoices?status=OPEN');
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty('status');
  });
});

describe('links', () => {
  it('answers an absolute signed payment link and pdf link under /hosted', async () => {
    const inv = await invoice(api, await customer(api));
    const pay = await api.get(`/invoices/${inv.id}/payment-link`);
    expect(pay.status).toBe(200);
    expect(pay.body.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1(:\\d+)?/hosted/invoices/${inv.id}/pay\\?account=.+&exp=\\d+&sig=`));
    const pdf = await api.get(`/invoices/${inv.id}/pdf-link`);
    expect(pdf.body.url).toContain(`/hosted/files/invoices/${inv.id}.pdf?`);
  });

  it.each([
    ['X-Forwarded-Proto https (a proxy in front)', { 'X-Forwarded-Proto': 'https' }, /^https:\/\/127\.0\.0\.1(:\d+)?\/hosted\//],
    ['X-Forwarded-Proto *', { 'X-Forwarded-Proto': '*' }, /^http:\/\/127\.0\.0\.1(:\d+)?\/hosted\//],
    ['X-Forwarded-Proto ::1', { 'X-Forwarded-Proto': '::1' }, /^http:\/\/127\.0\.0\.1(:\d+)?\/hosted\//],
    ['a Host header no URL can carry', { Host: ':::1' }, /^http:\/\/127\.0\.0\.1:\d+\/hosted\//],
  ])('builds links that are URLs whatever the request says: %s', async (_what, headers, shape) => {
    // Found by the fuzzer: `X-Forwarded-Proto: *` answered `*://...`, which the document's format: uri refuses.
    const inv = await invoice(api, await customer(api));
    for (const path of [`/invoices/${inv.id}/payment-link`, `/invoices/${inv.id}/pdf-link`]) {
      const res = await sb.http.get(path).set('Authorization', `Bearer ${token}`).set(headers);
      expect(res.status).toBe(200);
      expect(res.body.url).toMatch(shape);
      expect(() => new URL(res.body.url)).not.toThrow();
    }
  });
});

describe('accounting sync', () => {
  it('creates invoices with source accounting_integration and the usual event, refusing bad items without creating any', async () => {
    const cus = await customer(api);
    const synced = await syncedInvoice(sb, token, cus);
    expect(synced).toMatchObject({ source: 'accounting_integration', status: 'UPCOMING', total: 500 });
    expect((await api.get(`/invoices/${synced.id}`)).body.source).toBe('accounting_integration');
    const bad = await control(sb, token).post('/accounting/sync', { invoices: [{ customer_id: cus, line_items: [{ amount: 1 }] }, { customer_id: 'cus_nope', line_items: [{ amount: 1 }] }] });
    expect(bad.status).toBe(422);
    expect(bad.body.validation_errors).toHaveProperty(['invoices[1].customer_id']);
    const badShape = await control(sb, token).post('/accounting/sync', { invoices: [{ customer_id: cus }] });
    expect(badShape.status).toBe(400);
    expect(badShape.body.validation_errors).toHaveProperty(['invoices[0].line_items']);
    expect((await api.get('/invoices')).body.data).toHaveLength(1);
  });
});
