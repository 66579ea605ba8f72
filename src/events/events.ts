// Owns the account event log: every state change records {entity_id, idempotency_key, timestamp,
// topic, data}; what stores more with each event (webhook deliveries) runs in the same unit of work,
// and listeners (the live stream) hear each one once that work commits.
import { EventEmitter } from 'node:events';
import { defineCollection, type Account } from '../store/store.js';

export const TOPICS = [
  'payout_paid', 'payout_processing', 'payout_scheduled', 'payout_failed',
  'customer_created', 'customer_updated', 'customer_archived',
  'payment_succeeded', 'payment_refunded', 'payment_chargeback', 'payment_failed',
  'invoice_created', 'invoice_updated', 'invoice_paid', 'invoice_archived',
  'payment_method_added', 'default_payment_method_changed', 'payment_method_deleted',
] as const;

export type Topic = (typeof TOPICS)[number];

export interface EventRecord {
  id: string;
  entity_id: string;
  idempotency_key: string;
  timestamp: string;
  topic: Topic;
  data: Record<string, unknown>;
}

export const eventLog = defineCollection<EventRecord>('events', ['topic', 'entity_id']);

/** Something that stores more with each event (its webhook deliveries), inside the unit of work that records it. */
export type RecordListener = (account: Account, event: EventRecord) => void;

export class Events extends EventEmitter<{ recorded: [Account, EventRecord] }> {
  private readonly storing: RecordListener[] = [];

  /** Run `listener` for every event, inside the unit of work that records it (so what it stores stays or goes with the event). */
  onRecord(listener: RecordListener): void {
    this.storing.push(listener);
  }

  record(account: Account, topic: Topic, entityId: string, data: Record<string, unknown>): EventRecord {
    const id = account.newId('evt');
    const record: EventRecord = {
      id,
      entity_id: entityId,
      idempotency_key: `${id}_${account.random.hex(8)}`,
      timestamp: account.clock.iso(),
      topic,
      data,
    };
    eventLog(account).insert(record);
    for (const listener of this.storing) listener(account, record);
    // Listeners (webhook delivery, the live stream) hear of it once the work that recorded it commits.
    account.afterCommit(() => this.emit('recorded', account, record));
    return record;
  }
}
