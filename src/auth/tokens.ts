// Owns access tokens: HS256 JWTs signed with jose, naming partner, environment, client and scopes.
// Tokens (access and checkout) live in real time, never on the account clock: a partner's client
// caches them by wall-clock expires_in, so moving a clock must not expire them. Verification refuses
// every other algorithm (alg none too). Each account also has a token generation that
// POST /_sandbox/tokens/expire moves on, expiring every token issued before it.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Environment } from '../config.js';
import { ApiError, Errors } from '../errors.js';
import type { Account } from '../store/store.js';
import { LIMITS } from '../limits.js';
import { defineStateValue } from '../store/module-state.js';

/** `expires_in` of access tokens and the life of checkout tokens, in real seconds (--token-ttl changes it). */
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;
const ISSUER = 'billing-sandbox';
export const ACCESS_AUDIENCE = 'partner-api';

export interface AccessClaims {
  partner_id: string;
  environment: Environment;
  client_id: string;
  /** Space-separated scopes; a full-access key gets the generic "read write". */
  scope: string;
  /** The account's token generation when issued (absent in tokens of older versions: 0). */
  gen?: number;
}

/**
 * A verified token's claims and its expiry (jose's rule: valid while exp > now, in seconds). No
 * `nbf`: jose checked it when it verified the token, and real time does not go back.
 */
interface Verified {
  claims: Readonly<Record<string, unknown>>;
  exp?: number;
}

export class TokenSigner {
  // A KeyObject made once: jose would otherwise import raw key bytes again on every sign and verify.
  private readonly key: KeyObject;
  /**
   * Tokens whose signature and claims were verified, keyed by audience and token text, so a client
   * reusing its token (every request) is not verified again: the signature cannot change, and expiry
   * is checked against the cached exp on every use. Revocation (key revoked, tokens expired through
   * the control plane) is checked by the caller on every request, never cached. Bounded by
   * LIMITS.verifiedTokens: beyond it the oldest entry goes (Map keeps insertion order).
   */
  private readonly verified = new Map<string, Verified>();

  /** @param ttlSeconds how long the tokens it signs live, in real seconds. */
  constructor(secret: string, readonly ttlSeconds: number = DEFAULT_TOKEN_TTL_SECONDS) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /** An access token issued at `nowMs` (real time), expiring `ttlSeconds` later. */
  async signAccess(claims: AccessClaims, nowMs: number): Promise<string> {
    const iat = Math.floor(nowMs / 1000);
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(ACCESS_AUDIENCE)
      .setSubject(claims.client_id)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
      .setJti(crypto.randomUUID())
      .sign(this.key);
  }

  /** Sign any claims for another audience (checkout tokens, signed links), expiring at `expSeconds`. */
  async signFor(audience: string, claims: Record<string, unknown>, nowMs: number, expSeconds: number): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setIssuedAt(Math.floor(nowMs / 1000))
      .setExpirationTime(expSeconds)
      .sign(this.key);
  }

  /** Claims of a token for `audience` verified before and still within its times at `now`; undefined otherwise. */
  cached<T>(token: string, audience: string, now: Date): T | undefined {
    const hit = this.verified.get(`${audience} ${token}`);
    if (!hit) return undefined;
    const seconds = Math.floor(now.getTime() / 1000);
    if (hit.exp !== undefined && hit.exp <= seconds) return undefined;
    return hit.claims as T;
  }

  /** Claims of a token for `audience`, checked at `now` (real time); any failure is a 401. The claims are shared: read only. */
  async verifyFor<T>(token: string, audience: string, now: Date): Promise<T> {
    const hit = this.cached<T>(token, audience, now);
    if (hit) return hit;
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, audience, currentDate: now });
      this.remember(`${audience} ${token}`, payload);
      return payload as T;
    } catch (error) {
      const expired = error instanceof joseErrors.JWTExpired;
      throw new ApiError(Errors.unauthorized, { message: expired ? 'The access token has expired.' : 'The access token is invalid.' });
    }
  }

  private remember(key: string, payload: Record<string, unknown>): void {
    if (this.verified.size >= LIMITS.verifiedTokens) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(key, {
      claims: Object.freeze(payload),
      exp: typeof payload.exp === 'number' ? payload.exp : undefined,
    });
  }

  /** Unverified claims, only to find which account a token names (the journal, the control plane). */
  static peek(token: string): Partial<AccessClaims> | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    try {
      const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
      // Unverified, so only a hint: callers read the account ids from it and check what they find.
      return payload && typeof payload === 'object' ? payload : undefined;
    } catch {
      return undefined;
    }
  }

  verifyAccess(token: string, now: Date): Promise<AccessClaims> {
    return this.verifyFor<AccessClaims>(token, ACCESS_AUDIENCE, now);
  }
}

const tokenState = defineStateValue<TokenState>('tokens', () => ({ generation: 0 }), {
  type: 'object', required: ['generation'], properties: { generation: { type: 'integer', minimum: 0 } },
});

interface TokenState {
  /** Tokens carrying a lower generation have expired (POST /_sandbox/tokens/expire). */
  generation: number;
}

/** The account's current token generation: new tokens carry it. */
export function tokenGeneration(account: Account): number {
  return tokenState.read(account).generation;
}

/** Expire every token of the account issued so far (access and checkout); answers the new generation. */
export function expireTokens(account: Account): number {
  return tokenState.update(account, (state) => (state.generation += 1));
}

/**
 * A generation counter rather than a cut-off time: tests freeze real time, and a token issued in the
 * same millisecond as the expiry must still be valid.
 */
export function assertCurrentGeneration(account: Account, claims: { gen?: unknown }): void {
  const gen = typeof claims.gen === 'number' ? claims.gen : 0;
  if (gen < tokenGeneration(account)) throw new ApiError(Errors.unauthorized, { message: 'The access token has expired.' });
}

/** The request a client sends to POST /oauth/token for a key (the programmatic helpers and the CLI). */
export function tokenRequestInit(clientId: string, clientSecret: string): RequestInit {
  return {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  };
}

/** Does the granted scope list allow `required`? "read"/"write" cover every area's read/write. */
export function scopeAllows(granted: string, required: string): boolean {
  // An empty entry (two spaces) matches nothing: no required scope is empty.
  const scopes = granted.split(' ');
  // "read" or "write" alone covers every area's; a scope without an area part matches only itself.
  return scopes.includes(required) || scopes.includes(required.split(':')[1]);
}

export function scopeClaim(scopes: string[] | null): string {
  return scopes === null ? 'read write' : scopes.join(' ');
}
