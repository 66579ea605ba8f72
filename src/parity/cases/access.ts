// Owns the parity cases of access: the token endpoint (form body, Basic header, grant_type, 400 and
// 403), the 401s of the API, and the isolation of the two environments with one key.
import type { ParityCase } from '../case.js';

const TOKEN_REQUEST = 'Token request: POST /oauth/token, Content-Type application/x-www-form-urlencoded, body field grant_type=client_credentials (required, the only allowed value), header `Authorization: Basic <BASE64(client_id:client_secret)>`.';
const TOKEN_403 = '403 | valid token lacking permission; on POST /oauth/token, wrong client_id, client_secret or Basic header';
const API_401 = '401 | missing, invalid or expired access token';

/** The token endpoint's refusals, as data: what is sent, what the spec answers. */
const tokenRefusals: Array<{ name: string; title: string; status: number; form?: string; auth?: (c: { basic: (id: string, secret: string) => string; id: string }) => string; rule: 'grant' | 'client' }> = [
  { name: 'grant-type-missing', title: 'a token request without grant_type is refused with 400', status: 400, form: '', rule: 'grant' },
  { name: 'grant-type-unsupported', title: 'a grant_type other than client_credentials is refused with 400', status: 400, form: 'grant_type=password', rule: 'grant' },
  { name: 'wrong-secret', title: 'a wrong client_secret is refused with 403', status: 403, auth: ({ basic, id }) => basic(id, 'parity-wrong-secret'), rule: 'client' },
  { name: 'unknown-client', title: 'an unknown client_id is refused with 403', status: 403, auth: ({ basic }) => basic('parity-unknown-client', 'parity-unknown-secret'), rule: 'client' },
  { name: 'no-basic-header', title: 'a token request without a Basic header is refused with 403', status: 403, auth: () => 'none', rule: 'client' },
  { name: 'malformed-basic-header', title: 'a Basic header that is not base64 of id:secret is refused with 403', status: 403, auth: () => 'Basic %%%not-base64%%%', rule: 'client' },
];

export const accessCases: ParityCase[] = [
  {
    id: 'tokens/client-credentials',
    area: 'tokens',
    title: 'a form body with grant_type=client_credentials and a Basic header gets a Bearer JWT with expires_in',
    rule: { section: 'Authentication', quote: 'Token response: access_token (string, a JWT), token_type (always Bearer), expires_in (integer).' },
    async run(t) {
      const answer = t.status(await t.api.requestToken(), 200);
      const body = answer.body ?? {};
      t.check(typeof body.access_token === 'string' && body.access_token.split('.').length === 3, 'access_token is a JWT (three dot-separated parts)', answer);
      t.check(body.token_type === 'Bearer', `token_type is Bearer (got ${JSON.stringify(body.token_type)})`, answer);
      t.check(Number.isInteger(body.expires_in) && body.expires_in > 0, `expires_in is a positive integer (got ${JSON.stringify(body.expires_in)})`, answer);
    },
  },
  ...tokenRefusals.map((c): ParityCase => ({
    id: `tokens/${c.name}`,
    area: 'tokens',
    title: c.title,
    rule: c.rule === 'grant' ? { section: 'Authentication', quote: TOKEN_REQUEST } : { section: 'Errors', quote: TOKEN_403 },
    gaps: ['Token endpoint errors'],
    async run(t) {
      const auth = c.auth ? c.auth({ basic: (id, secret) => t.api.basicHeader(id, secret), id: t.settings.clientId }) : undefined;
      t.error(await t.api.requestToken(c.form, auth), [c.status]);
    },
  })),
  {
    id: 'tokens/credentials-in-body',
    area: 'tokens',
    title: 'client_id and client_secret in the form body instead of the Basic header get no token (403, or 400 naming the fields)',
    rule: { section: 'Errors', quote: TOKEN_403 },
    gaps: ['Token endpoint errors'],
    async run(t) {
      const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: t.settings.clientId, client_secret: t.settings.clientSecret }).toString();
      t.error(await t.api.requestToken(form, 'none'), [403, 400]);
    },
  },
  {
    id: 'tokens/json-body-refused',
    area: 'tokens',
    title: 'a JSON token request (instead of a form body) is refused with a 4xx, not answered with a token',
    rule: { section: 'What the service does', quote: 'Requests and responses are JSON, except the token endpoint, whose request is form-encoded.' },
    async run(t) {
      const answer = await t.api.requestToken(JSON.stringify({ grant_type: 'client_credentials' }), undefined, undefined, 'application/json');
      t.error(answer, [400, 415]);
    },
  },
  {
    id: 'auth/token-accepted',
    area: 'auth',
    title: 'the issued token is accepted as a Bearer header on the API',
    rule: { section: 'Authentication', quote: 'All other requests carry `Authorization: Bearer <ACCESS_TOKEN>`.' },
    async run(t) {
      t.status(await t.api.get('/customers', { query: { limit: 1 } }), 200);
    },
  },
  ...([
    ['missing-token', 'a request without an Authorization header is refused with 401', () => 'none'],
    ['garbage-token', 'a Bearer value that is not a token is refused with 401', () => 'Bearer parity-not-a-token'],
    ['basic-on-api', 'a Basic header (client credentials) on an API endpoint is refused with 401', (basic: string) => basic],
  ] as const).map(([name, title, auth]): ParityCase => ({
    id: `auth/${name}`,
    area: 'auth',
    title,
    rule: { section: 'Errors', quote: API_401 },
    async run(t) {
      t.error(await t.api.get('/customers', { query: { limit: 1 }, auth: auth(t.api.basicHeader()) }), [401]);
    },
  })),
  {
    id: 'auth/tampered-signature',
    area: 'auth',
    title: 'a token whose signature was altered is refused with 401',
    rule: { section: 'Errors', quote: API_401 },
    async run(t) {
      const [header, payload, signature] = (await t.api.accessToken()).split('.');
      const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
      t.error(await t.api.get('/customers', { query: { limit: 1 }, auth: `Bearer ${header}.${payload}.${flipped}` }), [401]);
    },
  },
  {
    id: 'auth/unsigned-token',
    area: 'auth',
    title: 'the issued token re-sent unsigned (alg none) is refused with 401',
    rule: { section: 'Errors', quote: API_401 },
    gaps: ['Token format'],
    async run(t) {
      const payload = (await t.api.accessToken()).split('.')[1];
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      t.error(await t.api.get('/customers', { query: { limit: 1 }, auth: `Bearer ${header}.${payload}.` }), [401]);
    },
  },
  {
    id: 'auth/refused-write-changes-nothing',
    area: 'auth',
    title: 'a create without a token is refused with 401 and creates nothing',
    rule: { section: 'Endpoints', quote: 'Every endpoint requires `Authorization: Bearer <ACCESS_TOKEN>` except POST /oauth/token' },
    gaps: ['company_name filter'],
    async run(t) {
      const name = t.name('unauthenticated');
      t.error(await t.api.post('/customers', { name, email: t.email('unauthenticated') }, { auth: 'none' }), [401]);
      const list = t.status(await t.api.get('/customers', { query: { company_name: name } }), 200);
      t.check(Array.isArray(list.body?.data) && list.body.data.length === 0, 'no customer was created by the refused request', list);
    },
  },
  {
    id: 'environments/token-refused-in-other-environment',
    area: 'environments',
    title: "this environment's access token is refused with 401 by the other environment",
    rule: { section: 'Authentication', quote: 'Tokens are valid only in the environment that issued them.' },
    async run(t) {
      const other = t.settings.otherBaseUrl ?? t.skip(t.settings.otherBaseUrlMissing ?? 'the other environment is unknown');
      t.error(await t.api.get('/customers', { query: { limit: 1 }, baseUrl: other }), [401]);
    },
  },
  {
    id: 'environments/key-refused-in-other-environment',
    area: 'environments',
    title: "this environment's key gets no token from the other environment (403)",
    rule: { section: 'What the service does', quote: 'Credentials and tokens are isolated per environment.' },
    gaps: ['Token endpoint errors'],
    async run(t) {
      const other = t.settings.otherBaseUrl ?? t.skip(t.settings.otherBaseUrlMissing ?? 'the other environment is unknown');
      t.error(await t.api.requestToken(undefined, undefined, other), [403]);
    },
  },
];
