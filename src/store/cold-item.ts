// Owns the objects a data file's snapshot loaded and nothing has read since ("cold" objects): each
// is kept as its JSON text in the bytes of its snapshot line, outside the JavaScript heap, and its
// collection's map holds only the number where that text starts. Collection.get turns one into an
// object on its first read.
//
// Why: at a million stored objects, the objects themselves were some 600 MB of heap with millions of
// pointers. V8 then spends seconds marking them whenever writes grow the old generation, on the
// cores the requests need, and every young collection walks every page of that heap before it
// starts: a write's pause (and so its p99) at 1M was twice that at 1k (docs/performance.md, "Why a
// write at 1M costs more"). As text off the heap, a loaded object costs the heap its id and its map
// entries only. What requests read or write becomes an object again, so a working set lives on the
// heap as before.
//
// The indexes of a collection are built from its objects' indexed fields. For cold objects, loading
// keeps those fields' values aside (defineCollection names them before any data file is read) until
// the collection builds its indexes, which then drops them; a field not kept is read from the text.
import type { CollectionData } from './collection.js';

/** Indexed fields of each collection, by name (see store.ts defineCollection). */
const indexedFields = new Map<string, readonly string[]>();

export function registerIndexedFields(collection: string, fields: readonly string[]): void {
  indexedFields.set(collection, fields);
}

/** Whether a module defines a collection of this name (an imported snapshot holds only those). */
export function isDefinedCollection(collection: string): boolean {
  return indexedFields.has(collection);
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Where the JSON value starting at `start` ends (one past its closing bracket). It walks UTF-8 bytes:
 * quotes, backslashes and brackets are ASCII, and no byte of a multi-byte UTF-8 character is, so a
 * byte walk finds the same structure as a character walk.
 */
function valueEnd(bytes: Buffer, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
    } else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth === 0) {
      return i + 1;
    }
  }
  return -1;
}

/** Start of every object of a snapshot "items" line's `v` array: `{"t":"items","v":[{...},{...}]}`. */
function objectStarts(bytes: Buffer): number[] | undefined {
  const open = bytes.indexOf('"v":[');
  if (open < 0) return undefined;
  const starts: number[] = [];
  let at = open + 5;
  while (bytes[at] === OPEN_BRACE) {
    starts.push(at);
    const end = valueEnd(bytes, at);
    if (end < 0) return undefined;
    at = end;
    if (bytes[at] === 0x2c) at += 1; // the comma between objects
  }
  return bytes[at] === CLOSE_BRACKET ? starts : undefined;
}

/** The texts of a collection's cold objects: its snapshot lines, as bytes, and an object's text by its offset. */
export class ColdTexts {
  private readonly lines: Buffer[] = [];
  /** Offset of each line's first byte, across the lines (an object's number is its offset). */
  private readonly starts: number[] = [];
  private size = 0;
  /** Index field to (id to value), for values other than null and absent; dropped once the index is built. */
  private readonly kept = new Map<string, Map<string, unknown>>();
  /** How far loading has matched objects to the collection's order (to share its id strings). */
  private orderCursor = 0;

  constructor(fields: readonly string[]) {
    for (const field of fields) this.kept.set(field, new Map());
  }

  /**
   * Keep one line's objects (`parsed`, whose texts start at `objectStarts` in `bytes`) as cold objects
   * of `data`: each under the order's own string of its id (the snapshot writes objects in the order's
   * order, so each id stays one string), with its indexed fields' values kept aside.
   */
  keepLine(data: CollectionData<{ id: string }>, bytes: Buffer, objectStarts: readonly number[], parsed: ReadonlyArray<{ id: string }>): void {
    const base = this.size;
    this.lines.push(bytes);
    this.starts.push(base);
    this.size += bytes.length;
    const { order, items } = data;
    parsed.forEach((item, i) => {
      let id = item.id;
      while (this.orderCursor < order.length && order[this.orderCursor] !== id) this.orderCursor += 1;
      if (this.orderCursor < order.length) id = order[this.orderCursor++];
      items.set(id, base + objectStarts[i]);
      for (const [field, values] of this.kept) {
        const value = (item as Record<string, unknown>)[field];
        if (value !== null && value !== undefined) values.set(id, value);
      }
    });
  }

  /** The JSON text of the object at `offset`, exactly as the snapshot wrote it. */
  text(offset: number): string {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    const bytes = this.lines[lo];
    const start = offset - this.starts[lo];
    return bytes.toString('utf8', start, valueEnd(bytes, start));
  }

  read<T>(offset: number): T {
    return JSON.parse(this.text(offset)) as T;
  }

  /**
   * A cold object's value of `field`, for its index: as loading kept it (undefined for null or
   * absent), or read from its text when none was kept (a field not named by defineCollection, or an
   * index built again after its kept values were dropped).
   */
  fieldOf(id: string, offset: number, field: string): unknown {
    const kept = this.kept.get(field);
    return kept ? kept.get(id) : this.read<Record<string, unknown>>(offset)[field];
  }

  /** The index on `field` is built: the values kept for it are not needed again. */
  indexBuilt(field: string): void {
    this.kept.delete(field);
  }
}

/** A collection's cold texts, made on its first cold line. Not enumerable: never serialised or copied with the data. */
function coldTextsOf(data: CollectionData<{ id: string }>, collection: string): ColdTexts {
  if (!data.cold) Object.defineProperty(data, 'cold', { value: new ColdTexts(indexedFields.get(collection) ?? []), enumerable: false, writable: true });
  return data.cold as ColdTexts;
}

/**
 * Store the objects of one snapshot "items" line as cold objects of `data`, given the line's bytes
 * (kept: not shared with other memory) and its parse (for the ids and the indexed fields). False,
 * storing nothing, when the text does not split into exactly the parsed objects: the caller stores
 * the parsed objects then.
 */
export function storeColdLine(data: CollectionData<{ id: string }>, collection: string, bytes: Buffer, parsed: ReadonlyArray<{ id: string }>): boolean {
  const starts = objectStarts(bytes);
  if (!starts || starts.length !== parsed.length || parsed.some((item) => typeof item?.id !== 'string')) return false;
  coldTextsOf(data, collection).keepLine(data, bytes, starts, parsed);
  return true;
}

/** The JSON text of a stored object, cold or not (the snapshot writer's). */
export function itemText(item: unknown, cold: ColdTexts | undefined): string {
  return typeof item === 'number' && cold ? cold.text(item) : JSON.stringify(item);
}
