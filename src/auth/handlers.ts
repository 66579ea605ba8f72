// Owns POST /oauth/token: the client (already authenticated from its Basic header by
// clientBasicSecurity), grant_type and the optional OAuth `scope` in a form body.
import type { Handler } from '../http/context.js';
import { ApiError, Errors } from '../errors.js';
import { loadDocument } from '../http/openapi.js';
import { scopeAllows, tokenGeneration } from './tokens.js';

let known: Set<string> | undefined;
/** Every scope the API document's OAuth scheme defines. */
function knownScopes(): Set<string> {
  const schemes = loadDocument('openapi').document.components?.securitySchemes as
    Record<string, { flows?: { clientCredentials?: { scopes?: Record<string, string> } } }> | undefined;
  known ??= new Set(Object.keys(schemes?.oauth2?.flows?.clientCredentials?.scopes ?? {}));
  return known;
}

/**
 * The token's scope: the key's own, or the subset the form's `scope` asks for (RFC 6749 3.3:
 * space-separated). A scope the API does not define, or one the key was not granted: 400 invalid_scope.
 */
/**
 * The scopes a refusal names: at most five, each cut at 40 characters, and how many more. The
 * message must stay within the document's 1,000 characters however long the asked scope was.
 */
function named(scopes: string[]): string {
  const shown = scopes.slice(0, 5).map((scope) => (scope.length > 40 ? `${scope.slice(0, 40)}…` : scope)).join(', ');
  return scopes.length > 5 ? `${shown} and ${scopes.length - 5} more` : shown;
}

function grantedScope(keyScope: string, requested: unknown): string {
  const asked = typeof requested === 'string' ? [...new Set(requested.split(' ').filter(Boolean))] : [];
  if (!asked.length) return keyScope;
  const unknown = asked.filter((scope) => !knownScopes().has(scope));
  const refused = asked.filter((scope) => knownScopes().has(scope) && !scopeAllows(keyScope, scope));
  if (unknown.length || refused.length) {
    const why = [
      unknown.length ? `${named(unknown)} ${unknown.length > 1 ? 'are' : 'is'} not a scope of the API` : '',
      refused.length ? `${named(refused)} ${refused.length > 1 ? 'were' : 'was'} not granted to this key (it has: ${keyScope})` : '',
    ].filter(Boolean).join('; ');
    throw new ApiError(Errors.invalidScope, { validation_errors: { scope: why } });
  }
  return asked.join(' ');
}

export const createToken: Handler<'createToken'> = async ({ deps, principal, account, body }) => {
  if (body?.grant_type !== 'client_credentials') throw new ApiError(Errors.invalidGrant, { validation_errors: { grant_type: 'must be client_credentials' } });
  const scope = grantedScope(principal.scope, body.scope);
  const accessToken = await deps.tokens.signAccess(
    { partner_id: principal.partner_id, environment: principal.environment, client_id: principal.client_id as string, scope, gen: tokenGeneration(account) },
    deps.realNow(), // real time, not the account clock: clients cache tokens by wall-clock expires_in
  );
  return { status: 200, body: { access_token: accessToken, token_type: 'Bearer', expires_in: deps.tokens.ttlSeconds }, headers: { 'Cache-Control': 'no-store' } };
};
