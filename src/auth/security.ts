// Owns the checks behind the document's security schemes: OAuth access tokens (with scopes, key
// revocation, environment and the per-key rate limit) and checkout tokens for the checkout surface.
// Both expire in real time (deps.realNow), never on the account clock, or when the account's tokens
// are expired through the control plane.
import type { Context } from 'openapi-backend';
import type { Deps } from '../deps.js';
import { ApiError, Errors } from '../http/errors.js';
import type { Principal } from '../http/context.js';
import type { RequestState, SecurityHandler } from '../http/router.js';
import { assertCurrentGeneration, scopeAllows, type AccessClaims } from './tokens.js';

export const CHECKOUT_AUDIENCE = 'checkout';

export interface CheckoutClaims {
  partner_id: string;
  client_id: string;
  customer_id: string;
  invoice_id: string;
  environment: string;
  exp: number;
  gen?: number;
}

function bearer(state: RequestState): string {
  const header = state.req.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match) throw new ApiError(Errors.unauthorized, { message: 'An access token is required: Authorization: Bearer <ACCESS_TOKEN>.' });
  return match[1];
}

/**
 * A token's claims, checked in real time, naming a partner that exists, and not expired by
 * POST /_sandbox/tokens/expire on the account it names.
 */
async function verifiedClaims<T extends { partner_id: string; environment: string; gen?: number }>(deps: Deps, verify: (now: Date) => Promise<T>): Promise<T> {
  const claims = await verify(new Date(deps.realNow()));
  if (typeof claims.partner_id !== 'string' || !Object.hasOwn(deps.store.data.partners, claims.partner_id)
    || (claims.environment !== 'production' && claims.environment !== 'demo')) {
    throw new ApiError(Errors.unauthorized, { message: 'The access token is invalid.' });
  }
  assertCurrentGeneration(deps.store.account(claims.partner_id, claims.environment), claims);
  return claims;
}

/** An API access token's claims (also how the control plane learns which account a call acts on). */
export function verifiedAccessClaims(deps: Deps, token: string): Promise<AccessClaims> {
  return verifiedClaims(deps, (now) => deps.tokens.verifyAccess(token, now));
}

/** Checks shared by both kinds of token: issued in this environment, by a live key, within its rate. */
function admitIssuer(deps: Deps, claims: { environment: string; client_id: string; partner_id: string }, state: RequestState, what: string): void {
  if (claims.environment !== state.environment) {
    throw new ApiError(Errors.unauthorized, { message: `This ${what} was issued for the ${claims.environment} environment.` });
  }
  if (!deps.partners.isLive(claims.client_id)) {
    throw new ApiError(Errors.unauthorized, { message: `The key that issued this ${what} was revoked.` });
  }
  deps.rateLimiter.take(claims.client_id, deps.partners.rateLimitFor(claims.partner_id, deps.config.rateLimit));
}

export function accessTokenSecurity(deps: Deps): SecurityHandler {
  return async (c: Context, state: RequestState): Promise<Principal> => {
    const claims = await verifiedAccessClaims(deps, bearer(state));
    admitIssuer(deps, claims, state, 'token');
    const required = (c.operation.security ?? []).flatMap((requirement) => requirement.oauth2 ?? []);
    const missing = required.filter((scope) => !scopeAllows(claims.scope, scope));
    if (missing.length) {
      throw new ApiError(Errors.forbidden, { message: `This operation needs the scope ${missing.join(', ')}.` });
    }
    return principalFrom(claims);
  };
}

function principalFrom(claims: AccessClaims): Principal {
  return { kind: 'access', partner_id: claims.partner_id, environment: claims.environment, client_id: claims.client_id, scope: claims.scope };
}

export function checkoutTokenSecurity(deps: Deps): SecurityHandler {
  return async (_c: Context, state: RequestState): Promise<Principal> => {
    const token = bearer(state);
    const claims = await verifiedClaims(deps, (now) => deps.tokens.verifyFor<CheckoutClaims>(token, CHECKOUT_AUDIENCE, now));
    admitIssuer(deps, claims, state, 'checkout token');
    return {
      kind: 'checkout',
      partner_id: claims.partner_id,
      environment: state.environment,
      client_id: claims.client_id,
      scope: '',
      customer_id: claims.customer_id,
      invoice_id: claims.invoice_id,
    };
  };
}

/** The token endpoint checks its Basic header itself (403 per the spec, not 401). */
export const clientBasicSecurity: SecurityHandler = async () => true;
