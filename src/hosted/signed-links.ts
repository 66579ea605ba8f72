// Owns signed links: absolute URLs under /hosted/files/... that carry an expiry (account clock,
// epoch seconds) and an HMAC-SHA256 signature over account, path and expiry. A tampered or
// expired link answers 403.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import type { Deps } from '../deps.js';
import { ApiError, Errors } from '../errors.js';
import type { Account } from '../store/store.js';

export const SIGNED_LINK_TTL_SECONDS = 3600;

function signature(deps: Deps, accountId: string, path: string, exp: number): string {
  return createHmac('sha256', deps.store.data.meta.signing_key).update(`${accountId}\n${path}\n${exp}`).digest('base64url');
}

/** An absolute link to `path` (which must start with /hosted/) for this account. */
export function signLink(deps: Deps, account: Account, origin: string, path: string, ttlSeconds = SIGNED_LINK_TTL_SECONDS): string {
  const exp = Math.floor(account.clock.nowMs() / 1000) + ttlSeconds;
  const query = new URLSearchParams({ account: account.id, exp: String(exp), sig: signature(deps, account.id, path, exp) });
  return `${origin}${path}?${query}`;
}

/** The account a signed request belongs to, after checking signature and expiry on its clock. */
export function verifyLink(deps: Deps, req: Request): Account {
  const path = req.baseUrl + req.path;
  const { account: accountId, exp, sig } = req.query as Record<string, string | undefined>;
  const [partnerId, environment] = (accountId ?? '').split(':');
  // exp is signed as the decimal the link carries: `0x...`, `1e9` or ` 123` would read as the same
  // number and pass the signature with another spelling.
  if (!accountId || !exp || !/^[0-9]+$/.test(exp) || !sig || !Object.hasOwn(deps.store.data.partners, partnerId) || (environment !== 'production' && environment !== 'demo')) {
    throw new ApiError(Errors.linkForbidden);
  }
  const expected = Buffer.from(signature(deps, accountId, path, Number(exp)));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new ApiError(Errors.linkForbidden);
  const account = deps.store.account(partnerId, environment);
  if (Number(exp) * 1000 < account.clock.nowMs()) throw new ApiError(Errors.linkForbidden, { message: 'The link has expired.' });
  return account;
}
