// Owns the webhook history's share of the process-wide memory budget (src/budget/memory-budget.ts):
// per account, one ledger for each of the event log, the delivery history and the delivery attempts,
// holding each stored entry's id, order (its place among every entry of the process) and serialised
// size, oldest first, in step with its collection. Past the budget, the budget evicts the oldest
// entries of the process through evict(): a drop from the collection's oldest end, in a unit of work
// of the account (the store's retention path, Collection.dropOldest), never past what retention.ts
// keeps: a queued delivery (the queue's head and all after it), and the events of kept deliveries.
// Each account keeps its newest entry of each.
//
// In step how: the ledgers are brought up to date after each recorded event and each delivery
// attempt (sync), reading only what changed at either end of the collection (retention and eviction
// drop from the oldest end; inserts land at the newest end; a rolled-back insert leaves it); a
// collection that changed otherwise is read again whole, a rare path. Sizes are those of the entry as
// first stored (a delivery's later status changes are not counted again).
import type { Deps } from '../deps.js';
import { eventLog } from '../events/events.js';
import type { Account } from '../store/store.js';
import type { Collection } from '../store/collection.js';
import { itemText } from '../store/cold-item.js';
import type { Ledger, LedgerKind, MemoryBudget } from '../budget/memory-budget.js';
import { memoryBudget } from '../budget/memory-budget.js';
import { attempts, deliveries } from './history.js';
import { queueHead } from './queue.js';

type HistoryKind = Exclude<LedgerKind, 'journal'>;

const COLLECTIONS: Record<HistoryKind, (account: Account) => Collection<{ id: string }>> = {
  events: eventLog,
  deliveries,
  attempts,
};

/**
 * The stored names of those collections (events.ts, history.ts), to read what a data file loaded
 * without making the collections: made over cold objects, a collection builds its indexes at once.
 */
const STORED_NAMES: Record<HistoryKind, string> = { events: 'events', deliveries: 'webhook_deliveries', attempts: 'webhook_attempts' };

/** Cleared entries at the front of a ledger's lists are cut once this many and half of them. */
const CUT_MIN = 256;

const serialisedBytes = (item: unknown) => Buffer.byteLength(JSON.stringify(item));

class HistoryLedger implements Ledger {
  heapIndex = -1;
  /** Entries oldest first from `head`: ids (the collection's own strings), orders and sizes side by side. */
  private ids: string[] = [];
  private orders: number[] = [];
  private sizes: number[] = [];
  private head = 0;
  /** Set once the account was reset or the sandbox was: the ledger holds nothing and is not used again. */
  private discarded = false;

  constructor(readonly kind: HistoryKind, private readonly owner: AccountHistory, private readonly budget: MemoryBudget) {}

  private get collection(): Collection<{ id: string }> {
    return COLLECTIONS[this.kind](this.owner.account);
  }

  get count(): number {
    return this.ids.length - this.head;
  }

  private push(id: string, bytes: number): void {
    this.ids.push(id);
    this.orders.push(this.budget.next());
    this.sizes.push(bytes);
    this.budget.add(bytes);
  }

  /** Forget the oldest entry (gone from the collection); answers its bytes, not released. */
  private shift(): number {
    const bytes = this.sizes[this.head];
    this.head += 1;
    if (this.head >= CUT_MIN && this.head * 2 >= this.ids.length) {
      this.ids.splice(0, this.head);
      this.orders.splice(0, this.head);
      this.sizes.splice(0, this.head);
      this.head = 0;
    }
    return bytes;
  }

  /** Forget the newest entry (a rolled-back insert). */
  private pop(): void {
    this.ids.pop();
    this.orders.pop();
    this.budget.release(this.sizes.pop() as number);
  }

  /** Forget everything (the account or the sandbox was reset). */
  discard(): void {
    let bytes = 0;
    for (let i = this.head; i < this.sizes.length; i++) bytes += this.sizes[i];
    this.budget.release(bytes);
    this.budget.forget(this);
    this.ids = [];
    this.orders = [];
    this.sizes = [];
    this.head = 0;
    this.discarded = true;
  }

  /**
   * Count what a data file loaded, oldest first, from the stored data itself: an object a data file
   * left as text (cold, see cold-item.ts) is sized from its text, never parsed. Bulk work at start.
   */
  adopt(): void {
    const data = this.owner.account.data.collections[STORED_NAMES[this.kind]];
    if (!data) return;
    for (const id of data.order) {
      const item = data.items.get(id);
      if (item !== undefined) this.push(id, Buffer.byteLength(itemText(item, data.cold)));
    }
  }

  /** Bring the ledger in step with its collection (see the file's header). */
  sync(): void {
    if (this.discarded) return;
    const collection = this.collection;
    const oldest = collection.oldestId();
    const count = this.count;
    if (count === collection.size && (count ? this.ids[this.head] : undefined) === oldest) return;
    // The oldest end: what retention or the budget dropped.
    while (this.count && this.ids[this.head] !== oldest) {
      // The collection holds an entry older than any counted (a rolled-back drop put it back): count it all again.
      if (collection.get(this.ids[this.head]) !== undefined) return this.recount();
      this.budget.release(this.shift());
    }
    // The newest end: a rolled-back insert first, then what is new.
    while (this.count && collection.get(this.ids[this.ids.length - 1]) === undefined) this.pop();
    const known = this.count ? this.ids[this.ids.length - 1] : undefined;
    const fresh: Array<{ id: string }> = [];
    for (const item of collection.newest()) {
      if (item.id === known) break;
      fresh.push(item);
    }
    for (let i = fresh.length - 1; i >= 0; i--) this.push(fresh[i].id, serialisedBytes(fresh[i]));
  }

  private recount(): void {
    let bytes = 0;
    for (let i = this.head; i < this.sizes.length; i++) bytes += this.sizes[i];
    this.budget.release(bytes);
    this.ids = [];
    this.orders = [];
    this.sizes = [];
    this.head = 0;
    this.adopt();
  }

  /** The entry eviction must stop at (it and everything after stays), as retention.ts keeps it. */
  private stopAt(): string | undefined {
    const { account } = this.owner;
    if (this.kind === 'deliveries') return queueHead(account);
    if (this.kind === 'events') return deliveries(account).oldest()?.event_id;
    return undefined;
  }

  /**
   * The oldest entry's order, held or not: whether it is held (a queued delivery, an event a kept
   * delivery carries) is found by evict(), which then takes nothing and the budget sets the ledger
   * aside until it is touched. Cheap, and it makes no collection (at start, over a data file's cold
   * objects, making one builds its indexes).
   */
  evictableOrder(): number {
    return this.discarded || this.count < 2 ? Infinity : this.orders[this.head];
  }

  evict(bound: number, wanted: number): { entries: number; bytes: number } {
    const none = { entries: 0, bytes: 0 };
    if (this.discarded) return none;
    this.sync();
    const stopAt = this.stopAt();
    let count = 0;
    let bytes = 0;
    // Never the newest entry.
    for (let i = this.head; i < this.ids.length - 1 && bytes < wanted && this.orders[i] < bound && this.ids[i] !== stopAt; i++) {
      count += 1;
      bytes += this.sizes[i];
    }
    if (!count) return none;
    const { account } = this.owner;
    let dropped: number;
    try {
      // The store's retention path, as one unit of work of the account: with --data, each drop is logged.
      dropped = account.transaction(() => this.collection.dropOldest(count, stopAt));
    } catch (error) {
      this.owner.deps.log.error({ err: error, account: account.id, kind: this.kind }, 'memory budget: history not evicted');
      return none;
    }
    let freed = 0;
    for (let i = 0; i < dropped; i++) freed += this.shift();
    // Events held by the deliveries that went may go now.
    if (this.kind === 'deliveries') this.budget.touch(this.owner.ledgers.events);
    return { entries: dropped, bytes: freed };
  }
}

/** One account's three history ledgers. */
class AccountHistory {
  readonly ledgers: Record<HistoryKind, HistoryLedger>;

  constructor(readonly account: Account, readonly deps: Deps, budget: MemoryBudget) {
    this.ledgers = {
      events: new HistoryLedger('events', this, budget),
      deliveries: new HistoryLedger('deliveries', this, budget),
      attempts: new HistoryLedger('attempts', this, budget),
    };
  }

  discard(): void {
    for (const ledger of Object.values(this.ledgers)) ledger.discard();
  }
}

/**
 * The history's ledgers of every account, kept in step after each recorded event and each delivery
 * attempt. Installed after the webhook queue, so that its listener runs after the queue's (which
 * makes the event's deliveries and applies the retention).
 */
export class HistoryBudget {
  private readonly accounts = new Map<string, AccountHistory>();
  private readonly budget: MemoryBudget;

  constructor(private readonly deps: Deps) {
    this.budget = memoryBudget(deps);
  }

  install(): void {
    const { store, events, activity } = this.deps;
    // What a data file brought counts from the start (older than anything stored since).
    for (const account of store.allAccounts()) this.count(account);
    this.budget.enforce();
    events.on('recorded', (account) => this.synced(account));
    activity.on('attempt', (account) => this.synced(account));
    store.events.on('accountReset', (account: Account) => {
      this.accounts.get(account.id)?.discard();
      this.accounts.delete(account.id);
      // A restore brought a history: counted as a data file's is at start (newer than anything held).
      if (Object.keys(account.data.collections).length) this.adopt(account);
    });
    store.events.on('storeReset', () => {
      for (const history of this.accounts.values()) history.discard();
      this.accounts.clear();
    });
  }

  /** Count the history an account holds already (a data file's, a restored snapshot's). */
  private count(account: Account): void {
    for (const ledger of Object.values(this.of(account).ledgers)) {
      ledger.adopt();
      this.budget.touch(ledger);
    }
  }

  /** The same, then hold the process to the budget; never fails the restore that caused it. */
  private adopt(account: Account): void {
    try {
      this.count(account);
      this.budget.enforce();
    } catch (error) {
      this.deps.log.error({ err: error, account: account.id }, 'memory budget: restored history not counted');
    }
  }

  private of(account: Account): AccountHistory {
    let history = this.accounts.get(account.id);
    // A full reset makes new Account objects: a ledger never outlives its account's.
    if (history && history.account !== account) {
      history.discard();
      history = undefined;
    }
    if (!history) {
      history = new AccountHistory(account, this.deps, this.budget);
      this.accounts.set(account.id, history);
    }
    return history;
  }

  /** Bring the account's ledgers in step, then hold the process to the budget. */
  synced(account: Account): void {
    try {
      const { events, deliveries: sent, attempts: tried } = this.of(account).ledgers;
      // Written out, not a loop over Object.values: this runs after every recorded event.
      events.sync();
      sent.sync();
      tried.sync();
      this.budget.touch(events);
      this.budget.touch(sent);
      this.budget.touch(tried);
      this.budget.enforce();
    } catch (error) {
      // Counting must never fail the request or the delivery run that caused it.
      this.deps.log.error({ err: error, account: account.id }, 'memory budget: history not counted');
    }
  }
}
