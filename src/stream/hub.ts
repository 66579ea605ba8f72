// Owns the live stream of an account (GET /_sandbox/stream): Server-Sent Events pushed as things
// happen — `event` (a webhook event recorded), `delivery` (an attempt), `request` (a journaled API
// request), `clock` (an advance) — with a `ready` event first, heartbeat comments, a cap on open
// streams, and a per-connection buffer cap: a client that stops reading is cut, never buffered
// without end. Shared by the CLI (`listen`, `requests --follow`) and any web inspector.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Deps } from '../deps.js';
import type { EventRecord } from '../events/events.js';
import { ApiError, Errors, invalidFields } from '../errors.js';
import { documentOperations } from '../http/openapi.js';
import type { JournalEntry } from '../journal/journal.js';
import { LIMITS } from '../limits.js';
import { DEFAULT_PARTNER_ID } from '../auth/partners.js';
import type { Account } from '../store/store.js';
import { eventOf, type AttemptRecord, type DeliveryRecord } from '../webhooks/history.js';
import { addForwarder, removeForwarder, type ForwardSpec } from './forwarders.js';

export const STREAM_TYPES = ['event', 'delivery', 'request', 'clock'] as const;
export type StreamType = (typeof STREAM_TYPES)[number];

/** What the hub needs of a response: a writable that reports its backlog (http.ServerResponse is one). */
export interface StreamSink {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string): boolean;
  end(): unknown;
  destroy(): unknown;
  readonly writableLength: number;
  readonly destroyed: boolean;
  on(event: 'close', listener: () => void): unknown;
}

export interface StreamOptions {
  /** Bytes waiting to be sent to one client before it is cut. */
  bufferBytes: number;
  /** Open streams per server; one more answers 429. */
  maxStreams: number;
  /** Open streams of one partner (both environments); one more answers 429. */
  maxStreamsPerPartner: number;
  /** Of maxStreams, the slots only the default partner (the web inspector's and `listen`'s usual account) may take. */
  defaultPartnerSlots: number;
  /** A comment line this often (real time) keeps proxies and idle clients from closing the stream. */
  heartbeatMs: number;
}

interface Connection {
  id: string;
  partnerId: string;
  environment: Account['environment'];
  accountId: string;
  types: ReadonlySet<StreamType>;
  sink: StreamSink;
  forward?: { spec: ForwardSpec; subscriptionIds: string[] };
}

export function parseTypes(raw: string | undefined): Set<StreamType> {
  if (raw === undefined) return new Set(STREAM_TYPES);
  const asked = raw.split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = asked.filter((t) => !(STREAM_TYPES as readonly string[]).includes(t));
  if (!asked.length || unknown.length) {
    throw invalidFields({ types: `must be a comma-separated list of ${STREAM_TYPES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}` });
  }
  return new Set(asked as StreamType[]);
}

function eventMessage(event: EventRecord) {
  return { id: event.id, idempotency_key: event.idempotency_key, topic: event.topic, entity_id: event.entity_id, timestamp: event.timestamp, data: event.data };
}

let templates: Map<string, string> | undefined;

/** The journal entry's summary, with its operation's path template (for filters like the journal's `path`). */
function requestMessage(entry: JournalEntry) {
  templates ??= new Map(documentOperations().map((o) => [o.operationId, o.path]));
  const template = entry.operation ? templates.get(entry.operation) ?? null : null;
  return { id: entry.id, at: entry.at, method: entry.method, path: entry.path, template, operation: entry.operation, status: entry.status, duration_ms: entry.duration_ms };
}

export class StreamHub {
  readonly options: StreamOptions = {
    bufferBytes: LIMITS.streamBufferBytes,
    maxStreams: LIMITS.streamConnections,
    maxStreamsPerPartner: LIMITS.streamConnectionsPerPartner,
    defaultPartnerSlots: LIMITS.streamSlotsKeptForDefaultPartner,
    heartbeatMs: LIMITS.streamHeartbeatMs,
  };
  private readonly connections = new Map<string, Connection>();
  private readonly byAccount = new Map<string, Set<Connection>>();
  /** Open streams per partner (both environments), for the per-partner cap. */
  private readonly byPartner = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | undefined;
  private sequence = 0;
  private closing = false;

  constructor(private readonly deps: Deps) {}

  install(): void {
    const { events, activity, store } = this.deps;
    // The emitters call listeners inside the webhook queue and the journal: a stream problem must
    // never reach them (a throw in the queue would pause the account's deliveries).
    const safe = <A extends unknown[]>(listener: (...args: A) => void) => (...args: A) => {
      try {
        listener(...args);
      } catch (error) {
        this.deps.log.error({ err: error }, 'live stream message not sent');
      }
    };
    // Each message is made only when an open stream of the account wants its type: every write
    // records events and every delivery attempts, with no stream open most of the time.
    events.on('recorded', safe((account, event) => this.publish(account, 'event', () => eventMessage(event))));
    activity.on('attempt', safe((account, attempt, delivery) => this.publish(account, 'delivery', () => this.deliveryMessage(account, attempt, delivery))));
    activity.on('request', safe((account, entry) => this.publish(account, 'request', () => requestMessage(entry()))));
    activity.on('clock', safe((account) => this.publish(account, 'clock', () => ({ now: account.clock.iso(), offset_seconds: account.clock.offsetMs / 1000 }))));
    // A reset wipes the account's subscriptions: the forwarders of its open streams are made again.
    store.events.on('accountReset', (account: Account) => this.refreshForwarders((c) => c.accountId === account.id));
    // After a full reset, once the default partner is made again (a reset step).
    store.onResetAll(() => this.refreshForwarders(() => true));
  }

  get open(): number {
    return this.connections.size;
  }

  /** Open streams of one partner. */
  openFor(partnerId: string): number {
    return this.byPartner.get(partnerId) ?? 0;
  }

  /**
   * Refuse a new stream of the partner with 429 past any of the three caps, the message naming the
   * one that refused: the server's, the partner's, or (for any other partner) the slots left once
   * those kept for the default partner are set aside. One partner can then never take every slot,
   * and the default partner always finds one of its own.
   */
  private checkSlots(partnerId: string): void {
    const { maxStreams, maxStreamsPerPartner } = this.options;
    const kept = Math.min(this.options.defaultPartnerSlots, maxStreams);
    if (this.connections.size >= maxStreams) {
      throw new ApiError(Errors.tooManyStreams, { message: `At most ${maxStreams} streams may be open at once on this sandbox; close one first.` });
    }
    if (this.openFor(partnerId) >= maxStreamsPerPartner) {
      throw new ApiError(Errors.tooManyStreams, { message: `Partner ${partnerId} has ${maxStreamsPerPartner} streams open, the most one partner may have at once (of ${maxStreams} on this sandbox); close one first.` });
    }
    if (partnerId !== DEFAULT_PARTNER_ID && this.connections.size - this.openFor(DEFAULT_PARTNER_ID) >= maxStreams - kept) {
      throw new ApiError(Errors.tooManyStreams, {
        message: `The ${maxStreams - kept} stream slots open to partners other than the default one are all taken (${kept} of the ${maxStreams} are kept for ${DEFAULT_PARTNER_ID}, the web inspector and listen); close one first.`,
      });
    }
  }

  /** Start streaming to `sink` for the account; refuses past a cap with 429 before anything is sent. */
  start(account: Account, req: IncomingMessage, sink: StreamSink, types: Set<StreamType>, forward?: ForwardSpec): void {
    if (this.closing) throw new ApiError(Errors.serviceUnavailable, { message: 'The sandbox is shutting down.' });
    this.checkSlots(account.partnerId);
    const connection: Connection = {
      // Not account.newId: opening a stream must not shift the seeded ids of the account's objects.
      id: `stm_${randomBytes(10).toString('hex')}`,
      partnerId: account.partnerId,
      environment: account.environment,
      accountId: account.id,
      types,
      sink,
    };
    if (forward) connection.forward = { spec: forward, subscriptionIds: addForwarder(account, connection.id, forward) };
    this.connections.set(connection.id, connection);
    this.byPartner.set(connection.partnerId, this.openFor(connection.partnerId) + 1);
    let set = this.byAccount.get(account.id);
    if (!set) this.byAccount.set(account.id, (set = new Set()));
    set.add(connection);
    sink.on('close', () => this.drop(connection));
    req.socket?.setNoDelay?.(true);
    sink.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Tells nginx-style proxies not to buffer the stream.
      'X-Accel-Buffering': 'no',
    });
    this.write(connection, 'retry: 3000\n\n');
    this.send(connection, 'ready', {
      stream_id: connection.id,
      partner_id: account.partnerId,
      environment: account.environment,
      now: account.clock.iso(),
      types: [...types],
      forward: connection.forward ? { url: forward!.url, topics: forward!.topics, subscription_ids: connection.forward.subscriptionIds } : null,
    });
    this.startHeartbeat();
  }

  /** Shutdown: end every stream (their forwarders go away) so the server can finish closing. */
  close(): void {
    this.closing = true;
    for (const connection of [...this.connections.values()]) {
      this.drop(connection);
      connection.sink.end();
    }
    this.stopHeartbeat();
  }

  /** Send to the account's streams that want `type` the message `make` gives (made once, and only when one does). */
  private publish(account: Account, type: StreamType, make: () => object): void {
    const set = this.byAccount.get(account.id);
    if (!set) return;
    let data: object | undefined;
    for (const connection of set) if (connection.types.has(type)) this.send(connection, type, (data ??= make()));
  }

  private deliveryMessage(account: Account, attempt: AttemptRecord, delivery: DeliveryRecord) {
    const sub = delivery.subscription_id;
    return {
      id: attempt.id,
      event_id: delivery.event_id,
      idempotency_key: attempt.event_id,
      topic: attempt.topic,
      entity_id: eventOf(account, delivery)?.entity_id ?? null,
      subscription_id: sub,
      forwarder: this.forwarderOf(account.id, sub),
      url: attempt.url,
      attempt: attempt.attempt,
      status_code: attempt.status_code,
      error: attempt.error,
      delivered: attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300 && attempt.error === null,
      at: attempt.at,
      duration_ms: attempt.duration_ms,
      next_attempt_at: attempt.next_attempt_at,
      drill: attempt.drill ?? null,
      duplicate_of: attempt.duplicate_of ?? null,
    };
  }

  /** The stream whose forwarder owns a subscription, if any. */
  private forwarderOf(accountId: string, subscriptionId: string): string | null {
    for (const connection of this.byAccount.get(accountId) ?? []) {
      if (connection.forward?.subscriptionIds.includes(subscriptionId)) return connection.id;
    }
    return null;
  }

  private send(connection: Connection, type: string, data: object): void {
    this.sequence += 1;
    this.write(connection, `id: ${this.sequence}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private write(connection: Connection, chunk: string): void {
    const { sink } = connection;
    if (sink.destroyed) return;
    sink.write(chunk);
    // What the client has not read yet stays in memory: past the cap the client is cut, not waited for.
    if (sink.writableLength > this.options.bufferBytes) {
      this.deps.log.warn({ stream: connection.id, buffered: sink.writableLength }, 'stream client too slow; cut');
      this.drop(connection);
      sink.destroy();
    }
  }

  private drop(connection: Connection): void {
    if (!this.connections.delete(connection.id)) return;
    const left = this.openFor(connection.partnerId) - 1;
    if (left > 0) this.byPartner.set(connection.partnerId, left);
    else this.byPartner.delete(connection.partnerId);
    const set = this.byAccount.get(connection.accountId);
    set?.delete(connection);
    if (set && !set.size) this.byAccount.delete(connection.accountId);
    if (connection.forward) {
      const account = this.liveAccount(connection);
      try {
        if (account) removeForwarder(this.deps, account, connection.forward.subscriptionIds);
      } catch (error) {
        // Refused (the data file cannot be written): the subscriptions stay, and are swept at the next start.
        this.deps.log.warn({ err: error, account: connection.accountId }, 'stream forwarder not removed');
      }
    }
    if (!this.connections.size) this.stopHeartbeat();
  }

  /** The connection's account as the store has it now (a full reset replaces Account objects); undefined once its partner is gone. */
  private liveAccount(connection: Connection): Account | undefined {
    if (!Object.hasOwn(this.deps.store.data.partners, connection.partnerId)) return undefined;
    return this.deps.store.account(connection.partnerId, connection.environment);
  }

  private refreshForwarders(which: (c: Connection) => boolean): void {
    for (const connection of [...this.connections.values()]) {
      if (!which(connection)) continue;
      const account = this.liveAccount(connection);
      if (!account) {
        // Its partner went with a full reset: nothing left to stream.
        this.drop(connection);
        connection.sink.end();
        continue;
      }
      try {
        if (connection.forward) connection.forward.subscriptionIds = addForwarder(account, connection.id, connection.forward.spec);
      } catch (error) {
        this.deps.log.warn({ err: error, account: connection.accountId }, 'stream forwarder not made again');
      }
    }
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      for (const connection of [...this.connections.values()]) this.write(connection, ': heartbeat\n\n');
    }, this.options.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}
