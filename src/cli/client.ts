// Owns talking to a running sandbox: the options every client command shares (--url, --admin-token,
// --client-id/--client-secret, --json, each with its environment variable), the access token that
// names the account, control-plane calls, and turning failures into exit codes (1 refused,
// 3 unreachable).
import { Command, Option } from 'commander';
import { VERSION } from '../config.js';
import { tokenRequestInit } from '../auth/tokens.js';
import { CliError, RefusedError, UnreachableError, usageError, type SandboxErrorBody } from './errors.js';
import { Output } from './output.js';

export const DEFAULT_URL = 'http://127.0.0.1:4010';
/** Sent on every request, so `requests` can tell the CLI's own token requests from the partner's. */
export const CLI_USER_AGENT = `billing-sandbox-cli/${VERSION}`;

export interface ClientOptions {
  url: string;
  adminToken?: string;
  clientId: string;
  clientSecret: string;
  json: boolean;
}

/** Add the shared client options to a command (their defaults are read from the environment when used). */
export function withClientOptions(command: Command): Command {
  return command
    .addOption(new Option('--url <url>', `the running sandbox (SANDBOX_URL, default ${DEFAULT_URL})`))
    .addOption(new Option('--admin-token <token>', 'the sandbox\'s admin token, when it runs with one (SANDBOX_ADMIN_TOKEN)'))
    .addOption(new Option('--client-id <id>', 'act on the account of this API key (SANDBOX_CLIENT_ID, default the default partner\'s production key)'))
    .addOption(new Option('--client-secret <secret>', 'its secret (SANDBOX_CLIENT_SECRET)'))
    .addOption(new Option('--json', 'print JSON for scripts instead of text for people'));
}

/** The options of `command` and its parents below the root, the command's own winning; then the environment and defaults. */
export function clientOptions(command: Command, env: NodeJS.ProcessEnv = process.env): ClientOptions {
  const chain: Command[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) chain.unshift(c);
  const given: Record<string, unknown> = {};
  for (const c of chain) for (const [key, value] of Object.entries(c.opts())) if (value !== undefined) given[key] = value;
  const url = (typeof given.url === 'string' ? given.url : env.SANDBOX_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw usageError(`--url must be an http or https URL, got "${url}"`);
  }
  const clientId = (given.clientId as string | undefined) ?? env.SANDBOX_CLIENT_ID ?? 'sandbox_client_id';
  const clientSecret = (given.clientSecret as string | undefined)
    ?? (given.clientId === undefined ? env.SANDBOX_CLIENT_SECRET ?? 'sandbox_client_secret' : undefined);
  if (clientSecret === undefined) throw usageError('--client-id needs --client-secret');
  return { url, adminToken: (given.adminToken as string | undefined) ?? (env.SANDBOX_ADMIN_TOKEN || undefined), clientId, clientSecret, json: Boolean(given.json) };
}

export interface CallOptions {
  body?: unknown;
  /** Send `body` (a string) as this content type instead of JSON. */
  contentType?: string;
  query?: Record<string, string | number | undefined>;
  /** No access token: the call acts on everything (a full reset) or needs no account. */
  anonymous?: boolean;
}

export class SandboxClient {
  private accessToken: Promise<string> | undefined;

  constructor(readonly options: ClientOptions) {}

  /** Any request to the sandbox; a network failure is exit 3. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await fetch(`${this.options.url}${path}`, { ...init, headers: { 'User-Agent': CLI_USER_AGENT, ...(init.headers as Record<string, string> | undefined) } });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new UnreachableError(this.options.url, cause?.code ?? cause?.message ?? (error as Error).message);
    }
  }

  /** An access token for the chosen key: its account is the one every call acts on. */
  token(): Promise<string> {
    this.accessToken ??= this.requestToken();
    return this.accessToken;
  }

  /** The production token endpoint, then the demo one: a key belongs to one environment. */
  private async requestToken(): Promise<string> {
    const { clientId, clientSecret } = this.options;
    let first: RefusedError | undefined;
    for (const prefix of ['', '/demo']) {
      const res = await this.fetch(`${prefix}/oauth/token`, tokenRequestInit(clientId, clientSecret));
      const body = await readJson(res);
      if (res.ok) return (body as { access_token: string }).access_token;
      first ??= new RefusedError(`POST ${prefix}/oauth/token (client_id ${clientId})`, res.status, body as SandboxErrorBody);
      if (res.status !== 403) break;
    }
    throw first!;
  }

  /** Headers for a control-plane call: the admin token (when given) and the account's access token. */
  async headers(anonymous = false): Promise<Record<string, string>> {
    const headers: Record<string, string> = {};
    if (this.options.adminToken) headers['X-Sandbox-Admin-Token'] = this.options.adminToken;
    if (!anonymous) headers.Authorization = `Bearer ${await this.token()}`;
    return headers;
  }

  /** A control-plane call; an error status is a RefusedError (exit 1). */
  async control<T = Record<string, unknown>>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const headers = await this.headers(options.anonymous);
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    }
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) search.set(key, String(value));
    const full = `/_sandbox${path}${search.size ? `?${search}` : ''}`;
    const res = await this.fetch(full, { method, headers, body });
    const answer = await readJson(res);
    if (!res.ok) throw new RefusedError(`${method} ${full}`, res.status, answer as SandboxErrorBody);
    return answer as T;
  }
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 200) };
  }
}

/** What every client command's action receives. */
export interface CommandContext {
  client: SandboxClient;
  out: Output;
  options: ClientOptions;
}

/** An action with a client and an output for this command's options; errors propagate to program.ts. */
export function clientAction<A extends unknown[]>(run: (ctx: CommandContext, ...args: A) => Promise<void>) {
  return async function action(this: Command, ...args: A): Promise<void> {
    const options = clientOptions(this);
    await run({ client: new SandboxClient(options), out: new Output(options.json), options }, ...args);
  };
}

export { CliError };
