// Owns a `diff` run: read a recording, make a fresh partner on the sandbox (POST /_sandbox/partners:
// a new, empty account, so no other account of the sandbox is reset or touched), replay the recorded
// requests one at a time in the order their answers came, and compare each answer with the recorded
// one (compare.ts), known choices named (choices.ts). Values the recording's answers introduced (ids,
// and the masked tokens `***#n`) are mapped to the values the sandbox answered in the same place, and
// substituted in later paths, query strings, bodies and Authorization headers; the recording's token
// requests are sent with the sandbox key's credentials.
import { randomBytes } from 'node:crypto';
import { VERSION } from '../config.js';
import { isSecretHeader } from '../journal/redact.js';
import { UsageError } from '../parity/case.js';
import { NetworkError, ParityClient, UnreachableBaseUrl, realClock, type ClientClock, type Exchange } from '../parity/client.js';
import { ShapeChecker } from '../parity/shapes.js';
import { choiceFor, type ChoiceRequest } from './choices.js';
import { compareAnswers, type Answer, type Difference } from './compare.js';
import { readRecording, type HarEntry } from './har.js';
import { MASKED } from './mask.js';

export const DEFAULT_DIFF_RATE = 5;

export interface DiffOptions {
  /** The HAR file. */
  recording: string;
  /** The sandbox's base URL, in the environment the recording was made in (`.../demo` for a demo recording). */
  baseUrl: string;
  /** Replay on this key's account, as it is, instead of a fresh partner's. */
  clientId?: string;
  clientSecret?: string;
  /** The sandbox's admin token, when it runs with one (needed to make the fresh partner). */
  adminToken?: string;
  /** Requests per second at most (default 5, the spec's limit per key). */
  rate?: number;
  clock?: ClientClock;
  fetch?: typeof fetch;
  runId?: string;
  onResult?: (result: ExchangeResult) => void;
}

export type ExchangeStatus = 'same' | 'differ' | 'known' | 'skip';

export interface ExchangeResult {
  /** 1-based place in the recording. */
  index: number;
  /** The request as recorded: method and path relative to the recording's target (secrets masked). */
  request: string;
  /** The path as replayed (ids mapped); absent when skipped. */
  replayed?: string;
  operation: string | null;
  status: ExchangeStatus;
  recorded_status: number;
  /** 0: the sandbox gave no answer. */
  sandbox_status?: number;
  /** Every difference; those with `choice` are known choices of the sandbox. */
  differences: Difference[];
  /** skip: why the request was not replayed. */
  reason?: string;
  duration_ms: number;
}

export interface DiffReport {
  tool: 'billing-sandbox diff';
  version: string;
  recording: string;
  /** The base URL the recording was made against (its `_target`), when it says. */
  recorded_against: string | null;
  base_url: string;
  account: { fresh: boolean; partner_id: string | null; client_id: string; environment: 'production' | 'demo' };
  run_id: string;
  started_at: string;
  duration_ms: number;
  rate: number;
  summary: { exchanges: number; same: number; differ: number; known: number; skipped: number; differences: number; known_differences: number };
  /** Values mapped from the recording to the sandbox: ids, and masked values (tokens, mostly). */
  mapped: { ids: number; masked: number };
  notes: string[];
  exchanges: ExchangeResult[];
}

/** The sandbox refused to make the fresh partner, or another setup step failed: exit 1 with the reason. */
export class DiffSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DiffSetupError';
  }
}

/** The environment a base URL names (a `/demo` path is the demo environment) and the sandbox origin (where `/_sandbox` is). */
export function environmentOf(baseUrl: string): { environment: 'production' | 'demo'; controlUrl: string } {
  const url = new URL(baseUrl);
  const found = /^(.*?)(\/demo)?(\/v1)?\/*$/.exec(url.pathname)!;
  return { environment: found[2] ? 'demo' : 'production', controlUrl: `${url.origin}${found[1]}` };
}

/** The API path of a request path: without the version and environment prefixes the sandbox also serves. */
const apiPath = (path: string) => path.split('?')[0].replace(/^\/demo(?=\/|$)/, '').replace(/^\/v1(?=\/|$)/, '') || '/';

/** Headers never replayed as recorded: those of one connection, those fetch sets, and credentials (replayed by their own rules). */
const NOT_REPLAYED = new Set(['host', 'content-length', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'accept-encoding', 'expect']);

/** Values under these keys name objects: a first sight of one in an answer is an id to map. */
const isIdKey = (key: string | undefined) => key !== undefined && (key === 'id' || key.endsWith('_id'));
const isIdListKey = (key: string | undefined) => key !== undefined && key.endsWith('_ids');
/** Only ids at least this long are replaced inside longer strings (a URL, a description); shorter ones only where a whole value is the id. */
const MIN_EMBEDDED_ID_CHARS = 8;

/**
 * What a masked request value is replayed with when no answer introduced it (a secret the partner
 * typed: a webhook secret, a bank account number, a card token): a value the sandbox accepts there.
 */
function standIn(field: string, n: string): string {
  if (/account_number/i.test(field)) return '000123456789';
  if (/card_provider_token/i.test(field)) return 'tok_visa';
  if (/cvv|cvc/i.test(field)) return 'ev:cvv_123';
  return `replay-secret-${n}`;
}

function headerOf(entry: HarEntry, name: string): string | undefined {
  return entry.request.headers.find((h) => h.name.toLowerCase() === name)?.value;
}

/** The recorded request's path relative to the recording's target (or its URL's path, for another tool's HAR). */
function relativePath(entry: HarEntry, target: string | undefined): string | undefined {
  const url = entry.request.url;
  if (target) {
    if (!url.startsWith(target)) return undefined;
    const rest = url.slice(target.length);
    return rest.startsWith('/') ? rest : `/${rest}`;
  }
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

/** The recorded answer's text (a base64 body is not text: left out of the comparison, its type still compared). */
function recordedText(entry: HarEntry): string {
  const content = entry.response.content;
  if (content.encoding === 'base64' || entry._cut?.response) return '';
  return content.text ?? '';
}

function lowerHeaders(pairs: Array<{ name: string; value: string }>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of pairs) out[name.toLowerCase()] = value;
  return out;
}

function parseJson(text: string | undefined): { ok: boolean; value?: unknown } {
  if (!text?.trim()) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** The mapping of recorded values to the sandbox's, and what the recording has shown so far. */
class ValueMap {
  readonly mapped = new Map<string, string>();
  private readonly seen = new Set<string>();
  readonly standIns = new Map<string, string>();

  get ids(): number {
    return [...this.mapped.keys()].filter((k) => !MASKED.test(k)).length;
  }

  get masked(): number {
    return [...this.mapped.keys()].filter((k) => MASKED.test(k)).length;
  }

  see(value: string): void {
    this.seen.add(value);
  }

  /** Note every value of a request or answer body as seen (an id a request sent first is the client's own). */
  seeAll(value: unknown): void {
    if (typeof value === 'string') this.seen.add(value);
    else if (typeof value === 'number') this.seen.add(String(value));
    else if (Array.isArray(value)) for (const item of value) this.seeAll(item);
    else if (value && typeof value === 'object') for (const item of Object.values(value)) this.seeAll(item);
  }

  /**
   * Learn from a recorded answer and the sandbox's: a value the recording shows for the first time
   * under an id key (or a masked token anywhere) maps to the sandbox's value in the same place.
   */
  learn(recorded: unknown, sandbox: unknown, key?: string, listKey?: string): void {
    if (Array.isArray(recorded)) {
      if (!Array.isArray(sandbox)) return;
      for (let i = 0; i < Math.min(recorded.length, sandbox.length); i++) this.learn(recorded[i], sandbox[i], undefined, key);
      return;
    }
    if (recorded && typeof recorded === 'object') {
      if (!sandbox || typeof sandbox !== 'object' || Array.isArray(sandbox)) return;
      for (const [name, item] of Object.entries(recorded)) if (Object.hasOwn(sandbox, name)) this.learn(item, (sandbox as Record<string, unknown>)[name], name);
      return;
    }
    if (typeof recorded !== 'string' && typeof recorded !== 'number') return;
    const text = String(recorded);
    const masked = MASKED.test(text);
    if (!masked && !isIdKey(key) && !isIdListKey(listKey)) return;
    if (this.seen.has(text) || this.mapped.has(text)) return;
    if (typeof sandbox === 'string' || typeof sandbox === 'number') this.mapped.set(text, String(sandbox));
  }

  /** A whole value: its mapped value, else a stand-in for a masked one, else itself with embedded ids mapped. */
  value(text: string, field: string): string {
    const mapped = this.mapped.get(text);
    if (mapped !== undefined) return mapped;
    const masked = MASKED.exec(text);
    if (masked) {
      const value = standIn(field, masked[1]);
      if (!this.standIns.has(field)) this.standIns.set(field, value.startsWith('replay-secret-') ? 'replay-secret-<n>' : value);
      return value;
    }
    return this.embedded(text);
  }

  /** Ids inside a longer string (a URL, a reference) replaced. */
  embedded(text: string): string {
    if (!this.mapped.size) return text;
    return text.replace(/\*\*\*#\d+|[A-Za-z0-9_-]{8,}/g, (run) => {
      if (run.length < MIN_EMBEDDED_ID_CHARS && !MASKED.test(run)) return run;
      return this.mapped.get(run) ?? run;
    });
  }
}

interface KeyCredentials {
  clientId: string;
  clientSecret: string;
}

/** The replayed path: each segment and query item that is a mapped value replaced. */
function replayPath(path: string, values: ValueMap): string {
  const mark = path.indexOf('?');
  const pathname = mark < 0 ? path : path.slice(0, mark);
  const segments = pathname.split('/').map((segment) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return segment;
    }
    const mapped = values.mapped.get(decoded);
    return mapped !== undefined ? encodeURIComponent(mapped) : segment;
  });
  if (mark < 0) return segments.join('/');
  const query = path.slice(mark + 1);
  const params = new URLSearchParams(query);
  let changed = false;
  for (const [name, value] of [...params]) {
    const items = value.split(',').map((item) => values.value(item, name));
    const next = items.join(',');
    if (next !== value) {
      params.set(name, next);
      changed = true;
    }
  }
  return `${segments.join('/')}?${changed ? params.toString() : query}`;
}

/** The replayed body: mapped ids, stand-ins for masked values, and for a token request the sandbox key's credentials. */
function replayBody(entry: HarEntry, values: ValueMap, token: { key: KeyCredentials; good: Set<string> } | undefined): { raw?: string; contentType?: string } {
  const post = entry.request.postData;
  if (!post) return {};
  const contentType = post.mimeType || headerOf(entry, 'content-type') || '';
  const text = post.text ?? '';
  const json = /json/i.test(contentType) ? parseJson(text) : { ok: false };
  if (json.ok) {
    let changed = false;
    const walk = (node: unknown, key: string): unknown => {
      if (Array.isArray(node)) return node.map((item) => walk(item, key));
      if (node && typeof node === 'object') {
        const out: Record<string, unknown> = {};
        for (const [name, item] of Object.entries(node)) Object.defineProperty(out, name, { value: walk(item, name), enumerable: true, writable: true, configurable: true });
        return out;
      }
      if (typeof node === 'string') {
        const next = values.value(node, key);
        if (next !== node) changed = true;
        return next;
      }
      if (typeof node === 'number' && (isIdKey(key) || isIdListKey(key)) && values.mapped.has(String(node))) {
        changed = true;
        return values.mapped.get(String(node));
      }
      return node;
    };
    const body = walk(json.value, '');
    return { raw: changed ? JSON.stringify(body) : text, contentType };
  }
  if (/x-www-form-urlencoded/i.test(contentType)) {
    const params = new URLSearchParams(text);
    let changed = false;
    for (const [name, value] of [...params]) {
      let next: string;
      if (token && name === 'client_id') next = token.key.clientId;
      else if (token && name === 'client_secret') next = token.good.has(value) ? token.key.clientSecret : `${token.key.clientSecret}-not-this-secret`;
      else next = values.value(value, name);
      if (next !== value) {
        params.set(name, next);
        changed = true;
      }
    }
    return { raw: changed ? params.toString() : text, contentType };
  }
  return { raw: values.embedded(text), contentType };
}

/** Credentials (a Basic header's masked value, a form's client_secret) the recording's token requests succeeded with. */
function goodCredentials(entries: HarEntry[], shapes: ShapeChecker, target: string | undefined): Set<string> {
  const good = new Set<string>();
  for (const entry of entries) {
    const path = relativePath(entry, target);
    if (!path || entry.response.status < 200 || entry.response.status >= 300) continue;
    if (shapes.match(entry.request.method, apiPath(path))?.operationId !== 'createToken') continue;
    const basic = /^Basic\s+(.+)$/i.exec(headerOf(entry, 'authorization') ?? '');
    if (basic) good.add(basic[1]);
    const secret = new URLSearchParams(entry.request.postData?.text ?? '').get('client_secret');
    if (secret) good.add(secret);
  }
  return good;
}

async function freshPartner(controlUrl: string, options: DiffOptions, fetchImpl: typeof fetch, name: string): Promise<{ id: string; credentials: Record<'production' | 'demo', KeyCredentials> }> {
  let res: Response;
  try {
    res = await fetchImpl(`${controlUrl}/_sandbox/partners`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': `billing-sandbox-diff/${VERSION}`, ...(options.adminToken ? { 'X-Sandbox-Admin-Token': options.adminToken } : {}) },
      body: JSON.stringify({ name }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new UnreachableBaseUrl(options.baseUrl, cause);
  }
  const text = await res.text();
  const body = parseJson(text).value as { id?: string; code?: string; message?: string; credentials?: Record<'production' | 'demo', { client_id: string; client_secret: string }> } | undefined;
  if (res.status !== 201 || !body?.credentials) {
    const hint = res.status === 401 ? ' (a sandbox started with --admin-token needs --admin-token or SANDBOX_ADMIN_TOKEN)'
      : res.status === 404 ? ' (is --base-url a sandbox? diff replays against the sandbox, whose control plane makes the fresh account; or pass --client-id and --client-secret)' : '';
    throw new DiffSetupError(`POST ${controlUrl}/_sandbox/partners answered ${res.status}${body?.code ? ` ${body.code}` : ''}${body?.message ? `: ${body.message}` : ''}${hint}`);
  }
  const key = (env: 'production' | 'demo') => ({ clientId: body.credentials![env].client_id, clientSecret: body.credentials![env].client_secret });
  return { id: body.id ?? '', credentials: { production: key('production'), demo: key('demo') } };
}

export async function runDiff(options: DiffOptions): Promise<DiffReport> {
  if (Boolean(options.clientId) !== Boolean(options.clientSecret)) throw new UsageError('--client-id and --client-secret go together');
  const { log, notes } = readRecording(options.recording);
  const clock = options.clock ?? realClock;
  const fetchImpl = options.fetch ?? fetch;
  const rate = options.rate ?? DEFAULT_DIFF_RATE;
  const runId = options.runId ?? randomBytes(4).toString('hex').slice(0, 6);
  const { environment, controlUrl } = environmentOf(options.baseUrl);
  const started = clock.now();

  let key: KeyCredentials;
  let partnerId: string | null = null;
  if (options.clientId && options.clientSecret) {
    key = { clientId: options.clientId, clientSecret: options.clientSecret };
    notes.push(`replayed on the account of ${options.clientId} as it was (not a fresh one): objects it held before may show in lists`);
  } else {
    const partner = await freshPartner(controlUrl, options, fetchImpl, `diff-${runId}`);
    partnerId = partner.id;
    key = partner.credentials[environment];
  }

  const client = new ParityClient({ baseUrl: options.baseUrl, clientId: key.clientId, clientSecret: key.clientSecret, rate, clock, fetch: fetchImpl, maxRetries: 0 });
  const shapes = new ShapeChecker();
  const target = log._target?.replace(/\/+$/, '');
  const good = goodCredentials(log.entries, shapes, target);
  const values = new ValueMap();
  const results: ExchangeResult[] = [];
  let answered = false;

  for (const [i, entry] of log.entries.entries()) {
    const begin = clock.now();
    const method = entry.request.method.toUpperCase();
    const path = relativePath(entry, target);
    const shownPath = path ?? entry.request.url;
    const operationId = path ? shapes.match(method, apiPath(path))?.operationId ?? null : null;
    const base = { index: i + 1, request: `${method} ${shownPath}`, operation: operationId, recorded_status: entry.response.status };
    const recordedBody = parseJson(recordedText(entry));
    const requestBody = parseJson(entry.request.postData?.text);
    const skip = (reason: string): ExchangeResult => ({ ...base, status: 'skip', differences: [], reason, duration_ms: 0 });
    // What a request sends is the client's own: an answer repeating it introduces nothing to map.
    for (const segment of (path ?? '').split('?')[0].split('/')) if (segment) values.see(safeDecode(segment));
    for (const [, value] of new URLSearchParams((path ?? '').split('?')[1] ?? '')) for (const item of value.split(',')) values.see(item);
    if (requestBody.ok) values.seeAll(requestBody.value);
    let result: ExchangeResult;
    if (path === undefined) result = skip(`sent to another address than the recording's target (${target})`);
    else if (/^\/_sandbox(\/|$)/.test(apiPath(path))) result = skip('a control-plane call (/_sandbox): the real service has none');
    else if (entry.response.status === 0) result = skip(`the target gave no answer when it was recorded${entry.response._error ? ` (${entry.response._error})` : ''}`);
    else if (entry.response.status === 429) result = skip('throttled when it was recorded (429): that depends on the recording\'s pace, not on the API\'s rules; the retry that followed is replayed');
    else if (entry._cut?.request) result = skip('its body was larger than a recording keeps (LIMITS.recordBodyBytes), so it cannot be sent again');
    else {
      const replayed = replayPath(path, values);
      const token = operationId === 'createToken' ? { key, good } : undefined;
      const body = replayBody(entry, values, token);
      const headers: Record<string, string> = {};
      for (const { name, value } of entry.request.headers) {
        const lower = name.toLowerCase();
        if (name.startsWith(':') || NOT_REPLAYED.has(lower) || lower === 'content-type' || isSecretHeader(lower)) continue;
        headers[name] = values.embedded(value);
      }
      const auth = await authorization(headerOf(entry, 'authorization'), entry.response.status, values, client, key, good);
      let exchange: Exchange | undefined;
      try {
        exchange = await client.send(method, replayed, { raw: body.raw, contentType: body.raw === undefined ? undefined : body.contentType, auth, headers });
        answered = true;
      } catch (error) {
        if (!(error instanceof NetworkError)) throw error;
        if (!answered) throw new UnreachableBaseUrl(options.baseUrl, error.message);
      }
      const sandbox: Answer = exchange
        ? { status: exchange.status, headers: Object.fromEntries([...exchange.headers].map(([n, v]) => [n.toLowerCase(), v])), text: entry._cut?.response ? '' : exchange.text }
        : { status: 0, headers: {}, text: '' };
      const recorded: Answer = { status: entry.response.status, headers: lowerHeaders(entry.response.headers), text: recordedText(entry) };
      const differences = compareAnswers(recorded, sandbox, { operationId, shapes });
      const choiceRequest: ChoiceRequest = { operationId, query: new URLSearchParams(replayed.split('?')[1] ?? ''), body: body.raw ?? '', recordedStatus: entry.response.status };
      for (const difference of differences) {
        const choice = choiceFor(difference, choiceRequest);
        if (choice) difference.choice = choice;
      }
      const unexplained = differences.filter((d) => !d.choice).length;
      result = {
        ...base,
        replayed: `${method} ${replayed}`,
        status: !differences.length ? 'same' : unexplained ? 'differ' : 'known',
        sandbox_status: sandbox.status,
        differences,
        duration_ms: clock.now() - begin,
      };
      if (recordedBody.ok && exchange) values.learn(recordedBody.value, parseJson(exchange.text).value);
    }
    // What the answer showed is known from now on: only a first sight is mapped.
    if (recordedBody.ok) values.seeAll(recordedBody.value);
    results.push(result);
    options.onResult?.(result);
  }

  if (values.standIns.size) notes.push(`masked values the partner sent were replayed with stand-ins: ${[...values.standIns].map(([field, value]) => `${field || '(value)'} as ${value}`).join(', ')}`);
  const count = (status: ExchangeStatus) => results.filter((r) => r.status === status).length;
  const all = results.flatMap((r) => r.differences);
  return {
    tool: 'billing-sandbox diff',
    version: VERSION,
    recording: options.recording,
    recorded_against: target ?? null,
    base_url: client.baseUrl,
    account: { fresh: partnerId !== null, partner_id: partnerId, client_id: key.clientId, environment },
    run_id: runId,
    started_at: new Date(started).toISOString(),
    duration_ms: clock.now() - started,
    rate,
    summary: {
      exchanges: results.length, same: count('same'), differ: count('differ'), known: count('known'), skipped: count('skip'),
      differences: all.filter((d) => !d.choice).length, known_differences: all.filter((d) => d.choice).length,
    },
    mapped: { ids: values.ids, masked: values.masked },
    notes,
    exchanges: results,
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The Authorization header to replay: a token the recording was answered with becomes the sandbox's
 * token from the same answer; a Basic credential that got a token in the recording becomes the
 * sandbox key's (one that never did, a wrong secret of it); a token the recording did not see issued
 * is the run's own token when the service accepted it, else one the sandbox cannot accept either.
 */
async function authorization(value: string | undefined, recordedStatus: number, values: ValueMap, client: ParityClient, key: KeyCredentials, good: Set<string>): Promise<string> {
  if (value === undefined) return 'none';
  const scheme = /^(\S+)\s+(.+)$/.exec(value);
  if (!scheme) return values.mapped.get(value) ?? value;
  const [, name, credential] = scheme;
  if (name.toLowerCase() === 'basic') return good.has(credential) ? client.basicHeader(key.clientId, key.clientSecret) : client.basicHeader(key.clientId, `${key.clientSecret}-not-this-secret`);
  if (name.toLowerCase() === 'bearer') {
    const mapped = values.mapped.get(credential);
    if (mapped !== undefined) return `Bearer ${mapped}`;
    if (recordedStatus === 401) return 'Bearer not-a-token-of-this-sandbox';
    return `Bearer ${await client.accessToken()}`;
  }
  return `${name} ${values.embedded(credential)}`;
}
