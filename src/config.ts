// Owns the sandbox's configuration: defaults, environment variables and their parsing. The only
// module of the server that reads the environment (test/config.test.ts checks it); flags are parsed
// in src/cli/serve.ts and win over the environment; programmatic callers pass SandboxConfig directly.
import { LIMITS } from './limits.js';
import { DEFAULT_TOKEN_TTL_SECONDS } from './auth/tokens.js';
import type { SendLimits } from './http/send-guard.js';

export type Environment = 'production' | 'demo';
export const ENVIRONMENTS: readonly Environment[] = ['production', 'demo'];

export interface DefaultCredentials {
  production: { client_id: string; client_secret: string };
  demo: { client_id: string; client_secret: string };
}

export interface SandboxConfig {
  port: number;
  host: string;
  /** JSON file the store persists to; absent keeps everything in memory. */
  dataFile?: string;
  /** Same seed, same ids and generated data. Absent: a random seed (kept in the data file). */
  seed?: string;
  fixtures?: string;
  scenarios: string[];
  /** Requests per second per API key; 0 turns the limit off. */
  rateLimit: number;
  allowHttpWebhooks: boolean;
  allowPrivateUrls: boolean;
  publicUrl?: string;
  adminToken?: string;
  logLevel: string;
  credentials: DefaultCredentials;
  /** Check every API response against the OpenAPI document (tests turn this on; a mismatch answers 500). */
  validateResponses: boolean;
  /** Run due work as real time passes (the CLI turns this on; tests advance the clock instead). */
  realTimeTicks: boolean;
  /** How long changes are gathered before one write of the data file (ms). */
  flushDelayMs: number;
  /**
   * The data file's log is compacted into a new snapshot once larger than this and the snapshot
   * (bytes; absent: the store's 64 MB). SANDBOX_COMPACT_MIN_BYTES sets it, for the crash test, which
   * needs compactions within seconds; tests pass it directly.
   */
  compactMinBytes: number | undefined;
  /** While the data file cannot be written, how often it is tried again (ms); also the Retry-After of the 503s. */
  storageRetryMs: number;
  /** Size of each account's request journal ring. */
  journalSize: number;
  /**
   * The process-wide memory budget, in serialised bytes, of the request journal and the webhook
   * history of every account together; past it the oldest entries of the process are evicted first
   * (src/budget/memory-budget.ts). The CLI and the environment give it in MB.
   */
  memoryBudgetBytes: number;
  /** Life of access and checkout tokens in real seconds (`expires_in`); at least 1. */
  tokenTtl: number;
  /** The bound on answers clients do not read (src/http/send-guard.ts); LIMITS' values unless a test needs small ones. */
  sendLimits: SendLimits;
}

/** Who starts the sandbox, for the defaults that differ between them. */
export type Launcher = 'command-line' | 'library';

/**
 * The log level without --log-level or SANDBOX_LOG_LEVEL: the command line logs an access line per
 * request (a person watches it); startSandbox() and createDeps() log warnings and errors only, since
 * a test runner's output should not carry a line per request.
 */
export const DEFAULT_LOG_LEVEL: Readonly<Record<Launcher, string>> = { 'command-line': 'info', library: 'warn' };

export const VERSION = '0.1.0';

const MB = 1024 * 1024;

/** The configuration from the environment and the defaults; `launcher` picks the defaults that differ (the log level). */
export function defaultConfig(env: NodeJS.ProcessEnv = process.env, launcher: Launcher = 'library'): SandboxConfig {
  return {
    port: intFrom(env.PORT, 4010, 'PORT'),
    host: env.HOST ?? '127.0.0.1',
    dataFile: env.SANDBOX_DATA || undefined,
    seed: env.SANDBOX_SEED || undefined,
    fixtures: env.SANDBOX_FIXTURES || undefined,
    scenarios: (env.SANDBOX_SCENARIOS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    rateLimit: intFrom(env.SANDBOX_RATE_LIMIT, 5, 'SANDBOX_RATE_LIMIT'),
    allowHttpWebhooks: truthy(env.SANDBOX_ALLOW_HTTP_WEBHOOKS),
    allowPrivateUrls: truthy(env.SANDBOX_ALLOW_PRIVATE_URLS),
    publicUrl: env.SANDBOX_PUBLIC_URL || undefined,
    adminToken: env.SANDBOX_ADMIN_TOKEN || undefined,
    logLevel: env.SANDBOX_LOG_LEVEL || DEFAULT_LOG_LEVEL[launcher],
    credentials: {
      production: {
        client_id: env.SANDBOX_CLIENT_ID ?? 'sandbox_client_id',
        client_secret: env.SANDBOX_CLIENT_SECRET ?? 'sandbox_client_secret',
      },
      demo: {
        client_id: env.SANDBOX_DEMO_CLIENT_ID ?? 'sandbox_demo_client_id',
        client_secret: env.SANDBOX_DEMO_CLIENT_SECRET ?? 'sandbox_demo_client_secret',
      },
    },
    validateResponses: false,
    realTimeTicks: false,
    flushDelayMs: 50,
    storageRetryMs: positiveFrom(env.SANDBOX_STORAGE_RETRY_MS, 2000, 'SANDBOX_STORAGE_RETRY_MS'),
    compactMinBytes: env.SANDBOX_COMPACT_MIN_BYTES ? positiveFrom(env.SANDBOX_COMPACT_MIN_BYTES, 1, 'SANDBOX_COMPACT_MIN_BYTES') : undefined,
    journalSize: intFrom(env.SANDBOX_JOURNAL_SIZE, LIMITS.journalEntries, 'SANDBOX_JOURNAL_SIZE'),
    memoryBudgetBytes: positiveFrom(env.SANDBOX_MEMORY_BUDGET_MB, LIMITS.memoryBudgetBytes / MB, 'SANDBOX_MEMORY_BUDGET_MB') * MB,
    tokenTtl: positiveFrom(env.SANDBOX_TOKEN_TTL, DEFAULT_TOKEN_TTL_SECONDS, 'SANDBOX_TOKEN_TTL'),
    sendLimits: { sendTimeoutMs: LIMITS.sendTimeoutMs, connectionQueuedBytes: LIMITS.connectionQueuedBytes, totalQueuedBytes: LIMITS.totalQueuedBytes },
  };
}

export function intFrom(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number >= 0, got "${raw}"`);
  return value;
}

function positiveFrom(raw: string | undefined, fallback: number, name: string): number {
  const value = intFrom(raw, fallback, name);
  if (value < 1) throw new Error(`${name} must be a whole number >= 1, got "${raw}"`);
  return value;
}

function truthy(raw: string | undefined): boolean {
  return raw === '1' || raw === 'true' || raw === 'yes';
}
