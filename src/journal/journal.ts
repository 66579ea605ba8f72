// Owns the request journal: per account, a bounded ring of the API requests it received (newest
// first), kept in memory and emptied when the account (or the whole sandbox) is reset. Bounded
// three times: each entry's serialised size (LIMITS.journalEntryBytes), the account's total bytes
// (LIMITS.journalAccountBytes), beyond which the oldest entries are dropped, and the process-wide
// memory budget (src/budget/memory-budget.ts), which each account's ring joins as a ledger: past
// it, the oldest entries of the whole process go, whichever account holds them, and every account
// keeps at least its newest entry. Small entries keep
// references to what the request brought and the answer's JSON text, and are redacted when read
// (secrets never leave through a listing); large ones are redacted and cut when recorded.
import { createHash } from 'node:crypto';
import type { Store, Account } from '../store/store.js';
import { pathMatches } from '../scenarios/engine.js';
import { LIMITS } from '../limits.js';
import { parse as parseQuery } from 'node:querystring';
import { LEFT_OUT_KEY, partBudget, redact, redactHeaders } from './redact.js';
import type { Ledger, MemoryBudget } from '../budget/memory-budget.js';

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

/**
 * A small request as received: its headers as one text (redact.ts's keptHeaders), the raw query string and
 * the body as JSON text (a string cannot change later, unlike the parsed body the router coerces).
 * Redacted only when read, so answering a request never pays for the copy.
 */
export interface RawRequest {
  kind: 'raw';
  /** keptHeaders: `name:value` lines, names lower-case, credentials already masked. */
  headerLines: string;
  query: string;
  bodyText: string | undefined;
}

/** A large request, copied and redacted at once within its budget (redact.ts). */
export interface CopiedRequest {
  kind: 'copy';
  value: JournalEntry['request'];
}
/** The answer's body as sent (JSON text), or a redacted copy when it is large or was not sent as text. */
export type KeptResponse = { kind: 'raw'; bodyText: string | undefined } | { kind: 'copy'; value: JournalEntry['response'] };

/**
 * What the middleware hands over: the entry's fields, with the request and response as kept, and the
 * time as a number (the account clock's milliseconds): written out as text only when read.
 */
export interface JournalDraft extends Omit<JournalEntry, 'id' | 'at' | 'request' | 'response'> {
  atMs: number;
  request: RawRequest | CopiedRequest;
  response: KeptResponse;
}

/**
 * One recorded entry. Its id (a hash of the seed, the account and the entry's sequence, so seeded
 * runs give the same ids) is worked out on first read: answering a request pays for no hash.
 */
class Stored {
  private idText: string | undefined;

  constructor(
    /** `seed|account|journal|` (one string per account, shared) and the entry's sequence: joined only when the id is read. */
    private readonly idPrefix: string,
    private readonly seq: number,
    /** Its place among every entry the process stores (MemoryBudget.next), for the memory budget. */
    readonly order: number,
    readonly draft: JournalDraft,
    /** The operation's path template, for filtering by template. */
    readonly template: string | null,
    /** The entry's serialised size (an upper estimate for raw entries), counted against the account's journal bytes. */
    readonly bytes: number,
    /** Set when the entry was redacted at once (a large part); else it is redacted on each read. */
    readonly entry?: JournalEntry,
  ) {}

  get id(): string {
    return (this.idText ??= `req_${createHash('sha256').update(`${this.idPrefix}${this.seq}`).digest('hex').slice(0, 20)}`);
  }
}

/** The fields every entry shows, from its draft (the time written out, the kept parts left out). */
function entryFields(stored: Stored): Omit<JournalEntry, 'request' | 'response'> {
  const { draft } = stored;
  return { id: stored.id, at: new Date(draft.atMs).toISOString(), method: draft.method, path: draft.path, operation: draft.operation, status: draft.status, duration_ms: draft.duration_ms };
}

/** Entry fields besides the parts (id, at, method...), with room for JSON quotes and keys. */
const ENTRY_OVERHEAD_BYTES = 320;

/** The lines of a text (none when it is empty). */
function lineCount(text: string): number {
  let count = text ? 1 : 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

/** An upper estimate of a raw entry's serialised size: redaction only shortens, masks and cuts. */
function rawBytes(draft: JournalDraft): number {
  let bytes = ENTRY_OVERHEAD_BYTES + draft.path.length * 2 + (draft.operation?.length ?? 0);
  const { request, response } = draft;
  if (request.kind === 'raw') {
    // Each header: its name and value (JSON may escape a character as \uXXXX: 6 bytes) and 8 for
    // the quotes, colon and comma. The mask ("***") was counted as kept, however short the secret.
    bytes += request.headerLines.length * 2 + lineCount(request.headerLines) * 8;
    bytes += request.query.length * 2 + (request.bodyText?.length ?? 4) * 2;
  }
  if (response.kind === 'raw') bytes += (response.bodyText?.length ?? 4) * 2;
  return bytes;
}

/** The entry as listed: raw parts redacted now (headers, query and body share one budget, the response has its own). */
function materialise(stored: Stored): JournalEntry {
  if (stored.entry) return stored.entry;
  const { request, response } = stored.draft;
  let requestPart: JournalEntry['request'];
  if (request.kind === 'raw') {
    const budget = partBudget();
    requestPart = {
      headers: redactHeaders(request.headerLines, budget),
      query: redact({ ...parseQuery(request.query) }, budget) as Record<string, unknown>,
      body: request.bodyText === undefined ? null : redact(JSON.parse(request.bodyText), budget),
    };
  } else requestPart = request.value;
  const responsePart = response.kind === 'raw'
    ? { body: response.bodyText === undefined ? null : redact(JSON.parse(response.bodyText)) }
    : response.value;
  return withinBudget({ ...entryFields(stored), request: requestPart, response: responsePart }).entry;
}

export interface JournalFilter {
  method?: string;
  path?: string;
  status?: number;
  /** Leave out requests whose User-Agent is exactly this (the command line's own token requests), before the limit. */
  excludeUserAgent?: string;
  limit?: number;
}

/** The User-Agent a kept request was sent with, or undefined. */
function userAgentOf(request: RawRequest | CopiedRequest): string | undefined {
  if (request.kind === 'copy') return request.value.headers['user-agent'];
  const lines = request.headerLines;
  // Where the line begins in `lines` (a newline put in front finds the first line too).
  const at = `\n${lines}`.indexOf(`\n${USER_AGENT}`);
  if (at < 0) return undefined;
  const end = lines.indexOf('\n', at);
  return lines.slice(at + USER_AGENT.length, end < 0 ? undefined : end);
}

const USER_AGENT = 'user-agent:';

/**
 * A fixed-size ring: writing past the end overwrites the oldest entry; `bytes` is what it holds. It is
 * its account's ledger in the memory budget: what it drops on its own (overwritten, over the
 * account's bytes, cleared) it releases there; what the budget evicts goes through evict().
 */
class Ring implements Ledger {
  readonly kind = 'journal';
  heapIndex = -1;
  private readonly slots: Array<Stored | undefined>;
  private head = 0;
  count = 0;
  bytes = 0;

  /** `idPrefix`: `seed|account|journal|`, the start of its entries' id sources (see Stored), one string for them all. */
  constructor(readonly size: number, readonly idPrefix: string, private readonly budget: MemoryBudget) {
    this.slots = new Array<Stored | undefined>(size);
  }

  push(item: Stored): void {
    if (this.count === this.size) {
      const overwritten = this.slots[this.head]?.bytes ?? 0;
      this.bytes -= overwritten;
      this.budget.release(overwritten);
    }
    this.slots[this.head] = item;
    this.head = (this.head + 1) % this.size;
    this.count = Math.min(this.count + 1, this.size);
    this.bytes += item.bytes;
  }

  private oldestSlot(): number {
    return (this.head - this.count + this.size) % this.size;
  }

  /** Forget the oldest entry; answers its bytes. */
  private forgetOldest(): number {
    const oldest = this.oldestSlot();
    const bytes = this.slots[oldest]?.bytes ?? 0;
    this.bytes -= bytes;
    this.slots[oldest] = undefined;
    this.count -= 1;
    return bytes;
  }

  /** Forget the oldest entry (the account's own bytes cap). */
  dropOldest(): void {
    if (this.count === 0) return;
    this.budget.release(this.forgetOldest());
  }

  /** Forget every entry (a DELETE of the journal, a reset): the ring is not used again. */
  discard(): void {
    this.budget.release(this.bytes);
    this.budget.forget(this);
    this.slots.fill(undefined);
    this.count = 0;
    this.bytes = 0;
  }

  /** The budget may take every entry but the newest. */
  evictableOrder(): number {
    return this.count > 1 ? (this.slots[this.oldestSlot()] as Stored).order : Infinity;
  }

  evict(bound: number, wanted: number): { entries: number; bytes: number } {
    let entries = 0;
    let bytes = 0;
    while (this.count > 1 && bytes < wanted && (this.slots[this.oldestSlot()] as Stored).order < bound) {
      bytes += this.forgetOldest();
      entries += 1;
    }
    return { entries, bytes };
  }

  *newestFirst(): IterableIterator<Stored> {
    for (let i = 1; i <= this.count; i++) {
      const item = this.slots[(this.head - i + this.size) % this.size];
      if (item) yield item;
    }
  }
}

const entryBytes = (entry: JournalEntry) => Buffer.byteLength(JSON.stringify(entry));

/**
 * The entry within its serialised budget. The copies in redact.ts keep each part near half of it;
 * what is still over (keys and markers are counted loosely) gives up its largest parts, whole, to a marker.
 */
function withinBudget(entry: JournalEntry): { entry: JournalEntry; bytes: number } {
  let bytes = entryBytes(entry);
  const parts: Array<[string, () => unknown, (v: never) => void]> = [
    ['response body', () => entry.response.body, (v) => { entry.response.body = v; }],
    ['request body', () => entry.request.body, (v) => { entry.request.body = v; }],
    ['query', () => entry.request.query, (v) => { entry.request.query = v; }],
    ['headers', () => entry.request.headers, (v) => { entry.request.headers = v; }],
  ];
  const bySize = parts.map(([name, get, set]) => ({ name, set, size: Buffer.byteLength(JSON.stringify(get()) ?? '') })).sort((a, b) => b.size - a.size);
  for (const part of bySize) {
    if (bytes <= LIMITS.journalEntryBytes) break;
    const marker = `[${part.name} of ${part.size} bytes left out: over the journal's ${LIMITS.journalEntryBytes}-byte entry budget]`;
    part.set((part.name === 'query' || part.name === 'headers' ? { [LEFT_OUT_KEY]: marker } : marker) as never);
    bytes = entryBytes(entry);
  }
  return { entry, bytes };
}

export class Journal {
  private readonly rings = new Map<string, Ring>();
  /** Entry sequence per account: survives a DELETE of the journal, so ids are never reused. */
  private readonly sequences = new Map<string, number>();
  /** Entries of answered requests not recorded yet (their account is being found). */
  private readonly recording = new Set<Promise<void>>();

  constructor(private readonly size: number, private readonly store: Store, private readonly budget: MemoryBudget) {
    store.events.on('accountReset', (account: Account) => {
      this.rings.get(account.id)?.discard();
      this.rings.delete(account.id);
      this.sequences.delete(account.id);
    });
    store.events.on('storeReset', () => {
      for (const ring of this.rings.values()) ring.discard();
      this.rings.clear();
      this.sequences.clear();
    });
  }

  /** Track an entry being recorded, so readers can wait for it. */
  pending(work: Promise<void>): void {
    this.recording.add(work);
    void work.finally(() => this.recording.delete(work));
  }

  /** Resolves once every entry being recorded now is in the journal. */
  async settled(): Promise<void> {
    await Promise.all([...this.recording]);
  }

  get capacity(): number {
    return this.size;
  }

  /**
   * Add an entry (the id is filled in here) and answer its handle (materialise() reads it); a size of 0
   * turns the journal off. A small entry is kept raw and redacted when read; one whose estimate is
   * over the entry budget is redacted and cut now, so its kept size is exact.
   */
  record(account: Account, draft: JournalDraft, template: string | null): Stored | undefined {
    if (this.size <= 0) return undefined;
    let ring = this.rings.get(account.id);
    if (!ring) {
      ring = new Ring(this.size, `${this.store.seed}|${account.id}|journal|`, this.budget);
      this.rings.set(account.id, ring);
    }
    const seq = (this.sequences.get(account.id) ?? 0) + 1;
    this.sequences.set(account.id, seq);
    const { idPrefix } = ring;
    const order = this.budget.next();
    let stored = new Stored(idPrefix, seq, order, draft, template, rawBytes(draft));
    // A part already copied (a large body) or an estimate over the budget: redacted, cut and sized exactly now.
    if (draft.request.kind === 'copy' || draft.response.kind === 'copy' || stored.bytes > LIMITS.journalEntryBytes) {
      const kept = withinBudget(materialise(stored));
      stored = new Stored(idPrefix, seq, order, { ...draft, request: { kind: 'copy', value: kept.entry.request }, response: { kind: 'copy', value: kept.entry.response } }, template, kept.bytes, kept.entry);
    }
    ring.push(stored);
    // The account's total: the oldest entries go first, the newest always stays.
    while (ring.bytes > LIMITS.journalAccountBytes && ring.count > 1) ring.dropOldest();
    // Then the process's: past the budget, the oldest entries of every account go first.
    this.budget.charge(ring, stored.bytes);
    return stored;
  }

  /**
   * The entry from the handle record() answered, for the live stream: its fields at once, its
   * request and response redacted only if someone reads them (the stream sends only the fields).
   */
  announced(stored: Stored): JournalEntry {
    let entry: JournalEntry | undefined;
    const full = () => (entry ??= materialise(stored));
    return {
      ...entryFields(stored),
      get request() { return full().request; },
      get response() { return full().response; },
    };
  }

  /** Entries newest first, filtered; the cost is bounded by the ring size, never by stored data. */
  list(account: Account, filter: JournalFilter = {}): JournalEntry[] {
    const ring = this.rings.get(account.id);
    if (!ring) return [];
    const limit = filter.limit ?? 100;
    const method = filter.method?.toUpperCase();
    const out: JournalEntry[] = [];
    for (const stored of ring.newestFirst()) {
      if (out.length >= limit) break;
      const { draft, template } = stored;
      if (method && draft.method !== method) continue;
      if (filter.status !== undefined && draft.status !== filter.status) continue;
      if (filter.path !== undefined && !pathMatches(filter.path, draft.path, template)) continue;
      if (filter.excludeUserAgent !== undefined && userAgentOf(draft.request) === filter.excludeUserAgent) continue;
      out.push(materialise(stored));
    }
    return out;
  }

  clear(account: Account): number {
    const ring = this.rings.get(account.id);
    const count = ring?.count ?? 0;
    ring?.discard();
    this.rings.delete(account.id);
    return count;
  }
}

