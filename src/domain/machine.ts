// Owns transition tables: each resource's state machine is data (state -> event -> next state),
// and `transition` is the only way a status changes. An illegal move answers the table's error
// with the current state and the events a partner may ask for in it.
import { ApiError, type ErrorTemplate, Errors } from '../errors.js';

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
    message: `Cannot ${event} a ${machine.resource} whose status is ${state}; allowed: ${allowed.length ? allowed.join(', ') : 'none'}.`,
    validation_errors: { status: `is ${state}` },
  });
}
