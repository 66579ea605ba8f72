// Owns the journal feature: the express middleware that records every API request of an account
// when its answer is done (or its connection cut), and GET/DELETE /_sandbox/requests.
import type { NextFunction, Request, Response } from 'express';
import type { Deps } from '../deps.js';
import type { Feature } from '../feature.js';
import { ok, type Handler } from '../http/context.js';
import { documentOperations } from '../http/openapi.js';
import { TokenSigner } from '../auth/tokens.js';
import { CHECKOUT_AUDIENCE } from '../auth/security.js';
import type { Account } from '../store/store.js';
import { Journal } from './journal.js';
import { partBudget, redact, redactHeaders } from './redact.js';

export const JOURNAL = 'journal';

function journalOf(deps: Deps): Journal {
  return deps.services.get(JOURNAL) as Journal;
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
  const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
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

export function journalMiddleware(deps: Deps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const journal = journalOf(deps);
    if (!journal || journal.capacity <= 0) return next();
    const startedAt = deps.realNow();
    const started = process.hrtime.bigint();
    // Copied now: the router coerces the parsed body in place. Headers, query and body share one budget.
    const budget = partBudget();
    const request = {
      headers: redactHeaders(req.headers, budget),
      query: redact({ ...(req.query as Record<string, unknown>) }, budget) as Record<string, unknown>,
      body: req.body === undefined ? null : redact(req.body, budget),
    };
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      // Only requests the API router saw (it sets the environment); hosted pages and files are not API calls.
      const environment = res.locals.environment as string | undefined;
      if (!environment) return;
      const operation = (res.locals.operationId as string | null | undefined) ?? null;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const known = operation === 'createToken'
        ? Promise.resolve(accountFromBasic(deps, req, environment))
        : res.locals.account ? Promise.resolve(res.locals.account as Account) : accountFromBearer(deps, req, environment);
      journal.pending(known.then((account) => {
        if (!account) return;
        const dropped = Boolean(res.locals.dropped);
        const recorded = journal.record(account, {
          at: new Date(startedAt + account.clock.offsetMs).toISOString(),
          method: req.method.toUpperCase(),
          path: req.path,
          operation,
          // 0: the connection was cut by a scenario's drop action, so no status was sent.
          status: dropped ? 0 : res.statusCode,
          duration_ms: Math.round(durationMs * 100) / 100,
          request,
          response: { body: dropped || res.locals.responseBody === undefined ? null : redact(res.locals.responseBody) },
        }, templateOf(operation));
        if (recorded) deps.activity.emit('request', account, recorded);
      }).catch((error) => deps.log.warn({ err: error }, 'journal entry not recorded')));
    };
    res.on('finish', finish);
    res.on('close', finish);
    next();
  };
}

// Both wait for entries still being recorded (a refused request's account is found asynchronously),
// so a request that has been answered is always in the journal a later call reads.
const listRequests: Handler = async ({ deps, account, query }) => {
  await journalOf(deps).settled();
  return ok({ data: journalOf(deps).list(account, { method: query.method, path: query.path, status: query.status, limit: query.limit }) });
};

const clearRequests: Handler = async ({ deps, account }) => {
  await journalOf(deps).settled();
  return ok({ deleted: journalOf(deps).clear(account) });
};

export const journalFeature: Feature = {
  name: 'journal',
  control: { sandboxListRequests: listRequests, sandboxClearRequests: clearRequests },
  install(deps) {
    deps.services.set(JOURNAL, new Journal(deps.config.journalSize, deps.store));
  },
  // Registered after the control plane (whose requests are not journaled) and before the API catch-all.
  routes(app, deps) {
    app.use(journalMiddleware(deps));
  },
};
