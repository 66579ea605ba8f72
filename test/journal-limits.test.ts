// The journal's memory bounds: what one entry keeps (arrays and objects cut with a marker saying how
// much was left out, a serialised-size budget per entry) and the bytes kept per account.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { setup, type Api, type TestSandbox } from './helpers.js';
import { LIMITS } from '../src/limits.js';

let sb: TestSandbox;
let api: Api;

beforeEach(async () => {
  sb = await setup({ seed: 'journal-limits' });
  api = sb.as(await sb.token());
});

const journal = (query = '') => sb.http.get(`/_sandbox/requests${query}`);

describe('journal memory bounds', () => {
  it('keeps a few items of a large array, with a marker saying how many were left out, and the answer stays small', async () => {
    // Under LIMITS.bodyValues (a body of more values is refused at the door, before the journal).
    const big = Array.from({ length: 190_000 }, (_, i) => i % 100_000);
    expect(big.length).toBeLessThan(LIMITS.bodyValues);
    expect(JSON.stringify(big).length).toBeGreaterThan(1_000_000);
    for (let i = 0; i < 20; i++) {
      const res = await api.post('/customers', big);
      expect(res.status).toBe(400);
    }
    const res = await journal('?limit=20');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(20);
    // Twenty 1 MB bodies leave a journal answer bounded by the per-entry budget (an entry is a few hundred bytes here).
    expect(res.text.length).toBeLessThanOrEqual(20 * LIMITS.journalEntryBytes + 64);
    for (const entry of res.body.data) expect(JSON.stringify(entry).length).toBeLessThan(2048);
    const body = res.body.data[0].request.body as unknown[];
    expect(body).toHaveLength(LIMITS.journalArrayItems + 1);
    expect(body.slice(0, 3)).toEqual([0, 1, 2]);
    expect(body[LIMITS.journalArrayItems]).toBe(`… ${190_000 - LIMITS.journalArrayItems} more items left out by the journal`);
  });

  it('cuts objects with too many keys likewise, and nested values within the entry budget', async () => {
    const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`field_${i}`, i]));
    await api.post('/customers', { name: 'Wide', metadata: wide });
    const [entry] = (await journal('?limit=1')).body.data;
    const kept = entry.request.body.metadata as Record<string, unknown>;
    expect(Object.keys(kept)).toHaveLength(LIMITS.journalObjectKeys + 1);
    expect(kept.field_0).toBe(0);
    expect(kept['…']).toBe(`${5000 - LIMITS.journalObjectKeys} more fields left out by the journal`);
    expect(entry.request.body.name).toBe('Wide');

    // Deep and wide at once: 40 arrays of 40 strings of 2 KB each (3 MB) stay within one entry's budget.
    const deep = Array.from({ length: 40 }, () => Array.from({ length: 40 }, () => 'y'.repeat(2000)));
    await api.post('/customers', { name: 'Deep', deep });
    const [deepEntry] = (await journal('?limit=1')).body.data;
    expect(Buffer.byteLength(JSON.stringify(deepEntry))).toBeLessThanOrEqual(LIMITS.journalEntryBytes);
    expect(JSON.stringify(deepEntry.request.body)).toMatch(/left out by the journal/);
  });

  it('keeps at most journalAccountBytes per account, dropping the oldest entries first', async () => {
    // A ring large enough that the byte cap, not the entry count, decides what is kept.
    const box = await setup({ seed: 'journal-bytes', journalSize: 5000 });
    const boxApi = box.as(await box.token());
    // Refused for 100 unknown fields, each named in the answer: both halves of the entry fill up.
    const unknown = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`unknown_${i}_${'x'.repeat(100)}`, i]));
    const post = (i: number) => boxApi.post('/customers', { name: `n${i}`, ...unknown });
    await post(0);
    const one = (await box.http.get('/_sandbox/requests?limit=1')).text.length;
    const sent = Math.ceil((LIMITS.journalAccountBytes / one) * 1.25);
    for (let i = 1; i < sent; i++) await post(i);
    const res = await box.http.get('/_sandbox/requests?limit=1000');
    const data = res.body.data as Array<{ request: { body: { name: string } } }>;
    // Fewer than were sent are kept (the oldest went, the token request first), and what is kept fits the budget.
    expect(data.length).toBeLessThan(sent);
    expect(data.length).toBeGreaterThan(sent * 0.7);
    expect(res.text.length).toBeLessThanOrEqual(LIMITS.journalAccountBytes + 64);
    expect(data.map((e) => e.request.body.name)).toEqual(Array.from({ length: data.length }, (_, i) => `n${sent - 1 - i}`));
  }, 60_000);
});

describe('journal masking', () => {
  it('masks secret values but shows documented non-secrets such as secret_last_4_digits', async () => {
    const created = await api.post('/webhooks', { endpoint_url: 'https://hooks.partner.example/billing', topic: 'invoice_paid', secret_key: 'whsec_journal_9f3a' });
    expect(created.status).toBe(201);
    expect(created.body.secret_last_4_digits).toBe('9f3a');
    const [entry] = (await journal('?limit=1')).body.data;
    // The secret itself, sent in the request, stays masked.
    expect(entry.request.body).toMatchObject({ secret_key: '***', endpoint_url: 'https://hooks.partner.example/billing' });
    expect(JSON.stringify(entry)).not.toContain('whsec_journal');
    // Its documented last four characters are shown as the API answered them.
    expect(entry.response.body.secret_last_4_digits).toBe('9f3a');
    // Other real secrets are still masked wherever they appear.
    await api.post('/customers', { name: 'Masked', client_secret: 'cs_x', webhook: { secret_key: 'whsec_y' }, cvv_secret: 'ev:1', card_provider_token: 'tok', access_token: 'at', account_number: '000123456789' });
    const [masked] = (await journal('?limit=1')).body.data;
    expect(masked.request.body).toMatchObject({ client_secret: '***', webhook: { secret_key: '***' }, cvv_secret: '***', card_provider_token: '***', access_token: '***', account_number: '***' });
  });
});
