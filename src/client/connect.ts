// Owns the test client's one interface, SandboxConnection: a typed `api` for one API key (its token
// got and renewed), the typed `control` plane acting on that key's account, and `partner()` for a
// fresh partner per test. connect() builds it for a sandbox already running (a container, another
// process); startSandbox() and the Testcontainers module build the same one for theirs.
import type { paths as ApiPaths } from '../generated/api.js';
import type { components as ControlComponents, paths as ControlPaths } from '../generated/control-plane.js';
import { controlClient, type SandboxControl } from './control.js';
import { SandboxRequestError } from './errors.js';
import { ENVIRONMENT_PREFIX, TokenSource, type ClientCredentials, type Environment } from './tokens.js';
import { typedClient, type Authenticator, type TypedClient } from './typed.js';

/** The emulated API, typed from openapi/openapi.yaml: `await api.POST('/customers', { body })` resolves to the Customer. */
export type SandboxApi = TypedClient<ApiPaths>;

export interface PartnerOptions {
  /** Shown in the inspector and the journal (default: a generated one). */
  name?: string;
  /** Requests per second for this partner's keys; 0 switches the limit off (default: the server's --rate-limit). */
  rateLimit?: number;
  /** Which of the partner's two accounts `api` and `control` act on (default production). */
  environment?: Environment;
}

export interface SandboxConnection {
  /** The sandbox's origin, e.g. http://127.0.0.1:4010 (the control plane is under `${url}/_sandbox`). */
  url: string;
  /** The API base of this key's environment: `url`, or `${url}/demo` for a demo key. Give it to the code under test. */
  apiUrl: string;
  environment: Environment;
  /** This key's client id and secret, for the code under test. */
  clientId: string;
  clientSecret: string;
  /** The emulated API as this key: paths, parameters, bodies and answers typed; an error status throws SandboxRequestError. */
  api: SandboxApi;
  /** The control plane, acting on this key's account: clock, trigger, scenarios, reset, events, deliveries, journal. */
  control: SandboxControl;
  /** This key's current access token (got on first use, renewed before it expires). */
  token(): Promise<string>;
  /** A new partner (POST /_sandbox/partners) with two empty accounts: its own `api` and `control`, for one test or file. */
  partner(options?: PartnerOptions): Promise<SandboxPartner>;
  /** Release what this handle holds: startSandbox() stops its sandbox, a container stops; connect() holds nothing. */
  close(): Promise<void>;
}

export interface SandboxPartner extends SandboxConnection {
  id: string;
  name: string;
  /** Both environments' keys (the secrets are shown only when the partner is made). */
  credentials: Record<Environment, ClientCredentials>;
}

export interface ConnectOptions {
  /** The sandbox's origin, e.g. http://127.0.0.1:4010 (a container's mapped port). */
  baseUrl: string;
  /** The API key to act as (default: the default partner's key of `environment`). */
  clientId?: string;
  clientSecret?: string;
  /** The key's environment; by default production, or demo when the production token endpoint refuses the key as a demo key. */
  environment?: Environment;
  /** The sandbox's --admin-token (SANDBOX_ADMIN_TOKEN), when it runs with one: sent on control-plane calls. */
  adminToken?: string;
  /** The fetch to send requests with (default: the global fetch). */
  fetch?: typeof fetch;
}

/** The default partner's keys (the sandbox's --client-id defaults). */
export const DEFAULT_KEYS: Readonly<Record<Environment, ClientCredentials>> = {
  production: { client_id: 'sandbox_client_id', client_secret: 'sandbox_client_secret' },
  demo: { client_id: 'sandbox_demo_client_id', client_secret: 'sandbox_demo_client_secret' },
};

/** Connect to a sandbox that is already running: its health is checked and the key's first token got, so a wrong URL or key fails here. */
export async function connect(options: ConnectOptions): Promise<SandboxConnection> {
  const origin = originOf(options.baseUrl);
  const fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
  const environment: Environment = options.environment ?? 'production';
  const credentials = (env: Environment): ClientCredentials => ({
    client_id: options.clientId ?? DEFAULT_KEYS[env].client_id,
    client_secret: options.clientSecret ?? DEFAULT_KEYS[env].client_secret,
  });
  const admin: Record<string, string> = options.adminToken ? { 'X-Sandbox-Admin-Token': options.adminToken } : {};
  // Health first, without a token: a wrong URL says so before a token request could.
  await typedClient<ControlPaths>({ baseUrl: origin, fetch: fetchFn, auth: { headers: () => Promise.resolve(admin) } }).GET('/_sandbox/health');
  let connection = openConnection({ origin, environment, credentials: credentials(environment), adminToken: options.adminToken, fetch: fetchFn });
  try {
    await connection.token();
  } catch (error) {
    // A key of the other environment answers 403 invalid_client: when the caller did not say which, try demo.
    if (options.environment || !(error instanceof SandboxRequestError) || error.status !== 403) throw error;
    const demo = openConnection({ origin, environment: 'demo', credentials: credentials('demo'), adminToken: options.adminToken, fetch: fetchFn });
    // Refused there too: the production answer is the one to show.
    await demo.token().catch(() => {
      throw error;
    });
    connection = demo;
  }
  return connection;
}

export interface ConnectionSettings {
  origin: string;
  environment: Environment;
  credentials: ClientCredentials;
  adminToken?: string;
  fetch: typeof fetch;
  /** What close() does (default: nothing). */
  close?: () => Promise<void>;
  /** Real time for token renewal (tests move it). */
  now?: () => number;
}

/** A connection for one key, without a request yet (the first token is asked for on first use). */
export function openConnection(settings: ConnectionSettings): SandboxConnection {
  const { origin, environment, credentials, adminToken } = settings;
  const tokens = new TokenSource({ origin, environment, credentials, fetch: settings.fetch, now: settings.now });
  const admin: Record<string, string> = adminToken ? { 'X-Sandbox-Admin-Token': adminToken } : {};
  const asKey: Authenticator = {
    headers: async () => ({ ...admin, Authorization: `Bearer ${await tokens.get()}` }),
    refused: (authorization) => {
      tokens.drop(/^Bearer (.+)$/.exec(authorization ?? '')?.[1]);
      return true;
    },
  };
  const apiUrl = `${origin}${ENVIRONMENT_PREFIX[environment]}`;
  // Partner creation names no account: only the admin token goes (anyone may create a partner).
  const anonymous = typedClient<ControlPaths>({ baseUrl: origin, fetch: settings.fetch, auth: { headers: () => Promise.resolve(admin) } });

  const partner = async (options: PartnerOptions = {}): Promise<SandboxPartner> => {
    const body: ControlComponents['schemas']['CreatePartnerInput'] = {};
    if (options.name !== undefined) body.name = options.name;
    if (options.rateLimit !== undefined) body.rate_limit = options.rateLimit;
    const made = await anonymous.POST('/_sandbox/partners', { body });
    const env = options.environment ?? 'production';
    const connection = openConnection({ ...settings, environment: env, credentials: made.credentials[env], close: undefined });
    return { ...connection, id: made.id, name: made.name, credentials: made.credentials };
  };

  return {
    url: origin,
    apiUrl,
    environment,
    clientId: credentials.client_id,
    clientSecret: credentials.client_secret,
    api: typedClient<ApiPaths>({ baseUrl: apiUrl, fetch: settings.fetch, auth: asKey }),
    control: controlClient(origin, { fetch: settings.fetch, auth: asKey, tokensExpired: () => tokens.drop(undefined) }),
    token: () => tokens.get(),
    partner,
    close: settings.close ?? (() => Promise.resolve()),
  };
}

/** The origin of a base URL, refusing what is not http(s) with the value in the message. */
function originOf(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`connect: baseUrl must be an http or https URL such as http://127.0.0.1:4010, got "${baseUrl}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`connect: baseUrl must be an http or https URL, got "${baseUrl}"`);
  // The control plane and both environments' APIs hang off the origin; a path (`/demo`) would be
  // dropped without a word, so it is refused: the environment is an option of its own.
  if (url.pathname !== '/') throw new TypeError(`connect: baseUrl is the sandbox's origin (http://host:port), got the path ${url.pathname} in "${baseUrl}" (a demo key: environment: 'demo')`);
  return url.origin;
}
