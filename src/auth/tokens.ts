// Owns access tokens: HS256 JWTs signed with jose, valid one hour on the account clock, naming
// partner, environment, client and scopes. Verification refuses every other algorithm (alg none too).
import { createSecretKey, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Environment } from '../config.js';
import { ApiError, Errors } from '../http/errors.js';

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
const ISSUER = 'billing-sandbox';
const ACCESS_AUDIENCE = 'partner-api';

export interface AccessClaims {
  partner_id: string;
  environment: Environment;
  client_id: string;
  /** Space-separated scopes; a full-access key gets the generic "read write". */
  scope: string;
}

export class TokenSigner {
  // A KeyObject made once: jose would otherwise import raw key bytes again on every sign and verify.
  private readonly key: KeyObject;

  constructor(secret: string) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  async signAccess(claims: AccessClaims, nowMs: number): Promise<string> {
    const iat = Math.floor(nowMs / 1000);
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(ACCESS_AUDIENCE)
      .setSubject(claims.client_id)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ACCESS_TOKEN_TTL_SECONDS)
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

  /** Claims of a token for `audience`, checked at `now` (an account clock); any failure is a 401. */
  async verifyFor<T>(token: string, audience: string, now: Date): Promise<T> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, audience, currentDate: now });
      return payload as T;
    } catch (error) {
      const expired = error instanceof joseErrors.JWTExpired;
      throw new ApiError(Errors.unauthorized, { message: expired ? 'The access token has expired.' : 'The access token is invalid.' });
    }
  }

  /** Unverified claims, only to find which account's clock to verify against. */
  static peek(token: string): Partial<AccessClaims> | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    try {
      const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
      return payload && typeof payload === 'object' ? payload : undefined;
    } catch {
      return undefined;
    }
  }

  verifyAccess(token: string, now: Date): Promise<AccessClaims> {
    return this.verifyFor<AccessClaims>(token, ACCESS_AUDIENCE, now);
  }
}

/** Does the granted scope list allow `required`? "read"/"write" cover every area's read/write. */
export function scopeAllows(granted: string, required: string): boolean {
  const scopes = granted.split(' ').filter(Boolean);
  if (scopes.includes(required)) return true;
  const access = required.split(':')[1];
  return access !== undefined && scopes.includes(access);
}

export function scopeClaim(scopes: string[] | null): string {
  return scopes === null ? 'read write' : scopes.join(' ');
}
