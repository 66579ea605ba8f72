// Objects a data file's snapshot loads are kept as their text until first read (src/store/cold-item.ts).
// Through HTTP: they read back exactly (any characters), their indexes work without reading them, a
// read-then-changed one is written and survives a restart, and a compaction writes an unread one as
// the very text it was loaded from.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeColdLine } from '../src/store/cold-item.js';
import { Collection, type CollectionData } from '../src/store/collection.js';
import { emptyAccount, FORMAT, VERSION } from '../src/store/persistence/format.js';
import type { StoreData } from '../src/store/store.js';
import { loadDataFile, setup, storeJson, type TestSandbox } from './helpers.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cold-'));
  file = join(dir, 'sandbox.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Names that a split of the snapshot's text must not be confused by. */
const AWKWARD = [
  'Quote " and backslash \\ inside',
  'Braces { } and brackets [ ] and "},{"',
  'Zoë Ærø Ünïcødé 東京 😀',
  'Ends with a backslash \\',
  'Line\nbreak and tab\t',
];

const account = (data: StoreData) => data.accounts['ptn_default:production'];
/** How many objects of a collection are still unread (cold). */
function coldCount(sb: TestSandbox, collection: string): number {
  const items = account(sb.deps.store.data).collections[collection]?.items;
  return items ? [...items.values()].filter((item) => typeof item === 'number').length : 0;
}
const itemsLines = (text: string) => text.split('\n').filter((line) => line.startsWith('{"t":"items"'));

async function seeded(): Promise<{ customers: Array<Record<string, unknown>>; invoice: Record<string, unknown> }> {
  const sb = await setup({ dataFile: file, flushDelayMs: 0 });
  const api = sb.as(await sb.token());
  const customers: Array<Record<string, unknown>> = [];
  for (const [i, name] of AWKWARD.entries()) {
    const res = await api.post('/customers', { name, email: `c${i}@example.com`, external_id: `ext-${i}`, city: name });
    expect(res.status).toBe(201);
    customers.push(res.body);
  }
  const invoice = await api.post('/invoices', {
    customer_id: customers[2].id,
    line_items: [{ description: AWKWARD[1], quantity: 2, amount: 1250 }, { description: AWKWARD[2], quantity: 1, amount: 99 }],
  });
  expect(invoice.status).toBe(201);
  // Into the snapshot (not only the log), where loading keeps objects as text.
  await sb.deps.store.compact();
  await sb.deps.store.close();
  return { customers, invoice: invoice.body };
}

describe('objects loaded from a snapshot, kept as text until read', () => {
  it('read back exactly, whatever characters they hold, and the loaded document is the same', async () => {
    const { customers, invoice } = await seeded();
    const sb = await setup({ dataFile: file, flushDelayMs: 0 });
    const api = sb.as(await sb.token());
    expect(coldCount(sb, 'customers')).toBe(AWKWARD.length);
    expect(JSON.parse(storeJson(sb.deps.store.data))).toEqual(JSON.parse(storeJson(await loadDataFile(file))));

    for (const customer of customers) expect((await api.get(`/customers/${customer.id as string}`)).body).toEqual(customer);
    const readInvoice = await api.get(`/invoices/${invoice.id as string}`);
    expect(readInvoice.status).toBe(200);
    expect(readInvoice.body.line_items).toEqual(invoice.line_items);
    expect(coldCount(sb, 'customers')).toBe(0);
    // A second read is the same object (changes made to it stay).
    const stored = sb.deps.store.account('ptn_default', 'production').collection('customers');
    expect(stored.get(customers[0].id as string)).toBe(stored.get(customers[0].id as string));
    await sb.deps.store.close();
  });

  it('are found by their indexes without being read', async () => {
    const { customers, invoice } = await seeded();
    const sb = await setup({ dataFile: file, flushDelayMs: 0 });
    const api = sb.as(await sb.token());
    // The external-id index: a used one is refused, and nothing was read to build the index.
    const duplicate = await api.post('/customers', { name: 'Again', external_id: 'ext-3' });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.validation_errors).toEqual({ external_id: 'is already used by another customer' });
    expect(coldCount(sb, 'customers')).toBe(AWKWARD.length - 1); // the one whose external id matched
    // The invoices' customer index walks only that customer's invoices.
    expect(coldCount(sb, 'invoices')).toBe(1);
    const listed = await api.get(`/invoices?customer_id=${customers[2].id as string}`);
    expect(listed.body.data.map((i: { id: string }) => i.id)).toEqual([invoice.id]);
    expect((await api.get(`/invoices?customer_id=${customers[0].id as string}`)).body.data).toEqual([]);
    await sb.deps.store.close();
  });

  it('once read and changed or archived, are written and survive another restart', async () => {
    const { customers } = await seeded();
    const sb = await setup({ dataFile: file, flushDelayMs: 0 });
    const api = sb.as(await sb.token());
    await api.patch(`/customers/${customers[1].id as string}`, { name: 'Renamed after a restart' }).expect(200);
    // DELETE archives a customer (a move of its state machine).
    await api.delete(`/customers/${customers[4].id as string}`).expect(200);
    await sb.deps.store.compact();
    await sb.deps.store.close();

    const again = await setup({ dataFile: file, flushDelayMs: 0 });
    const client = again.as(await again.token());
    expect((await client.get(`/customers/${customers[1].id as string}`)).body).toEqual({ ...customers[1], name: 'Renamed after a restart' });
    expect((await client.get(`/customers/${customers[4].id as string}`)).body).toEqual({ ...customers[4], status: 'archived' });
    const listed = (await client.get('/customers?limit=100')).body.data.map((c: { id: string }) => c.id);
    expect(listed).toEqual(customers.map((c) => c.id).reverse());
    await again.deps.store.close();
  });

  it('are written by a compaction as the very text they were loaded from', async () => {
    await seeded();
    const before = itemsLines(readFileSync(file, 'utf8'));
    const sb = await setup({ dataFile: file, flushDelayMs: 0 });
    await sb.deps.store.compact();
    expect(coldCount(sb, 'customers')).toBe(AWKWARD.length);
    await sb.deps.store.close();
    expect(itemsLines(readFileSync(file, 'utf8'))).toEqual(before);
  });
});

describe('reading a snapshot whose lines are longer than a read', () => {
  it('keeps every object of a 2 MB items line, across the reads that split it', async () => {
    const objects = Array.from({ length: 600 }, (_, i) => ({ id: `cus_${i}`, external_id: `ext-${i}`, name: `${'é'.repeat(2000)} ${i} "}"` }));
    const lines = [
      JSON.stringify({ format: FORMAT, version: VERSION, generation: 1, seq: 0, meta: { seed: 's', signing_key: 'k' }, partners: {}, keys: {} }),
      JSON.stringify({ t: 'account', v: emptyAccount('ptn_default:production', 'ptn_default', 'production') }),
      JSON.stringify({ t: 'collection', a: 'ptn_default:production', c: 'customers' }),
      JSON.stringify({ t: 'order', v: objects.map((o) => o.id) }),
      JSON.stringify({ t: 'items', v: objects }),
    ];
    expect(Buffer.byteLength(lines[4])).toBeGreaterThan(2 * 1024 * 1024);
    lines.push(JSON.stringify({ t: 'end', lines: lines.length + 1 }));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const customers = account(await loadDataFile(file)).collections.customers;
    expect([...customers.items.values()].every((v) => typeof v === 'number')).toBe(true);
    expect([...customers.items.values()].map((offset) => customers.cold!.read(offset as number))).toEqual(objects);
  });
});

describe('splitting a snapshot line into cold objects', () => {
  const empty = (): CollectionData<{ id: string }> => ({ items: new Map(), order: ['a', 'gone', 'c'] });

  it('keeps the parsed objects when the text does not split into them', () => {
    const data = empty();
    expect(storeColdLine(data, 'customers', Buffer.from('{"t":"items","v":[1,2]}'), [1, 2] as never)).toBe(false);
    expect(storeColdLine(data, 'customers', Buffer.from('{"t":"items","v":[{"id":"a"}'), [{ id: 'a' }])).toBe(false);
    expect(data.items.size).toBe(0);
  });

  it('finds each object by its text, keeps the indexed fields aside, and keys it by the order\'s string', () => {
    const data = empty();
    const objects = [{ id: 'a', external_id: 'x', note: '{"id":"b"} ] } \\ "' }, { id: 'c', external_id: null }];
    const line = JSON.stringify({ t: 'items', v: objects });
    expect(storeColdLine(data, 'customers', Buffer.from(line), JSON.parse(line).v)).toBe(true);
    const cold = data.cold!;
    expect([...data.items.keys()]).toEqual(['a', 'c']);
    expect([...data.items.values()].map((offset) => cold.read(offset as number))).toEqual(objects);
    expect(data.items.keys().next().value).toBe(data.order[0]);
    // The index reads kept values, not the text: only values an index can find are kept (null and
    // absent share the index's empty key), so 'c' reads undefined where its text says null.
    const offsets = [...data.items.values()] as number[];
    expect([cold.fieldOf('a', offsets[0], 'external_id'), cold.fieldOf('c', offsets[1], 'external_id')]).toEqual(['x', undefined]);
    // A field loading kept nothing for is read from the text.
    expect(cold.fieldOf('a', offsets[0], 'note')).toBe(objects[0].note);
    // Once the index is built, its kept values go, and the text answers.
    cold.indexBuilt('external_id');
    expect(cold.fieldOf('c', offsets[1], 'external_id')).toBeNull();
    // Not enumerable: never serialised with the data.
    expect(Object.keys(data)).toEqual(['items', 'order']);
  });

  it('indexes cold objects of a collection whose fields loading did not keep, from their texts', () => {
    // A name no defineCollection registered: nothing is kept aside, so indexBy reads each text.
    const data: CollectionData<{ id: string; tag: string | null }> = { items: new Map(), order: ['t1', 't2', 't3'] };
    const objects = [{ id: 't1', tag: 'red' }, { id: 't2', tag: null }, { id: 't3', tag: 'red' }];
    const line = JSON.stringify({ t: 'items', v: objects });
    expect(storeColdLine(data, 'not_defined_anywhere', Buffer.from(line), JSON.parse(line).v)).toBe(true);
    const collection = new Collection('not_defined_anywhere', data, () => undefined).indexBy('tag');
    expect(collection.page({ where: { field: 'tag', value: 'red' } }).data).toEqual([objects[2], objects[0]]);
    // Building the index read nothing into the map: t2 is still text.
    expect(typeof data.items.get('t2')).toBe('number');
  });
});
