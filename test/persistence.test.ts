// The --data format (version 2: a snapshot plus an append-only log, src/store/persistence/*): what a
// restart loads equals what the sandbox held, across compactions running while writes go on; a file
// written by the previous release (version 1) migrates; a torn append is dropped, a damaged line refused,
// a batch appended twice (a retried write) applied once.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { appendFileSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store, type StoreData } from '../src/store/store.js';
import { bytesPerWrite, dataOnDisk, loadDataFile, setup, storeJson } from './helpers.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'persistence-'));
  file = join(dir, 'sandbox.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const FIXTURE = join(process.cwd(), 'test/fixtures/data/version-1.json');
const segments = () => readdirSync(dir).filter((name) => name.startsWith('sandbox.json.log.')).sort();
/** The document as plain JSON with keys sorted, so two loads compare whatever the key order. */
function canonical(data: StoreData): unknown {
  const sort = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sort);
    if (value && typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sort((value as Record<string, unknown>)[k])]));
    return value;
  };
  return sort(JSON.parse(storeJson(data)));
}

describe('due work in the data file', () => {
  // The class: a write's cost never grows with what is stored. The jobs were written whole at every
  // change: an invoice (its due date is a job) behind 3,000 open ones wrote 392 KB.
  it('an invoice costs the same bytes with 5 or 300 open, and the jobs written one by one load back in their order', async () => {
    const sb = await setup({ dataFile: file, seed: 'jobs-cost' });
    const api = sb.as(await sb.token());
    const customer = (await api.post('/customers', { name: 'Acme' }).expect(201)).body.id;
    let made = 0;
    const invoice = async () => {
      // Due dates spread back and forth, so jobs land in the middle of the list, not only at its end.
      const due = new Date(Date.UTC(2026, 6, 1 + ((made++ * 7) % 60))).toISOString().slice(0, 10);
      await api.post('/invoices', { customer_id: customer, due_date: due, line_items: [{ description: 'Consulting', quantity: 1, amount: 100 }] }).expect(201);
    };
    const { atFew, atMany } = await bytesPerWrite(file, invoice, () => sb.deps.store.flush(), { few: 5, many: 300 });
    expect(atMany).toBeLessThan(atFew * 1.2);
    // Some run (the earliest due dates pass), the rest stay: the list on disk is the list in memory.
    await sb.advance(40 * 86_400).expect(200);
    await sb.deps.store.flush();
    const jobs = sb.deps.store.account('ptn_default', 'production').data.jobs;
    expect(jobs.length).toBeGreaterThan(0);
    const loaded = await loadDataFile(file);
    expect(Object.values(loaded.accounts).find((a) => a.id === 'ptn_default:production')?.jobs).toEqual(JSON.parse(JSON.stringify(jobs)));
  });
});

describe('the data file, version 2', () => {
  it('loads exactly what the sandbox held, with background compactions during a burst of writes', async () => {
    const sb = await setup({ dataFile: file, compactMinBytes: 20_000, flushDelayMs: 0 });
    const api = sb.as(await sb.token());
    const ids: string[] = [];
    for (let round = 0; round < 4; round++) {
      const made = await Promise.all(Array.from({ length: 25 }, (_, i) => api.post('/customers', { name: `R${round} C${i}`, external_id: `ext-${round}-${i}` })));
      expect(made.map((r) => r.status)).toEqual(Array(25).fill(201));
      ids.push(...made.map((r) => r.body.id as string));
      await api.patch(`/customers/${ids[round * 7]}`, { name: `Renamed ${round}` }).expect(200);
      await api.delete(`/customers/${ids[round * 5 + 1]}`).expect(200);
    }
    await sb.http.post('/_sandbox/clock/advance').send({ seconds: 86_400 }).expect(200);
    await api.post('/customers', { name: 'Duplicate', external_id: 'ext-0-0' }).expect(400);
    const before = (await api.get('/customers?limit=500')).body.data.map((c: { id: string }) => c.id);
    expect(new Set(before)).toEqual(new Set(ids));
    await sb.deps.store.close();
    // Compactions ran (the first segments are gone) and the snapshot holds objects.
    expect(segments()[0]).not.toBe('sandbox.json.log.1');
    expect(readFileSync(file, 'utf8').split('\n').length).toBeGreaterThan(3);
    expect(canonical(await loadDataFile(file))).toEqual(canonical(sb.deps.store.data));

    const again = await setup({ dataFile: file });
    const client = again.as(await again.token());
    const listed = (await client.get('/customers?limit=500')).body.data.map((c: { id: string }) => c.id);
    expect(listed).toEqual(before);
    expect((await client.get(`/customers/${ids[0]}`)).body.name).toBe('Renamed 0');
    // The external-id map (module state written entry by entry) came back too.
    await client.post('/customers', { name: 'Duplicate', external_id: 'ext-3-24' }).expect(400);
    await again.deps.store.close();
  });

  it('keeps tombstones, trims and compactions of a collection, so cursors stay the same across a restart', async () => {
    const store = await Store.open({ file, seed: 'tomb', realNow: () => 0, compactMinBytes: 50_000 });
    const account = store.account('ptn_x', 'production');
    const things = account.collection<{ id: string; n: number }>('things');
    account.transaction(() => { for (let n = 0; n < 3000; n++) things.insert({ id: `t${n}`, n }); });
    await store.flush();
    // From the oldest end (a trim), then every other one in the middle (a compaction of the tombstones),
    // each its own unit of work (tombstones are cleared as each commits).
    for (let n = 0; n < 200; n++) account.transaction(() => things.remove(`t${n}`));
    for (let n = 201; n < 3000; n += 2) account.transaction(() => things.remove(`t${n}`));
    account.transaction(() => things.update('t300', { n: -1 }));
    const page = things.page({ limit: 5 });
    const next = things.page({ limit: 5, after: page.end_cursor! });
    await store.close();

    const reopened = await Store.open({ file, realNow: () => 0 });
    const again = reopened.account('ptn_x', 'production').collection<{ id: string; n: number }>('things');
    expect(again.size).toBe(things.size);
    expect(again.page({ limit: 5 })).toEqual(page);
    expect(again.page({ limit: 5, after: page.end_cursor! })).toEqual(next);
    expect(again.get('t300')?.n).toBe(-1);
    expect(canonical(reopened.data)).toEqual(canonical(store.data));
    await reopened.close();
  });

  it('drops a torn append, applies a batch written twice once, and refuses a damaged line with its place', async () => {
    const sb = await setup({ dataFile: file });
    const api = sb.as(await sb.token());
    const a = (await api.post('/customers', { name: 'A' })).body.id;
    const b = (await api.post('/customers', { name: 'B' })).body.id;
    await sb.deps.store.close();
    const last = join(dir, segments().at(-1)!);
    const batches = readFileSync(last, 'utf8').trimEnd().split('\n');
    // A retried append: the same batch (same seq) again, in a later segment.
    writeFileSync(join(dir, 'sandbox.json.log.999'), `${batches[0]}\n${batches.at(-1)}\n`);
    // A crash mid-append: half a line at the end.
    appendFileSync(join(dir, 'sandbox.json.log.999'), batches.at(-1)!.slice(0, 40));
    const loaded = await loadDataFile(file);
    const stored = loaded.accounts['ptn_default:production'].collections.customers;
    expect(stored.order).toEqual([a, b]);

    const again = await setup({ dataFile: file });
    const client = again.as(await again.token());
    expect((await client.get('/customers')).body.data.map((c: { name: string }) => c.name)).toEqual(['B', 'A']);
    await again.deps.store.close();

    // A damaged line with whole lines after it is not a torn tail: refused, naming the segment and line.
    const newest = join(dir, segments().at(-1)!);
    writeFileSync(newest, readFileSync(newest, 'utf8').replace(/\n(\[)/, '\n{oops\n$1'));
    await expect(setup({ dataFile: file })).rejects.toThrow(/is damaged at line 2/);
  });

  it('refuses to start on module state that does not match its declared schema, naming the account, key and field', async () => {
    const sb = await setup({ dataFile: file, flushDelayMs: 0 });
    const api = sb.as(await sb.token());
    await api.post('/customers', { name: 'Kept' }).expect(201);
    // What a damaged or hand-edited file could hold: the webhook queue's retry counter as text.
    const account = sb.deps.store.account('ptn_default', 'production');
    account.transaction(() => {
      account.data.state.webhook_queue = { queue: [], paused: false, retry_count: 'three', job: null, in_flight: null };
      account.stateChanged('webhook_queue');
    });
    await sb.deps.store.close();
    await expect(setup({ dataFile: file })).rejects.toThrow(/account ptn_default:production, state webhook_queue\/retry_count: must be integer/);
  });
});

describe('a version 1 data file (the previous release)', () => {
  it('migrates on start: the data is served, the old file is kept as FILE.v1, the file is version 2', async () => {
    copyFileSync(FIXTURE, file);
    const sb = await setup({ dataFile: file });
    const api = sb.as(await sb.token());
    const listed = (await api.get('/customers')).body.data;
    expect(listed.map((c: { name: string }) => c.name)).toEqual(['No external id', 'Second Old', 'Old Format Renamed']);
    expect((await sb.http.get('/_sandbox/clock')).body.offset_seconds).toBe(3600);
    await api.post('/customers', { name: 'Taken', external_id: 'v1-ext-1' }).expect(400);
    const made = (await api.post('/customers', { name: 'New after migration' })).body.id;
    await sb.deps.store.close();

    expect(readFileSync(`${file}.v1`, 'utf8')).toBe(readFileSync(FIXTURE, 'utf8'));
    expect(JSON.parse(readFileSync(file, 'utf8').split('\n')[0])).toMatchObject({ format: 'billing-sandbox-data', version: 2, meta: { seed: 'v1-fixture' } });
    expect(dataOnDisk(file)).toContain(made);
    const again = await setup({ dataFile: file });
    const client = again.as(await again.token());
    expect((await client.get('/customers')).body.data).toHaveLength(4);
    // The external-id map that version kept is gone (an index on customers now): dropped at start, and
    // the external ids are still unique.
    const state = again.deps.store.account('ptn_default', 'production').data.state;
    expect(state).not.toHaveProperty('customer_external_ids');
    await client.post('/customers', { name: 'Taken again', external_id: 'v1-ext-2' }).expect(400);
    await again.deps.store.close();
  });
});
