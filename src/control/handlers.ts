// Owns the core of the control plane (/_sandbox): health, reset, partners and keys, the account
// clock, and accounting sync. Account-scoped calls act on the account of the API access token in
// Authorization, else on the default partner's production account. Partner-scoped calls (a
// partner's keys) reach the token's partner, any partner with the admin token, else the default one.
import type { Request } from 'express';
import { VERSION } from '../config.js';
import type { Deps } from '../deps.js';
import type { Feature } from '../feature.js';
import { DEFAULT_PARTNER_ID, publicKey } from '../auth/partners.js';
import { expireTokens } from '../auth/tokens.js';
import { failedJobs, type FailedJob } from '../clock/scheduler.js';
import { verifiedAccessClaims } from '../auth/security.js';
import { ApiError, Errors, invalidFields } from '../errors.js';
import { parseBearer } from '../auth/authorization-header.js';
import { LIMITS } from '../limits.js';
import { created, ok, type Handler, type Principal } from '../http/context.js';
import type { Account } from '../store/store.js';
import { runSync, SYNC_ORDER } from './accounting-sync.js';

/** Who calls the control plane: the account it acts on, whether a token named it, whether the admin token came. */
export type ControlPrincipal = Principal & { explicit: boolean; admin: boolean };

/** Admin token check, then the account the call acts on. */
export async function resolveControlPrincipal(deps: Deps, req: Request): Promise<ControlPrincipal> {
  const adminToken = deps.config.adminToken;
  const bearer = parseBearer(req.headers.authorization);
  let accessToken = bearer;
  if (adminToken) {
    const viaHeader = req.headers['x-sandbox-admin-token'] === adminToken;
    const viaBearer = bearer === adminToken;
    if (!viaHeader && !viaBearer) {
      throw new ApiError(Errors.unauthorized, { message: 'The control plane needs the admin token: Authorization: Bearer <token> or X-Sandbox-Admin-Token.' });
    }
    if (viaBearer) accessToken = undefined;
  }
  const admin = Boolean(adminToken);
  const named = req.headers['x-sandbox-account'];
  if (named !== undefined) {
    const token = accessToken ? await verifiedAccessClaims(deps, accessToken) : undefined;
    return namedAccount(deps, req, Array.isArray(named) ? named.join(',') : named, token?.partner_id, admin);
  }
  if (!accessToken) {
    return { kind: 'default', partner_id: DEFAULT_PARTNER_ID, environment: 'production', client_id: null, scope: 'read write', explicit: false, admin };
  }
  const claims = await verifiedAccessClaims(deps, accessToken);
  if (!deps.partners.isLive(claims.client_id)) throw new ApiError(Errors.unauthorized, { message: 'The key that issued this token was revoked.' });
  return { kind: 'access', partner_id: claims.partner_id, environment: claims.environment, client_id: claims.client_id, scope: claims.scope, explicit: true, admin };
}

const NAMED_ACCOUNT = /^([A-Za-z0-9_-]{1,64}):(production|demo)$/;

/** Whether the request comes from this machine (IPv4, IPv6 or IPv4-mapped loopback). */
export function fromLoopback(req: Request): boolean {
  const peer = req.socket.remoteAddress ?? '';
  return peer === '::1' || /^(::ffff:)?127\./.test(peer);
}

/**
 * The account an `X-Sandbox-Account: partner_id:environment` header names (the web inspector picks
 * accounts this way, having no partner's secret). Reachable: any account with the admin token; with
 * an access token, only that token's partner; with neither, any account from a loopback caller (the
 * laptop: whoever connects from this machine can read its data file too), else only the default
 * partner. Another partner's account answers 404, exactly as one that does not exist.
 */
function namedAccount(deps: Deps, req: Request, value: string, tokenPartner: string | undefined, admin: boolean): ControlPrincipal {
  const match = NAMED_ACCOUNT.exec(value);
  if (!match) throw invalidFields({ 'X-Sandbox-Account': 'must be partner_id:environment, the environment production or demo' });
  const [, partnerId, named] = match;
  const environment = named === 'demo' ? 'demo' : 'production';
  const reachable = tokenPartner !== undefined ? partnerId === tokenPartner
    : admin || fromLoopback(req) || partnerId === DEFAULT_PARTNER_ID;
  if (!reachable || !Object.hasOwn(deps.store.data.partners, partnerId)) {
    throw new ApiError(Errors.notFound, { message: `No account ${value}.` });
  }
  return { kind: 'default', partner_id: partnerId, environment, client_id: null, scope: 'read write', explicit: true, admin };
}

/** The partner a partner-scoped call may reach: undefined (any) with the admin token, else the caller's own. */
function reachable(principal: Principal): string | undefined {
  const control = principal as ControlPrincipal;
  return control.admin ? undefined : control.partner_id;
}

function clockView(account: Account) {
  return { now: account.clock.iso(), offset_seconds: account.clock.offsetMs / 1000 };
}

/** Failed due jobs, newest first. */
function newestFirst(jobs: readonly FailedJob[]): FailedJob[] {
  return [...jobs].reverse();
}

const reset: Handler<'sandboxReset'> = async ({ deps, account, principal }) => {
  if ((principal as ControlPrincipal).explicit) {
    // A new account takes this one's place: work still under way on it writes nothing (409 account_replaced).
    account.reset();
    return ok({ reset: 'account' });
  }
  // Answered once every reset step is done (the default partner, fixtures loaded again).
  await deps.store.resetAll();
  return ok({ reset: 'all' });
};

const createPartner: Handler<'sandboxCreatePartner'> = ({ deps, body }) => {
  const { partner, keys } = deps.partners.createPartner(body?.name, body?.rate_limit);
  const credentials = (env: 'production' | 'demo') => ({ client_id: keys[env].key.client_id, client_secret: keys[env].client_secret });
  return created({ id: partner.id, name: partner.name, rate_limit: partner.rate_limit, credentials: { production: credentials('production'), demo: credentials('demo') } });
};

const createKey: Handler<'sandboxCreateKey'> = ({ deps, principal, params, body }) => {
  const issued = deps.partners.createKey(params.id, body.environment, body.name, body.scopes ?? null, reachable(principal));
  const { revoked_at: _revoked, ...shown } = publicKey(issued.key);
  return created({ ...shown, client_secret: issued.client_secret });
};

const LATEST_MS = Date.parse(LIMITS.clockLatest);

/**
 * Where an advance would take the clock, refused (400 naming the field, nothing moved) when it goes
 * back, more than 100 years ahead, or past 9999-12-31T23:59:59Z: a Date beyond that cannot be
 * written as RFC 3339, and every later call of the account would fail on it.
 */
function advanceTarget(account: Account, body: { seconds?: number; to?: string }): number {
  const now = account.clock.nowMs();
  const field = body.to !== undefined ? 'to' : 'seconds';
  const target = body.to !== undefined ? Date.parse(body.to) : now + Number(body.seconds) * 1000;
  if (body.to !== undefined && !(target >= now)) {
    throw new ApiError(Errors.unprocessable, {
      message: 'The clock only moves forward.',
      validation_errors: { to: 'must not be earlier than the account clock\'s now' },
    });
  }
  if (!(target - now <= LIMITS.clockAdvanceMaxSeconds * 1000)) {
    throw invalidFields({ [field]: `must move the clock at most ${LIMITS.clockAdvanceMaxSeconds} seconds (100 years) in one advance` });
  }
  if (!(target <= LATEST_MS)) {
    throw invalidFields({ [field]: `must not move the clock past ${LIMITS.clockLatest}, the latest instant the sandbox's clock reads (now ${account.clock.iso()})` });
  }
  return target;
}

/**
 * An advance as the scheduler plans it in the account's turn (after any advance before it, so two
 * advances of 60 seconds sent together move the clock 120 seconds): its target read from the clock
 * then, and the answer made once the due jobs ran, naming only the jobs this advance saw fail.
 */
function advancePlan(account: Account, body: { seconds?: number; to?: string }) {
  const offsetBefore = account.clock.offsetMs;
  const lastFailedBefore = failedJobs(account).at(-1);
  return {
    targetMs: advanceTarget(account, body),
    done: (ran: number) => {
      // The move to the target reads real time again, a millisecond or more later when due work ran
      // or the machine is busy: `seconds` adds exactly that many seconds to the offset all the same.
      if (body.to === undefined) account.transaction(() => account.clock.raiseOffsetTo(offsetBefore + Number(body.seconds) * 1000));
      // Read at once: the clock goes on with real time, and `to` should read as given when it can.
      const all = failedJobs(account);
      const fresh = lastFailedBefore ? all.slice(all.indexOf(lastFailedBefore) + 1) : all;
      return { ...clockView(account), ran, failed_jobs: newestFirst(fresh) };
    },
  };
}

const advanceClock: Handler<'sandboxAdvanceClock'> = async ({ deps, account, body }) => {
  const answer = await deps.scheduler.advanceInTurn(account, () => advancePlan(account, body));
  deps.activity.emit('clock', account);
  return ok(answer);
};

/** Every token of the account (access and checkout) expires now; the next call with one answers 401. */
const expireAccountTokens: Handler<'sandboxExpireTokens'> = ({ deps, account }) => {
  expireTokens(account);
  return ok({ partner_id: account.partnerId, environment: account.environment, expired_at: new Date(deps.realNow()).toISOString() });
};

const accountingSync: Handler<'sandboxAccountingSync'> = (ctx) => {
  const body = ctx.body ?? {};
  const unknown = Object.keys(body).filter((kind) => !(SYNC_ORDER as readonly string[]).includes(kind));
  if (unknown.length) {
    throw new ApiError(Errors.notImplemented, { message: `Accounting sync of ${unknown.join(', ')} is not implemented by the sandbox yet.` });
  }
  return created(runSync(ctx, body));
};

export const controlFeature: Feature = {
  name: 'control',
  control: {
    sandboxHealth: ({ deps }) => {
      const degraded = deps.store.degraded;
      // Still 200: the sandbox answers, and reads go on; writes answer 503 storage_unavailable until the data file takes them.
      return ok(degraded
        ? { status: 'degraded', version: VERSION, reason: `the data file cannot be written (${degraded.reason}); writes answer 503 storage_unavailable until it can`, since: degraded.since }
        : { status: 'ok', version: VERSION, reason: null, since: null });
    },
    sandboxReset: reset,
    sandboxCreatePartner: createPartner,
    sandboxCreateKey: createKey,
    sandboxRenameKey: ({ deps, principal, params, body }) => ok(publicKey(deps.partners.rename(params.client_id, body.name, reachable(principal)))),
    sandboxRevokeKey: ({ deps, principal, params }) => ok(publicKey(deps.partners.revoke(params.client_id, reachable(principal)))),
    sandboxGetClock: ({ account }) => ok({ ...clockView(account), failed_jobs: newestFirst(failedJobs(account)) }),
    sandboxAdvanceClock: advanceClock,
    sandboxAccountingSync: accountingSync,
    sandboxExpireTokens: expireAccountTokens,
  },
};
