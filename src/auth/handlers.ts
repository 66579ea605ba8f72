// Owns POST /oauth/token: client credentials in a Basic header, grant_type in a form body.
import type { Handler } from '../http/context.js';
import { ApiError, Errors } from '../http/errors.js';
import { scopeClaim, tokenGeneration } from './tokens.js';
import { parseBasic } from './partners.js';

function basicCredentials(header: string | undefined): { clientId: string; secret: string } {
  const credentials = parseBasic(header);
  if (!credentials) {
    throw new ApiError(Errors.invalidClient, { message: 'Send the client credentials as Authorization: Basic BASE64(client_id:client_secret).' });
  }
  return credentials;
}

export const createToken: Handler = async ({ deps, req, res, body }) => {
  const environment = res.locals.environment;
  const { clientId, secret } = basicCredentials(req.headers.authorization);
  const key = deps.partners.authenticate(clientId, secret);
  if (!key || key.environment !== environment) throw new ApiError(Errors.invalidClient);
  deps.rateLimiter.take(key.client_id, deps.partners.rateLimitFor(key.partner_id, deps.config.rateLimit));
  if (body?.grant_type !== 'client_credentials') throw new ApiError(Errors.invalidGrant, { validation_errors: { grant_type: 'must be client_credentials' } });
  const account = deps.store.account(key.partner_id, key.environment);
  res.locals.account = account;
  const accessToken = await deps.tokens.signAccess(
    { partner_id: key.partner_id, environment: key.environment, client_id: key.client_id, scope: scopeClaim(key.scopes), gen: tokenGeneration(account) },
    deps.realNow(), // real time, not the account clock: clients cache tokens by wall-clock expires_in
  );
  return { status: 200, body: { access_token: accessToken, token_type: 'Bearer', expires_in: deps.tokens.ttlSeconds }, headers: { 'Cache-Control': 'no-store' } };
};
