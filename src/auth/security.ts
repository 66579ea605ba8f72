// Owns the checks behind the document's security schemes: OAuth access tokens (with scopes, key
// revocation, environment and the per-key rate limit), checkout tokens for the checkout surface,
// and the token endpoint's client credentials (Basic). Access and checkout tokens expire in real
// time (deps.realNow), never on the account clock, or when the account's tokens are expired through
// the control plane.
import type { Context } from 'openapi-backend';
import type { Deps } from '../deps.js';
import { ApiError, Errors } from '../errors.js';
import type { Principal } from '../http/context.js';
import type { RequestState, SecurityHandler } from '../http/router.js';
import { ACCESS_AUDIENCE, assertCurrentGeneration, scopeAllows, scopeClaim, type AccessClaims } from './tokens.js';
import { parseBasic, parseBearer } from './authorization-header.js';

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
  const token = parseBearer(state.req.headers.authorization);
  if (!token) throw new ApiError(Errors.unauthorized, { message: 'An access token is required: Authorization: Bearer <ACCESS_TOKEN>.' });
  return token;
}

/**
 * A token's claims, checked in real time, naming a partner that exists, and not expired by
 * POST /_sandbox/tokens/expire on the account it names. A token verified before (TokenSigner's
 * cache) is answered synchronously: the common request pays for no promise.
 */
function verifiedClaims<T extends { partner_id: string; environment: string; gen?: number }>(deps: Deps, token: string, audience: string): T | Promise<T> {
  const now = new Date(deps.realNow());
  const cached = deps.tokens.cached<T>(token, audience, now);
  if (cached) return admitted(deps, cached);
  return deps.tokens.verifyFor<T>(token, audience, now).then((claims) => admitted(deps, claims));
}

function admitted<T extends { partner_id: string; environment: string; gen?: number }>(deps: Deps, claims: T): T {
  if (typeof claims.partner_id !== 'string' || !Object.hasOwn(deps.store.data.partners, claims.partner_id)
    || (claims.environment !== 'production' && claims.environment !== 'demo')) {
    throw new ApiError(Errors.unauthorized, { message: 'The access token is invalid.' });
  }
  assertCurrentGeneration(deps.store.account(claims.partner_id, claims.environment), claims);
  return claims;
}

/** An API access token's claims (also how the control plane learns which account a call acts on). */
export async function verifiedAccessClaims(deps: Deps, token: string): Promise<AccessClaims> {
  return verifiedClaims<AccessClaims>(deps, token, ACCESS_AUDIENCE);
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

/** The scopes each operation requires, read from the document once per operation. */
const scopesOf = new WeakMap<object, string[]>();

export function accessTokenSecurity(deps: Deps): SecurityHandler {
  const admit = (c: Context, state: RequestState, claims: AccessClaims): Principal => {
    admitIssuer(deps, claims, state, 'token');
    let required = scopesOf.get(c.operation);
    if (!required) scopesOf.set(c.operation, (required = (c.operation.security ?? []).flatMap((requirement) => requirement.oauth2 ?? [])));
    const missing = required.length === 0 ? required : required.filter((scope) => !scopeAllows(claims.scope, scope));
    if (missing.length) {
      throw new ApiError(Errors.forbidden, { message: `This operation needs the scope ${missing.join(', ')}.` });
    }
    return principalFrom(claims);
  };
  return (c: Context, state: RequestState) => {
    const claims = verifiedClaims<AccessClaims>(deps, bearer(state), ACCESS_AUDIENCE);
    return claims instanceof Promise ? claims.then((verified) => admit(c, state, verified)) : admit(c, state, claims);
  };
}

function principalFrom(claims: AccessClaims): Principal {
  return { kind: 'access', partner_id: claims.partner_id, environment: claims.environment, client_id: claims.client_id, scope: claims.scope };
}

export function checkoutTokenSecurity(deps: Deps): SecurityHandler {
  const admit = (state: RequestState, claims: CheckoutClaims): Principal => {
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
  return (_c: Context, state: RequestState) => {
    const claims = verifiedClaims<CheckoutClaims>(deps, bearer(state), CHECKOUT_AUDIENCE);
    return claims instanceof Promise ? claims.then((verified) => admit(state, verified)) : admit(state, claims);
  };
}

const FORM = 'application/x-www-form-urlencoded';
const SEND_BASIC = 'Send the client credentials as Authorization: Basic BASE64(client_id:client_secret).';

/**
 * The token endpoint's client authentication, run before its form is read or validated: the Basic
 * header's key (403 invalid_client per the spec for a missing or malformed header, an unknown or
 * revoked key, a wrong secret or a key of the other environment), then its rate limit, then the
 * request's form (415 for a body of any other type: the spec's token request is a form, and an
 * authenticated client is told why its body was not read). Credentials in the form body are not
 * read: the spec names the Basic header only.
 */
export function clientBasicSecurity(deps: Deps): SecurityHandler {
  return (_c: Context, state: RequestState): Principal => {
    const { req } = state;
    const credentials = parseBasic(req.headers.authorization);
    if (!credentials) {
      const body: unknown = req.body;
      const inBody = body !== null && typeof body === 'object' && ('client_id' in body || 'client_secret' in body);
      throw new ApiError(Errors.invalidClient, {
        message: inBody ? `Client credentials in the form body are not accepted. ${SEND_BASIC}` : SEND_BASIC,
      });
    }
    const key = deps.partners.authenticate(credentials.clientId, credentials.secret);
    if (!key || key.environment !== state.environment) throw new ApiError(Errors.invalidClient);
    deps.rateLimiter.take(key.client_id, deps.partners.rateLimitFor(key.partner_id, deps.config.rateLimit));
    // An empty body is no body: the form's own rules answer it (400 naming grant_type).
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0;
    if (hasBody && !req.is(FORM)) {
      throw new ApiError(Errors.unsupportedMediaType, {
        message: `The token request must be a form: Content-Type: ${FORM}.`,
        validation_errors: { 'Content-Type': `must be ${FORM}` },
      });
    }
    return { kind: 'access', partner_id: key.partner_id, environment: key.environment, client_id: key.client_id, scope: scopeClaim(key.scopes) };
  };
}
