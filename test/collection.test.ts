// The collection's tombstones do not grow with traffic: objects dropped from the oldest end (retention)
// are cleared with cursors still valid, and deletions in the middle are compacted once they outnumber
// the objects, a cursor of the earlier numbering then refused with 400 invalid cursor. Internal
// bookkeeping, not visible through HTTP, so tested on the class.
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../src/errors.js';
import { Collection, type CollectionData } from '../src/store/collection.js';

interface Item { id: string; kind: string }

function make(data: CollectionData<Item> = { items: new Map(), order: [] }) {
  return { data, c: new Collection<Item>('things', data, () => undefined).indexBy('kind') };
}

const item = (n: number, kind = n % 2 ? 'odd' : 'even'): Item => ({ id: `t_${n}`, kind });

describe('collection tombstones', () => {
  it('clears tombstones at the oldest end while the newest-first walk and cursors keep working', () => {
    const { data, c } = make();
    let next = 0;
    // A rolling window of 100 objects: insert one, drop the oldest, 5,000 times.
    for (; next < 100; next++) c.insert(item(next));
    const page = c.page({ limit: 10 });
    for (let i = 0; i < 5000; i++) {
      c.insert(item(next++));
      c.remove(c.oldest()!.id);
    }
    expect(c.size).toBe(100);
    expect(data.order.length).toBeLessThanOrEqual(100 + 100 / 7 + 64);
    expect(data.base).toBeGreaterThan(4800);
    expect([...c.values()].map((t) => t.id)).toEqual(Array.from({ length: 100 }, (_, i) => `t_${next - 100 + i}`));
    // The newest page and an index walk see only kept objects.
    expect(c.page({ limit: 3 }).data.map((t) => t.id)).toEqual([`t_${next - 1}`, `t_${next - 2}`, `t_${next - 3}`]);
    expect(c.page({ limit: 500, where: { field: 'kind', value: 'even' } }).data).toHaveLength(50);
    // A cursor made before the window moved past it is still accepted: nothing older is left.
    expect(c.page({ limit: 10, after: page.end_cursor! }).data).toEqual([]);
    const recent = c.page({ limit: 10 });
    expect(c.page({ limit: 10, after: recent.end_cursor! }).data.map((t) => t.id)[0]).toBe(`t_${next - 11}`);
    // A collection reloaded from the persisted data reads the same.
    // (as the data file keeps it: the order, then the objects as a list).
    const saved = JSON.parse(JSON.stringify({ ...data, items: [...data.items.values()] })) as Omit<CollectionData<Item>, 'items'> & { items: Item[] };
    const reloaded = new Collection<Item>('things', { ...saved, items: new Map(saved.items.map((t) => [t.id, t])) }, () => undefined);
    expect(reloaded.size).toBe(100);
    expect(reloaded.page({ limit: 10, after: recent.end_cursor! }).data.map((t) => t.id)[0]).toBe(`t_${next - 11}`);
  });

  it('compacts tombstones in the middle once they outnumber the objects; an older cursor is refused', () => {
    const { data, c } = make();
    c.insert({ id: 'keeper', kind: 'even' });
    const before = c.page({ limit: 1 });
    for (let i = 0; i < 3000; i++) {
      c.insert(item(i));
      c.remove(`t_${i}`);
    }
    c.insert({ id: 'last', kind: 'odd' });
    expect(c.size).toBe(2);
    expect(data.order.length).toBeLessThan(1100);
    expect(data.epoch).toBeGreaterThan(0);
    expect(c.page({ limit: 10 }).data.map((t) => t.id)).toEqual(['last', 'keeper']);
    expect(c.page({ limit: 10, where: { field: 'kind', value: 'even' } }).data.map((t) => t.id)).toEqual(['keeper']);
    const fresh = c.page({ limit: 1 });
    expect(c.page({ limit: 1, after: fresh.end_cursor! }).data.map((t) => t.id)).toEqual(['keeper']);
    let refused: unknown;
    try {
      c.page({ limit: 1, after: before.end_cursor! });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(400);
    expect((refused as ApiError).validationErrors.after).toMatch(/start again from the first page/);
    // Ids stay unique: an id still in the order (a recent tombstone) cannot come back.
    expect(() => c.insert({ id: 'last', kind: 'odd' })).toThrow(/duplicate/);
  });
});
