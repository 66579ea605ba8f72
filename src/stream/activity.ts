// Owns the activity bus: what happens in an account besides its event log, announced from small emit
// points (a webhook delivery attempt in the queue, a request journaled, a clock advanced) so the live
// stream (GET /_sandbox/stream) can push it without those modules knowing about streams.
import { EventEmitter } from 'node:events';
import type { Account } from '../store/store.js';
import type { AttemptRecord, DeliveryRecord } from '../webhooks/history.js';
import type { JournalEntry } from '../journal/journal.js';

export interface ActivityEvents {
  /** One delivery attempt was recorded (its outcome and the delivery it belongs to). */
  attempt: [Account, AttemptRecord, DeliveryRecord];
  /** One API request was journaled: the entry is made only when a listener asks for it (most requests have no stream open). */
  request: [Account, () => JournalEntry];
  /** The account clock was advanced through the control plane. */
  clock: [Account];
}

export class Activity extends EventEmitter<ActivityEvents> {}
