// Owns the process-wide memory budget of the per-account structures that grow with traffic (the
// request journal, the webhook history: settled deliveries, the event log, delivery attempts). Each
// account's per-account caps still apply; this bounds their sum over every account, in serialised
// bytes: past the budget, the oldest entries of the whole process go first, whichever account holds
// them, until the total is a little under it again.
//
// How it stays cheap: every entry gets a process-wide order number when it is stored (next()). Each
// structure of each account is a Ledger that knows the order of its oldest entry; the budget keeps
// the ledgers in a min-heap by that order. The heap's keys are lazy: a ledger that drops entries on
// its own (a full ring, a retention, a reset) does not tell the heap, since its oldest order can only
// grow; the key is corrected when the ledger reaches the top. So storing or dropping an entry costs
// O(1), and an eviction O(log ledgers) per batch of entries taken from one ledger. Nothing ever
// walks every account.
import { LIMITS } from '../limits.js';
import type { ServiceRegistry } from '../services.js';

export const MEMORY_BUDGET = 'memoryBudget';

/** What the budget calls the structures it counts, in its figures. */
export type LedgerKind = 'journal' | 'events' | 'deliveries' | 'attempts';

/** One structure of one account, as the budget sees it: entries in order, oldest first. */
export interface Ledger {
  readonly kind: LedgerKind;
  /**
   * The order of the oldest entry the budget may drop: Infinity when none may go (empty, only the
   * newest left, which every account keeps, or the oldest is held: a queued delivery).
   */
  evictableOrder(): number;
  /**
   * Drop the oldest entries whose order is below `bound`, oldest first, until `wanted` bytes are
   * freed (at least one entry when the oldest may go); answers what went. The bytes freed are the
   * budget's to subtract: the ledger does not report them through release().
   */
  evict(bound: number, wanted: number): { entries: number; bytes: number };
  /** Where the ledger is in the budget's heap, -1 when it is not: set by the budget only. */
  heapIndex: number;
}

export interface BudgetFigures {
  /** The budget, in serialised bytes. */
  limit: number;
  /** Bytes counted now. */
  bytes: number;
  /** The most ever counted once an eviction had run (what the budget held the process to). */
  peak: number;
  /** Entries and bytes evicted by the budget (not by per-account caps), by kind. */
  evicted: Record<LedgerKind, { entries: number; bytes: number }>;
  /** Ledgers (an account's journal, event log, history or attempts) in the budget's heap: at most every one there is. */
  ledgers: number;
}

/** Past the budget, evictions go this far below it at once: a batch per pass, not one entry per write. */
function slackOf(limit: number): number {
  return Math.min(Math.floor(limit / 64), LIMITS.memoryBudgetSlackBytes);
}

export class MemoryBudget {
  private total = 0;
  private peakBytes = 0;
  private sequence = 0;
  private evicting = false;
  private readonly slack: number;
  /** The min-heap: ledgers and their (lazy) keys, side by side. */
  private readonly ledgers: Ledger[] = [];
  private readonly keys: number[] = [];
  /** Ledgers touched while an eviction runs: queued once it is done with the heap's top. */
  private readonly deferred: Ledger[] = [];
  private readonly forgotten: Ledger[] = [];
  private readonly evictedBy: BudgetFigures['evicted'] = {
    journal: { entries: 0, bytes: 0 },
    events: { entries: 0, bytes: 0 },
    deliveries: { entries: 0, bytes: 0 },
    attempts: { entries: 0, bytes: 0 },
  };

  constructor(readonly limit: number) {
    this.slack = slackOf(limit);
  }

  /** The order number of an entry being stored now: increasing over the whole process. */
  next(): number {
    this.sequence += 1;
    return this.sequence;
  }

  /** Count `bytes` of a new entry of `ledger` (stored already), then evict if the total is past the budget. */
  charge(ledger: Ledger, bytes: number): void {
    this.total += bytes;
    this.touch(ledger);
    this.enforce();
  }

  /** Count bytes of entries stored (the ledger is touched and the budget enforced by the caller, once for a batch). */
  add(bytes: number): void {
    this.total += bytes;
  }

  /** A ledger dropped entries on its own (its per-account cap, a retention, a reset). */
  release(bytes: number): void {
    this.total -= bytes;
  }

  /** Evict if the total is past the budget. */
  enforce(): void {
    if (this.total > this.limit) this.evict();
    if (this.total > this.peakBytes) this.peakBytes = this.total;
  }

  /** The ledger may have an entry to give again (it gained one, or what held its oldest has gone). */
  touch(ledger: Ledger): void {
    if (ledger.heapIndex >= 0) return;
    if (this.evicting) {
      this.deferred.push(ledger);
      return;
    }
    const key = ledger.evictableOrder();
    if (key !== Infinity) this.push(ledger, key);
  }

  /**
   * The ledger is gone (its account or the sandbox was reset, a journal cleared): out of the heap now,
   * so that resets, however many, leave nothing behind in it. Its bytes were released by the ledger.
   */
  forget(ledger: Ledger): void {
    const at = ledger.heapIndex;
    if (at < 0) return;
    // The eviction loop works on the heap's top: taken out once it is done with it.
    if (this.evicting) this.forgotten.push(ledger);
    else this.removeAt(at);
  }

  get bytes(): number {
    return this.total;
  }

  figures(): BudgetFigures {
    const evicted = Object.fromEntries(Object.entries(this.evictedBy).map(([kind, counts]) => [kind, { ...counts }])) as BudgetFigures['evicted'];
    return { limit: this.limit, bytes: this.total, peak: this.peakBytes, evicted, ledgers: this.keys.length };
  }

  /**
   * Evict the oldest entries of the process until the total is `slack` under the budget, or until
   * nothing more may go (every ledger down to its newest entry or held). Each step takes, from the
   * ledger at the top, every entry older than the next ledger's key (a lower bound of that ledger's
   * oldest): so entries leave in order across accounts.
   */
  private evict(): void {
    if (this.evicting) return;
    this.evicting = true;
    const target = this.limit - this.slack;
    try {
      while (this.total > target && this.keys.length) {
        const ledger = this.ledgers[0];
        const key = this.keys[0];
        const oldest = ledger.evictableOrder();
        if (oldest === Infinity) this.pop();
        else if (oldest > key) this.replaceTop(oldest);
        else {
          const gone = ledger.evict(this.secondKey(), this.total - target);
          this.total -= gone.bytes;
          const counts = this.evictedBy[ledger.kind];
          counts.entries += gone.entries;
          counts.bytes += gone.bytes;
          const after = ledger.evictableOrder();
          // Nothing went and the oldest is the same: held (a queued delivery); out until touched.
          if (after === Infinity || (!gone.entries && after === oldest)) this.pop();
          else this.replaceTop(after);
        }
        this.queueDeferred();
      }
    } finally {
      this.evicting = false;
      this.queueDeferred();
    }
  }

  private queueDeferred(): void {
    const evicting = this.evicting;
    this.evicting = false;
    while (this.forgotten.length) this.forget(this.forgotten.pop() as Ledger);
    while (this.deferred.length) this.touch(this.deferred.pop() as Ledger);
    this.evicting = evicting;
  }

  /** The smallest key below the top (a lower bound of every other ledger's oldest), Infinity when alone. */
  private secondKey(): number {
    const { keys } = this;
    if (keys.length < 2) return Infinity;
    return keys.length < 3 ? keys[1] : Math.min(keys[1], keys[2]);
  }

  private push(ledger: Ledger, key: number): void {
    this.ledgers.push(ledger);
    this.keys.push(key);
    this.siftUp(this.keys.length - 1);
  }

  private pop(): void {
    this.removeAt(0);
  }

  /** Take the ledger at `at` out of the heap: the last one takes its place and moves up or down. */
  private removeAt(at: number): void {
    const { ledgers, keys } = this;
    ledgers[at].heapIndex = -1;
    const lastLedger = ledgers.pop() as Ledger;
    const lastKey = keys.pop() as number;
    if (at === keys.length) return;
    ledgers[at] = lastLedger;
    keys[at] = lastKey;
    lastLedger.heapIndex = at;
    if (at > 0 && keys[(at - 1) >> 1] > lastKey) this.siftUp(at);
    else this.siftDown(at);
  }

  private replaceTop(key: number): void {
    this.keys[0] = key;
    this.siftDown(0);
  }

  private siftUp(at: number): void {
    const { ledgers, keys } = this;
    const ledger = ledgers[at];
    const key = keys[at];
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (keys[parent] <= key) break;
      ledgers[at] = ledgers[parent];
      keys[at] = keys[parent];
      ledgers[at].heapIndex = at;
      at = parent;
    }
    ledgers[at] = ledger;
    keys[at] = key;
    ledger.heapIndex = at;
  }

  private siftDown(at: number): void {
    const { ledgers, keys } = this;
    const ledger = ledgers[at];
    const key = keys[at];
    const size = keys.length;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && keys[child + 1] < keys[child]) child += 1;
      if (keys[child] >= key) break;
      ledgers[at] = ledgers[child];
      keys[at] = keys[child];
      ledgers[at].heapIndex = at;
      at = child;
    }
    ledgers[at] = ledger;
    keys[at] = key;
    ledger.heapIndex = at;
  }
}

/** The sandbox's budget (made on first use, from the configuration): the journal and the webhook history share it. */
export function memoryBudget(deps: { config: { memoryBudgetBytes: number }; services: ServiceRegistry }): MemoryBudget {
  let budget = deps.services.get(MEMORY_BUDGET);
  if (!budget) {
    budget = new MemoryBudget(deps.config.memoryBudgetBytes);
    deps.services.set(MEMORY_BUDGET, budget);
  }
  return budget;
}
