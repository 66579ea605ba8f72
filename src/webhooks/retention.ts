// Owns the retention of the webhook history: settled deliveries (GET /webhooks/events), the event log
// and the delivery attempts (GET /_sandbox/webhooks/deliveries) keep at most
// LIMITS.webhookHistoryEntries each and nothing older than LIMITS.webhookHistoryDays on the account
// clock, oldest dropped first (past the count, in batches: see keptAfterDrop). A queued delivery
// (pending, or failed and awaiting a retry) and the event it carries are never dropped: pruning
// stops at the head of the queue.
import { eventLog } from '../events/events.js';
import { LIMITS } from '../limits.js';
import { DAY_MS } from '../clock/durations.js';
import type { Account } from '../store/store.js';
import type { Collection } from '../store/collection.js';
import { attempts, deliveries } from './history.js';


/**
 * Once a collection is over the count, its oldest go down to a sixteenth below it in one pass (9,375
 * of 10,000), not one for each new entry: a drop in a loop costs a fraction of one made in each
 * request, where the rest of the request has pushed the collection out of the caches first. A count
 * under 16 is kept exactly.
 */
export function keptAfterDrop(count: number): number {
  return count - Math.floor(count / 16);
}

/**
 * When each collection's oldest entry was made (ms on the account clock), by its id: the check made
 * after every event then reads neither the entry nor its time text while the oldest stays the same.
 */
const oldestMade = new WeakMap<Collection<{ id: string }>, { id: string; ms: number }>();

/** Drop from the oldest end while the collection is over its count or its oldest entry is too old, up to the entry `keep` names. */
function dropOldest<T extends { id: string }>(collection: Collection<T>, time: (item: T) => string, cutoffMs: number, keep: string | undefined): void {
  if (collection.size > LIMITS.webhookHistoryEntries) {
    collection.dropOldest(collection.size - keptAfterDrop(LIMITS.webhookHistoryEntries), keep);
  } else {
    const known = oldestMade.get(collection);
    if (!collection.size || (known !== undefined && known.id === collection.oldestId() && known.ms >= cutoffMs)) return;
  }
  // Then by age, counted first and dropped in one pass (many at once after a clock moved on).
  let tooOld = 0;
  for (const item of collection.values()) {
    if (item.id === keep) break;
    const ms = Date.parse(time(item));
    if (ms >= cutoffMs) {
      oldestMade.set(collection, { id: item.id, ms });
      break;
    }
    tooOld += 1;
  }
  if (tooOld) collection.dropOldest(tooOld, keep);
}

// Module-level, not per call: the retention runs after every write that records an event.
const deliveryTime = (d: { timestamp: string }) => d.timestamp;
const eventTime = (e: { timestamp: string }) => e.timestamp;
const attemptTime = (a: { at: string }) => a.at;

/**
 * Apply the retention; costs O(1) when nothing is due, O(dropped) otherwise. `queueHead` is the
 * oldest queued delivery: every unsettled delivery is in the queue, which is in creation order, so
 * the deliveries before its head are settled.
 */
export function pruneWebhookHistory(account: Account, queueHead: string | undefined): void {
  const cutoff = account.clock.nowMs() - LIMITS.webhookHistoryDays * DAY_MS;
  const history = deliveries(account);
  dropOldest(history, deliveryTime, cutoff, queueHead);
  // Deliveries are made in event order: events before the oldest kept delivery's event are no longer carried.
  dropOldest(eventLog(account), eventTime, cutoff, history.oldest()?.event_id);
  dropOldest(attempts(account), attemptTime, cutoff, undefined);
}
