// Owns running the shell examples the README and docs quote (examples/**/*.sh) as a newcomer would:
// against a sandbox this script starts with the CLI's defaults (node dist/cli.js --port 0; build first),
// each file run by bash exactly as written except that the documented origin http://127.0.0.1:4010
// becomes the free port's. Each run must exit 0 and print what the docs promise. Examples that cannot
// run here are listed with the reason and the check that stands in for them; a .sh file in neither
// list fails the run, so a new example cannot be left unrun by accident. The Node examples that talk
// to a base URL (NODE_RUN: the first-test recipe against a container) run against a CLI of their own,
// started with the environment their page gives the container.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DOCUMENTED_ORIGIN = 'http://127.0.0.1:4010';
const log = (message) => console.log(`[shell-examples] ${message}`);

/** JSON bodies curl printed back to back (curl -s adds no newline). */
const bodies = (out) => out.replace(/}\s*{/g, '}\n{').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

// Run in this order (later ones use what earlier ones made); `check` throws when the output is wrong.
const RUN = [
  ['examples/running/check.sh', (out) => {
    const [health, token] = bodies(out);
    if (health.status !== 'ok' || typeof token.access_token !== 'string' || token.expires_in !== 3600) throw new Error('health and token');
  }],
  ['examples/readme/first-call.sh', (out) => {
    const [made, list] = bodies(out);
    if (!/^cus_/.test(made.id) || made.external_id !== 'acme-1') throw new Error('the customer was not made');
    if (!list.data.some((c) => c.id === made.id)) throw new Error('the list lacks the customer');
  }],
  ['examples/readme/demo.sh', (out) => {
    const [list] = bodies(out);
    if (!Array.isArray(list.data) || list.data.some((c) => c.external_id === 'acme-1')) throw new Error('the demo environment is not separate');
  }],
  ['examples/scenarios/prefer-503.sh', (out) => {
    const [error] = bodies(out);
    if (error.code !== 'service_unavailable') throw new Error(`want code service_unavailable, got ${error.code}`);
  }],
  ['examples/scenarios/journal.sh', (out) => {
    const [journal] = bodies(out);
    const entry = journal.data?.[0];
    if (!entry || entry.method !== 'POST' || entry.path !== '/invoices') throw new Error('the journal lacks the POST /invoices made before it');
  }, 'makes an invoice first (POST /invoices) for the journal to show'],
  ['examples/webhooks/subscribe.sh', (out) => {
    const [subscription] = bodies(out);
    if (subscription.topic !== 'invoice_paid' || JSON.stringify(subscription).includes('whsec_123')) throw new Error('subscription');
  }],
  // After subscribe.sh: the invoice_paid subscription it made is what receives the event and its copies.
  ['examples/webhooks/fire-duplicate.sh', (out) => {
    const [event] = bodies(out);
    if (event.topic !== 'invoice_paid' || !/^evt_/.test(event.idempotency_key)) throw new Error(`want the fired invoice_paid event, got ${JSON.stringify(event)}`);
  }],
  ['examples/snapshots/save-restore.sh', (out) => {
    const [setUp, saved, later, restored, list] = bodies(out);
    if (saved.name !== 'after-setup' || !(saved.counts.customers >= 1)) throw new Error('the snapshot was not saved');
    if (restored.account !== 'ptn_default:production') throw new Error('the snapshot was not restored');
    const ids = list.data.map((c) => c.id);
    if (!ids.includes(setUp.id) || ids.includes(later.id)) throw new Error('the restored account is not the saved one');
  }],
  ['examples/snapshots/export-import.sh', (out) => {
    const [imported, list] = bodies(out);
    if (imported.name !== 'from-a-file' || imported.redacted !== true) throw new Error('the export was not imported');
    if (JSON.stringify(list.data.map((s) => s.name)) !== JSON.stringify(['after-setup', 'from-a-file'])) throw new Error(`listed ${JSON.stringify(list.data)}`);
  }],
];
const NOT_RUN = {
  'examples/readme/quick-start.sh': 'CI runs these very commands (.ci/run: npm ci, npm test); npm start runs dist/cli.js, which scripts/pack-smoke.sh starts and calls',
  'examples/running/docker.sh': 'needs a Docker engine and the node:22 base image from a registry; scripts/container-smoke.sh builds and runs the same Dockerfile with podman, and test/docs-examples.test.ts checks the flags and variables',
  'examples/running/npx.sh': 'needs the package in a registry; scripts/pack-smoke.sh runs npx of the packed tarball, and test/docs-examples.test.ts checks the flags',
  'examples/running/from-a-clone.sh': 'clones and installs into another project; .ci/run packs the same tarball, scripts/consumers.sh installs it as a partner does, and scripts/container-smoke.sh builds the same Dockerfile',
  'examples/running/podman.sh': 'starts a long-running API service on a system path; scripts/container-smoke.sh runs the image with the same runtime and limits, and scripts/container-recipes.sh runs podman system service with examples/running/containers.conf\'s settings',
  'examples/parity/record-diff.sh': 'run by scripts/record-diff-example.sh against two CLIs (one in the demo environment\'s place, given examples/parity/demo-differs.yaml), which compares its report with examples/parity/diff-sample.txt',
  'examples/parity/run.sh': 'run by scripts/parity-example.sh (at the spec\'s 5 requests per second, about a minute), which compares its report with examples/parity/sample-report.txt',
  'examples/command-line/tour.sh': 'run by test/cli-commands.test.ts against a fresh sandbox, with the commands of examples/command-line/session.txt',
  'examples/first-test/container.sh': 'needs a Docker engine; its script, examples/first-test/first-test.mjs, runs in this script against a CLI started as the container is (SANDBOX_ALLOW_HTTP_WEBHOOKS=1), and test/docs-examples.test.ts checks its variables',
};
/** Node examples that talk to a base URL: each run against a CLI started with `env`, as its page starts the container. */
const NODE_RUN = [
  ['examples/first-test/first-test.mjs', { SANDBOX_ALLOW_HTTP_WEBHOOKS: '1' }, (out) => {
    if (!/^invoice_paid received for inv_\w+: 300 USD, payment \w+_\w+$/m.test(out)) throw new Error('no invoice_paid line');
  }],
];

const shellFiles = ['readme', 'running', 'scenarios', 'webhooks', 'snapshots', 'control-plane', 'fixtures', 'logs', 'parity', 'command-line', 'first-test']
  .flatMap((dir) => {
    try {
      return readdirSync(join(ROOT, 'examples', dir)).filter((f) => f.endsWith('.sh')).map((f) => `examples/${dir}/${f}`);
    } catch {
      return [];
    }
  });
const unlisted = shellFiles.filter((f) => !RUN.some(([file]) => file === f) && !NOT_RUN[f]);
if (unlisted.length) {
  console.error(`[shell-examples] FAIL: not run and no reason given: ${unlisted.join(', ')} (add them to scripts/shell-examples.mjs)`);
  process.exit(1);
}

/** The CLI on a free port, as `npm start` starts it (plus `env`); its URL from the startup line. */
async function startCli(env = {}) {
  const child = spawn(process.execPath, [join(ROOT, 'dist/cli.js'), '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  child.stderr.on('data', (chunk) => { output += chunk; });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no startup line within 60 s:\n${output}`)), 60_000);
    child.stdout.on('data', () => {
      const found = / listening on (http:\S+)/.exec(output);
      if (found) { clearTimeout(timer); resolve(found[1]); }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the sandbox exited (${code}):\n${output}`)); });
  });
  return { child, url };
}

const { child: server, url } = await startCli();
log(`sandbox at ${url} (the examples' ${DOCUMENTED_ORIGIN})`);

const basic = `Basic ${Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64')}`;
const TOKEN = (await (await fetch(`${url}/oauth/token`, { method: 'POST', headers: { Authorization: basic, 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' })).json()).access_token;

let failed = 0;
try {
  for (const [file, check, before] of RUN) {
    if (before) {
      const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
      const customer = await (await fetch(`${url}/customers`, { method: 'POST', headers, body: JSON.stringify({ name: 'Journal Co', email: 'ap@journal.test' }) })).json();
      await fetch(`${url}/invoices`, { method: 'POST', headers, body: JSON.stringify({ customer_id: customer.id, line_items: [{ amount: 10 }] }) });
    }
    const script = readFileSync(join(ROOT, file), 'utf8').replaceAll(DOCUMENTED_ORIGIN, url);
    // The examples' own rate of calls, at the CLI's default rate limit (5 per second per key).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { encoding: 'utf8', env: { ...process.env, TOKEN }, timeout: 60_000 });
    try {
      if (run.status !== 0) throw new Error(`exit ${run.status}: ${run.stderr}`);
      check(run.stdout);
      log(`ok   ${file}`);
    } catch (error) {
      failed++;
      log(`FAIL ${file}: ${error.message}\n${run.stdout}${run.stderr}`);
    }
  }
  for (const [file, env, check] of NODE_RUN) {
    const cli = await startCli(env);
    const run = spawnSync(process.execPath, [join(ROOT, file)], { encoding: 'utf8', env: { ...process.env, BASE_URL: cli.url }, timeout: 60_000 });
    cli.child.kill('SIGTERM');
    try {
      if (run.status !== 0) throw new Error(`exit ${run.status}: ${run.stderr}`);
      check(run.stdout);
      log(`ok   ${file} (BASE_URL=${cli.url})`);
    } catch (error) {
      failed++;
      log(`FAIL ${file}: ${error.message}\n${run.stdout}${run.stderr}`);
    }
  }
  for (const [file, reason] of Object.entries(NOT_RUN)) log(`not run ${file}: ${reason}`);
} finally {
  server.kill('SIGTERM');
}
if (failed) process.exit(1);
log(`PASS: ${RUN.length} shell and ${NODE_RUN.length} Node examples ran against the CLI and printed what the docs say`);
