// Owns the journal feature: the express middleware that records every API request of an account
// when its answer is done (or its connection cut), and GET/DELETE /_sandbox/requests.
import type { NextFunction, Request, Response } from 'express';
import type { Deps } from '../deps.js';
import type { Feature } from '../feature.js';
import { ok, type Handler } from '../http/context.js';
import { exchange } from '../http/exchange.js';
import { documentOperations } from '../http/openapi.js';
import { TokenSigner } from '../auth/tokens.js';
import { CHECKOUT_AUDIENCE } from '../auth/security.js';
import { parseBearer } from '../auth/authorization-header.js';
import type { Account } from '../store/store.js';
import { Journal, type CopiedRequest, type KeptResponse, type RawRequest } from './journal.js';
import { LIMITS } from '../limits.js';
import { keptHeaders, partBudget, redact, redactHeaders } from './redact.js';
import { memoryBudget } from '../budget/memory-budget.js';

export const JOURNAL = 'journal';

function journalOf(deps: Deps): Journal {
  return deps.services.installed(JOURNAL);
}

let templates: Map<string, string> | undefined;
/** operationId -> path template, from the API document. */
function templateOf(operationId: string | null | undefined): string | null {
  templates ??= new Map(documentOperations().map((o) => [o.operationId, o.path]));
  return operationId ? templates.get(operationId) ?? null : null;
}

/**
 * The account of a request the router could not attach one to (refused with 401, 403 or 429 before
 * the handler ran, or an unknown route): the one its bearer token names, when the token's signature
 * is ours, even if it has expired or its key was revoked. Anything else is not journaled.
 */
async function accountFromBearer(deps: Deps, req: Request, environment: string): Promise<Account | undefined> {
  const token = parseBearer(req.headers.authorization);
  const claims = token ? TokenSigner.peek(token) as { partner_id?: unknown; iat?: unknown } | undefined : undefined;
  if (!token || typeof claims?.partner_id !== 'string' || typeof claims.iat !== 'number') return undefined;
  if (!Object.hasOwn(deps.store.data.partners, claims.partner_id)) return undefined;
  // Checked at the moment it was issued: the signature is what proves the account, not the expiry.
  const issued = new Date(claims.iat * 1000);
  for (const check of [() => deps.tokens.verifyAccess(token, issued), () => deps.tokens.verifyFor(token, CHECKOUT_AUDIENCE, issued)]) {
    try {
      await check();
      return deps.store.account(claims.partner_id, environment === 'demo' ? 'demo' : 'production');
    } catch {
      // try the next audience
    }
  }
  return undefined;
}

/** The token endpoint's account is the one of the key in its Basic header; unknown keys are not journaled. */
function accountFromBasic(deps: Deps, req: Request, environment: string): Account | undefined {
  return deps.partners.accountNamedByBasic(req.headers.authorization, environment);
}

/** Bodies up to this size are kept as JSON text and redacted when read; larger ones are copied within budget now. */
const RAW_BODY_BYTES = LIMITS.journalEntryBytes / 4;
const RAW_NOTHING: KeptResponse = { kind: 'raw', bodyText: undefined };

/**
 * What the journal keeps of a request when it arrives. The router coerces the parsed body in place,
 * so a body is kept as its JSON text (small: as received when the fast path read it) or as a
 * redacted copy (large); the headers as one text, credentials masked (keptHeaders), and the query
 * string as received.
 */
function keptRequest(req: Request, res: Response): RawRequest | CopiedRequest {
  const length = req.headers['content-length'];
  const small = req.body === undefined || (length !== undefined && Number(length) <= RAW_BODY_BYTES && req.headers['transfer-encoding'] === undefined);
  if (small) {
    const mark = req.originalUrl.indexOf('?');
    // A JSON body the fast path read is kept as it came (json-body.ts), not serialised again.
    const bodyText = req.body === undefined ? undefined : exchange(res).requestText ?? JSON.stringify(req.body);
    return { kind: 'raw', headerLines: keptHeaders(req.headers), query: mark < 0 ? '' : req.originalUrl.slice(mark + 1), bodyText };
  }
  // Headers, query and body share one budget.
  const budget = partBudget();
  return {
    kind: 'copy',
    value: {
      headers: redactHeaders(keptHeaders(req.headers), budget),
      query: redact({ ...(req.query as Record<string, unknown>) }, budget) as Record<string, unknown>,
      body: redact(req.body, budget),
    },
  };
}

/** The answer as sent: its JSON text when small, else a redacted copy of its body. */
function keptResponse(res: Response): KeptResponse {
  const { responseText: text, responseBody } = exchange(res);
  if (text !== undefined && text.length <= RAW_BODY_BYTES) return { kind: 'raw', bodyText: text };
  return { kind: 'copy', value: { body: responseBody === undefined ? null : redact(responseBody) } };
}

export function journalMiddleware(deps: Deps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    // Read, not required: a sandbox without the journal feature records nothing.
    const journal = deps.services.get(JOURNAL);
    if (!journal || journal.capacity <= 0) return next();
    const startedAt = deps.realNow();
    const started = process.hrtime.bigint();
    const request = keptRequest(req, res);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      // Only requests the API router saw (it sets the environment); hosted pages and files are not API calls.
      const state = exchange(res);
      const environment = state.environment;
      if (!environment) return;
      const operation = state.operationId ?? null;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const dropped = Boolean(state.dropped);
      const response = dropped ? RAW_NOTHING : keptResponse(res);
      const add = (account: Account | undefined) => {
        // A request whose account a reset replaced while it was under way is not journaled: the new
        // account's journal holds only its own requests.
        if (!account || account.retired) return;
        const recorded = journal.record(account, {
          atMs: startedAt + account.clock.offsetMs,
          method: req.method.toUpperCase(),
          path: req.path,
          operation,
          // 0: the connection was cut by a scenario's drop action, so no status was sent.
          status: dropped ? 0 : res.statusCode,
          duration_ms: Math.round(durationMs * 100) / 100,
          request,
          response,
        }, templateOf(operation));
        if (recorded && deps.activity.listenerCount('request')) deps.activity.emit('request', account, () => journal.announced(recorded));
      };
      // The common case (the router found the account) is recorded at once; the others look it up.
      if (operation !== 'createToken' && state.account) return add(state.account);
      const known = operation === 'createToken' ? Promise.resolve(accountFromBasic(deps, req, environment)) : accountFromBearer(deps, req, environment);
      journal.pending(known.then(add).catch((error) => deps.log.warn({ err: error }, 'journal entry not recorded')));
    };
    // 'close' follows 'finish' on every response (and alone when the connection is cut): one listener.
    res.on('close', finish);
    exchange(res).journaled = true;
    next();
  };
}

// Both wait for entries still being recorded (a refused request's account is found asynchronously),
// so a request that has been answered is always in the journal a later call reads.
const listRequests: Handler<'sandboxListRequests'> = async ({ deps, account, query }) => {
  await journalOf(deps).settled();
  return ok({ data: journalOf(deps).list(account, { method: query.method, path: query.path, status: query.status, excludeUserAgent: query.exclude_user_agent, limit: query.limit }) });
};

const clearRequests: Handler<'sandboxClearRequests'> = async ({ deps, account }) => {
  await journalOf(deps).settled();
  return ok({ deleted: journalOf(deps).clear(account) });
};

export const journalFeature: Feature = {
  name: 'journal',
  control: { sandboxListRequests: listRequests, sandboxClearRequests: clearRequests },
  install(deps) {
    deps.services.set(JOURNAL, new Journal(deps.config.journalSize, deps.store, memoryBudget(deps)));
  },
  // Registered after the control plane (whose requests are not journaled) and before the API catch-all.
  routes(app, deps) {
    app.use(journalMiddleware(deps));
  },
};
