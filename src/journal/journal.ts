// Owns the request journal: per account, a bounded ring of the API requests it received (newest
// first), kept in memory and emptied when the account (or the whole sandbox) is reset.
import { createHash } from 'node:crypto';
import type { Store, Account } from '../store/store.js';
import { pathMatches } from '../scenarios/engine.js';

export interface JournalEntry {
  id: string;
  at: string;
  method: string;
  path: string;
  operation: string | null;
  status: number;
  duration_ms: number;
  request: { headers: Record<string, string>; query: Record<string, unknown>; body: unknown };
  response: { body: unknown };
}

interface Stored {
  entry: JournalEntry;
  /** The operation's path template, for filtering by template. */
  template: string | null;
}

export interface JournalFilter {
  method?: string;
  path?: string;
  status?: number;
  limit?: number;
}

/** A fixed-size ring: writing past the end overwrites the oldest entry. */
class Ring {
  private readonly slots: Array<Stored | undefined>;
  private head = 0;
  count = 0;

  constructor(readonly size: number) {
    this.slots = new Array(size);
  }

  push(item: Stored): void {
    this.slots[this.head] = item;
    this.head = (this.head + 1) % this.size;
    this.count = Math.min(this.count + 1, this.size);
  }

  *newestFirst(): IterableIterator<Stored> {
    for (let i = 1; i <= this.count; i++) {
      const item = this.slots[(this.head - i + this.size) % this.size];
      if (item) yield item;
    }
  }
}

export class Journal {
  private readonly rings = new Map<string, Ring>();
  /** Entry sequence per account: survives a DELETE of the journal, so ids are never reused. */
  private readonly sequences = new Map<string, number>();

  constructor(private readonly size: number, private readonly store: Store) {
    store.events.on('accountReset', (account: Account) => {
      this.rings.delete(account.id);
      this.sequences.delete(account.id);
    });
    store.events.on('storeReset', () => {
      this.rings.clear();
      this.sequences.clear();
    });
  }

  get capacity(): number {
    return this.size;
  }

  /** Add an entry (the id is filled in here) and answer it; a size of 0 turns the journal off. */
  record(account: Account, entry: Omit<JournalEntry, 'id'>, template: string | null): JournalEntry | undefined {
    if (this.size <= 0) return undefined;
    let ring = this.rings.get(account.id);
    if (!ring) {
      ring = new Ring(this.size);
      this.rings.set(account.id, ring);
    }
    const seq = (this.sequences.get(account.id) ?? 0) + 1;
    this.sequences.set(account.id, seq);
    const id = `req_${createHash('sha256').update(`${this.store.seed}|${account.id}|journal|${seq}`).digest('hex').slice(0, 20)}`;
    const recorded = { id, ...entry };
    ring.push({ entry: recorded, template });
    return recorded;
  }

  /** Entries newest first, filtered; the cost is bounded by the ring size, never by stored data. */
  list(account: Account, filter: JournalFilter = {}): JournalEntry[] {
    const ring = this.rings.get(account.id);
    if (!ring) return [];
    const limit = filter.limit ?? 100;
    const method = filter.method?.toUpperCase();
    const out: JournalEntry[] = [];
    for (const { entry, template } of ring.newestFirst()) {
      if (out.length >= limit) break;
      if (method && entry.method !== method) continue;
      if (filter.status !== undefined && entry.status !== filter.status) continue;
      if (filter.path !== undefined && !pathMatches(filter.path, entry.path, template)) continue;
      out.push(entry);
    }
    return out;
  }

  clear(account: Account): number {
    const count = this.rings.get(account.id)?.count ?? 0;
    this.rings.delete(account.id);
    return count;
  }
}

