// Vendors end to end: create with a masked bank account, patch, filters, bank account upsert,
// data requests on the clock, deactivate/reactivate with affected_bill_count and held payments.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { dataRequestMachine, vendorMachine } from '../src/domain/vendors/vendors.js';
import { transition, type Machine } from '../src/domain/machine.js';
import { ApiError } from '../src/errors.js';
import { setup, type Api, type TestSandbox } from './helpers.js';

let sb: TestSandbox;
let api: Api;

const BANK = { account_number: '000123456789', routing_number: '011000015', account_type: 'checking', bank_name: 'First Sandbox Bank' };

beforeEach(async () => {
  sb = await setup();
  api = sb.as(await sb.token());
});

/** Advance the account clock; the token keeps working (tokens live in real time). */
async function advance(seconds: number) {
  await sb.advance(seconds).expect(200);
}

describe('vendors', () => {
  it('creates a vendor with a bank account that is only ever shown masked', async () => {
    const res = await api.post('/vendors', { name: 'Paper Supply Co', email: 'ar@paper.test', bank_account: BANK });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Paper Supply Co', email: 'ar@paper.test', is_active: true, origin: 'manual', phone: null });
    expect(res.body.id).toMatch(/^ven_/);
    expect(JSON.stringify(res.body)).not.toContain('bank_account');
    const bank = await api.get(`/vendors/${res.body.id}/bank-account`);
    expect(bank.status).toBe(200);
    expect(bank.body).toEqual({ id: expect.stringMatching(/^vba_/), account_mask: '****6789', account_type: 'checking', bank_name: 'First Sandbox Bank', payment_method_id: expect.stringMatching(/^pm_/) });
    expect(JSON.stringify(bank.body)).not.toContain(BANK.account_number);
    expect((await api.get(`/vendors/${res.body.id}`)).body).toEqual(res.body);
  });

  it.each([
    [{ email: 'x@y.test' }, 'name'],
    [{ name: 'A', email: 'not-an-email' }, 'email'],
    [{ name: 'A', bank_account: { ...BANK, account_number: '12' } }, 'bank_account.account_number'],
    [{ name: 'A', bank_account: { ...BANK, routing_number: '12345678' } }, 'bank_account.routing_number'],
    [{ name: 'A', bank_account: { ...BANK, routing_number: '011000016' } }, 'bank_account.routing_number'],
    [{ name: 'A', nickname: 'x' }, 'nickname'],
  ])('refuses %j with 400 naming %s and stores nothing', async (body, field) => {
    const res = await api.post('/vendors', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
    expect(res.body.validation_errors).toHaveProperty([field]);
    expect((await api.get('/vendors')).body.data).toEqual([]);
  });

  it('refuses a second vendor with the same tax_id with 422', async () => {
    await api.post('/vendors', { name: 'A', tax_id: '12-3456789' }).expect(201);
    const res = await api.post('/vendors', { name: 'B', tax_id: '12-3456789' });
    expect(res.status).toBe(422);
    expect(res.body.validation_errors).toHaveProperty('tax_id');
    expect((await api.get('/vendors')).body.data).toHaveLength(1);
  });

  it('refuses a tax_id another vendor has on PATCH and on a data-request submit with 422, changing nothing', async () => {
    await api.post('/vendors', { name: 'A', tax_id: '12-3456789' }).expect(201);
    const { body: b } = await api.post('/vendors', { name: 'B', tax_id: '98-7654321' }).expect(201);
    const patched = await api.patch(`/vendors/${b.id}`, { tax_id: '12-3456789', phone: '+1 555 0100' });
    expect(patched.status).toBe(422);
    expect(patched.body.validation_errors).toHaveProperty('tax_id');
    expect((await api.get(`/vendors/${b.id}`)).body).toMatchObject({ tax_id: '98-7654321', phone: null });
    const { body: request } = await api.post(`/vendors/${b.id}/data-request`).expect(201);
    const submit = await sb.http.post(`/_sandbox/vendors/${b.id}/data-requests/${request.id}/submit`).send({ tax_id: '12-3456789', email: 'b@b.test' });
    expect(submit.status).toBe(422);
    expect(submit.body.validation_errors).toHaveProperty('tax_id');
    expect((await api.get(`/vendors/${b.id}`)).body).toMatchObject({ tax_id: '98-7654321', email: null });
    expect((await api.get(`/vendors/${b.id}/data-requests`)).body.data[0].status).toBe('pending');
  });

  it('patches the given fields; bank_account is not patchable', async () => {
    const { body: v } = await api.post('/vendors', { name: 'Old', city: 'Austin' });
    sb.time.now += 60_000;
    const res = await api.patch(`/vendors/${v.id}`, { name: 'New', phone: '+1 555 0100' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'New', city: 'Austin', phone: '+1 555 0100' });
    expect(res.body.updated_at > v.updated_at).toBe(true);
    const bad = await api.patch(`/vendors/${v.id}`, { bank_account: BANK });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty('bank_account');
    expect((await api.patch('/vendors/ven_nope', { name: 'x' })).status).toBe(404);
  });

  it('filters by is_active, origin and name', async () => {
    const { body: a } = await api.post('/vendors', { name: 'Globex Paper' });
    await api.post('/vendors', { name: 'Initech' }).expect(201);
    await api.post(`/vendors/${a.id}/deactivate`).expect(200);
    await sb.http.post('/_sandbox/accounting/sync').send({ vendors: [{ name: 'Synced Globe' }] }).expect(201);
    const names = async (q: string) => (await api.get(`/vendors?${q}`)).body.data.map((v: { name: string }) => v.name);
    expect(await names('is_active=false')).toEqual(['Globex Paper']);
    expect(await names('is_active=true')).toEqual(['Synced Globe', 'Initech']);
    expect(await names('origin=accounting_integration')).toEqual(['Synced Globe']);
    expect(await names('name=GLOB')).toEqual(['Synced Globe', 'Globex Paper']);
    expect((await api.get('/vendors?origin=fax')).status).toBe(400);
  });

  it('upserts the bank account keeping its ids; a vendor without one gives 404', async () => {
    const { body: v } = await api.post('/vendors', { name: 'A' });
    expect((await api.get(`/vendors/${v.id}/bank-account`)).status).toBe(404);
    const first = await api.post(`/vendors/${v.id}/bank-account`, { account_number: '11112222', routing_number: '110000000' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ account_mask: '****2222', account_type: 'checking', bank_name: null });
    const second = await api.post(`/vendors/${v.id}/bank-account`, { ...BANK, account_type: 'savings' });
    expect(second.body).toMatchObject({ id: first.body.id, payment_method_id: first.body.payment_method_id, account_mask: '****6789', account_type: 'savings' });
    expect((await api.get(`/vendors/${v.id}/bank-account`)).body).toEqual(second.body);
    const bad = await api.post(`/vendors/${v.id}/bank-account`, { account_number: 'abc', routing_number: '110000000' });
    expect(bad.status).toBe(400);
    expect((await api.get(`/vendors/${v.id}/bank-account`)).body).toEqual(second.body);
  });

  it('syncs vendors from accounting with origin accounting_integration; a bad item refuses the batch', async () => {
    const bad = await sb.http.post('/_sandbox/accounting/sync').send({ vendors: [{ name: 'Fine' }, { name: 'Bad', bank_account: { ...BANK, routing_number: '011000016' } }] });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty(['vendors[1].bank_account.routing_number']);
    expect((await api.get('/vendors')).body.data).toEqual([]);
    const res = await sb.http.post('/_sandbox/accounting/sync').send({ vendors: [{ name: 'Ledger Co', bank_account: BANK }] });
    expect(res.status).toBe(201);
    expect(res.body.vendors).toEqual([expect.objectContaining({ name: 'Ledger Co', origin: 'accounting_integration', is_active: true })]);
    expect(JSON.stringify(res.body)).not.toContain(BANK.account_number);
    expect((await api.get(`/vendors/${res.body.vendors[0].id}/bank-account`)).body.account_mask).toBe('****6789');
  });

  it('needs accounts_payable scopes: a read-only key reads but cannot write', async () => {
    const key = await sb.http.post('/_sandbox/partners/ptn_default/keys').send({ environment: 'production', scopes: ['accounts_payable:read'] });
    expect(key.status).toBe(201);
    const reader = sb.as(await sb.token('production', { client_id: key.body.client_id, client_secret: key.body.client_secret }));
    expect((await reader.get('/vendors')).status).toBe(200);
    expect((await reader.get('/bills')).status).toBe(200);
    expect((await reader.post('/vendors', { name: 'A' })).status).toBe(403);
    expect((await reader.post('/bills', { vendor_id: 'v', amount: 1 })).status).toBe(403);
    expect((await reader.post('/vendor-payments', { idempotency_key: 'k', items: [{ bill_id: 'b' }] })).status).toBe(403);
  });

  it('keeps vendors per account and environment', async () => {
    const { body: v } = await api.post('/vendors', { name: 'A' });
    const demo = sb.as(await sb.token('demo'), 'demo');
    expect((await demo.get(`/vendors/${v.id}`)).status).toBe(404);
    expect((await demo.get('/vendors')).body.data).toEqual([]);
  });
});

describe('vendor data requests', () => {
  it('creates a pending request that expires after 7 days on the account clock', async () => {
    const { body: v } = await api.post('/vendors', { name: 'A' });
    const created = await api.post(`/vendors/${v.id}/data-request`);
    expect(created.status).toBe(201);
    const list = await api.get(`/vendors/${v.id}/data-requests`);
    expect(list.body.data).toEqual([expect.objectContaining({ id: created.body.id, vendor_id: v.id, status: 'pending', submitted_at: null })]);
    const request = list.body.data[0];
    expect(Date.parse(request.expires_at) - Date.parse(request.created_at)).toBe(7 * 86400_000);
    await advance(7 * 86400 - 1);
    expect((await api.get(`/vendors/${v.id}/data-requests`)).body.data[0].status).toBe('pending');
    await advance(1);
    expect((await api.get(`/vendors/${v.id}/data-requests`)).body.data[0].status).toBe('expired');
  });

  it('resend extends the expiry and re-opens an expired request; a submitted one is 409', async () => {
    const { body: v } = await api.post('/vendors', { name: 'A' });
    const { body: { id } } = await api.post(`/vendors/${v.id}/data-request`);
    await advance(6 * 86400);
    expect((await api.post(`/vendors/${v.id}/data-requests/${id}/resend`)).body).toEqual({ success: true });
    await advance(2 * 86400);
    expect((await api.get(`/vendors/${v.id}/data-requests`)).body.data[0].status).toBe('pending');
    await advance(5 * 86400);
    expect((await api.get(`/vendors/${v.id}/data-requests`)).body.data[0].status).toBe('expired');
    await api.post(`/vendors/${v.id}/data-requests/${id}/resend`).expect(200);
    expect((await api.get(`/vendors/${v.id}/data-requests`)).body.data[0].status).toBe('pending');
    const submit = await sb.http.post(`/_sandbox/vendors/${v.id}/data-requests/${id}/submit`).send({ email: 'billing@a.test', tax_id: '11-1111111', bank_account: BANK });
    expect(submit.status).toBe(200);
    expect(submit.body.vendor).toMatchObject({ email: 'billing@a.test', tax_id: '11-1111111' });
    expect(submit.body.data_request).toMatchObject({ status: 'submitted', submitted_at: expect.any(String) });
    expect(JSON.stringify(submit.body)).not.toContain(BANK.account_number);
    expect((await api.get(`/vendors/${v.id}/bank-account`)).body.account_mask).toBe('****6789');
    const resend = await api.post(`/vendors/${v.id}/data-requests/${id}/resend`);
    expect(resend.status).toBe(409);
    expect((await sb.http.post(`/_sandbox/vendors/${v.id}/data-requests/${id}/submit`).send({})).status).toBe(409);
  });

  it('answers 404 for unknown vendors and requests, and for a request of another vendor', async () => {
    const { body: a } = await api.post('/vendors', { name: 'A' });
    const { body: b } = await api.post('/vendors', { name: 'B' });
    const { body: { id } } = await api.post(`/vendors/${a.id}/data-request`);
    expect((await api.post('/vendors/ven_nope/data-request')).status).toBe(404);
    expect((await api.get('/vendors/ven_nope/data-requests')).status).toBe(404);
    expect((await api.post(`/vendors/${b.id}/data-requests/${id}/resend`)).status).toBe(404);
    expect((await sb.http.post(`/_sandbox/vendors/${b.id}/data-requests/${id}/submit`).send({})).status).toBe(404);
  });

  it('refuses an expired request submission with 409 and changes nothing', async () => {
    const { body: v } = await api.post('/vendors', { name: 'A' });
    const { body: { id } } = await api.post(`/vendors/${v.id}/data-request`);
    await advance(8 * 86400);
    const res = await sb.http.post(`/_sandbox/vendors/${v.id}/data-requests/${id}/submit`).send({ email: 'z@a.test' });
    expect(res.status).toBe(409);
    expect((await api.get(`/vendors/${v.id}`)).body.email).toBeNull();
  });
});

// The vendor and data request tables written out; any change to a table must change these too.
const EXPECTED_VENDOR_TABLE = {
  active: { deactivate: 'inactive' },
  inactive: { reactivate: 'active' },
};
const EXPECTED_DATA_REQUEST_TABLE = {
  pending: { resend: 'pending', submit: 'submitted', expire: 'expired' },
  expired: { resend: 'pending' },
  submitted: {},
};

/** Every (state, event) pair: allowed pairs move as the expected table says, the rest are refused naming the state. */
function walk<S extends string, E extends string>(machine: Machine<S, E>, expected: Record<S, Partial<Record<E, S>>>, status: number) {
  it('is the documented table', () => {
    expect(machine.table).toEqual(expected);
  });
  const pairs = machine.states.flatMap((s) => machine.events.map((e) => [s, e] as const));
  it.each(pairs)('%s + %s', (state, event) => {
    const next = expected[state][event];
    if (next) {
      expect(transition(machine, state, event)).toBe(next);
    } else {
      let error: unknown;
      try { transition(machine, state, event); } catch (e) { error = e; }
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(status);
      expect((error as ApiError).code).toBe('invalid_state');
      expect((error as ApiError).message).toContain(`status is ${state}`);
    }
  });
}

// The spec gives deactivate a 422 and no conflict status, so an illegal vendor move answers 422.
describe('the vendor state table', () => walk(vendorMachine, EXPECTED_VENDOR_TABLE, 422));
describe('the vendor data request state table', () => walk(dataRequestMachine, EXPECTED_DATA_REQUEST_TABLE, 409));
