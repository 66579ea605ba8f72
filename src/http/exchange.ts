// Owns what one request's handling leaves for the steps after it (the access line, the journal,
// the response check): the operation, environment and account the router found, what a scenario did
// to the answer, and the answer as sent. Kept in a WeakMap keyed by the response rather than in
// express's `res.locals`, whose type is `Record<string, any>`: every field here has one type, a
// misspelt field is a compile error, and the state goes when the response does.
import type { ServerResponse } from 'node:http';
import type { Environment } from '../config.js';
import type { Account } from '../store/store.js';
import type { Principal } from './context.js';
import type { DrillSet } from '../scenarios/evolve.js';

export interface ExchangeState {
  /** Set by the router: the matched operation (null: no operation matched) and the API environment. */
  operationId?: string | null;
  environment?: Environment;
  /** The account the request acts on, once security or the router found it. */
  account?: Account;
  /** Control plane: who is calling, resolved before the control router runs. */
  controlPrincipal?: Principal;
  /** Why the answer was not the handler's (`Prefer: code=NNN` or a scenario rule). */
  forced?: string;
  /** A scenario's drop action cut the connection: nothing is sent, and the journal records status 0. */
  dropped?: 'reset' | 'empty';
  /** Evolution drills that fired for this request: the answer is sent reshaped, with Sandbox-Drill (src/scenarios/evolve.ts). */
  drills?: DrillSet;
  /** A body written by a scenario author is sent as written, not checked against the document. */
  uncheckedReply?: boolean;
  /** The router's send() took an answer (written at the end of its batch, see answer-batch.ts): a second one is dropped. */
  answered?: true;
  /** A JSON body as received, when the fast path read it (json-body.ts): the journal keeps this text rather than serialise the parsed body again. */
  requestText?: string;
  /** Set by the journal for a request it records: only then is the answer kept below until the response closes. */
  journaled?: true;
  /** The answer as sent: its body, and its JSON text when the router serialised it (journaled requests only). */
  responseBody?: unknown;
  responseText?: string;
}

const states = new WeakMap<ServerResponse, ExchangeState>();

/** The state of the exchange `res` answers, created empty on first use. */
export function exchange(res: ServerResponse): ExchangeState {
  let state = states.get(res);
  if (!state) {
    state = {};
    states.set(res, state);
  }
  return state;
}
