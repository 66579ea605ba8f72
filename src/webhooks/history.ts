// Owns the delivery history: one record per (event, subscription) with its status (pending, sent,
// failed), attempts and last error, and the log of every attempt shown by the control plane.
import { eventLog, type EventRecord, type Topic } from '../events/events.js';
import type { AttemptDrill } from '../faults.js';
import { invalidFields } from '../errors.js';
import { pageParams, timeWindow } from '../http/pagination.js';
import { parseIsoInstant } from '../domain/dates.js';
import { defineCollection, type Account } from '../store/store.js';
import { defineMachine } from '../domain/machine.js';

export type DeliveryStatus = 'pending' | 'sent' | 'failed';

/** A delivery's status moves only through this table: a failed one may still be sent by a retry. */
export const deliveryMachine = defineMachine({
  resource: 'webhook delivery',
  states: ['pending', 'sent', 'failed'] as const,
  events: ['delivered', 'attempt_failed', 'dropped'] as const,
  internal: ['delivered', 'attempt_failed', 'dropped'],
  table: {
    pending: { delivered: 'sent', attempt_failed: 'failed', dropped: 'failed' },
    failed: { delivered: 'sent', attempt_failed: 'failed', dropped: 'failed' },
    sent: {},
  },
});

/** One event on its way to one subscription: the unit of the account's ordered queue. */
export interface DeliveryRecord {
  id: string;
  /** The event log entry this delivery carries (its body is built from it, never copied). */
  event_id: string;
  topic: Topic;
  timestamp: string;
  subscription_id: string;
  endpoint_url: string;
  status: DeliveryStatus;
  attempts: number;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  /** Copies to send once delivered, asked for when the event was fired (POST /_sandbox/events `duplicate`); absent: the scenarios decide. */
  duplicates?: number;
}

/**
 * The drill that shaped an attempt, named after its scenario action: a copy of a delivered event
 * (and the delivery it copies), an answer counted as a time-out, a wrong secret.
 */
export type Drill = 'duplicate_delivery' | AttemptDrill;

/** One attempt, as stored; GET /_sandbox/webhooks/deliveries lists it through attemptView. */
export interface AttemptRecord {
  id: string;
  /** The event's idempotency_key (what receivers see). */
  event_id: string;
  topic: Topic;
  subscription_id: string;
  url: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  at: string;
  duration_ms: number;
  next_attempt_at: string | null;
  /** Stored only on a drill's attempts (most attempts are not: the history's memory stays as it was). */
  drill?: Drill;
  /** On a copy sent by a duplicate drill: the id of the attempt that delivered the event first. */
  duplicate_of?: string;
}

/** An attempt as the control plane and the live stream show it: every field present, null when not set. */
export function attemptView(attempt: AttemptRecord) {
  return { ...attempt, drill: attempt.drill ?? null, duplicate_of: attempt.duplicate_of ?? null };
}

// Indexed by topic and status (status changes go through Collection.update, which keeps the index).
// event_id: the deliveries of one event (a duplicated event's); made on first use like the others.
export const deliveries = defineCollection<DeliveryRecord>('webhook_deliveries', ['topic', 'status', 'event_id']);
export const attempts = defineCollection<AttemptRecord>('webhook_attempts', ['topic', 'event_id']);

/** The delivery body: exactly the fields the spec lists. */
export function deliveryBody(event: EventRecord) {
  return { entity_id: event.entity_id, idempotency_key: event.idempotency_key, timestamp: event.timestamp, topic: event.topic, data: event.data };
}

export function eventOf(account: Account, delivery: DeliveryRecord): EventRecord | undefined {
  return eventLog(account).get(delivery.event_id);
}

/** A history record: the event as delivered, plus the delivery's state. */
export function historyView(account: Account, d: DeliveryRecord) {
  const event = eventOf(account, d);
  return {
    id: d.id,
    event_id: d.event_id,
    subscription_id: d.subscription_id,
    endpoint_url: d.endpoint_url,
    entity_id: event?.entity_id ?? '',
    idempotency_key: event?.idempotency_key ?? d.event_id,
    topic: d.topic,
    timestamp: d.timestamp,
    status: d.status,
    attempts: d.attempts,
    last_error: d.last_error,
    last_attempt_at: d.last_attempt_at,
    next_attempt_at: d.next_attempt_at,
    data: event?.data ?? {},
  };
}

export interface HistoryQuery {
  limit?: number;
  after?: string;
  before?: string;
  topic?: Topic;
  status?: DeliveryStatus;
  from_date?: string;
  to_date?: string;
}

/**
 * from_date and to_date as the spec says, ISO 8601: a date-time (no offset means UTC) or a bare date
 * (YYYY-MM-DD) covering its whole UTC day, from_date from its first millisecond, to_date to its last.
 */
function dateBound(query: HistoryQuery, field: 'from_date' | 'to_date'): number | undefined {
  const value = query[field];
  if (value === undefined || value === '') return undefined;
  const ms = parseIsoInstant(value, field === 'to_date');
  if (ms === undefined) throw invalidFields({ [field]: 'must be an ISO 8601 date or date-time that exists (2026-11-22, 2026-11-22T18:00:00, 2026-11-22T18:00:00+01:00)' });
  return ms;
}

export function listHistory(account: Account, query: HistoryQuery) {
  const window = timeWindow(dateBound(query, 'from_date'), dateBound(query, 'to_date'));
  // Walk the status index when a status is asked for (the common "what failed?" question), else topic's.
  const where = query.status ? { field: 'status', value: query.status } : query.topic ? { field: 'topic', value: query.topic } : undefined;
  const topic = query.status ? query.topic : undefined;
  const filter = topic || window
    ? (d: DeliveryRecord) => (!topic || d.topic === topic) && (!window || window(d.timestamp))
    : undefined;
  const page = deliveries(account).page({ ...pageParams(query), filter, where });
  return { ...page, data: page.data.map((d) => historyView(account, d)) };
}

/** Attempts newest first, narrowed by topic and/or event (idempotency_key), walking an index when one applies. */
export function listAttempts(account: Account, query: { topic?: string; event_id?: string; limit?: number }): Array<ReturnType<typeof attemptView>> {
  const limit = query.limit ?? 100;
  const where = query.event_id ? { field: 'event_id', value: query.event_id } : query.topic ? { field: 'topic', value: query.topic } : undefined;
  const found: Array<ReturnType<typeof attemptView>> = [];
  for (const attempt of attempts(account).newest(where)) {
    if (found.length >= limit) break;
    if (query.topic && attempt.topic !== query.topic) continue;
    found.push(attemptView(attempt));
  }
  return found;
}
