// Owns the two interceptors that may answer before an API handler runs: `Prefer: code=NNN` forced
// responses, then the scenario rules (delay, respond, drop; evolution drills are noted for the answer).
// Neither ever reaches the handler's state.
import type { Socket } from 'node:net';
import type { Operation } from 'openapi-backend';
import type { Deps } from '../deps.js';
import type { RequestContext, Reply } from '../http/context.js';
import { invalidFields } from '../errors.js';
import type { Interceptor } from '../http/router.js';
import { exchange } from '../http/exchange.js';
import type { Account } from '../store/store.js';
import { errorReplyFor, exampleReply, unforceable } from './replies.js';
import type { RequestDecision } from './engine.js';

export const SCENARIO_ENGINE = 'scenarioEngine';
/** Replaceable wait used by delay_ms (tests may swap in a recorder instead of waiting). */
export const SCENARIO_SLEEP = 'scenarioSleep';

export type Sleep = (ms: number) => Promise<void>;
const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The `code` preference of a Prefer header (RFC 7240 syntax: `code=404`, more preferences allowed). */
export function preferredCode(header: string | string[] | undefined): number | undefined {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text) return undefined;
  for (const part of text.split(/[,;]/)) {
    const [rawName, ...rest] = part.split('=');
    if (rawName.trim().toLowerCase() !== 'code') continue;
    const raw = rest.join('=').trim().replace(/^"(.*)"$/, '$1');
    const code = /^\d{3}$/.test(raw) ? Number(raw) : NaN;
    if (!(code >= 200 && code <= 599)) {
      throw invalidFields({ Prefer: `code must be a status from 200 to 599, got "${raw}"` }, 'Prefer: code=NNN needs a status from 200 to 599.');
    }
    return code;
  }
  return undefined;
}

/**
 * The account a request belongs to. The token endpoint runs before any token exists, so its
 * account is the one of the key named in its Basic header (when that key is known).
 */
export function requestAccount(ctx: RequestContext): Account {
  if (ctx.operationId !== 'createToken') return ctx.account;
  return ctx.deps.partners.accountNamedByBasic(ctx.req.headers.authorization, ctx.account.environment) ?? ctx.account;
}

/**
 * `Prefer: code=NNN`: that status, with an HttpError or the documented success example; no state
 * change. Only a status the operation documents: anything else would answer off the contract.
 */
export const preferInterceptor: Interceptor = (ctx) => {
  const code = preferredCode(ctx.headers.prefer);
  if (code === undefined) return undefined;
  const why = unforceable(ctx.operationId, code);
  if (why) throw invalidFields({ Prefer: `code=${why}` }, `${ctx.operationId} documents no ${code} answer.`);
  exchange(ctx.res).forced = `Prefer: code=${code}`;
  if (code >= 400) return errorReplyFor(ctx.deps, requestAccount(ctx), code);
  return exampleReply(ctx.operationId, code);
};

function cut(socket: Socket, mode: 'reset' | 'empty'): void {
  // reset: a TCP RST (the client sees ECONNRESET); empty: the connection closes with no bytes sent.
  if (mode === 'reset' && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else if (mode === 'reset') socket.destroy();
  else socket.end();
}

/**
 * Scenario rules: wait for the delays that fire, then answer or cut the connection if a rule says so.
 * Synchronous unless a delay fired: a request no rule delays makes no promise (see the router).
 */
export const scenarioInterceptor: Interceptor = (ctx: RequestContext, operation: Operation) => {
  const deps: Deps = ctx.deps;
  const engine = deps.services.get(SCENARIO_ENGINE);
  if (!engine) return undefined;
  const account = requestAccount(ctx);
  const decision = engine.decide(account, {
    operationId: ctx.operationId,
    method: ctx.req.method,
    path: ctx.req.path,
    template: operation.path,
    headers: ctx.req.headers,
  });
  if (!decision.fired.length) return undefined;
  // Evolution drills reshape whatever answer is sent (the router's send, after the response check).
  if (decision.drills) exchange(ctx.res).drills = decision.drills;
  deps.log.debug({ account: account.id, operation: ctx.operationId, rules: decision.fired }, 'scenario rules fired');
  if (decision.delayMs > 0) {
    return (deps.services.get(SCENARIO_SLEEP) ?? realSleep)(decision.delayMs).then(() => decidedReply(ctx, deps, account, decision));
  }
  return decidedReply(ctx, deps, account, decision);
};

/** What the rules that fired decided, once their delays are over: nothing, a cut connection, or an answer. */
function decidedReply(ctx: RequestContext, deps: Deps, account: Account, decision: RequestDecision): Reply | undefined {
  const terminal = decision.terminal;
  if (!terminal) return undefined;
  exchange(ctx.res).forced = `scenario ${decision.fired.at(-1)}`;
  if (terminal.kind === 'drop') {
    exchange(ctx.res).dropped = terminal.mode;
    cut(ctx.req.socket, terminal.mode);
    return { status: 0 };
  }
  const { respond } = terminal;
  if (respond.body !== undefined) {
    // A body the document author wrote is sent as written, with its status, even where it departs
    // from the contract: the one deliberate way off it.
    exchange(ctx.res).uncheckedReply = true;
    return { status: respond.status, body: structuredClone(respond.body), headers: respond.headers };
  }
  // As Prefer does: a rule matching by method, path or header (so not checked at load) met an
  // operation without that answer. A 400 naming the rule beats an answer off the contract.
  const why = unforceable(ctx.operationId, respond.status);
  if (why) {
    const [scenarioId, index] = (decision.fired.at(-1) ?? '').split('#');
    throw invalidFields(
      { [`rules[${index}].respond.status`]: `${why}: use one of those, or give a respond.body` },
      `Scenario ${scenarioId} rule ${index} answers ${respond.status}, which ${ctx.operationId} does not document.`,
    );
  }
  const reply = respond.status >= 400
    ? errorReplyFor(deps, account, respond.status, { code: respond.code, message: respond.message })
    : exampleReply(ctx.operationId, respond.status) as Reply;
  return { ...reply, headers: { ...reply.headers, ...respond.headers } };
}
