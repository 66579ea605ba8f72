// Owns the parity suite's HTTP side: one client per run that talks only to the public API of a base
// URL (never /_sandbox), stays under the spec's rate with a client-side limiter, backs off on 429
// (Retry-After first), keeps the OAuth token, and records every exchange for the report.
import { VERSION } from '../config.js';

/** What the client needs from the outside world; tests inject a fake clock so no real time passes. */
export interface ClientClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: ClientClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface ClientOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Requests per second at most (the spec's limit is 5 per key). */
  rate: number;
  clock?: ClientClock;
  fetch?: typeof fetch;
  /** Retries of a 429 before the 429 is handed to the case. */
  maxRetries?: number;
  /** Time-out of one request (ms). */
  timeoutMs?: number;
}

export interface SendOptions {
  /** JSON body (serialised), or a raw string sent as is with `contentType`. */
  body?: unknown;
  raw?: string;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** 'token' (default): the run's access token; 'none': no Authorization header; a string: that header. */
  auth?: string;
  headers?: Record<string, string>;
  /** Another base URL than the run's (the other environment). */
  baseUrl?: string;
}

export interface Exchange {
  method: string;
  /** The path relative to the base URL, with its query string. */
  path: string;
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a remote API's JSON answer, read as it comes; shapes.ts checks it against the document
  body: any;
  /** How many 429 answers were retried before this one. */
  throttled: number;
  /** The request went to another base URL than the run's. */
  foreign: boolean;
}

export class NetworkError extends Error {
  constructor(readonly method: string, readonly path: string, cause: unknown) {
    super(`${method} ${path} got no answer: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'NetworkError';
  }
}

/** Wait for a 429: Retry-After (seconds or an HTTP date) when given, else exponential from 500 ms. */
export function backoffMs(retryAfter: string | null, attempt: number, now: number): number {
  const cap = 60_000;
  if (retryAfter !== null && retryAfter.trim() !== '') {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(cap, Math.ceil(seconds * 1000));
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.min(cap, Math.max(0, at - now));
  }
  return Math.min(cap, 500 * 2 ** attempt);
}

const OAUTH_PATH = '/oauth/token';

export class ParityClient {
  readonly baseUrl: string;
  private readonly clock: ClientClock;
  private readonly fetchImpl: typeof fetch;
  /**
   * The limiter: a request starts only once the answer `burst` requests back came in at least
   * `windowMs` ago. The server counts each request at some moment between its start and its
   * answer, so any `windowMs` of the server's time holds at most `burst` of them, whatever the
   * network or either side's pauses did (5 per second: 5 per 1000 ms).
   */
  private readonly burst: number;
  private readonly windowMs: number;
  private readonly answeredAt: number[] = [];
  private token?: { value: string; renewAt: number };
  private readonly listeners: Array<(exchange: Exchange) => void> = [];
  /** Requests made (a retry after a 429 is not another request). */
  requests = 0;
  /** 429 answers waited out and retried. */
  throttled = 0;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = trimBase(options.baseUrl);
    this.clock = options.clock ?? realClock;
    this.fetchImpl = options.fetch ?? fetch;
    if (!(options.rate > 0)) throw new Error('rate must be a number of requests per second greater than 0');
    this.burst = Math.max(1, Math.floor(options.rate));
    this.windowMs = (1000 * this.burst) / options.rate;
  }

  /** Be told of every answer (the runner keeps them for the shape rows, the cleanup watches for creations). */
  onExchange(listener: (exchange: Exchange) => void): void {
    this.listeners.push(listener);
  }

  /** Text for a report without the secret, the run's token or any access_token value (also one cut short). */
  redact(text: string): string {
    let out = text.replace(/("access_token"\s*:\s*")[^"]*("?)/g, '$1***$2');
    for (const secret of [this.options.clientSecret, this.token?.value]) if (secret) out = out.split(secret).join('***');
    return out;
  }

  basicHeader(clientId = this.options.clientId, clientSecret = this.options.clientSecret): string {
    return `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  }

  /** POST /oauth/token as the spec describes it (form body, Basic header); `form` and `auth` vary it for the token cases. */
  requestToken(form: string = 'grant_type=client_credentials', auth: string = this.basicHeader(), baseUrl?: string, contentType = 'application/x-www-form-urlencoded'): Promise<Exchange> {
    return this.send('POST', OAUTH_PATH, { raw: form, contentType, auth, baseUrl });
  }

  /** The run's access token, fetched once and renewed before expires_in runs out. */
  async accessToken(): Promise<string> {
    if (this.token && this.clock.now() < this.token.renewAt) return this.token.value;
    const answer = await this.requestToken();
    const value = answer.body?.access_token;
    if (answer.status !== 200 || typeof value !== 'string') {
      throw new TokenError(answer);
    }
    const lifetime = Number(answer.body?.expires_in);
    const seconds = Number.isFinite(lifetime) && lifetime > 0 ? lifetime : 3600;
    this.token = { value, renewAt: this.clock.now() + seconds * 900 };
    return value;
  }

  get(path: string, options: SendOptions = {}) {
    return this.send('GET', path, options);
  }

  post(path: string, body?: unknown, options: SendOptions = {}) {
    return this.send('POST', path, { body, ...options });
  }

  patch(path: string, body?: unknown, options: SendOptions = {}) {
    return this.send('PATCH', path, { body, ...options });
  }

  delete(path: string, options: SendOptions = {}) {
    return this.send('DELETE', path, options);
  }

  async send(method: string, path: string, options: SendOptions = {}): Promise<Exchange> {
    const base = options.baseUrl ? trimBase(options.baseUrl) : this.baseUrl;
    if (/(^|\/)_sandbox(\/|$)/.test(`${new URL(base).pathname}${path}`)) throw new Error('the parity suite uses only the public API, never /_sandbox');
    const search = queryString(options.query);
    // A Headers object: a header given in options replaces the default of the same name in any case
    // (`diff` replays a recording's headers as they were spelt).
    const headers = new Headers({ Accept: 'application/json', 'User-Agent': `billing-sandbox-parity/${VERSION}` });
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
    const auth = options.auth ?? 'token';
    if (auth === 'token') headers.set('Authorization', `Bearer ${await this.accessToken()}`);
    else if (auth !== 'none') headers.set('Authorization', auth);
    let payload: string | undefined;
    if (options.raw !== undefined) {
      payload = options.raw;
      headers.set('Content-Type', options.contentType ?? 'application/json');
    } else if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers.set('Content-Type', 'application/json');
    }
    const url = `${base}${path}${search}`;
    let throttled = 0;
    this.requests += 1;
    for (let attempt = 0; ; attempt++) {
      await this.takeTurn();
      let res: Response;
      let text: string;
      try {
        res = await this.fetchImpl(url, { method, headers, body: payload, redirect: 'manual', signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000) });
        text = await res.text();
      } catch (error) {
        throw new NetworkError(method, `${path}${search}`, error);
      } finally {
        this.answered();
      }
      if (res.status === 429 && attempt < (this.options.maxRetries ?? 6)) {
        throttled += 1;
        this.throttled += 1;
        await this.clock.sleep(backoffMs(res.headers.get('retry-after'), attempt, this.clock.now()));
        continue;
      }
      const exchange: Exchange = { method, path: `${path}${search}`, status: res.status, headers: res.headers, text, body: parseJson(text), throttled, foreign: base !== this.baseUrl };
      for (const listener of this.listeners) listener(exchange);
      return exchange;
    }
  }

  /** Wait until `burst` requests back was answered `windowMs` ago (1 ms more: the server's window is half-open). */
  private async takeTurn(): Promise<void> {
    if (this.answeredAt.length < this.burst) return;
    const wait = this.answeredAt[this.answeredAt.length - this.burst] + this.windowMs + 1 - this.clock.now();
    if (wait > 0) await this.clock.sleep(wait);
  }

  private answered(): void {
    this.answeredAt.push(this.clock.now());
    if (this.answeredAt.length > this.burst) this.answeredAt.shift();
  }
}

/** The base URL gave no answer at all (nothing listens there, a wrong host): exit 3, as the CLI's other commands. */
export class UnreachableBaseUrl extends Error {
  constructor(readonly baseUrl: string, cause: string) {
    super(`${baseUrl} could not be reached (${cause}); check --base-url, or start a sandbox there with: npx billing-sandbox --port ${portOf(baseUrl)}`);
    this.name = 'UnreachableBaseUrl';
  }
}

function portOf(url: string): string {
  const parsed = new URL(url);
  return parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
}

export class TokenError extends Error {
  constructor(readonly exchange: Exchange) {
    super(`POST /oauth/token answered ${exchange.status}: the run cannot obtain an access token with the given client id and secret`);
    this.name = 'TokenError';
  }
}

function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

function queryString(query: SendOptions['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
