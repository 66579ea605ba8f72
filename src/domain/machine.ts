// Owns transition tables: each resource's state machine is data (state -> event -> next state),
// and `transition` is the only way a status changes. An illegal move answers the table's error
// with the current state and the events a partner may ask for in it.
import { withArticle } from '../article.js';
import { ApiError, type ErrorTemplate, Errors } from '../errors.js';
import type { Collection } from '../store/collection.js';

export interface Machine<S extends string, E extends string> {
  /** Name used in messages, e.g. "bill". */
  resource: string;
  states: readonly S[];
  events: readonly E[];
  table: { readonly [state in S]: Partial<Readonly<Record<E, S>>> };
  /** Error for an illegal move (409 by default; the spec gives some resources 400). */
  refusal?: ErrorTemplate;
  /** Moves the sandbox makes itself (the clock, settlements): never named to partners as allowed. */
  internal?: readonly E[];
}

export function defineMachine<S extends string, E extends string>(machine: Machine<S, E>): Machine<S, E> {
  return machine;
}

export function allowedEvents<S extends string, E extends string>(machine: Machine<S, E>, state: S): E[] {
  return Object.keys(machine.table[state] ?? {}) as E[];
}

export function canTransition<S extends string, E extends string>(machine: Machine<S, E>, state: S, event: E): boolean {
  return machine.table[state]?.[event] !== undefined;
}

/** The next state, or the machine's refusal naming the current state and the allowed events. */
export function transition<S extends string, E extends string>(machine: Machine<S, E>, state: S, event: E): S {
  const next = machine.table[state]?.[event];
  if (next !== undefined) return next;
  const allowed = allowedEvents(machine, state).filter((e) => !machine.internal?.includes(e));
  throw new ApiError(machine.refusal ?? Errors.conflict, {
    message: `Cannot ${event} ${withArticle(machine.resource)} whose status is ${state}; allowed: ${allowed.length ? allowed.join(', ') : 'none'}.`,
    validation_errors: { status: `is ${state}` },
  });
}

/** What a stored object needs for applyTransition: an id, a status and an update stamp. */
export interface Stamped<S extends string> { id: string; status: S; updated_at: string }

/**
 * A stored object's move: the machine's next status for the event (or its refusal, with nothing
 * written), saved with `changes` and `updated_at` in one update of its collection. Resources whose
 * move writes more (a bill's status history) call `transition` and write themselves.
 */
export function applyTransition<S extends string, E extends string, T extends Stamped<S>>(
  machine: Machine<S, E>, collection: Collection<T>, item: T, event: E, now: string, changes: Partial<T> = {},
): T {
  const status = transition(machine, item.status, event);
  return collection.update(item.id, { ...changes, status, updated_at: now });
}
