#!/usr/bin/env node
// Owns the command line: flags (each with its environment variable; the flag wins), the startup
// line, and clean shutdown on SIGTERM and SIGINT. The only file that starts a listening server.
import { Command, InvalidArgumentError } from 'commander';
import { defaultConfig, VERSION, type SandboxConfig } from './config.js';
import { startSandbox } from './index.js';

function whole(name: string) {
  return (raw: string) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) throw new InvalidArgumentError(`${name} must be a whole number >= 0.`);
    return value;
  };
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

export async function main(argv: string[]): Promise<void> {
  let env: SandboxConfig;
  try {
    env = defaultConfig();
  } catch (error) {
    console.error(`billing-sandbox: ${(error as Error).message}`);
    process.exit(2);
  }
  const program = new Command()
    .name('billing-sandbox')
    .description('A stateful, high-fidelity sandbox of the partner billing, payments and payables API.')
    .version(VERSION, '-v, --version')
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
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (SANDBOX_LOG_LEVEL)', env.logLevel)
    .showHelpAfterError();
  program.parse(argv);
  const flags = program.opts();
  let sandbox;
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
      realTimeTicks: true,
    });
  } catch (error) {
    console.error(`billing-sandbox: ${(error as Error).message}`);
    process.exit(1);
  }
  const { production, demo } = sandbox.deps.config.credentials;
  const shownUrl = flags.publicUrl ?? `http://${flags.host}:${sandbox.port}`;
  console.log(
    `billing-sandbox ${VERSION} listening on ${shownUrl} (demo at ${shownUrl}/demo) | production client_id=${production.client_id} client_secret=${production.client_secret} | demo client_id=${demo.client_id} client_secret=${demo.client_secret}`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
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
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main(process.argv);
