// Fixtures: the seeded faker factories, `--fixtures demo` filling the default partner's accounts
// through the domain code, a dataset of the user's own, byte-identical data for the same seed,
// refusal of bad datasets at start, and reloading after a full reset.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { createDeps } from '../src/app.js';
import { eventLog } from '../src/events/events.js';
import { validRoutingNumber } from '../src/domain/vendors/vendors.js';
import { TEST_ACCOUNT_FAILURES } from '../src/domain/vendor-payments/records.js';
import {
  accountNumber, bankInput, billInput, cardInput, customerInput, customerUserInput, invoiceInput, paymentRequestInput, routingNumber, seededFaker, vendorInput, vendorPaymentItem, webhookInput,
} from '../src/fixtures/factories.js';
import { paymentRequests } from '../src/domain/payments/payment-requests.js';
import { setup, START, storeJson, type Api, type TestSandbox } from './helpers.js';

type Row = Record<string, any>;

async function all(api: Api, path: string): Promise<Row[]> {
  const res = await api.get(path);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

function write(doc: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'fixtures-')), 'data.json');
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

describe('factories', () => {
  it('make the same inputs for the same seed and different ones for another', () => {
    const make = (seed: string) => {
      const f = seededFaker(seed);
      const customer = customerInput(f, 1);
      return {
        customer,
        user: customerUserInput(f, customer.email!),
        card: cardInput(f),
        bank: bankInput(f, customer.name!),
        invoice: invoiceInput(f, 'cus_1', '2026-04-01'),
        vendor: vendorInput(f),
        bill: billInput(f, 'ven_1', '2026-03-01', '2026-03-31'),
        payment: vendorPaymentItem(f, 'bill_1'),
        request: paymentRequestInput(f),
        webhook: webhookInput(f, 'https://hooks.example/x', 'invoice_paid'),
      };
    };
    expect(make('a')).toEqual(make('a'));
    expect(make('a')).not.toEqual(make('b'));
  });

  it('make inputs the API accepts: valid routing numbers, account numbers that are not failing test values, sane amounts', () => {
    const f = seededFaker('checks');
    for (let i = 0; i < 200; i++) {
      expect(validRoutingNumber(routingNumber(f))).toBe(true);
      const number = accountNumber(f);
      expect(number).toMatch(/^[1-9]\d{11}$/);
      expect(TEST_ACCOUNT_FAILURES[number]).toBeUndefined();
    }
    const bill = billInput(f, 'ven_1', '2026-03-01', '2026-03-31');
    expect(bill.amount).toBeCloseTo(bill.line_items!.reduce((s, l) => s + (l.total ?? 0), 0), 2);
    for (const line of invoiceInput(f, 'cus_1', '2026-04-01').line_items) expect(line.amount).toBeGreaterThan(0);
  });

  it('go through the API unchanged', async () => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    const f = seededFaker('api');
    const customer = await api.post('/customers', customerInput(f, 1));
    expect(customer.status).toBe(201);
    expect((await api.post(`/customers/${customer.body.id}/users`, customerUserInput(f, customer.body.email))).status).toBe(201);
    expect((await api.post(`/customers/${customer.body.id}/payment-methods/card`, cardInput(f))).status).toBe(201);
    expect((await api.post(`/customers/${customer.body.id}/payment-methods/bank`, bankInput(f, 'Acme'))).status).toBe(201);
    const invoice = await api.post('/invoices', invoiceInput(f, customer.body.id, '2026-04-01'));
    expect([invoice.status, invoice.body.validation_errors]).toEqual([201, undefined]);
    const vendor = await api.post('/vendors', vendorInput(f));
    expect(vendor.status).toBe(201);
    expect((await api.post('/bills', billInput(f, vendor.body.id, '2026-03-01', '2026-03-31'))).status).toBe(201);
    const request = await api.post('/payments/request', paymentRequestInput(f));
    expect([request.status, request.body.validation_errors]).toEqual([expect.any(Number), undefined]);
    expect(request.status).toBeLessThan(300);
  });
});

describe('--fixtures demo', () => {
  let sb: TestSandbox;
  let api: Api;

  it('fills the default partner\'s production account with a realistic dataset made through the domain code', async () => {
    sb = await setup({ fixtures: 'demo', seed: 'demo-1' });
    api = sb.as(await sb.token());
    // The history ends at the moment of loading: the clock reads real time, data is in the past.
    expect((await sb.http.get('/_sandbox/clock')).body).toEqual({ now: new Date(START).toISOString(), offset_seconds: 0, failed_jobs: [] });

    const customers = await all(api, '/customers');
    expect(customers).toHaveLength(8);
    for (const c of customers) {
      expect(c).toMatchObject({ status: 'active', name: expect.any(String), email: expect.stringMatching(/@/), default_payment_method_id: expect.stringMatching(/^pm_/) });
      expect(Date.parse(c.created_at)).toBeLessThan(START);
      expect(await all(api, `/customers/${c.id}/users`)).toHaveLength(2);
      const methods = await all(api, `/customers/${c.id}/payment-methods`);
      expect(methods.map((m) => m.type).sort()).toEqual(expect.arrayContaining(['ach', 'card']));
    }

    const invoices = await all(api, '/invoices?limit=500');
    expect(invoices).toHaveLength(40);
    expect(new Set(invoices.map((i) => i.status))).toEqual(new Set(['UPCOMING', 'OVERDUE', 'RECEIVED', 'PAID', 'ARCHIVED']));
    for (const i of invoices.filter((x) => x.status === 'OVERDUE')) expect(i.due_date < new Date(START).toISOString().slice(0, 10)).toBe(true);

    const payments = await all(api, '/payments');
    expect(new Set(payments.map((p) => p.status))).toEqual(new Set(['succeeded', 'processing', 'failed']));

    const payouts = await all(api, '/payouts');
    expect(payouts.length).toBeGreaterThan(3);
    const statuses = new Set(payouts.map((p) => p.status));
    expect(statuses.has('succeeded')).toBe(true);
    expect([...statuses].some((s) => s !== 'succeeded')).toBe(true);
    const transactions = (await api.get(`/payouts/${payouts[0].id}/transactions`)).body;
    expect(transactions.transactions.length).toBeGreaterThan(0);

    const requests = [...paymentRequests(sb.deps.store.account('ptn_default', 'production')).values()];
    expect(requests.map((r) => r.status).sort()).toEqual(['expired', 'expired', 'paid', 'paid', 'pending', 'pending']);
    const pending = requests.find((r) => r.status === 'pending')!;
    expect((await api.get(`/payments/request/${pending.id}`)).body).toMatchObject({ id: pending.id, status: 'pending', currency: 'USD' });

    const vendors = await all(api, '/vendors');
    expect(vendors).toHaveLength(5);
    for (const v of vendors) expect((await api.get(`/vendors/${v.id}/bank-account`)).body.account_mask).toEqual(expect.any(String));

    const bills = await all(api, '/bills?limit=500&include_deleted=true');
    expect(bills).toHaveLength(20);
    expect(new Set(bills.map((b) => b.status))).toEqual(new Set(['draft', 'needs_approval', 'processing', 'paid', 'deleted', 'failed']));
    const paid = bills.find((b) => b.status === 'paid')!;
    expect((await api.get(`/bills/${paid.id}`)).body.vendor_payments).toEqual([expect.objectContaining({ status: 'succeeded' })]);
    const failed = bills.find((b) => b.status === 'failed')!;
    expect((await api.get(`/bills/${failed.id}`)).body.vendor_payments).toEqual([expect.objectContaining({ status: 'failed', failure_reason: expect.any(String) })]);
    const waiting = bills.filter((b) => b.status === 'needs_approval' && b.pay_date);
    expect(waiting.length).toBeGreaterThan(0);

    // Every change recorded its webhook event, as production would.
    const topics = new Set([...eventLog(sb.deps.store.account('ptn_default', 'production')).values()].map((e) => e.topic));
    for (const topic of ['customer_created', 'payment_method_added', 'default_payment_method_changed', 'invoice_created', 'invoice_updated', 'invoice_paid', 'invoice_archived', 'payment_succeeded', 'payment_failed', 'payout_scheduled', 'payout_paid']) {
      expect(topics).toContain(topic);
    }
  });

  it('fills the demo account too, with its own data', async () => {
    sb ??= await setup({ fixtures: 'demo', seed: 'demo-1' });
    const demo = sb.as(await sb.token('demo'), 'demo');
    const prod = sb.as(await sb.token());
    const demoCustomers = await all(demo, '/customers');
    expect(demoCustomers).toHaveLength(8);
    const prodIds = new Set((await all(prod, '/customers')).map((c) => c.id));
    expect(demoCustomers.some((c) => prodIds.has(c.id))).toBe(false);
    expect((await demo.get(`/customers/${[...prodIds][0]}`)).status).toBe(404);
  });

  it('gives byte-identical data and ids for the same seed (clock pinned), and other data for another seed', async () => {
    const snapshot = async (seed: string) => {
      const deps = await createDeps({ fixtures: 'demo', seed, logLevel: 'silent' }, { realNow: () => START });
      return storeJson(deps.store.data.accounts);
    };
    const a = await snapshot('same');
    const b = await snapshot('same');
    expect(a.length).toBeGreaterThan(10_000);
    expect(b).toBe(a);
    expect(await snapshot('other')).not.toBe(a);
  });

  it('is loaded again by a full reset; an account reset empties only that account', async () => {
    const box = await setup({ fixtures: 'demo', seed: 'reset' });
    const before = (await all(box.as(await box.token()), '/customers')).map((c) => c.id);
    await box.as(await box.token()).post('/customers', { name: 'Added later' }).expect(201);
    // The reset answers once its steps are done: the dataset is in the store before any other request.
    const answered = await box.http.post('/_sandbox/reset').expect(200);
    expect(answered.body).toEqual({ reset: 'all' });
    expect(box.deps.store.resetting).toBeUndefined();
    const stored = box.deps.store.data.accounts['ptn_default:production'].collections.customers;
    expect([...stored.items.keys()].sort()).toEqual([...before].sort());
    const after = (await all(box.as(await box.token()), '/customers')).map((c) => c.id);
    expect(after).toEqual(before);
    const token = await box.token();
    await box.http.post('/_sandbox/reset').set('Authorization', `Bearer ${token}`).expect(200);
    expect(await all(box.as(await box.token()), '/customers')).toEqual([]);
    expect(await all(box.as(await box.token('demo'), 'demo'), '/customers')).toHaveLength(8);
  });
});

describe('a dataset of your own', () => {
  it('loads customers, invoices, vendors, bills and webhooks from a JSON file, each in the status asked for', async () => {
    const file = write({
      name: 'mine',
      environments: ['production'],
      customers: [
        { ref: 'acme', name: 'Acme Corp', email: 'ap@acme.test', external_id: 'acme-1', users: [{ email: 'jo@acme.test', first_name: 'Jo' }], payment_methods: [{ type: 'card', card_provider_token: 'tok_visa' }, { type: 'bank', account_number: '123456789012', routing_number: '011000015' }] },
        { name: 'Globex', email: 'ap@globex.test' },
      ],
      invoices: [
        { customer: 'acme', status: 'PAID', line_items: [{ description: 'Consulting', amount: 1250 }] },
        { customer: 'acme', status: 'RECEIVED', line_items: [{ description: 'Support', amount: 300, quantity: 2 }] },
        { customer: 'Globex', status: 'OVERDUE', line_items: [{ amount: 99.5 }] },
        { customer: 'Globex', line_items: [{ amount: 10 }] },
        { customer: 'Globex', status: 'ARCHIVED', line_items: [{ amount: 11 }] },
      ],
      vendors: [
        { ref: 'paper', name: 'Paper Supply', bank_account: { account_number: '555566667777', routing_number: '011000015' } },
        { name: 'Closed Bank Co', bank_account: { account_number: Object.keys(TEST_ACCOUNT_FAILURES)[0], routing_number: '011000015' } },
      ],
      bills: [
        { vendor: 'paper', amount: 120, number: 'P-1', status: 'paid', payment_speed: 'instant' },
        { vendor: 'paper', amount: 80, number: 'P-2', status: 'processing' },
        { vendor: 'paper', amount: 60, number: 'P-3' },
        { vendor: 'paper', amount: 40, number: 'P-4', status: 'deleted' },
        { vendor: 'paper', amount: 30, number: 'P-5', status: 'needs_approval' },
        { vendor: 'Closed Bank Co', amount: 20, number: 'C-1', status: 'failed' },
      ],
      webhooks: [{ endpoint_url: 'https://hooks.example/billing', topic: 'invoice_paid', secret_key: 'whsec_mine_1234' }],
    });
    const sb = await setup({ fixtures: file, seed: 'mine' });
    const api = sb.as(await sb.token());
    const customers = await all(api, '/customers');
    expect(customers.map((c) => c.name)).toEqual(['Globex', 'Acme Corp']);
    const acme = customers.find((c) => c.name === 'Acme Corp')!;
    expect(await all(api, `/customers/${acme.id}/users`)).toEqual([expect.objectContaining({ email: 'jo@acme.test', first_name: 'Jo' })]);
    const invoices = await all(api, '/invoices');
    expect(invoices.map((i) => [i.total, i.status]).sort()).toEqual([[10, 'UPCOMING'], [11, 'ARCHIVED'], [1250, 'PAID'], [600, 'RECEIVED'], [99.5, 'OVERDUE']].sort());
    const bills = await all(api, '/bills?include_deleted=true');
    expect(Object.fromEntries(bills.map((b) => [b.number, b.status]))).toEqual({ 'P-1': 'paid', 'P-2': 'processing', 'P-3': 'draft', 'P-4': 'deleted', 'P-5': 'needs_approval', 'C-1': 'failed' });
    const hooks = await all(api, '/webhooks');
    expect(hooks).toEqual([expect.objectContaining({ endpoint_url: 'https://hooks.example/billing', topic: 'invoice_paid', secret_last_4_digits: '1234' })]);
    // Only the environments asked for.
    expect(await all(sb.as(await sb.token('demo'), 'demo'), '/customers')).toEqual([]);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['an unknown top-level field', { name: 'x', planets: [] }, /planets/],
    ['a negative count', { name: 'x', generate: { customers: -1 } }, /generate\.customers/],
    ['an unknown invoice status', { name: 'x', customers: [{ name: 'A' }], invoices: [{ customer: 'A', status: 'LOST', line_items: [{ amount: 1 }] }] }, /invoices\[0\]\.status/],
    ['an invoice of an unknown customer', { name: 'x', invoices: [{ customer: 'Nobody', line_items: [{ amount: 1 }] }] }, /invoices\[0\]\.customer/],
    ['a vendor the domain refuses', { name: 'x', vendors: [{ name: 'V', bank_account: { account_number: '1234', routing_number: '123456789' } }] }, /vendors\[0\].*routing_number/],
    ['a missing name', { customers: [] }, /name/],
  ];
  it.each(bad)('refuses %s at start with the reason', async (_what, doc, reason) => {
    await expect(createDeps({ fixtures: write(doc), logLevel: 'silent' })).rejects.toThrow(reason);
  });

  it('refuses an unknown dataset name and a file that is not JSON', async () => {
    await expect(createDeps({ fixtures: 'no-such-dataset', logLevel: 'silent' })).rejects.toThrow(/no such file/);
    const file = join(mkdtempSync(join(tmpdir(), 'fixtures-')), 'broken.json');
    writeFileSync(file, '{ "name": ');
    await expect(createDeps({ fixtures: file, logLevel: 'silent' })).rejects.toThrow(/not valid JSON/);
  });
});
