// Owns one collection of an account: objects indexed by id, their insertion order, optional
// secondary indexes, and cursor pagination. Reads and writes cost O(1); a page costs O(limit)
// plus the objects a filter skips, never a copy of the whole collection. Deleted objects leave
// tombstones that are cleared in amortised O(1): from the oldest end as retention drops history,
// and by a compaction once the ones in the middle outnumber the objects. A retention's batch
// (dropOldest) leaves none: the order is cut before the new oldest at once.
import { ApiError, Errors } from '../errors.js';
import { LIMITS } from '../limits.js';
import type { ColdTexts } from './cold-item.js';
import type { UnitOfWork } from './unit-of-work.js';

/** What one write did, for the store's persistence (see src/store/persistence/journal.ts). */
export type CollectionChange =
  | { kind: 'insert' | 'update'; item: { id: string } }
  | { kind: 'remove'; id: string }
  /** Leading tombstones cleared: the order now starts at absolute position `base`. */
  | { kind: 'trim'; base: number }
  /** Tombstones in the middle compacted: the order is now `order`, from position 0, in `epoch`. */
  | { kind: 'compact'; epoch: number; order: readonly string[] };

export interface CollectionData<T> {
  /**
   * Stored objects by id. A Map, not an object: an object with one property per id is a dictionary
   * V8 must first intern each new id into, which cost some 3 us per insert in a large collection
   * against under 1 us for a Map (the data file stores them as lists either way). An object a data
   * file loaded and nothing has read since is the number where its text starts in `cold` (outside
   * the heap, see cold-item.ts): get() makes it an object on its first read.
   */
  items: Map<string, T | number>;
  /** Ids in insertion order; a hard-deleted id stays as a tombstone so positions never shift. */
  order: string[];
  /** Position of order[0]: tombstones cleared from the oldest end move it up. Absent: 0. */
  base?: number;
  /** Bumped by each compaction of the tombstones in the middle; a cursor of an earlier one is refused. Absent: 0. */
  epoch?: number;
  /** The texts of the cold objects (not enumerable: in memory only, never written as such). */
  cold?: ColdTexts;
}

/** Leading tombstones are cleared once there are this many and they are an eighth of the order. */
const TRIM_MIN = 64;
/** Tombstones in the middle are compacted once there are this many and more than the objects. */
const COMPACT_MIN = 1024;

export interface PageQuery<T> {
  limit?: number;
  after?: string;
  before?: string;
  filter?: (item: T) => boolean;
  /** Walk only the objects whose indexed field has this value (see Collection.indexBy). */
  where?: { field: string; value: string };
}

export interface Page<T> {
  data: T[];
  start_cursor: string | null;
  end_cursor: string | null;
  has_next_page: boolean;
  has_previous_page: boolean;
}

export const DEFAULT_PAGE_LIMIT = LIMITS.pageDefault;
export const MAX_PAGE_LIMIT = LIMITS.pageMax;

export class Collection<T extends { id: string }> {
  /**
   * Id to position, for every id of the order (tombstones included): made on first need, by an
   * update that moves an object between the lists of an index. An insert into a large map that the
   * rest of a request has pushed out of the caches cost some 1.6 us in the server, more than any
   * other step of a write, and most collections never need the table.
   */
  private positions: Map<string, number> | undefined;
  /** The ids of the tombstones in the order, so that an insert cannot bring one back (cleared with them). */
  private readonly removed = new Set<string>();
  private readonly indexes = new Map<string, Index>();
  /** Indexes declared but not made yet: each is made by the first read that walks it (see declareIndex). */
  private readonly declared = new Set<string>();
  /** Stored objects (tombstones excluded). */
  private live = 0;
  /** Index in `order` of the oldest stored object: the ones before it are tombstones. */
  private head = 0;
  /** This collection's keys for the once-per-unit-of-work steps of a remove (made once, not per remove). */
  private readonly reorderKey: string;
  private readonly tombstonesKey: string;

  constructor(
    readonly name: string,
    private readonly data: CollectionData<T>,
    private readonly onChange: (change: CollectionChange) => void,
    /**
     * The unit of work a write joins: undone if it rolls back, reported as it commits. An account's
     * collection passes its wall (Account.openWork), which throws when no unit of work is under way.
     */
    private readonly work: () => UnitOfWork | undefined = () => undefined,
    /** Store the collection's data in its account, on its first insert (absent: it is stored already). */
    private attach?: () => void,
  ) {
    this.reorderKey = `order ${name}`;
    this.tombstonesKey = `tombstones ${name}`;
    const { order, items } = data;
    for (let i = 0; i < order.length; i++) {
      const id = order[i];
      const item = items.get(id);
      if (item === undefined) {
        this.removed.add(id);
        continue;
      }
      this.live += 1;
      // A data file's order and objects each spell every id: keep one string of the two (some 40
      // bytes a stored object). A cold object's key is the order's string already.
      if (typeof item === 'object' && item.id === id) order[i] = item.id;
    }
    this.advanceHead();
  }

  private get base(): number {
    return this.data.base ?? 0;
  }

  /** The position of an id of the order, from the table made on first need. */
  private positionOf(id: string): number {
    if (!this.positions) {
      const positions = new Map<string, number>();
      const base = this.base;
      this.data.order.forEach((known, i) => positions.set(known, base + i));
      this.positions = positions;
    }
    return this.positions.get(id) as number;
  }

  /**
   * Keep a list of positions per value of `field`, made by the first read that walks it (a filtered
   * list, findBy) and kept up to date from then on. Until then an insert costs nothing for it: a
   * customer's external id, say, is looked up only when a create names one.
   */
  declareIndex(field: keyof T & string): this {
    if (!this.indexes.has(field)) this.declared.add(field);
    return this;
  }

  /** Keep a list of positions per value of `field`, made now, so filtered lists walk only their own objects. */
  indexBy(field: keyof T & string): this {
    this.declared.delete(field);
    const index: Index = new Map();
    const base = this.base;
    const cold = this.data.cold;
    this.data.order.forEach((id, i) => {
      const item = this.data.items.get(id);
      if (item === undefined) return;
      addPosition(index, indexKey(typeof item === 'number' ? (cold as ColdTexts).fieldOf(id, item, field) : item[field]), base + i);
    });
    cold?.indexBuilt(field);
    this.indexes.set(field, index);
    return this;
  }

  /** Stored objects (deleted ones not counted). */
  get size(): number {
    return this.live;
  }

  /** The id of the oldest stored object, without reading the object. */
  oldestId(): string | undefined {
    return this.data.order[this.head];
  }

  /** The oldest stored object (what a retention looks at first). */
  oldest(): T | undefined {
    const id = this.data.order[this.head];
    return id === undefined ? undefined : this.get(id);
  }

  /**
   * Remove the `count` oldest objects, or fewer when the object `stopAt` names comes first (it stays,
   * with everything after it); answers how many went. Each is reported as a remove, and the order is
   * cut before the new oldest at once (a trim): no tombstone is kept for them, and each costs one
   * delete from the map, where a remove() reads the object first and keeps its id until a later trim.
   * For a retention's drops, which run once a write has committed; inside a unit of work each goes
   * through remove(), so that a rollback can put it back.
   */
  dropOldest(count: number, stopAt?: string): number {
    let dropped = 0;
    if (this.work()) {
      for (let id = this.oldestId(); id !== undefined && id !== stopAt && dropped < count; id = this.oldestId()) {
        this.remove(id);
        dropped += 1;
      }
      return dropped;
    }
    const { order, items } = this.data;
    const from = this.head;
    let at = from;
    while (dropped < count && at < order.length && order[at] !== stopAt) {
      const id = order[at++];
      // Tombstones among them are passed over (and cut with them).
      if (!items.delete(id)) continue;
      dropped += 1;
      this.onChange({ kind: 'remove', id });
    }
    if (at === from) return 0;
    this.live -= dropped;
    this.head = at;
    this.advanceHead();
    this.trimHead();
    return dropped;
  }

  get(id: string): T | undefined {
    const item = this.data.items.get(id);
    return typeof item === 'number' ? this.warm(id, item) : item;
  }

  /**
   * A cold object read for the first time becomes an object in its place (the same one on every
   * later read, so changes made to it stay). Not a write: nothing to log or undo, the data is the same.
   */
  private warm(id: string, offset: number): T {
    const item = (this.data.cold as ColdTexts).read<T>(offset);
    this.data.items.set(id, item);
    return item;
  }

  /** The object, or a 404 naming the resource. */
  require(id: string, what = 'object'): T {
    const found = this.get(id);
    if (!found) throw new ApiError(Errors.notFound, { message: `No ${what} with id ${id}.` });
    return found;
  }

  insert(item: T): T {
    // The wall first (see Account.openWork): nothing changes when the write is not allowed.
    const work = this.work();
    const position = this.base + this.data.order.length;
    // A duplicate is a bug of the caller: ids are never reused, tombstones' included.
    if (this.data.items.has(item.id) || (this.removed.size && this.removed.has(item.id))) throw new Error(`duplicate id ${item.id} in ${this.name}`);
    this.positions?.set(item.id, position);
    if (this.attach) {
      this.attach();
      this.attach = undefined;
    }
    this.data.order.push(item.id);
    this.data.items.set(item.id, item);
    this.live += 1;
    for (const [field, index] of this.indexes) addPosition(index, indexKey(item[field as keyof T]), position);
    this.report(work, { kind: 'insert', item }, () => this.undoInsert(item));
    return item;
  }

  /** Tell persistence about a write (as the unit of work under way prepares to commit), and how to undo it. */
  private report(work: UnitOfWork | undefined, change: CollectionChange, inverse: () => void): void {
    if (!work) return this.onChange(change);
    work.undo(inverse);
    work.beforeCommit(() => this.onChange(change));
  }

  /** The newest insert (the inverses run newest first, so it is the last of the order) never happened. */
  private undoInsert(item: T): void {
    const position = this.base + this.data.order.length - 1;
    if (this.data.order[this.data.order.length - 1] !== item.id) throw new Error(`cannot undo the insert of ${item.id} in ${this.name}: not the newest`);
    this.data.order.pop();
    this.data.items.delete(item.id);
    this.live -= 1;
    this.positions?.delete(item.id);
    for (const [field, index] of this.indexes) removePosition(index, indexKey(item[field as keyof T]), position);
    if (this.head > this.data.order.length) this.head = this.data.order.length;
  }

  /** Apply changes to a stored object in place; an indexed field that changes moves its position between index lists. */
  update(id: string, changes: Partial<T>): T {
    const work = this.work();
    const item = this.require(id);
    if (!work) {
      this.change(item, changes);
      this.onChange({ kind: 'update', item });
      return item;
    }
    // What the changed fields held before (absent ones as absent), to put back on a rollback.
    const before: Partial<T> = {};
    const absent: Array<keyof T> = [];
    for (const field of Object.keys(changes) as Array<keyof T>) {
      if (Object.hasOwn(item, field)) before[field] = item[field];
      else absent.push(field);
    }
    this.change(item, changes);
    this.report(work, { kind: 'update', item }, () => {
      this.change(item, before);
      for (const field of absent) delete item[field];
    });
    return item;
  }

  /** Assign `changes` to a stored object, moving its position between the index lists of changed indexed fields. */
  private change(item: T, changes: Partial<T>): void {
    const id = item.id;
    const moved: Array<[Index, string, string]> = [];
    for (const [field, index] of this.indexes) {
      if (!Object.hasOwn(changes, field)) continue;
      const before = indexKey(item[field as keyof T]);
      const after = indexKey(changes[field as keyof T]);
      if (before !== after) moved.push([index, before, after]);
    }
    Object.assign(item, changes);
    if (!moved.length) return;
    const position = this.positionOf(id);
    for (const [index, before, after] of moved) {
      removePosition(index, before, position);
      addPosition(index, after, position);
    }
  }

  /** Hard delete; the position stays as a tombstone (until the tombstones are cleared). */
  remove(id: string): T | undefined {
    const item = this.get(id);
    if (!item) return undefined;
    const work = this.work();
    this.data.items.delete(id);
    this.live -= 1;
    this.removed.add(id);
    const head = this.head;
    if (this.data.order[head] === id) this.advanceHead();
    // The objects' keys go back into insertion order once every remove of the work is undone (this
    // inverse, registered at the first remove, runs after theirs): a rolled-back delete leaves the
    // data byte for byte as it was. O(collection), on that rare path only.
    work?.undoOnce(this.reorderKey, () => () => this.reorderItems());
    this.report(work, { kind: 'remove', id }, () => {
      this.data.items.set(id, item);
      this.live += 1;
      this.removed.delete(id);
      this.head = head;
      // An index made after the remove (by a read in the same unit of work) did not list it.
      if (this.indexes.size) {
        // Found by a walk of the order, not the table: a rare path, which need not make it.
        const position = this.base + this.data.order.lastIndexOf(id);
        for (const [field, index] of this.indexes) restorePosition(index, indexKey(item[field as keyof T]), position);
      }
    });
    // Positions move when tombstones are cleared: not while a unit of work may still undo a remove.
    if (work) work.afterCommitOnce(this.tombstonesKey, () => this.clearTombstones());
    else this.clearTombstones();
    return item;
  }

  /** Rebuild the objects' map in insertion order (after a rolled-back delete put one back at its end). */
  private reorderItems(): void {
    const items = new Map<string, T | number>();
    for (const id of this.data.order) {
      const item = this.data.items.get(id);
      if (item !== undefined) items.set(id, item);
    }
    this.data.items = items;
  }

  /** Every stored object, oldest first, lazily: a walk that stops early reads only what it passed (a retention's age check). Walked whole only for bulk work (reset, fixtures, export), never per request. */
  *values(): IterableIterator<T> {
    const { order } = this.data;
    for (let i = this.head; i < order.length; i++) {
      const item = this.get(order[i]);
      if (item) yield item;
    }
  }

  private advanceHead(): void {
    const { order } = this.data;
    // Every id of the order is an object's or a tombstone's: the tombstones' set is the small one to ask.
    while (this.head < order.length && this.removed.has(order[this.head])) this.head += 1;
  }

  /**
   * Drop the leading tombstones once they are many (positions move: `base` keeps them absolute, so
   * cursors stay valid), and compact the ones in the middle once they outnumber the objects (positions
   * are renumbered: the epoch changes, and a cursor of the earlier epoch is refused). Each costs
   * O(order) but happens after O(order) deletions, so a delete costs O(1) amortised.
   */
  private clearTombstones(): void {
    const { order } = this.data;
    if (this.head >= TRIM_MIN && this.head * 8 >= order.length) this.trimHead();
    const middle = order.length - this.head - this.live;
    if (middle >= COMPACT_MIN && middle > this.live) {
      const kept = order.filter((id) => this.data.items.has(id));
      // Made again on the next need, from the new order.
      this.positions = undefined;
      this.removed.clear();
      this.data.order = kept;
      this.data.base = 0;
      this.data.epoch = (this.data.epoch ?? 0) + 1;
      this.head = 0;
      for (const field of [...this.indexes.keys()]) this.indexBy(field as keyof T & string);
      this.onChange({ kind: 'compact', epoch: this.data.epoch, order: kept });
    }
  }

  /** Cut the order before the head (tombstones, or objects just dropped): `base` keeps positions absolute. */
  private trimHead(): void {
    for (const id of this.data.order.splice(0, this.head)) {
      this.positions?.delete(id);
      this.removed.delete(id);
    }
    this.data.base = this.base + this.head;
    this.head = 0;
    const base = this.base;
    // Every key of every index is visited (an event log's entity index has one per object), so
    // the visit allocates nothing: no entry arrays (forEach), and lowerBound reads the list itself.
    for (const index of this.indexes.values()) {
      index.forEach((entry, key) => {
        if (typeof entry === 'number') {
          if (entry < base) index.delete(key);
          return;
        }
        const cut = lowerBound(entry, base);
        if (!cut) return;
        entry.splice(0, cut);
        // Setting or deleting the key being visited does not disturb forEach's walk.
        storeShrunk(index, key, entry);
      });
    }
    this.onChange({ kind: 'trim', base });
  }

  /** The newest stored object whose indexed `field` is `value` (a unique field: an external id, a number). */
  findBy(field: keyof T & string, value: string): T | undefined {
    for (const item of this.newest({ field, value })) if (item[field] === value) return item;
    return undefined;
  }

  /** Objects newest first, lazily: callers stop when they have what they need. */
  *newest(where?: { field: string; value: string }): IterableIterator<T> {
    const positions = this.positionsFor(where);
    for (let i = positions.length - 1; i >= 0; i--) {
      const item = this.at(positionAt(positions, i));
      if (item) yield item;
    }
  }

  /**
   * Cursor pagination, newest first. A cursor names a position in the insertion order, so pages
   * stay stable while objects are added (new ones appear before the first page only).
   */
  page(query: PageQuery<T>): Page<T> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
      throw new ApiError(Errors.validation, {
        validation_errors: { limit: `must be an integer from 1 to ${MAX_PAGE_LIMIT}` },
      });
    }
    if (query.after && query.before) {
      throw new ApiError(Errors.validation, { validation_errors: { before: 'cannot be combined with after' } });
    }
    const positions = this.positionsFor(query.where);
    const matches = (position: number): T | undefined => {
      const item = this.at(position);
      return item && (!query.filter || query.filter(item)) ? item : undefined;
    };
    // Indices into `positions` (ascending insertion order); the newest-first walk goes down.
    const found: Array<{ position: number; item: T }> = [];
    let hasNext = false;
    let hasPrevious = false;
    if (query.before) {
      const start = this.indexAfter(positions, this.decodeCursor(query.before, 'before'));
      let i = start;
      for (; i < positions.length && found.length < limit; i++) {
        const position = positionAt(positions, i);
        const item = matches(position);
        if (item) found.push({ position, item });
      }
      hasPrevious = this.anyMatch(positions, i, +1, matches);
      hasNext = this.anyMatch(positions, start - 1, -1, matches);
      found.reverse();
    } else {
      const start = query.after ? this.indexBefore(positions, this.decodeCursor(query.after, 'after')) : positions.length - 1;
      let i = start;
      for (; i >= 0 && found.length < limit; i--) {
        const position = positionAt(positions, i);
        const item = matches(position);
        if (item) found.push({ position, item });
      }
      hasNext = this.anyMatch(positions, i, -1, matches);
      hasPrevious = query.after ? this.anyMatch(positions, start + 1, +1, matches) : false;
    }
    return {
      data: found.map((f) => f.item),
      start_cursor: found.length ? this.encodeCursor(found[0].position) : null,
      end_cursor: found.length ? this.encodeCursor(found[found.length - 1].position) : null,
      has_next_page: hasNext,
      has_previous_page: hasPrevious,
    };
  }

  private at(position: number): T | undefined {
    const id = this.data.order[position - this.base];
    return id === undefined ? undefined : this.get(id);
  }

  private positionsFor(where?: { field: string; value: string }): Positions {
    if (!where) return { from: this.base + this.head, length: this.data.order.length - this.head };
    if (this.declared.has(where.field)) this.indexBy(where.field as keyof T & string);
    const index = this.indexes.get(where.field);
    if (!index) throw new Error(`${this.name} has no index on ${where.field}`);
    const entry = index.get(where.value);
    if (entry === undefined) return NO_POSITIONS;
    return typeof entry === 'number' ? { from: entry, length: 1 } : entry;
  }

  private anyMatch(positions: Positions, from: number, step: 1 | -1, matches: (p: number) => T | undefined): boolean {
    for (let i = from; i >= 0 && i < positions.length; i += step) if (matches(positionAt(positions, i))) return true;
    return false;
  }

  /** Index of the last entry whose position is < cursor. */
  private indexBefore(positions: Positions, cursor: number): number {
    return lowerBound(positions, cursor) - 1;
  }

  /** Index of the first entry whose position is > cursor. */
  private indexAfter(positions: Positions, cursor: number): number {
    return lowerBound(positions, cursor + 1);
  }

  private encodeCursor(position: number): string {
    const epoch = this.data.epoch ?? 0;
    return Buffer.from(epoch ? `${this.name}:${epoch}:${position}` : `${this.name}:${position}`).toString('base64url');
  }

  private decodeCursor(cursor: string, field: string): number {
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    const match = /^([a-z_]+):(?:(\d+):)?(\d+)$/.exec(text);
    if (!match || match[1] !== this.name || Number(match[3]) >= this.base + this.data.order.length) {
      throw new ApiError(Errors.invalidCursor, { validation_errors: { [field]: 'is not a cursor of this list' } });
    }
    if (Number(match[2] ?? 0) !== (this.data.epoch ?? 0)) {
      throw new ApiError(Errors.invalidCursor, { validation_errors: { [field]: 'is from before many deleted objects were cleared from this list; start again from the first page' } });
    }
    // A position older than the oldest kept one (cleared by retention) reads as the list's start.
    return Number(match[3]);
  }
}

/**
 * A sorted list of insertion positions: one index entry's own list, or every position from
 * from..from+length-1 (without making that list). Read through positionAt; nothing is wrapped or
 * allocated per list.
 */
type Positions = readonly number[] | { readonly from: number; readonly length: number };

function positionAt(positions: Positions, i: number): number {
  return 'from' in positions ? positions.from + i : positions[i];
}

/** How many of the positions are below `value`: where `value` goes in the sorted list. */
function lowerBound(positions: Positions, value: number): number {
  let lo = 0;
  let hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (positionAt(positions, mid) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** An object's key in an index: its field's text; absent and null share one key no text can equal. */
function indexKey(value: unknown): string {
  if (value === null || value === undefined) return '\u0000';
  // Indexed fields hold strings, numbers or booleans (ids, statuses, keys): their text is the key.
  if (typeof value === 'string') return value;
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

/**
 * One secondary index: for each value of its field, the positions of the objects that hold it, in
 * ascending order. A value held by one object (an external id, an event's entity) maps to its
 * position itself, not to a list of one: that list and its backing store cost some 56 bytes an
 * object, about a tenth of a stored customer. A value held by several maps to their sorted list.
 */
type Index = Map<string, number | number[]>;

const NO_POSITIONS: readonly number[] = [];

/**
 * Add a position in order: at the end for an insert or a rebuild (the common case, a push), in its
 * place for an update that moved an object to this key.
 */
function addPosition(index: Index, key: string, position: number): void {
  const entry = index.get(key);
  if (entry === undefined) index.set(key, position);
  else if (typeof entry === 'number') index.set(key, entry < position ? [entry, position] : [position, entry]);
  else if (entry[entry.length - 1] < position) entry.push(position);
  else entry.splice(lowerBound(entry, position), 0, position);
}

/** Put a position back in a key's entry unless it is there (an undone remove). */
function restorePosition(index: Index, key: string, position: number): void {
  const entry = index.get(key);
  if (entry === position) return;
  if (typeof entry === 'object' && entry[lowerBound(entry, position)] === position) return;
  addPosition(index, key, position);
}

/** Take a position out of a key's entry (an undone insert, an update that moved the object away). */
function removePosition(index: Index, key: string, position: number): void {
  const entry = index.get(key);
  if (entry === undefined) return;
  if (typeof entry === 'number') {
    if (entry === position) index.delete(key);
    return;
  }
  const at = lowerBound(entry, position);
  if (entry[at] !== position) return;
  entry.splice(at, 1);
  storeShrunk(index, key, entry);
}

/** A key's list after positions left it, in its smallest form: gone when empty, the position when one is left. */
function storeShrunk(index: Index, key: string, entry: number[]): void {
  if (!entry.length) index.delete(key);
  else if (entry.length === 1) index.set(key, entry[0]);
}
