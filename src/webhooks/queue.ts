// Owns the per-account ordered delivery queue: enqueue on every recorded event, send strictly in
// order through scheduler jobs, retry at 30 s x 3^n on the account clock, pause after the fifth
// retry, resume (10 per run, the rest in following cycles), and recover a queue cut by a restart.
// It also runs the delivery drills in their place in the order: an attempt sent with a wrong secret
// or counted as a time-out (then retried like any failure), and copies of a delivered event, sent
// while it stays at the head, so the next event waits for them (src/webhooks/drills.ts words them).
//
// Every write is in a unit of work: an event's deliveries and their place in the queue in the unit
// that records the event (all or nothing), an attempt's start (`in_flight`) in one, and its outcome
// (the delivery, the queue, the retry's job, the attempt's log, the history's retention) in the next.
// A run whose account was replaced, or whose write the data file refused, stops; what the file holds
// (an attempt in flight, a send job due) is taken up again like after a restart.
import type { Deps } from '../deps.js';
import type { EventRecord } from '../events/events.js';
import { deliveryDrills, deliveryDuplicates, deliveryFault } from '../faults.js';
import { DRILL_HEADER, drillDelivery, drillHeader, type DrillSet } from '../scenarios/evolve.js';
import type { Account, JobData } from '../store/store.js';
import { sendDelivery, DEFAULT_SEND_OPTIONS, type AttemptOutcome, type SendOptions } from './delivery.js';
import { ReceiverConnections } from './connections.js';
import { attempts, deliveries, deliveryBody, deliveryMachine, eventOf, type DeliveryRecord, type Drill } from './history.js';
import { judgeCopy, judgeTimeoutAfterDelivery, judgeWrongSecret, wrongSecret } from './drills.js';
import { transition } from '../domain/machine.js';
import { activeSubscriptions, subscriptions, type Subscription } from './subscriptions.js';
import { LIMITS } from '../limits.js';
import { pruneWebhookHistory } from './retention.js';
import { defineStateLog, defineStateValue } from '../store/module-state.js';
import { refusedWrite } from '../errors.js';

export const WEBHOOKS_SERVICE = 'webhooks';
export const SEND_JOB = 'webhooks.send';

/** Spec: at most 5 retries, the nth 30 s x 3^n after the failure (90 s, 270 s, 810 s, 2430 s, 7290 s). */
export const MAX_RETRIES = LIMITS.webhookRetries;
export const RETRY_BASE_MS = 30_000;
/** Spec: a retry run sends at most 10 webhooks; the rest go in following cycles. */
export const RETRY_RUN_SIZE = 10;
/** Sandbox choice: the following cycles run every 30 s (the retry base) on the account clock. */
export const CYCLE_MS = 30_000;

export function retryDelayMs(retry: number): number {
  return RETRY_BASE_MS * 3 ** retry;
}

/** A duplicate drill under way: the head was delivered, and `left` copies of it are still to be sent. */
export interface CopyRun {
  delivery: string;
  left: number;
  /** The attempt that delivered the event: each copy's `duplicate_of`. */
  original: string;
}

/** An attempt's outcome and the drill that shaped it, if any. */
type Outcome = AttemptOutcome & { drill?: Drill };

/** Persisted with the account (so --data keeps it across restarts). */
interface QueueState {
  /**
   * Data an earlier version wrote: the queued ids as one list (written whole at every change). Moved
   * into the queue's log (queuedIds) when the account's queue is taken up; absent otherwise.
   */
  queue?: string[];
  /** True after the fifth retry failed: nothing is sent until POST /webhooks/retry. */
  paused: boolean;
  /** Retries of the head since the last success or manual retry. */
  retry_count: number;
  /**
   * Why a send job is waiting in the scheduler (null: none). Kept rather than derived: finding the
   * job among the scheduler's would scan every job of the account (settlements, due dates) on each event.
   */
  job: 'live' | 'retry' | 'cycle' | 'resume' | null;
  /** The delivery whose attempt is under way; still set after a restart means the attempt was cut. */
  in_flight: string | null;
  /** Copies of the head still to send (absent in data an earlier version wrote: none). */
  copies?: CopyRun | null;
}

const queueStateValue = defineStateValue<QueueState>('webhook_queue', () => ({ paused: false, retry_count: 0, job: null, in_flight: null }), {
  type: 'object', required: ['paused', 'retry_count', 'job', 'in_flight'],
  properties: {
    queue: { type: 'array', items: { type: 'string' } },
    paused: { type: 'boolean' },
    retry_count: { type: 'integer', minimum: 0 },
    job: { enum: ['live', 'retry', 'cycle', 'resume', null] },
    in_flight: { type: ['string', 'null'] },
    copies: {
      type: ['object', 'null'], required: ['delivery', 'left', 'original'],
      properties: { delivery: { type: 'string' }, left: { type: 'integer', minimum: 1 }, original: { type: 'string' } },
    },
  },
});

/**
 * Delivery ids not yet delivered, oldest first; the head is the one being attempted. A log, so an
 * enqueue or an attempt writes the ids it adds or takes off, never the whole queue.
 */
const queuedIds = defineStateLog<string>('webhook_queue_ids', { type: 'string' });

/** The delivery at the head of the account's queue (undefined: nothing queued). */
export function queueHead(account: Account): string | undefined {
  return queuedIds(account).at(0);
}

/** Every queued delivery id, oldest first (bulk reads: tests, an inspector; never per request). */
export function queuedDeliveries(account: Account): string[] {
  return queuedIds(account).values();
}

/** The account's queue state, to read (a fresh empty one, not stored, when the account has none yet). */
function queueState(account: Account): Readonly<QueueState> {
  return queueStateValue.read(account);
}

/**
 * Set fields of the account's queue state: persisted, and undone field by field with the unit of work
 * under way. Never through a copy of the whole state, as module state otherwise undoes a change: the
 * queue may hold thousands of ids, and every attempt changes the state twice.
 */
function setQueue(account: Account, fields: Partial<QueueState>): void {
  let previous: Partial<QueueState> = {};
  queueStateValue.update(account, (state) => {
    previous = Object.fromEntries(Object.keys(fields).map((name) => [name, state[name as keyof QueueState]]));
    Object.assign(state, fields);
  }, (state) => { Object.assign(state, previous); });
}

interface SendJobPayload {
  reason: NonNullable<QueueState['job']>;
  /** At most this many deliveries in this run; null: until the queue is empty or an attempt fails. */
  budget: number | null;
}

/**
 * A delivery whose subscription went away leaves the queue as failed, never to be retried; one already
 * delivered (its copies under way) stays sent: only the copies not sent yet are given up.
 */
function dropDelivery(account: Account, delivery: DeliveryRecord): void {
  if (delivery.status === 'sent') return;
  deliveries(account).update(delivery.id, {
    status: transition(deliveryMachine, delivery.status, 'dropped'),
    last_error: 'subscription deleted before delivery',
    next_attempt_at: null,
  });
}

export class WebhookQueue {
  /** Attempt options; tests may shorten the time-out (`deps.services.installed('webhooks').options.timeoutMs`). */
  readonly options: SendOptions = { ...DEFAULT_SEND_OPTIONS };
  /**
   * Accounts with a delivery run under way: their new events wait for it, not for a job. Keyed by the
   * Account object: a replaced account's run (its writes refused) never holds back its replacement,
   * whose own job then runs once the scheduler's turn for the account comes.
   */
  private readonly pumping = new WeakSet<Account>();
  /** Attempts under way, each as its interrupt (see SendOptions.underWay). */
  private readonly underWay = new Set<() => void>();
  /** Keep-alive connections to receivers, reused across attempts and accounts. */
  private readonly connections = new ReceiverConnections();

  constructor(private readonly deps: Deps) {}

  install(): void {
    this.deps.scheduler.register(SEND_JOB, (account, job) => this.runJob(account, job));
    // Inside the unit of work that records the event: the event and its deliveries stay or go together.
    this.deps.events.onRecord((account, event) => this.enqueue(account, event));
    this.recoverAll();
    // Memory read again from the data file after a failed write: once the file takes writes again,
    // the queues are taken up as after a restart (an attempt cut short is sent again).
    this.deps.store.events.on('writeResumed', () => this.recoverAll());
    // An account's data replaced by a snapshot's (a restore): its queue is taken up as after a restart.
    this.deps.store.events.on('accountReset', (account) => this.recoverOne(account));
  }

  private recoverAll(): void {
    for (const account of this.deps.store.allAccounts()) this.recoverOne(account);
  }

  private recoverOne(account: Account): void {
    try {
      // In a unit of work of its own: a recovery that fails afterwards does not put the old list back.
      account.transaction(() => this.takeUpLegacyQueue(account));
      account.transaction(() => this.recover(account));
    } catch (error) {
      this.deps.log.error({ err: error, account: account.id }, 'could not take up the webhook queue');
    }
  }

  /** Wait until the account's due work, including deliveries it triggers, is done. */
  async idle(account: Account): Promise<void> {
    await this.deps.scheduler.runDue(account);
  }

  /** Abort attempts still under way (shutdown); a cut attempt is sent again after a restart. */
  close(): void {
    for (const interrupt of [...this.underWay]) interrupt();
    this.connections.close();
  }

  /**
   * Every event recorded while subscriptions of its topic are active becomes one delivery per
   * subscription, queued, in the unit of work that records the event (a savepoint: if it fails, the
   * event stays and its deliveries go, all of them).
   */
  enqueue(account: Account, event: EventRecord): void {
    try {
      account.transaction(() => this.enqueueNow(account, event));
    } catch (error) {
      // Recording an event must never fail the API request that caused it.
      this.deps.log.error({ err: error, account: account.id, topic: event.topic }, 'could not enqueue webhook deliveries');
    }
  }

  private enqueueNow(account: Account, event: EventRecord): void {
    const subs = activeSubscriptions(account, event.topic);
    if (!subs.length) return this.prune(account);
    const ids: string[] = [];
    for (const sub of subs) {
      const delivery: DeliveryRecord = {
        id: account.newId('whe'),
        event_id: event.id,
        topic: event.topic,
        timestamp: event.timestamp,
        subscription_id: sub.id,
        endpoint_url: sub.endpoint_url,
        status: 'pending',
        attempts: 0,
        last_error: null,
        last_attempt_at: null,
        next_attempt_at: null,
      };
      deliveries(account).insert(delivery);
      ids.push(delivery.id);
    }
    queuedIds(account).push(ids);
    this.kick(account);
    this.prune(account);
  }

  /** Apply the history's retention (src/webhooks/retention.ts): settled history only, never the queue. */
  prune(account: Account): void {
    pruneWebhookHistory(account, queueHead(account));
  }

  /** Start sending when nothing else will: not paused, no send job waiting, no run under way (inside a unit of work). */
  private kick(account: Account): void {
    const state = queueState(account);
    if (state.paused || state.job || this.pumping.has(account) || !queuedIds(account).size) return;
    this.schedule(account, account.clock.nowMs(), { reason: 'live', budget: null });
    account.afterCommit(() => this.deps.scheduler.runInBackground(account));
  }

  private schedule(account: Account, at: number, payload: SendJobPayload): void {
    setQueue(account, { job: payload.reason });
    this.deps.scheduler.schedule(account, SEND_JOB, at, { ...payload });
  }

  private cancelJobs(account: Account): void {
    this.deps.scheduler.cancel(account, (job) => job.kind === SEND_JOB);
    setQueue(account, { job: null });
  }

  /** POST /webhooks/retry: reset the retry counter, unpause, and send in order, 10 per run. */
  resume(account: Account): number {
    this.cancelJobs(account);
    setQueue(account, { paused: false, retry_count: 0 });
    const queued = queuedIds(account).size;
    if (queued) {
      this.schedule(account, account.clock.nowMs(), { reason: 'resume', budget: RETRY_RUN_SIZE });
      account.afterCommit(() => this.deps.scheduler.runInBackground(account));
    }
    return queued;
  }

  /**
   * A deleted subscription receives nothing more: its queued deliveries leave the queue as failed. When
   * one of them was holding the queue, the next event starts with a fresh retry counter.
   */
  dropSubscription(account: Account, sub: Subscription): void {
    const state = queueState(account);
    const ids = queuedIds(account);
    const queued = ids.values();
    const head = queued[0];
    const kept: string[] = [];
    for (const id of queued) {
      const d = deliveries(account).get(id);
      if (d && d.subscription_id === sub.id) {
        dropDelivery(account, d);
      } else kept.push(id);
    }
    if (kept.length === queued.length) return;
    ids.replace(kept);
    if (kept[0] !== head && state.copies) setQueue(account, { copies: null });
    if (kept[0] !== head && state.job === 'retry') {
      this.cancelJobs(account);
      setQueue(account, { retry_count: 0 });
      this.kick(account);
    }
  }

  /** A queue an earlier version wrote as one list (at a start, or in a restored export): its ids move to the log, in order. */
  private takeUpLegacyQueue(account: Account): void {
    const legacy = queueState(account).queue;
    if (!legacy) return;
    queuedIds(account).push(legacy);
    queueStateValue.update(account, (value) => { delete value.queue; });
  }

  /** After a restart: note an attempt cut by the shutdown and make sure the queue moves again. */
  private recover(account: Account): void {
    if (!queueStateValue.stored(account)) return;
    const state = queueState(account);
    const ids = queuedIds(account);
    if (state.in_flight) {
      const d = deliveries(account).get(state.in_flight);
      if (d) {
        const at = account.clock.iso();
        const event = eventOf(account, d);
        const cut = { status_code: null, error: 'interrupted: the sandbox stopped during this attempt', duration_ms: 0 };
        if (d.status === 'sent') {
          // A delivered event's attempt in flight is one of its copies (state.copies names the head,
          // which is the delivery in flight): the event stays delivered, and the same copy is sent
          // again (its count unchanged).
          deliveries(account).update(d.id, { attempts: d.attempts + 1, last_attempt_at: at });
          this.logAttempt(account, d, event?.idempotency_key ?? d.event_id, cut, at, null, { drill: 'duplicate_delivery', duplicate_of: state.copies?.original });
        } else {
          // Attempted and not delivered: failed (through the table), and sent again below at once,
          // unless its subscription was deleted during the attempt (it left the queue then).
          const queued = ids.at(0) === d.id;
          deliveries(account).update(d.id, {
            status: transition(deliveryMachine, d.status, 'attempt_failed'),
            attempts: d.attempts + 1,
            last_attempt_at: at,
            last_error: `interrupted: the sandbox stopped during this attempt; ${queued ? 'sent again' : 'subscription deleted, not retried'}`,
          });
          this.logAttempt(account, d, event?.idempotency_key ?? d.event_id, cut, at, queued ? at : null);
        }
      }
      setQueue(account, { in_flight: null });
    }
    const waiting = account.data.jobs.some((job) => job.kind === SEND_JOB);
    if (!waiting) setQueue(account, { job: null });
    if (!waiting && !state.paused && ids.size) this.schedule(account, account.clock.nowMs(), { reason: 'live', budget: null });
  }

  private async runJob(account: Account, job: JobData): Promise<void> {
    // Jobs of this kind are scheduled only by this queue, always with a SendJobPayload.
    const payload = job.payload as unknown as SendJobPayload;
    setQueue(account, { job: null });
    if (queueState(account).paused) return;
    await this.pump(account, payload.budget);
  }

  /**
   * Send from the head, in order, until the queue is empty, an attempt fails, or the budget is spent.
   * Each step writes in a unit of work of its own (the run spans awaits); a step refused because the
   * account was replaced or the data file cannot be written ends the run. Every way out leaves the
   * queue a sender: empty, a retry or cycle job, a pause (POST /webhooks/retry), or a retired account
   * (a reset or a reload of the file retires it; its replacement's queue is taken up by recover()).
   */
  private async pump(account: Account, budget: number | null): Promise<void> {
    const state = queueState(account);
    const ids = queuedIds(account);
    // A reset or a reload of the data file retires the Account: its state object is then no one's.
    const current = () => !account.retired;
    this.pumping.add(account);
    try {
      let sent = 0;
      while (ids.size && current()) {
        // The copies of a delivered event go before the next event, whatever the run's budget. They
        // are always the head's: whatever takes the head off the queue clears them in the same unit
        // of work (settleCopy, the skip below, dropSubscription).
        const copies = state.copies ?? null;
        if (budget !== null && sent >= budget && !copies) {
          account.transaction(() => this.schedule(account, account.clock.nowMs() + CYCLE_MS, { reason: 'cycle', budget: RETRY_RUN_SIZE }));
          return;
        }
        const id = ids.at(0) as string;
        const delivery = deliveries(account).get(id);
        const sub = delivery && subscriptions(account).get(delivery.subscription_id);
        const event = delivery && eventOf(account, delivery);
        if (!delivery || !sub || !event || !sub.is_active) {
          account.transaction(() => {
            queuedIds(account).shift();
            if (copies) setQueue(account, { copies: null });
            if (delivery) dropDelivery(account, delivery);
          });
          continue;
        }
        const at = account.clock.iso();
        // A fault of the sandbox's own is a failed attempt too, so it follows the retry schedule
        // rather than being sent again at once, forever.
        const attempt = copies ? this.sendCopy(account, delivery, sub, event) : this.send(account, delivery, sub, event);
        const outcome: Outcome = await attempt.catch((error: unknown) => {
          if (refusedWrite(error)) throw error;
          this.deps.log.error({ err: error, account: account.id, delivery: delivery.id }, 'webhook attempt could not be made');
          return { ok: false, status_code: null, error: 'internal error: the sandbox could not make this attempt', duration_ms: 0 };
        });
        // A reset or a reload meanwhile: the outcome's unit of work below meets the wall, and the run ends in its catch.
        const dropped = ids.at(0) !== id; // its subscription was deleted while the attempt was under way
        account.transaction(() => (copies ? this.settleCopy(account, delivery, event, outcome, at, copies, dropped) : this.settle(account, delivery, event, outcome, at, dropped)));
        this.deps.log.debug({ account: account.id, topic: event.topic, attempt: delivery.attempts, status: outcome.status_code, error: outcome.error, drill: outcome.drill }, 'webhook attempt');
        // A copy never stops the run: refused or not, the event was delivered already.
        if (dropped || copies) continue;
        if (!outcome.ok) return;
        sent += 1;
      }
    } catch (error) {
      // A write refused (a reset replaced the account, the data file cannot be written): the run ends;
      // what the file holds is taken up by the next run or the recovery.
      if (refusedWrite(error)) return;
      // Anything else that breaks a run pauses the account (POST /webhooks/retry resumes it): a
      // queue that kicked itself again at once would spin and starve every other request.
      this.deps.log.error({ err: error, account: account.id }, 'webhook delivery run failed; delivery paused');
      try {
        account.transaction(() => setQueue(account, { paused: true }));
      } catch {
        // refused too (the account was replaced, the file cannot be written): the recovery takes the queue up
      }
    } finally {
      this.pumping.delete(account);
    }
  }

  /**
   * One attempt: a scenario fault answers for the receiver, else a real POST (noted as in flight first,
   * in its own unit of work), with a wrong secret or judged as a time-out when a drill says so.
   */
  private async send(account: Account, delivery: DeliveryRecord, sub: Subscription, event: EventRecord): Promise<Outcome> {
    const fault = deliveryFault(this.deps, account, { topic: event.topic, url: sub.endpoint_url, event_id: event.idempotency_key });
    if (fault && 'timeout' in fault) {
      return { ok: false, status_code: null, error: `timed out after ${this.options.timeoutMs} ms (scenario fail_delivery)`, duration_ms: this.options.timeoutMs };
    }
    if (fault && 'status' in fault) {
      // Even a 2xx fault fails the attempt: nothing reached the receiver, so the event must stay queued.
      return { ok: false, status_code: fault.status, error: `receiver answered ${fault.status} (scenario fail_delivery)`, duration_ms: 0 };
    }
    const drill = fault?.drill;
    // Drawn from the server's seed and the attempts made before this one, never stored: a restart
    // that sends the attempt again draws the same wrong secret, and no record holds it.
    const secret = drill === 'wrong_secret'
      ? wrongSecret(sub.secret_key, `${this.deps.store.seed}|${account.id}|${delivery.id}|${delivery.attempts}`)
      : sub.secret_key;
    // Asked only for an attempt that is sent: its counters count bodies that reached the receiver.
    const evolution = deliveryDrills(this.deps, account, { topic: event.topic, url: sub.endpoint_url, event_id: event.idempotency_key });
    const outcome = await this.post(account, delivery, sub, event, secret, evolution);
    if (drill === 'wrong_secret') return { ...judgeWrongSecret(outcome), drill };
    if (drill === 'timeout_after_delivery') return { ...judgeTimeoutAfterDelivery(outcome, this.options.timeoutMs), drill };
    return outcome;
  }

  /** A copy of the delivered head: the same body and the subscription's own secret; no scenario rule is asked (the copy is the drill). */
  private async sendCopy(account: Account, delivery: DeliveryRecord, sub: Subscription, event: EventRecord): Promise<Outcome> {
    return { ...judgeCopy(await this.post(account, delivery, sub, event, sub.secret_key)), drill: 'duplicate_delivery' };
  }

  /** The POST itself, noted as in flight first in a unit of work of its own. */
  private post(account: Account, delivery: DeliveryRecord, sub: Subscription, event: EventRecord, secret: string | null, drills?: DrillSet): Promise<AttemptOutcome> {
    // Cleared by settle(), in the unit of work that records the outcome; still set after a restart
    // (or a failed write of the file) means the attempt was cut short.
    account.transaction(() => setQueue(account, { in_flight: delivery.id }));
    const options: SendOptions = { ...this.options, underWay: this.underWay, connections: this.connections };
    // An evolution drill reshapes only the body sent; the event as stored (and as GET /webhooks/events answers it) stays as it was.
    const body = drills ? drillDelivery(drills, event.topic, deliveryBody(event)) : deliveryBody(event);
    if (drills) options.headers = { [DRILL_HEADER]: drillHeader(drills) };
    return sendDelivery(sub.endpoint_url, JSON.stringify(body), secret, options, this.deps.realNow);
  }

  /**
   * Record an attempt's outcome; on failure schedule the next retry or pause the account; on delivery,
   * start the copies a duplicate drill asks for, or move on (inside a unit of work).
   */
  private settle(account: Account, delivery: DeliveryRecord, event: EventRecord, outcome: Outcome, at: string, dropped: boolean): void {
    let next: number | null = null;
    setQueue(account, { in_flight: null });
    // Through update(), not in place: the data file logs only the objects its collection reports.
    deliveries(account).update(delivery.id, { attempts: delivery.attempts + 1, last_attempt_at: at });
    if (outcome.ok) {
      deliveries(account).update(delivery.id, { status: transition(deliveryMachine, delivery.status, 'delivered'), last_error: null, next_attempt_at: null });
      if (!dropped) {
        const copies = this.copiesOf(account, delivery, event);
        setQueue(account, { retry_count: 0 });
        if (copies) {
          // The head stays: the pump sends its copies before the next event.
          const original = this.logAttempt(account, delivery, event.idempotency_key, outcome, at, null, { drill: 'duplicate_delivery' });
          setQueue(account, { copies: { delivery: delivery.id, left: copies, original: original.id } });
          return this.prune(account);
        }
        queuedIds(account).shift();
      }
    } else if (dropped) {
      deliveries(account).update(delivery.id, { last_error: `${outcome.error}; subscription deleted, not retried` });
    } else {
      const count = queueState(account).retry_count;
      const retries = count < MAX_RETRIES ? count + 1 : null;
      setQueue(account, retries === null ? { paused: true } : { retry_count: retries });
      if (retries !== null) {
        next = account.clock.nowMs() + retryDelayMs(retries);
        this.schedule(account, next, { reason: 'retry', budget: RETRY_RUN_SIZE });
      }
      deliveries(account).update(delivery.id, { status: transition(deliveryMachine, delivery.status, 'attempt_failed'), last_error: outcome.error, next_attempt_at: next === null ? null : new Date(next).toISOString() });
    }
    this.logAttempt(account, delivery, event.idempotency_key, outcome, at, next === null ? null : new Date(next).toISOString(), { drill: outcome.drill });
    this.prune(account);
  }

  /**
   * Copies to send after this delivery: what POST /_sandbox/events asked for, else what a scenario's
   * duplicate_delivery rule says; never more than the limit, whoever asks.
   */
  private copiesOf(account: Account, delivery: DeliveryRecord, event: EventRecord): number {
    const asked = delivery.duplicates ?? deliveryDuplicates(this.deps, account, { topic: event.topic, url: delivery.endpoint_url, event_id: event.idempotency_key });
    return Math.min(Math.max(0, Math.floor(asked)), LIMITS.webhookDuplicateCopies);
  }

  /** Record a copy's outcome: the event stays delivered whatever the answer; the last copy lets the queue move on (inside a unit of work). */
  private settleCopy(account: Account, delivery: DeliveryRecord, event: EventRecord, outcome: Outcome, at: string, copies: CopyRun, dropped: boolean): void {
    setQueue(account, { in_flight: null });
    deliveries(account).update(delivery.id, { attempts: delivery.attempts + 1, last_attempt_at: at });
    if (!dropped) {
      if (copies.left > 1) setQueue(account, { copies: { ...copies, left: copies.left - 1 } });
      else {
        queuedIds(account).shift();
        setQueue(account, { copies: null });
      }
    }
    this.logAttempt(account, delivery, event.idempotency_key, outcome, at, null, { drill: 'duplicate_delivery', duplicate_of: copies.original });
    this.prune(account);
  }

  /**
   * POST /_sandbox/events with `duplicate`: each delivery of the event just recorded (in this unit of
   * work, so none of them was sent yet) is to be sent `count` more times once delivered. Answers
   * whether the event has any delivery to copy.
   */
  duplicateEvent(account: Account, event: EventRecord, count: number): boolean {
    const own = [...deliveries(account).newest({ field: 'event_id', value: event.id })];
    for (const d of own) deliveries(account).update(d.id, { duplicates: Math.min(count, LIMITS.webhookDuplicateCopies) });
    return own.length > 0;
  }

  private logAttempt(account: Account, d: DeliveryRecord, eventKey: string, outcome: Omit<AttemptOutcome, 'ok'>, at: string, nextAt: string | null, marks: { drill?: Drill; duplicate_of?: string } = {}) {
    const attempt = attempts(account).insert({
      id: account.newId('dlv'),
      event_id: eventKey,
      topic: d.topic,
      subscription_id: d.subscription_id,
      url: d.endpoint_url,
      attempt: d.attempts,
      status_code: outcome.status_code,
      error: outcome.error,
      at,
      duration_ms: outcome.duration_ms,
      next_attempt_at: nextAt,
      // Only on a drill's attempts: the fields are absent (shown as null) on all the others.
      ...(marks.drill ? { drill: marks.drill } : {}),
      ...(marks.duplicate_of ? { duplicate_of: marks.duplicate_of } : {}),
    });
    account.afterCommit(() => this.deps.activity.emit('attempt', account, attempt, d));
    return attempt;
  }
}

export function webhookQueue(deps: Deps): WebhookQueue {
  return deps.services.installed(WEBHOOKS_SERVICE);
}
