// POST /_sandbox/accounting/sync across kinds: every item is checked against its schema, then created by
// its create function in one unit of work (a refused item leaves nothing created),
// kinds are created in a fixed order (customers, invoices, vendors, bills), and an item may name an
// earlier item of the same sync by position ($customers[N], $vendors[N]).
import { beforeEach, describe, expect, it } from '@jest/globals';
import { setup, storeJson, type Api, type TestSandbox } from './helpers.js';
import { events } from './receivables-helpers.js';

let sb: TestSandbox;
let api: Api;
beforeEach(async () => {
  sb = await setup();
  api = sb.as(await sb.token());
});

const sync = (body: object) => sb.http.post('/_sandbox/accounting/sync').send(body);

async function nothingCreated(): Promise<void> {
  for (const path of ['/customers', '/invoices', '/vendors', '/bills']) expect((await api.get(path)).body.data).toEqual([]);
  expect(events(sb)).toEqual([]);
}

describe('accounting sync across kinds', () => {
  it('resolves $customers[N] and $vendors[N] to the items it creates, in the fixed order whatever the body order', async () => {
    const res = await sync({
      bills: [{ vendor_id: '$vendors[1]', amount: 42.5, number: 'B-1' }],
      vendors: [{ name: 'Contoso' }, { name: 'Globex' }],
      invoices: [{ customer_id: '$customers[0]', line_items: [{ amount: 100, quantity: 2 }] }],
      customers: [{ name: 'Northwind', email: 'ap@northwind.test' }],
    });
    expect(res.status).toBe(201);
    const { customers: [customer], invoices: [invoice], vendors: [, globex], bills: [bill] } = res.body;
    expect(invoice).toMatchObject({ customer_id: customer.id, total: 200, source: 'accounting_integration' });
    expect(bill).toMatchObject({ vendor_id: globex.id, amount: 42.5, source: 'accounting_integration', status: 'draft' });
    expect((await api.get(`/bills/${bill.id}`)).body.vendor_id).toBe(globex.id);
    expect((await api.get(`/invoices/${invoice.id}`)).body.customer_id).toBe(customer.id);
    expect((await api.get(`/customers/${customer.id}`)).body.customer_integration_id).toEqual(expect.any(String));
    // Customers before invoices, whatever order the body lists them in.
    expect(events(sb).map((e) => e.topic)).toEqual(['customer_created', 'invoice_created']);
  });

  it('refuses a reference past the end of its kind, or to another kind, with 400 and creates nothing', async () => {
    const past = await sync({ vendors: [{ name: 'Only' }], bills: [{ vendor_id: '$vendors[1]', amount: 5 }] });
    expect(past.status).toBe(400);
    expect(past.body.validation_errors['bills[0].vendor_id']).toContain('$vendors[0]');
    const other = await sync({ customers: [{ name: 'C' }], invoices: [{ customer_id: '$vendors[0]', line_items: [{ amount: 1 }] }] });
    expect(other.status).toBe(400);
    expect(other.body.validation_errors).toHaveProperty(['invoices[0].customer_id']);
    await nothingCreated();
  });

  it('checks the create rules of every item before creating any: a bad line item in the last invoice leaves no invoice', async () => {
    const res = await sync({
      customers: [{ name: 'C' }],
      invoices: [{ customer_id: '$customers[0]', line_items: [{ amount: 10 }] }, { customer_id: '$customers[0]', line_items: [{ amount: -5 }] }],
    });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toEqual({ 'invoices[1].line_items[0].amount': 'must be greater than 0' });
    await nothingCreated();
  });

  it('refuses two customers sharing an external_id, or one already used, with 400 naming the item, and creates nothing', async () => {
    // The second item meets createCustomer's own uniqueness rule (the first is created by then); the
    // request's unit of work then takes the first one back. Once, the first customer stayed stored.
    const before = storeJson(sb.deps.store.data.accounts);
    const twins = await sync({ customers: [{ name: 'A', external_id: 'erp-1' }, { name: 'B', external_id: 'erp-1' }] });
    expect(twins.status).toBe(400);
    expect(twins.body.validation_errors).toEqual({ 'customers[1].external_id': 'is already used by another customer' });
    expect(storeJson(sb.deps.store.data.accounts)).toBe(before);
    await nothingCreated();
    expect((await api.post('/customers', { name: 'Taken', external_id: 'erp-2' })).status).toBe(201);
    const taken = await sync({ customers: [{ name: 'C', external_id: 'erp-3' }, { name: 'D', external_id: 'erp-2' }], vendors: [{ name: 'V' }] });
    expect(taken.status).toBe(400);
    expect(taken.body.validation_errors).toEqual({ 'customers[1].external_id': 'is already used by another customer' });
    expect((await api.get('/customers')).body.data.map((c: { name: string }) => c.name)).toEqual(['Taken']);
    expect((await api.get('/vendors')).body.data).toEqual([]);
  });

  it('refuses a bill over the amount limit and an unknown vendor, naming the item', async () => {
    const big = await sync({ vendors: [{ name: 'V' }], bills: [{ vendor_id: '$vendors[0]', amount: 1_000_000_000.01 }] });
    expect(big.status).toBe(400);
    expect(big.body.validation_errors).toHaveProperty(['bills[0].amount']);
    const unknown = await sync({ bills: [{ vendor_id: 'ven_nope', amount: 5 }] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.validation_errors).toHaveProperty(['bills[0].vendor_id']);
    await nothingCreated();
  });
});
