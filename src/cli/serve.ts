// Owns `billing-sandbox` and `billing-sandbox serve`: the server's flags (each with its environment
// variable; the flag wins), the startup line, and the clean stop on SIGTERM, SIGINT (Ctrl-C) and
// SIGHUP: in-flight requests finish, live streams end, due work settles, the data file is flushed,
// then the process exits 0. A second signal during that stop exits at once.
import { Command, InvalidArgumentError } from 'commander';
import { defaultConfig, VERSION, type SandboxConfig } from '../config.js';
import type { RunningSandbox } from '../sandbox.js';
import { CliError, EXIT } from './errors.js';
import { releaseStartupMemory } from './memory.js';

const MB = 1024 * 1024;

function whole(name: string, min = 0) {
  return (raw: string) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new InvalidArgumentError(`${name} must be a whole number >= ${min}.`);
    return value;
  };
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

/** The environment's configuration; a bad variable is reported when the server starts (exit 2), not for client commands. */
export function environmentConfig(): { env: SandboxConfig; problem?: Error } {
  try {
    return { env: defaultConfig(process.env, 'command-line') };
  } catch (error) {
    return { env: defaultConfig({}, 'command-line'), problem: error as Error };
  }
}

/** The server's flags, with defaults from the environment. */
export function withServeOptions(command: Command, env: SandboxConfig): Command {
  return command
    .option('--port <n>', 'port to listen on (PORT)', whole('--port'), env.port)
    .option('--host <host>', 'address to listen on (HOST)', env.host)
    .option('--data <file>', 'persist to this JSON file (SANDBOX_DATA); absent: in memory', env.dataFile)
    .option('--seed <n>', 'same seed, same ids and generated data (SANDBOX_SEED)', env.seed)
    .option('--fixtures <name|file>', 'load a dataset at start (SANDBOX_FIXTURES)', env.fixtures)
    .option('--scenario <name|file>', 'load a scenario for every account; repeatable (SANDBOX_SCENARIOS, comma-separated)', collect, env.scenarios)
    .option('--rate-limit <n>', 'requests per second per key, 0 = off (SANDBOX_RATE_LIMIT)', whole('--rate-limit'), env.rateLimit)
    .option('--allow-http-webhooks', 'allow plain http webhook endpoints (SANDBOX_ALLOW_HTTP_WEBHOOKS=1)', env.allowHttpWebhooks)
    .option('--allow-private-urls', 'let PDF url uploads reach loopback and private hosts (SANDBOX_ALLOW_PRIVATE_URLS=1)', env.allowPrivateUrls)
    .option('--public-url <url>', 'origin used in generated links (SANDBOX_PUBLIC_URL)', env.publicUrl)
    .option('--admin-token <token>', 'require this token on the control plane (SANDBOX_ADMIN_TOKEN)', env.adminToken)
    .option('--journal-size <n>', 'request journal entries kept per account (SANDBOX_JOURNAL_SIZE)', whole('--journal-size'), env.journalSize)
    .option('--memory-budget <MB>', 'memory for the request journals and webhook histories of all accounts together, in MB; past it the oldest entries go first (SANDBOX_MEMORY_BUDGET_MB)', whole('--memory-budget', 1), env.memoryBudgetBytes / MB)
    .option('--token-ttl <seconds>', 'life of access and checkout tokens, in real seconds (SANDBOX_TOKEN_TTL)', whole('--token-ttl', 1), env.tokenTtl)
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (SANDBOX_LOG_LEVEL)', env.logLevel);
}

/** The flags serve reads, as commander parses the options declared above (defaults from the environment). */
export interface ServeFlags {
  port: SandboxConfig['port'];
  host: SandboxConfig['host'];
  data?: string;
  seed?: string;
  fixtures?: string;
  scenario: SandboxConfig['scenarios'];
  rateLimit: SandboxConfig['rateLimit'];
  allowHttpWebhooks?: boolean;
  allowPrivateUrls?: boolean;
  publicUrl?: string;
  adminToken?: string;
  logLevel: SandboxConfig['logLevel'];
  journalSize: SandboxConfig['journalSize'];
  /** In MB. */
  memoryBudget: number;
  tokenTtl: SandboxConfig['tokenTtl'];
}

/** What the executable (src/cli.ts) asks to be told about a server's start. */
export interface ServeHooks {
  /** Once the server has settled after listening (its first answers given), before start-up's garbage goes back. */
  settled?: () => void;
}

/** Start the server with parsed flags; it runs until a signal stops it. */
export async function serve(flags: ServeFlags, env: SandboxConfig, problem?: Error, hooks: ServeHooks = {}): Promise<void> {
  if (problem) throw new CliError(problem.message, EXIT.usage);
  // Loaded here, not at the top: the client commands never need the server's modules.
  const { startSandbox } = await import('../sandbox.js');
  let sandbox: RunningSandbox;
  try {
    sandbox = await startSandbox({
      ...env,
      port: flags.port,
      host: flags.host,
      dataFile: flags.data,
      seed: flags.seed,
      fixtures: flags.fixtures,
      scenarios: flags.scenario,
      rateLimit: flags.rateLimit,
      allowHttpWebhooks: Boolean(flags.allowHttpWebhooks),
      allowPrivateUrls: Boolean(flags.allowPrivateUrls),
      publicUrl: flags.publicUrl,
      adminToken: flags.adminToken,
      logLevel: flags.logLevel,
      journalSize: flags.journalSize,
      memoryBudgetBytes: flags.memoryBudget * MB,
      tokenTtl: flags.tokenTtl,
      realTimeTicks: true,
    });
  } catch (error) {
    throw new CliError((error as Error).message, EXIT.refused);
  }
  const { production, demo } = sandbox.deps.config.credentials;
  const shownUrl = flags.publicUrl ?? `http://${flags.host}:${sandbox.port}`;
  console.log(
    `billing-sandbox ${VERSION} listening on ${shownUrl} (demo at ${shownUrl}/demo) | production client_id=${production.client_id} client_secret=${production.client_secret} | demo client_id=${demo.client_id} client_secret=${demo.client_secret}`,
  );
  stopOnSignals(sandbox);
  // Settled: the executable takes its code cache first, since a collection that shrinks the heap may
  // also drop compiled code the cache would then lack; then start-up's garbage goes back.
  setTimeout(() => {
    hooks.settled?.();
    releaseStartupMemory();
  }, STARTUP_SETTLE_MS).unref();
}

/** How long after listening the server counts as settled (its first answers given). */
const STARTUP_SETTLE_MS = 500;

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

function stopOnSignals(sandbox: RunningSandbox): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second Ctrl-C: the person does not want to wait for in-flight work.
      sandbox.deps.log.warn({ signal }, 'stopping now, without waiting');
      process.exit(SIGNAL_EXIT[signal] ?? 1);
    }
    stopping = true;
    sandbox.deps.log.info({ signal }, 'shutting down');
    sandbox.close().then(
      () => process.exit(0),
      (error) => {
        sandbox.deps.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  stopWhenOrphaned(() => stop('SIGTERM'));
}

/** How often a sandbox started by npm checks that its parent is still there (real time). */
const PARENT_CHECK_MS = 500;
/** Read as the command line loads, before the (slower) start of the server. */
const PARENT_AT_START = process.ppid;

/**
 * `npx billing-sandbox` runs this process under `npm exec` through `sh -c`. A SIGTERM sent to npm
 * alone (a supervisor, `kill <npx pid>`) kills that shell without passing the signal on, which would
 * leave the sandbox running with no parent. Started by npm (npm_command is set), the sandbox watches
 * its parent and stops cleanly, as on SIGTERM, when it goes away. Run directly (node, docker), it does
 * not: a sandbox started with nohup must outlive its shell.
 */
function stopWhenOrphaned(stop: () => void): void {
  if (!process.env.npm_command) return;
  const orphaned = () => process.ppid !== PARENT_AT_START || PARENT_AT_START === 1;
  // The parent may have gone while the sandbox was starting.
  if (orphaned()) return stop();
  const timer = setInterval(() => {
    if (orphaned()) {
      clearInterval(timer);
      stop();
    }
  }, PARENT_CHECK_MS);
  timer.unref();
}

export function serveCommand(hooks: ServeHooks = {}): Command {
  const { env, problem } = environmentConfig();
  return withServeOptions(new Command('serve'), env)
    .description('start the sandbox (the same as running billing-sandbox with no command)')
    .action(async function (this: Command) {
      await serve(this.opts<ServeFlags>(), env, problem, hooks);
    });
}
