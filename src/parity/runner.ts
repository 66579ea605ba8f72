// Owns a parity run: choose the cases (--only), run them one after another against one base URL,
// turn each into a result (pass, fail with expected and observed, skip with a reason), clean up,
// and add one shape row per operation and status seen (each answer checked against openapi.yaml).
import { randomBytes } from 'node:crypto';
import { VERSION } from '../config.js';
import { AREAS, CaseContext, CaseFailure, CaseSkipped, DEFAULT_RATE, excerpt, UsageError, type ParityCase, type Rule, type RunSettings } from './case.js';
import { CASES } from './cases/index.js';
import { CleanupTracker, type CleanupSummary } from './cleanup.js';
import { NetworkError, ParityClient, TokenError, UnreachableBaseUrl, realClock, type ClientClock, type Exchange } from './client.js';
import { ShapeChecker } from './shapes.js';

export type CaseStatus = 'pass' | 'fail' | 'skip';

export interface CaseResult {
  id: string;
  area: string;
  title: string;
  status: CaseStatus;
  rule: Rule;
  /** docs/gaps-and-choices.md rows (first-column text) the expectation rests on. */
  gaps: string[];
  duration_ms: number;
  /** Fail: what went wrong, as a sentence. */
  message?: string;
  /** Fail: the expected status(es), e.g. "409" or "400 or 415". */
  expected?: string;
  /** Fail: the status that came. */
  observed?: number;
  /** Fail: the request that got it, e.g. "POST /bills/bil_1/submit". */
  request?: string;
  /** Fail: the start of the answer's body. */
  body_excerpt?: string;
  /** Skip: why. */
  reason?: string;
}

export interface ParityReport {
  tool: 'billing-sandbox parity';
  version: string;
  base_url: string;
  other_base_url: string | null;
  run_id: string;
  /** Everything the run created carries this prefix. */
  prefix: string;
  started_at: string;
  duration_ms: number;
  options: { rate: number; only: string[] | null; allow_money_movement: boolean };
  summary: { total: number; passed: number; failed: number; skipped: number };
  requests: { sent: number; throttled: number };
  cleanup: CleanupSummary;
  cases: CaseResult[];
}

export interface RunOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Areas or case ids; absent: every case. */
  only?: string[];
  /** Requests per second at most (default 5, the spec's limit). */
  rate?: number;
  allowMoneyMovement?: boolean;
  /** The other environment's base URL; absent: derived where the base URL's form allows it. */
  otherBaseUrl?: string;
  clock?: ClientClock;
  fetch?: typeof fetch;
  /** The catalogue (tests may pass their own). */
  cases?: readonly ParityCase[];
  runId?: string;
  /** Told of each result as it comes (progress). */
  onResult?: (result: CaseResult) => void;
}

export { DEFAULT_RATE, UnreachableBaseUrl, UsageError };

/** The cases `only` names (areas or case ids), in catalogue order; an unknown name is a usage error. */
export function selectCases(cases: readonly ParityCase[], only?: string[]): ParityCase[] {
  if (!only?.length) return [...cases];
  const unknown = only.filter((name) => !(AREAS as readonly string[]).includes(name) && !cases.some((c) => c.id === name));
  if (unknown.length) throw new UsageError(`--only: unknown area or case ${unknown.join(', ')} (areas: ${AREAS.join(', ')})`);
  return cases.filter((c) => only.includes(c.area) || only.includes(c.id));
}

const LOOPBACK = /^(localhost|127(\.\d+){3}|\[::1\])$/;

/**
 * The other environment's base URL from this one's form: `.../demo` (or `.../demo/v1`) is the
 * sandbox's demo path, so the other is the same without it; a loopback origin is a local sandbox,
 * whose demo environment is under `/demo`. The real service keeps the two on separate hosts, which
 * cannot be guessed.
 */
export function otherEnvironmentUrl(baseUrl: string): { url?: string; why?: string } {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  const demo = /^(.*?)\/demo(\/v1)?$/.exec(path);
  if (demo) return { url: `${url.origin}${demo[1]}${demo[2] ?? ''}` };
  if (LOOPBACK.test(url.hostname)) return { url: `${url.origin}/demo${path}` };
  return { why: `the other environment's base URL cannot be derived from ${url.origin} (the two environments have separate hosts); pass --other-base-url` };
}

export async function runParity(options: RunOptions): Promise<ParityReport> {
  const cases = selectCases(options.cases ?? CASES, options.only);
  const clock = options.clock ?? realClock;
  const rate = options.rate ?? DEFAULT_RATE;
  const client = new ParityClient({ baseUrl: options.baseUrl, clientId: options.clientId, clientSecret: options.clientSecret, rate, clock, fetch: options.fetch });
  const shapes = new ShapeChecker();
  const cleanup = new CleanupTracker(shapes);
  const seen: Exchange[] = [];
  client.onExchange((exchange) => {
    seen.push(exchange);
    cleanup.observe(exchange);
  });
  const runId = options.runId ?? randomBytes(4).toString('hex').slice(0, 6);
  const other = options.otherBaseUrl ? { url: options.otherBaseUrl } : otherEnvironmentUrl(options.baseUrl);
  const settings: RunSettings = {
    prefix: `parity-${runId}-`,
    allowMoneyMovement: Boolean(options.allowMoneyMovement),
    otherBaseUrl: other.url,
    otherBaseUrlMissing: other.why,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
  };
  const redact = (text: string | undefined) => (text === undefined ? undefined : client.redact(text));
  const started = clock.now();
  const shared = new Map<string, Promise<unknown>>();

  // Without an access token only the token cases can say anything; the others fail with the reason.
  let tokenProblem: TokenError | undefined;
  try {
    await client.accessToken();
  } catch (error) {
    // No answer at all to the first request: nothing else can answer either, so the run stops with
    // the CLI's "could not be reached" outcome instead of failing every case with the same reason.
    if (error instanceof NetworkError) throw new UnreachableBaseUrl(options.baseUrl, error.message);
    if (!(error instanceof TokenError)) throw error;
    tokenProblem = error;
  }

  const results: CaseResult[] = [];
  for (const parityCase of cases) {
    const begin = clock.now();
    const base = { id: parityCase.id, area: parityCase.area, title: parityCase.title, rule: parityCase.rule, gaps: parityCase.gaps ?? [] };
    let outcome: Omit<CaseResult, keyof typeof base | 'duration_ms'>;
    if (parityCase.movesMoney && !settings.allowMoneyMovement) {
      outcome = { status: 'skip', reason: 'moves money (a payment or vendor payment): runs only with --allow-money-movement' };
    } else if (tokenProblem && parityCase.area !== 'tokens') {
      outcome = failure(tokenProblem, client);
    } else {
      try {
        await parityCase.run(new CaseContext(client, settings, shapes, shared));
        outcome = { status: 'pass' };
      } catch (error) {
        outcome = error instanceof CaseSkipped ? { status: 'skip', reason: error.reason } : failure(error, client);
      }
    }
    const result: CaseResult = { ...base, ...outcome, duration_ms: clock.now() - begin };
    for (const key of ['message', 'body_excerpt', 'request'] as const) if (result[key] !== undefined) result[key] = redact(result[key]);
    results.push(result);
    options.onResult?.(result);
  }

  const cleaned = await cleanup.run(client);
  for (const row of shapeRows(shapes, seen, client)) {
    row.message = redact(row.message);
    row.body_excerpt = redact(row.body_excerpt);
    results.push(row);
    options.onResult?.(row);
  }

  const count = (status: CaseStatus) => results.filter((r) => r.status === status).length;
  return {
    tool: 'billing-sandbox parity',
    version: VERSION,
    base_url: client.baseUrl,
    other_base_url: settings.otherBaseUrl ?? null,
    run_id: runId,
    prefix: settings.prefix,
    started_at: new Date(started).toISOString(),
    duration_ms: clock.now() - started,
    options: { rate, only: options.only?.length ? options.only : null, allow_money_movement: settings.allowMoneyMovement },
    summary: { total: results.length, passed: count('pass'), failed: count('fail'), skipped: count('skip') },
    requests: { sent: client.requests, throttled: client.throttled },
    cleanup: cleaned,
    cases: results,
  };
}

function failure(error: unknown, client: ParityClient): Omit<CaseResult, 'id' | 'area' | 'title' | 'rule' | 'gaps' | 'duration_ms'> {
  if (error instanceof CaseFailure) return { status: 'fail', message: error.message, ...stripUndefined({ expected: error.detail.expected, observed: error.detail.observed, request: error.detail.request, body_excerpt: error.detail.excerpt }) };
  if (error instanceof TokenError) {
    return { status: 'fail', message: error.message, expected: '200', observed: error.exchange.status, request: 'POST /oauth/token', body_excerpt: excerpt(client.redact(error.exchange.text)) };
  }
  if (error instanceof NetworkError) return { status: 'fail', message: error.message };
  return { status: 'fail', message: `the case itself broke: ${(error as Error)?.stack?.split('\n').slice(0, 2).join(' ') ?? String(error)}` };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** One row per (operation, status) seen: pass when every such answer matched the document. */
function shapeRows(shapes: ShapeChecker, exchanges: Exchange[], client: ParityClient): CaseResult[] {
  const rows = new Map<string, { template: string; method: string; operationId: string; status: number; count: number; bad: number; first?: { exchange: Exchange; problems: string[] } }>();
  for (const exchange of exchanges) {
    if (exchange.foreign) continue;
    const matched = shapes.match(exchange.method, exchange.path);
    if (!matched) continue;
    const key = `${matched.operationId} ${exchange.status}`;
    const row = rows.get(key) ?? { template: matched.template, method: exchange.method, operationId: matched.operationId, status: exchange.status, count: 0, bad: 0 };
    rows.set(key, row);
    row.count += 1;
    const problems = shapes.check(matched.operationId, exchange.status, exchange.body, exchange.text);
    if (problems) {
      row.bad += 1;
      row.first ??= { exchange, problems };
    }
  }
  return [...rows.values()]
    .sort((a, b) => a.operationId.localeCompare(b.operationId) || a.status - b.status)
    .map((row): CaseResult => {
      const base = {
        id: `shapes/${row.operationId}-${row.status}`,
        area: 'shapes',
        title: `${row.method} ${row.template} ${row.status}: ${row.count} answer${row.count === 1 ? '' : 's'} checked against openapi.yaml`,
        rule: { section: 'openapi/openapi.yaml', quote: `paths["${row.template}"].${row.method.toLowerCase()}.responses["${row.status}"]` },
        gaps: [],
        duration_ms: 0,
      };
      if (!row.first) return { ...base, status: 'pass' };
      return {
        ...base,
        status: 'fail',
        message: `${row.bad} of ${row.count} answers do not match the document: ${row.first.problems.join('; ')}`,
        expected: `${row.status} with the documented body`,
        observed: row.status,
        request: `${row.first.exchange.method} ${row.first.exchange.path}`,
        body_excerpt: excerpt(client.redact(row.first.exchange.text)),
      };
    });
}
