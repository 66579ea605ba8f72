// The web inspector: its control-plane reads through HTTP (accounts with counts, a page of objects
// of each kind, one object with its history and next moves, events, resuming a queue, scenario
// counters, who may name which account, no secret in any answer), then the page itself in headless
// Chromium (playwright-core with Debian's chromium; skipped with a message when it is absent):
// a customer appears without reloading, an advance from the page turns an invoice OVERDUE, a failing
// receiver's attempts arrive and the queue is resumed from the page, a bad scenario names its field, a
// snapshot is saved, refused (its field named), exported and restored from the Snapshots tab, ids
// read on one line at 1280 pixels, the header clock ticks, and the page is ready at `load`.
// INSPECTOR_SCREENSHOTS=1 also writes docs/inspector-wide.png, docs/inspector-narrow.png and
// docs/inspector-snapshots.png.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { setup, type TestSandbox } from './helpers.js';
import { bank, card, customer, invoice } from './receivables-helpers.js';
import { startWebhookReceiver, type WebhookReceiver } from '../src/testing/webhook-receiver.js';
import { addForwarder } from '../src/stream/forwarders.js';

const KINDS = ['customers', 'invoices', 'payment_methods', 'payment_requests', 'payments', 'payouts', 'bills', 'vendors', 'vendor_payments', 'webhook_subscriptions'];

describe('inspector reads', () => {
  let sb: TestSandbox;
  let token: string;
  beforeAll(async () => {
    sb = await setup({ allowHttpWebhooks: true });
    token = await sb.token();
  });

  it('lists every account with object counts, and counts what the API creates', async () => {
    const before = await sb.http.get('/_sandbox/accounts');
    expect(before.status).toBe(200);
    const production = before.body.data.find((a: { account: string }) => a.account === 'ptn_default:production');
    expect(production).toMatchObject({ partner_id: 'ptn_default', environment: 'production' });
    expect(Object.keys(production.counts).sort()).toEqual([...KINDS].sort());
    const api = sb.as(token);
    await customer(api, 'Counted Co');
    const partner = (await sb.http.post('/_sandbox/partners').send({ name: 'Second partner' })).body;
    const after = (await sb.http.get('/_sandbox/accounts')).body.data as Array<{ account: string; counts: Record<string, number> }>;
    expect(after.find((a) => a.account === 'ptn_default:production')!.counts.customers).toBe(production.counts.customers + 1);
    expect(after.map((a) => a.account)).toEqual(expect.arrayContaining([`${partner.id}:production`, `${partner.id}:demo`]));
  });

  it('pages, searches and filters objects of a kind, each as the API shows it', async () => {
    const api = sb.as(token);
    const ids = [await customer(api, 'Zebra Search One'), await customer(api, 'Zebra Search Two'), await customer(api, 'Other Name')];
    expect((await api.delete(`/customers/${ids[2]}`)).status).toBe(200);
    const found = await sb.http.get('/_sandbox/objects/customers?q=zebra%20search&limit=1');
    expect(found.status).toBe(200);
    expect(found.body.data.map((o: { id: string }) => o.id)).toEqual([ids[1]]);
    expect(found.body.has_next_page).toBe(true);
    const next = await sb.http.get(`/_sandbox/objects/customers?q=zebra%20search&limit=1&after=${found.body.end_cursor}`);
    expect(next.body.data.map((o: { id: string }) => o.id)).toEqual([ids[0]]);
    expect(next.body.has_next_page).toBe(false);
    const shown = (await api.get(`/customers/${ids[0]}`)).body;
    expect(next.body.data[0]).toEqual({ id: ids[0], status: 'active', object: shown });
    const archived = await sb.http.get('/_sandbox/objects/customers?status=archived');
    expect(archived.body.data.map((o: { id: string }) => o.id)).toEqual([ids[2]]);
    for (const kind of KINDS) expect((await sb.http.get(`/_sandbox/objects/${kind}`)).status).toBe(200);
  });

  it('shows one object with its status history, next moves from its table and its events', async () => {
    const api = sb.as(token);
    const vendor = (await api.post('/vendors', { name: 'Inspected Vendor' })).body;
    const bill = (await api.post('/bills', { vendor_id: vendor.id, amount: 120, status: 'needs_approval' })).body;
    await api.post(`/bills/${bill.id}/reject`, { reason: 'wrong amount' });
    const detail = await sb.http.get(`/_sandbox/objects/bills/${bill.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ kind: 'bills', id: bill.id, status: 'draft', object: { id: bill.id, status: 'draft' } });
    expect(detail.body.status_history.map((h: { status: string }) => h.status)).toEqual(['needs_approval', 'draft']);
    expect(detail.body.status_history[1].reason).toBe('wrong amount');
    expect(detail.body.next_moves).toEqual(expect.arrayContaining([expect.objectContaining({ event: 'submit', to: 'needs_approval', by: 'partner' })]));

    const cus = await customer(api, 'Evented Co');
    const inv = (await invoice(api, cus, { due_date: '2026-03-05' }));
    const invDetail = (await sb.http.get(`/_sandbox/objects/invoices/${inv.id}`)).body;
    expect(invDetail.status_history).toBeNull();
    expect(invDetail.next_moves).toEqual(expect.arrayContaining([{ event: 'become_overdue', to: 'OVERDUE', by: 'sandbox' }]));
    expect(invDetail.events.map((e: { topic: string }) => e.topic)).toEqual(['invoice_created']);
    const customerDetail = (await sb.http.get(`/_sandbox/objects/customers/${cus}`)).body;
    expect(customerDetail.events.map((e: { topic: string; entity_id: string }) => [e.topic, e.entity_id])).toEqual([['customer_created', cus]]);
    const paymentMethods = (await sb.http.get('/_sandbox/objects/payment_methods')).body;
    expect(paymentMethods.data.every((o: { status: null }) => o.status === null)).toBe(true);
  });

  it('answers 404 for another account\'s or environment\'s id, and 400 naming a bad kind or account', async () => {
    const api = sb.as(token);
    const cus = await customer(api, 'Production Only');
    const demo = await sb.http.get(`/_sandbox/objects/customers/${cus}`).set('X-Sandbox-Account', 'ptn_default:demo');
    expect(demo.status).toBe(404);
    expect(demo.body).toMatchObject({ code: 'not_found' });
    const badKind = await sb.http.get('/_sandbox/objects/secrets');
    expect(badKind.status).toBe(400);
    expect(Object.keys(badKind.body.validation_errors).join(' ')).toMatch(/kind/);
    const badAccount = await sb.http.get('/_sandbox/clock').set('X-Sandbox-Account', 'nobody');
    expect(badAccount.status).toBe(400);
    expect(Object.keys(badAccount.body.validation_errors)).toContain('X-Sandbox-Account');
    expect((await sb.http.get('/_sandbox/clock').set('X-Sandbox-Account', 'ptn_nobody:production')).status).toBe(404);
  });

  it('lets an access token name only its own partner\'s accounts, and acts on the account named', async () => {
    const partner = (await sb.http.post('/_sandbox/partners').send({ name: 'Token partner' })).body;
    const theirs = await sb.token('production', partner.credentials.production);
    const own = await sb.http.get('/_sandbox/accounts').set('Authorization', `Bearer ${theirs}`);
    expect(own.body.data.map((a: { account: string }) => a.account)).toEqual([`${partner.id}:production`, `${partner.id}:demo`]);
    const denied = await sb.http.get('/_sandbox/objects/customers').set('Authorization', `Bearer ${theirs}`).set('X-Sandbox-Account', 'ptn_default:production');
    expect(denied.status).toBe(404);
    const advanced = await sb.http.post('/_sandbox/clock/advance').set('X-Sandbox-Account', `${partner.id}:demo`).send({ seconds: 3600 });
    expect(advanced.status).toBe(200);
    const demoClock = sb.deps.store.account(partner.id, 'demo').clock.nowMs();
    const productionClock = sb.deps.store.account(partner.id, 'production').clock.nowMs();
    expect(demoClock - productionClock).toBeGreaterThanOrEqual(3_600_000);
  });

  it('lists events newest first, filtered by entity or topic', async () => {
    const api = sb.as(token);
    const cus = await customer(api, 'Event Filter Co');
    await api.patch(`/customers/${cus}`, { name: 'Event Filter Renamed' });
    const mine = await sb.http.get(`/_sandbox/events?entity_id=${cus}`);
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((e: { topic: string }) => e.topic)).toEqual(['customer_updated', 'customer_created']);
    const updates = (await sb.http.get('/_sandbox/events?topic=customer_updated')).body.data;
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.every((e: { topic: string }) => e.topic === 'customer_updated')).toBe(true);
  });

  it('shows each loaded scenario\'s per-rule counters', async () => {
    const doc = { name: 'counted', rules: [{ match: { operation: 'listVendors' }, times: 1, respond: { status: 503 } }] };
    const loaded = await sb.http.post('/_sandbox/scenarios').send(doc);
    expect(loaded.status).toBe(201);
    const api = sb.as(token);
    expect((await api.get('/vendors')).status).toBe(503);
    expect((await api.get('/vendors')).status).toBe(200);
    const listed = (await sb.http.get('/_sandbox/scenarios')).body.data.find((s: { id: string }) => s.id === loaded.body.id);
    expect(listed.counters).toEqual([{ matched: 2, fired: 1 }]);
    await sb.http.delete(`/_sandbox/scenarios/${loaded.body.id}`);
  });

  it('neither lists nor counts the command line\'s forwarder subscriptions (the partner never sees them)', async () => {
    const fresh = await setup();
    const t = await fresh.token();
    await fresh.as(t).post('/webhooks', { endpoint_url: 'https://hooks.example/partner', topic: 'invoice_paid' });
    // What `billing-sandbox listen --forward-to` opens for as long as its stream lives.
    addForwarder(fresh.deps.store.account('ptn_default', 'production'), 'stm_test', { url: 'http://127.0.0.1:9/forward', topics: ['customer_created', 'invoice_paid'], secret: null });
    const listed = (await fresh.http.get('/_sandbox/objects/webhook_subscriptions')).body.data;
    expect(listed.map((o: { object: { endpoint_url: string } }) => o.object.endpoint_url)).toEqual(['https://hooks.example/partner']);
    const counts = (await fresh.http.get('/_sandbox/accounts')).body.data.find((a: { account: string }) => a.account === 'ptn_default:production').counts;
    expect(counts.webhook_subscriptions).toBe(1);
  });

  it('never shows a secret: client secrets, webhook secrets, bank numbers, card tokens', async () => {
    const partner = (await sb.http.post('/_sandbox/partners').send({ name: 'Secretive' })).body;
    const theirToken = await sb.token('production', partner.credentials.production);
    const api = sb.as(theirToken);
    const cus = await customer(api, 'Secret Holder');
    await bank(api, cus, '00099988877766');
    await card(api, cus, 'tok_mastercard');
    await api.post('/vendors', { name: 'Secret Vendor', bank_account: { account_number: '55554444333322', routing_number: '011000015', account_type: 'checking', bank_name: 'Leak Test Bank' } });
    await api.post('/webhooks', { endpoint_url: 'http://127.0.0.1:9/hooks', topic: 'customer_created', secret_key: 'whsec_do_not_show_me' });
    const secrets = [partner.credentials.production.client_secret, partner.credentials.demo.client_secret, 'whsec_do_not_show_me', '00099988877766', '55554444333322', 'tok_mastercard'];
    const account = `${partner.id}:production`;
    const bodies: string[] = [(await sb.http.get('/_sandbox/accounts')).text];
    for (const kind of KINDS) {
      const page = await sb.http.get(`/_sandbox/objects/${kind}`).set('X-Sandbox-Account', account);
      bodies.push(page.text);
      for (const item of page.body.data) bodies.push((await sb.http.get(`/_sandbox/objects/${kind}/${item.id}`).set('X-Sandbox-Account', account)).text);
    }
    for (const path of ['/_sandbox/events', '/_sandbox/requests', '/_sandbox/webhooks/deliveries', '/_sandbox/scenarios', '/_sandbox/clock']) {
      bodies.push((await sb.http.get(path).set('X-Sandbox-Account', account)).text);
    }
    expect(bodies.length).toBeGreaterThan(15);
    for (const secret of secrets) expect(bodies.filter((b) => b.includes(secret))).toEqual([]);
  });

  it('resumes a paused queue (POST /webhooks/retry semantics) and the held event goes out', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const fresh = await setup({ allowHttpWebhooks: true });
      const t = await fresh.token();
      const api = fresh.as(t);
      await api.post('/webhooks', { endpoint_url: `${receiver.url}/hooks`, topic: 'customer_created' });
      receiver.respondWith(500);
      await customer(api, 'Paused Co');
      expect((await fresh.advance(4 * 3600)).status).toBe(200);
      const attempts = (await fresh.http.get('/_sandbox/webhooks/deliveries')).body.data;
      expect(attempts.length).toBe(6);
      receiver.respondWith(200);
      const resumed = await fresh.http.post('/_sandbox/webhooks/retry');
      expect(resumed.status).toBe(200);
      expect(resumed.body).toEqual({ success: true, resumed: 1 });
      await receiver.waitForCount('customer_created', 1);
      expect(receiver.deliveries.map((d) => d.status)).toEqual([500, 500, 500, 500, 500, 500, 200]);
      expect((receiver.deliveries.at(-1)!.body as { topic: string }).topic).toBe('customer_created');
      expect((await fresh.http.post('/_sandbox/webhooks/retry')).body).toEqual({ success: true, resumed: 0 });
    } finally {
      await receiver.close();
    }
  });

  it('serves the page and its assets without the admin token, with a strict content policy', async () => {
    const guarded = await setup({ adminToken: 'the-admin-token' });
    const page = await guarded.http.get('/_sandbox/ui');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.text).toContain('/_sandbox/ui/app.js');
    expect((await guarded.http.get('/_sandbox/ui/app.js')).headers['content-type']).toMatch(/^text\/javascript/);
    expect((await guarded.http.get('/_sandbox/ui/app.css')).status).toBe(200);
    // Any other path under /_sandbox is the control plane's, behind its token.
    expect((await guarded.http.get('/_sandbox/ui/nothing.js')).status).toBe(401);
    expect((await guarded.http.get('/_sandbox/accounts')).status).toBe(401);
    const all = await guarded.http.get('/_sandbox/accounts').set('X-Sandbox-Admin-Token', 'the-admin-token');
    expect(all.status).toBe(200);
    const landing = await guarded.http.get('/');
    expect(landing.text).toContain('href="/_sandbox/ui"');
  });
});

const CHROMIUM = '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser) console.warn(`inspector browser tests skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);
const browserDescribe = haveBrowser ? describe : describe.skip;

/** Wait until `read` answers what `done` accepts (the page updates on its own), or fail with the last answer. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`gave up waiting; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

browserDescribe('the inspector in headless Chromium', () => {
  let sb: TestSandbox;
  let server: Server;
  let origin: string;
  let browser: Browser;
  let page: Page;
  let receiver: WebhookReceiver;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    sb = await setup({ allowHttpWebhooks: true });
    server = sb.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    receiver = await startWebhookReceiver();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    // Console errors other than the browser's own line for an answer that is not 2xx (the bad scenario's 400 is one).
    page.on('console', (message) => { if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text()); });
    await page.goto(`${origin}/_sandbox/ui`);
    await page.waitForSelector('#live:not(.off)');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  /** The API, against the listening server (the page's stream hears these requests). */
  async function api() {
    const token = await sb.token();
    const http = request(origin);
    return {
      post: (path: string, body: object) => http.post(path).set('Authorization', `Bearer ${token}`).send(body),
    };
  }

  it('selects the default production account and shows a customer created through the API without reloading', async () => {
    await expect(page.locator('#account').inputValue()).resolves.toBe('ptn_default:production');
    const created = (await (await api()).post('/customers', { name: 'Live Arrival Co', email: 'live@arrival.test' })).body;
    await page.locator(`#rows tr[data-id="${created.id}"]`).waitFor();
    await expect(page.locator(`#rows tr[data-id="${created.id}"]`).textContent()).resolves.toContain('Live Arrival Co');
    await expect(page.locator('[data-kind="customers"] .count').textContent()).resolves.toBe('1');
    // Keyboard: a row takes the focus and Enter opens it.
    await page.focus(`#rows tr[data-id="${created.id}"]`);
    await page.keyboard.press('Enter');
    await page.locator('#detail h2').waitFor();
    await expect(page.locator('#detail').textContent()).resolves.toContain('archive → archived');
    await expect(page.locator('#detail').textContent()).resolves.toContain('customer_created');
    await expect(page.locator('#detail').textContent()).resolves.not.toContain('nullnull');
  });

  it('advances the clock from the page and shows the invoice OVERDUE with what fell due', async () => {
    const a = await api();
    const cus = (await a.post('/customers', { name: 'Late Payer' })).body;
    const inv = (await a.post('/invoices', { customer_id: cus.id, due_date: '2026-03-03', exclude_from_autopay: true, line_items: [{ description: 'Plan', quantity: 1, amount: 90 }] })).body;
    await page.click('.tabs [data-tab="clock"]');
    await page.fill('#advance-by', '3d');
    await page.click('#advance button[type=submit]');
    await page.locator('#advance-result .fell-due').waitFor();
    await expect(page.locator('#advance-result').textContent()).resolves.toContain('invoice_updated');
    await expect(page.locator('#advance-result').textContent()).resolves.not.toMatch(/null/);
    await page.click('.tabs [data-tab="objects"]');
    await page.click('[data-kind="invoices"]');
    const row = page.locator(`#rows tr[data-id="${inv.id}"]`);
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('OVERDUE');
  });

  it('shows a failing receiver\'s attempts arriving, and resumes the queue from the page', async () => {
    const a = await api();
    await a.post('/webhooks', { endpoint_url: `${receiver.url}/hooks`, topic: 'customer_created' });
    receiver.respondWith(500);
    await a.post('/customers', { name: 'Unheard Co' });
    await page.click('.tabs [data-tab="timeline"]');
    await page.locator('#timeline tr[data-type="delivery"]').first().waitFor();
    await expect(page.locator('#timeline tr[data-type="delivery"]').first().textContent()).resolves.toContain('500');
    expect((await sb.advance(4 * 3600)).status).toBe(200);
    await until(() => page.locator('#timeline tr[data-type="delivery"]').count(), (n) => n === 6);
    receiver.respondWith(200);
    await page.click('#resume');
    await until(() => page.locator('#timeline-result').textContent(), (t) => Boolean(t?.includes('Resumed: 1')));
    await receiver.waitForCount('customer_created', 1);
    expect(receiver.deliveries.map((d) => d.status)).toEqual([500, 500, 500, 500, 500, 500, 200]);
    await until(() => page.locator('#timeline tr[data-type="delivery"]').first().textContent(), (t) => Boolean(t?.includes('200')));
  });

  it('loads a bad scenario and names the field beside the editor; a good one is listed', async () => {
    await page.click('.tabs [data-tab="clock"]');
    await page.fill('#scenario-text', 'name: broken\nrules:\n  - match: {method: POST}\n    times: -2\n    respond: {status: 503}\n');
    await page.click('#load-scenario button[type=submit]');
    await page.locator('#scenario-errors li[data-field]').first().waitFor();
    const fields = await page.locator('#scenario-errors li[data-field]').evaluateAll((items) => items.map((li) => li.getAttribute('data-field')));
    expect(fields).toEqual(['rules[0].times']);
    await page.fill('#scenario-text', '{"name": "page scenario", "rules": [{"match": {"operation": "listVendors"}, "times": 1, "respond": {"status": 503}}]}');
    await page.click('#load-scenario button[type=submit]');
    await until(() => page.locator('#scenarios').textContent(), (t) => Boolean(t?.includes('page scenario')));
    expect(pageErrors).toEqual([]);
  });

  it('saves the account as a snapshot from the Snapshots tab, names a refused field beside the form, exports it and restores it', async () => {
    const a = await api();
    await page.click('.tabs [data-tab="snapshots"]');
    await page.locator('#snapshots td.empty').waitFor();
    await page.fill('#snapshot-name', 'page-snap');
    await page.click('#save-snapshot button[type=submit]');
    const row = page.locator('#snapshots tr[data-name="page-snap"]');
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('ptn_default:production');
    // The same name again, without "replace": the page names the field the sandbox refused.
    await page.fill('#snapshot-name', 'page-snap');
    await page.click('#save-snapshot button[type=submit]');
    await page.locator('#snapshot-errors li[data-field="name"]').waitFor();
    if (process.env.INSPECTOR_SCREENSHOTS) await page.screenshot({ path: 'docs/inspector-snapshots.png', fullPage: false });
    const [download] = await Promise.all([page.waitForEvent('download'), row.locator('button', { hasText: 'Export' }).click()]);
    const exported = JSON.parse(await new Promise<string>((resolve, reject) => {
      void download.createReadStream().then((stream) => {
        let text = '';
        stream.on('data', (chunk: Buffer) => { text += chunk; });
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
      }, reject);
    }));
    expect(exported).toMatchObject({ format: 'billing-sandbox-snapshot', name: 'page-snap', redacted: true });
    // Made after the save: gone once the snapshot is restored from the page.
    const later = (await a.post('/customers', { name: 'Made After The Snapshot' })).body;
    page.once('dialog', (dialog) => void dialog.accept());
    await row.locator('button[data-action="restore"]').click();
    await until(() => page.locator('#notice').textContent(), (t) => Boolean(t?.includes('Restored page-snap')));
    const token = await sb.token();
    expect((await request(origin).get(`/customers/${later.id}`).set('Authorization', `Bearer ${token}`)).status).toBe(404);
    expect(pageErrors).toEqual([]);
  });

  it('asks once for the admin token of a guarded sandbox, keeps it in sessionStorage and never in a URL', async () => {
    const guarded = await setup({ adminToken: 'inspector-admin-token' });
    const other = guarded.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => other.once('listening', resolve));
    const guardedOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const urls: string[] = [];
    tab.on('request', (r) => urls.push(r.url()));
    try {
      await tab.goto(`${guardedOrigin}/_sandbox/ui`);
      await tab.locator('#token-dialog[open]').waitFor();
      await tab.fill('#token-input', 'inspector-admin-token');
      await tab.click('#token-form button[value=save]');
      await tab.locator('#live:not(.off)').waitFor();
      await expect(tab.locator('#account option').count()).resolves.toBeGreaterThanOrEqual(2);
      await expect(tab.evaluate(() => sessionStorage.getItem('billing-sandbox.admin-token'))).resolves.toBe('inspector-admin-token');
      expect(urls.filter((u) => u.includes('inspector-admin-token'))).toEqual([]);
    } finally {
      await tab.close();
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('at 1280 pixels shows every id on one line, lets the header clock tick, and says what a fired event made', async () => {
    // Objects of several kinds, with long statuses and summaries beside the ids.
    for (const topic of ['invoice_paid', 'payment_refunded', 'payout_paid']) expect((await sb.http.post('/_sandbox/events').send({ topic })).status).toBe(201);
    await page.click('.tabs [data-tab="objects"]');
    for (const kind of ['payments', 'payment_methods', 'payouts', 'invoices']) {
      await page.click(`[data-kind="${kind}"]`);
      await page.locator('#rows tr[data-id]').first().waitFor();
      await page.locator('#rows tr[data-id]').first().click();
      await page.locator('#detail h2').waitFor();
      // Lines of text each id cell takes (a range's client rects: one per line box).
      const lines = await page.evaluate(() => [...document.querySelectorAll('#rows td.id, #detail td.id')].map((td) => {
        const range = document.createRange();
        range.selectNodeContents(td);
        return [td.textContent, range.getClientRects().length];
      }));
      expect(lines.length).toBeGreaterThan(1);
      for (const [id, count] of lines) expect([kind, id, count]).toEqual([kind, id, 1]);
    }
    // The account clock runs with real time between reads: the header moves on by itself.
    const first = await page.locator('#clock-now').textContent();
    expect(first).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    await until(() => page.locator('#clock-now').textContent(), (t) => t !== first, 5000);
    await page.click('.tabs [data-tab="timeline"]');
    await page.selectOption('#fire-topic', 'invoice_paid');
    await page.click('#fire button[type=submit]');
    await until(() => page.locator('#timeline-result').textContent(), (t) => Boolean(t?.startsWith('Fired invoice_paid')));
    await expect(page.locator('#timeline-result').textContent()).resolves.toMatch(/; made customer cus_\w+, payment method pm_\w+, invoice inv_\w+, payment pay_\w+, payout po_\w+\.$/);
  });

  it('is ready at load, never at networkidle (its live stream stays open), as docs/inspector.md tells automations', async () => {
    const doc = readFileSync('docs/inspector.md', 'utf8');
    expect(doc).toMatch(/Wait for `load`/);
    expect(doc).toContain('networkidle');
    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await tab.goto(`${origin}/_sandbox/ui`, { waitUntil: 'load' });
      await tab.waitForSelector('#live:not(.off)');
      await expect(tab.waitForLoadState('networkidle', { timeout: 1500 })).rejects.toThrow(/Timeout/);
    } finally {
      await tab.close();
    }
  });

  it('fits 1280 and 390 pixels wide, every control labelled (and writes the screenshots when asked)', async () => {
    await page.click('.tabs [data-tab="objects"]');
    await page.click('[data-kind="invoices"]');
    // The OVERDUE invoice (the screenshot's subject: one with moves left), not the paid ones fired above.
    await page.locator('#rows tr[data-id]', { hasText: 'OVERDUE' }).first().click();
    await page.locator('#detail h2').waitFor();
    if (process.env.INSPECTOR_SCREENSHOTS) await page.screenshot({ path: 'docs/inspector-wide.png', fullPage: false });
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea, button')]
      .filter((el) => !(el.getAttribute('aria-label') || el.textContent?.trim() || (el.id && document.querySelector(`label[for="${el.id}"]`)) || el.closest('label')))
      .map((el) => el.outerHTML.slice(0, 80)));
    expect(unlabelled).toEqual([]);
    if (process.env.INSPECTOR_SCREENSHOTS) await page.screenshot({ path: 'docs/inspector-narrow.png', fullPage: false });
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
