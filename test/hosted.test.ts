// Hosted pages in a real browser (Debian's chromium driven by playwright-core): pay an invoice from
// its payment link and see it PAID after settlement, and pay a payment request that redirects back.
// Skipped with a message when /usr/bin/chromium is absent (CI installs it: see .ci/run).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { setup, type TestSandbox } from './helpers.js';
import { events } from './receivables-helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser) console.warn(`hosted page browser tests skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);
const browserDescribe = haveBrowser ? describe : describe.skip;

let sb: TestSandbox;
let server: Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  if (!haveBrowser) return;
  sb = await setup();
  server = sb.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (server) await new Promise((resolve) => server.close(resolve));
});

/** API calls against the listening server, so the links it answers point at it. */
async function api() {
  const token = await sb.token();
  const http = request(origin);
  return {
    get: (path: string) => http.get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object) => http.post(path).set('Authorization', `Bearer ${token}`).send(body),
  };
}

browserDescribe('hosted pages in headless Chromium', () => {
  it('opens an invoice payment link, pays with a test card, and shows PAID after settlement with the events recorded', async () => {
    const a = await api();
    const customer = (await a.post('/customers', { name: 'Browser Buyer', email: 'buyer@example.test' })).body;
    const invoice = (await a.post('/invoices', { customer_id: customer.id, exclude_from_autopay: true, line_items: [{ description: 'Annual plan', quantity: 1, amount: 1200 }] })).body;
    const link = (await a.get(`/invoices/${invoice.id}/payment-link`)).body.url as string;
    expect(link.startsWith(`${origin}/hosted/invoices/${invoice.id}/pay?`)).toBe(true);

    const page = await browser.newPage();
    await page.goto(link);
    await expect(page.locator('h1').textContent()).resolves.toBe(`Invoice ${invoice.invoice_number}`);
    await expect(page.locator('#status').textContent()).resolves.toBe('UPCOMING');
    await expect(page.locator('#amount-due').textContent()).resolves.toBe('$1200.00');
    await page.check('input[name=method][value=card]');
    await page.fill('input[name=card_provider_token]', 'tok_visa');
    await Promise.all([page.waitForURL(/payment=pay_/), page.click('#pay')]);
    await expect(page.locator('#status').textContent()).resolves.toBe('RECEIVED');
    await expect(page.locator('#payment').textContent()).resolves.toMatch(/^Payment pay_\w+ is pending\.$/);

    expect((await sb.advance(3660)).status).toBe(200);
    await page.reload();
    await expect(page.locator('#status').textContent()).resolves.toBe('PAID');
    await expect(page.locator('#payment').textContent()).resolves.toMatch(/is succeeded\.$/);
    expect(await page.locator('#pay').count()).toBe(0);

    const after = await api();
    expect((await after.get(`/invoices/${invoice.id}`)).body.status).toBe('PAID');
    const methods = (await after.get(`/customers/${customer.id}/payment-methods`)).body.data;
    expect(methods).toEqual([expect.objectContaining({ type: 'card', brand: 'visa', last4: '4242', default: true })]);
    const topics = events(sb).filter((e) => e.entity_id === invoice.id || e.data.invoice_id === invoice.id || e.data.customer_id === customer.id).map((e) => e.topic);
    expect(topics).toEqual(expect.arrayContaining(['payment_method_added', 'invoice_updated', 'payment_succeeded', 'invoice_paid', 'payout_scheduled']));
    expect(events(sb, 'invoice_paid')).toEqual([expect.objectContaining({ entity_id: invoice.id })]);
    await page.close();
  });

  it('shows a declined card on the invoice page, keeps nothing of it, and leaves the invoice unpaid', async () => {
    const a = await api();
    const customer = (await a.post('/customers', { name: 'Declined Buyer' })).body;
    const invoice = (await a.post('/invoices', { customer_id: customer.id, exclude_from_autopay: true, line_items: [{ amount: 50 }] })).body;
    const page = await browser.newPage();
    await page.goto((await a.get(`/invoices/${invoice.id}/payment-link`)).body.url);
    await page.check('input[name=method][value=card]');
    await page.fill('input[name=card_provider_token]', 'tok_card_declined');
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('#pay')]);
    expect(answer.status()).toBe(402);
    await expect(page.locator('#error').textContent()).resolves.toBe('Payment failed: card_declined. The card was not saved.');
    await expect(page.locator('#status').textContent()).resolves.toBe('UPCOMING');
    // The page offers a new instrument again, and no saved one.
    expect(await page.locator('input[value^="saved:"]').count()).toBe(0);
    expect((await a.get(`/customers/${customer.id}/payment-methods`)).body.data).toEqual([]);
    await page.close();
  });

  it('pays a payment request on its checkout page and is sent on to redirect_url with status=paid', async () => {
    const a = await api();
    const created = (await a.post('/payments/request', { amount: 25.5, currency: 'USD', redirect_url: 'https://shop.example/thanks', reference_id: 'order-77' })).body;
    const page = await browser.newPage();
    await page.goto(created.url);
    await expect(page.locator('h1').textContent()).resolves.toBe('Payment of $25.50 USD');
    // The shop does not exist here: the browser's request to it (after the 303) is what we check.
    const [followed] = await Promise.all([page.waitForRequest((r) => r.url().startsWith('https://shop.example/')), page.click('#pay')]);
    expect(followed.redirectedFrom()?.url()).toBe(created.url);
    const back = new URL(followed.url());
    expect(Object.fromEntries(back.searchParams)).toEqual({ payment_request_id: created.id, status: 'paid', reference_id: 'order-77' });
    expect((await (await api()).get(`/payments/request/${created.id}`)).body.status).toBe('paid');
    await page.close();
  });
});

describe('a hosted invoice page posted a failing new instrument (no browser needed)', () => {
  it('saves no card, makes no default, records no payment, so the next autopay has nothing to fail on', async () => {
    const plain = await setup();
    const token = await plain.token();
    const a = plain.as(token);
    const customer = (await a.post('/customers', { name: 'Declined' }).expect(201)).body;
    const invoice = (await a.post('/invoices', { customer_id: customer.id, exclude_from_autopay: true, line_items: [{ amount: 50 }] }).expect(201)).body;
    const link = new URL((await a.get(`/invoices/${invoice.id}/payment-link`).expect(200)).body.url);
    const before = events(plain).length;
    for (const token of ['tok_card_declined', 'tok_card_declined']) {
      const res = await plain.http.post(`${link.pathname}${link.search}`).type('form').send({ method: 'card', card_provider_token: token });
      expect(res.status).toBe(402);
      expect(res.text).toContain('Payment failed: card_declined. The card was not saved.');
    }
    expect((await a.get(`/customers/${customer.id}/payment-methods`).expect(200)).body.data).toEqual([]);
    expect((await a.get(`/customers/${customer.id}`).expect(200)).body.default_payment_method_id).toBeNull();
    expect((await a.get(`/invoices/${invoice.id}`).expect(200)).body.status).toBe('UPCOMING');
    expect(events(plain).length).toBe(before);
    // A saved method that fails is the API's case: the failed payment is recorded, the method stays.
    const saved = (await a.post(`/customers/${customer.id}/payment-methods/card`, { card_provider_token: 'tok_card_declined' }).expect(201)).body.id;
    const res = await plain.http.post(`${link.pathname}${link.search}`).type('form').send({ method: `saved:${saved}` });
    expect(res.status).toBe(303);
    expect((await a.get(`/customers/${customer.id}/payment-methods`).expect(200)).body.data.map((m: { id: string }) => m.id)).toEqual([saved]);
  });
});
