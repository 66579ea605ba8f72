// `npm run bench`: the sandbox side by side with express 5's hello-world and Prism's mock of
// openapi/openapi.yaml (silent), each in its own process, in one run: autocannon (-c 50) after a
// warm-up, the rounds interleaved (every target once per round, then the next round, in the reverse
// order every other round), CPU time per request read from /proc/<pid>/stat, p99 from every answer's
// own latency (autocannon's histogram counts whole milliseconds). Ratios are of the
// medians over the rounds: on a shared machine a burst of other work slows one run, not the row.
// The sandbox's rows compared with each other (POST / GET, GET at 100k / 1k, --data at 1M / 1k) are
// the median of each round's own ratio: in a round the two rows ran one right after the other (the
// side-by-side ones in interleaved slices: five of 2 s each, every other pass reversed).
// The sandbox's POSTs go to a twin of its 1k-customer process, so the GET rows keep their store size. Then: GET at 1k and 100k stored customers, POST /customers on
// the real CLI with --data at 1k and 1M stored customers, cold start of `node dist/cli.js` to the first
// 200 on health (with the pages it first touched, against bare node's, and their price here), idle
// RSS, RSS with 100k customers, webhook deliveries per second, and the time of an account snapshot and
// of its restore (10,000 objects over HTTP; also with --data, and at 20,000). Prints a Markdown
// table and the ratios against the goals of issue 11 (and the snapshot goals of issue 43).
//
//   node scripts/bench.mjs [--check] [--quick] [--only http,data,start,webhooks,snapshots]
//     --check  exit 1 when a goal of issue 11 is missed (without it the goals are only reported)
//     --quick  3-second runs, one round, smaller stores: a smoke run, not a measurement
//     --only   measure only these sections (--http-only: the side-by-side rows alone, as JSON)
//   BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_SLICES (5: the sandbox's side-by-side rows), BENCH_SIZES ("1000,100000"), BENCH_DATA_SIZES ("1000,1000000"),
//   BENCH_DATA_WARMUP (20 s of writes before each --data measurement), BENCH_DATA_DIR (keep the seeded
//   data files there and reuse them: seeding a million customers takes minutes), BENCH_WEBHOOKS (5000),
//   BENCH_SNAPSHOT_ROUNDS (7 saves and restores per snapshot row; the three rows take some 20 s in all).
// Linux only (CPU and RSS come from /proc). Bounded: about 13 minutes with the defaults (a third of it
// the --data rows: seeding, loading and warming up the million customers), loopback only. Run it on
// the Node of package.json's "engines" (22). The cold starts come after sandboxes have run and
// written the CLI's code cache (src/cli/code-cache.ts), as every start after a build's first has.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { copyFileSync, existsSync, mkdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg, cpus } from 'node:os';
import { join, dirname } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startCli, token as cliToken } from './lib/data-cli.mjs';
import { combined, inRoundOrder, median, paired, sliceOrder } from './bench/stats.mjs';
import { nodeCheck } from './bench/node-check.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const argv = process.argv.slice(2);
const CHECK = argv.includes('--check');
const QUICK = argv.includes('--quick');
/** Only the side-by-side GET/POST rows, as JSON (a quick look while working on the hot path). */
const HTTP_ONLY = argv.includes('--http-only');
const SECTIONS = new Set(HTTP_ONLY ? ['http'] : argv.includes('--only') ? argv[argv.indexOf('--only') + 1].split(',') : ['http', 'data', 'start', 'webhooks', 'snapshots']);
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 3 : 10));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
/** The sandbox's rows of a round run as this many interleaved slices of BENCH_SECONDS / SLICES each. */
const SLICES = Number(process.env.BENCH_SLICES ?? (QUICK ? 3 : 5));
const SIZES = (process.env.BENCH_SIZES ?? (QUICK ? '1000,10000' : '1000,100000')).split(',').map(Number);
const DATA_SIZES = (process.env.BENCH_DATA_SIZES ?? (QUICK ? '1000,10000' : '1000,1000000')).split(',').map(Number);
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? (QUICK ? 1000 : 5000));
const DATA_WARMUP = Number(process.env.BENCH_DATA_WARMUP ?? (QUICK ? 2 : 20));
const DATA_DIR = process.env.BENCH_DATA_DIR;
/** Connections for the --data rows: each write waits for its fsync'd append, so a few keep the log busy. */
const DATA_CONNECTIONS = 10;
const CONNECTIONS = 50;
const TICK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** The goals of issue 11 (`--check` fails when one is missed). */
const GOALS = {
  getVsPrism: 2,
  getVsExpress: 1,
  postVsGet: 0.7,
  /** GET CPU per request at the largest size / at the smallest. */
  getGrowth: 1.2,
  /** POST with --data at the largest size / at the smallest: CPU per request and p99. */
  dataGrowth: 1.2,
  coldStartMs: 300,
  idleRssMb: 80,
  rss100kMb: 300,
  webhooksPerSecond: 2000,
  /** Issue 43: saving an account of 10,000 objects as a snapshot, and restoring it (median over HTTP). */
  snapshotSaveMs: 50,
  snapshotRestoreMs: 50,
};
const SNAPSHOT_OBJECTS = 10_000;
const SNAPSHOT_ROUNDS = Number(process.env.BENCH_SNAPSHOT_ROUNDS ?? (QUICK ? 3 : 7));

const log = (line) => process.stderr.write(`[bench] ${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses): state is [0]. */
function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** user + system CPU seconds of a process so far. */
function cpuSeconds(pid) {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / TICK;
}

/** Pages the process has touched for the first time so far (its minor page faults). */
const minorFaults = (pid) => Number(statFields(pid)[7]);

function rssMb(pid) {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round(kb / 1024);
}

/** Start a child and resolve once it printed its first JSON line (or, for Prism, once it answers). */
function child(name, command, args, { ready = 'json', port, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const fail = (why) => reject(new Error(`${name}: ${why}\n${err.slice(-2000)}`));
    proc.on('exit', (code) => fail(`exited with ${code}`));
    proc.stderr.on('data', (chunk) => { err += chunk; });
    proc.stdout.on('data', (chunk) => {
      out += chunk;
      if (ready === 'json' && out.includes('\n')) {
        proc.removeAllListeners('exit');
        resolve({ name, proc, pid: proc.pid, ...JSON.parse(out.slice(0, out.indexOf('\n'))) });
      }
    });
    if (ready === 'http') {
      void waitFor(`http://127.0.0.1:${port}/`, 120_000, () => true).then(() => {
        proc.removeAllListeners('exit');
        resolve({ name, proc, pid: proc.pid, port });
      }, (error) => fail(error.message));
    }
  });
}

/** Poll a URL until `good(status)`; resolves with the milliseconds it took. */
async function waitFor(url, timeoutMs, good = (status) => status === 200) {
  const started = performance.now();
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (good(res.status)) return performance.now() - started;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > timeoutMs) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await sleep(2);
  }
}

function stop(target) {
  return new Promise((resolve) => {
    if (target.proc.exitCode !== null) return resolve();
    target.proc.on('exit', resolve);
    target.proc.kill('SIGTERM');
    setTimeout(() => target.proc.kill('SIGKILL'), 5000).unref();
  });
}

/** An autocannon run; `onResponse(ms)` hears each 2xx answer's latency (fractions of a millisecond included), the answers autocannon's own latencies count. */
function cannon(options, seconds = SECONDS, onResponse = undefined) {
  return new Promise((resolve, reject) => {
    const run = autocannon({ connections: CONNECTIONS, duration: seconds, ...options }, (error, result) => (error ? reject(error) : resolve(result)));
    if (onResponse) run.on('response', (_client, status, _bytes, ms) => { if (status >= 200 && status < 300) onResponse(ms); });
  });
}

/**
 * One autocannon run against a target, as counted: its seconds, the 2xx answers and their own
 * latencies (autocannon's histogram counts whole milliseconds, too coarse for the `--data` goal's
 * ratio of two p99s of some 7-10 ms), the others, and the CPU seconds of the target's process.
 */
async function counted(target, options, seconds = SECONDS) {
  const latencies = [];
  const before = cpuSeconds(target.pid);
  const result = await cannon(options, seconds, (ms) => latencies.push(ms));
  const cpu = cpuSeconds(target.pid) - before;
  return { seconds: result.duration, answered: result['2xx'], bad: result.non2xx + result.errors + result.timeouts, cpu, latencies };
}

/** One run's figures: req/s, p99, CPU us per request of the target's process (see combined). */
const measure = async (target, options, seconds = SECONDS) => combined([await counted(target, options, seconds)]);

async function accessToken(port) {
  const res = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  return (await res.json()).access_token;
}

const CUSTOMER = JSON.stringify({ name: 'Bench Customer', email: 'bench@bench.test' });

function sandboxCases(target, token) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return {
    get: { url: `http://127.0.0.1:${target.port}/customers/${target.id}`, headers },
    post: { url: `http://127.0.0.1:${target.port}/customers`, method: 'POST', headers, body: CUSTOMER },
  };
}

const startSandbox = (customers, extra = []) =>
  child(`sandbox (${customers} customers)`, process.execPath, ['--expose-gc', 'scripts/bench/sandbox.mjs', '--customers', String(customers), ...extra]);

// ---------------------------------------------------------------------------------------------

/** Lowest-highest of the rounds; `digits` after the point for small values (whole numbers otherwise). */
const spread = (values, digits = 0) => (values.length > 1 ? `${fmt(Math.min(...values), digits)}-${fmt(Math.max(...values), digits)}` : fmt(values[0], digits));
const fmt = (n, digits = 0) => (Number.isFinite(n) ? (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : n.toFixed(digits)) : '-');
const results = new Map();
function keep(key, value) {
  if (!results.has(key)) results.set(key, []);
  results.get(key).push(value);
}

const load = () => loadavg().map((n) => n.toFixed(2)).join(' ');
log(`${cpus().length} cores, load ${load()}; ${SECONDS} s per run, ${ROUNDS} round(s), -c ${CONNECTIONS}`);
const loadBefore = load();
// The goals are for the Node the package supports (scripts/bench/node-check.mjs).
const { warning: nodeWarning, note: nodeNote } = nodeCheck(process.version, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node);
if (nodeWarning) log(nodeWarning);

// 1. Side by side: express, Prism, the sandbox at each stored size.
const targets = [];
let rss100k = [];
async function sideBySide() {
  const express = await child('express', process.execPath, ['scripts/bench/hello-express.mjs', '0']);
  const prismPort = 4900 + Math.floor(Math.random() * 90);
  const prism = await child('prism', process.execPath, [require.resolve('@stoplight/prism-cli/dist/index.js'), 'mock', 'openapi/openapi.yaml', '-p', String(prismPort), '-v', 'silent'], { ready: 'http', port: prismPort });
  const sandboxes = [];
  for (const size of SIZES) sandboxes.push(await startSandbox(size));
  // POSTs add some 100,000 customers a round: on a process of their own, the GET rows stay at their size.
  const writer = await startSandbox(SIZES[0]);
  rss100k = sandboxes.map((s, i) => ({ size: SIZES[i], mb: rssMb(s.pid) }));

  targets.push({ key: 'express', target: express, cases: { get: { url: `http://127.0.0.1:${express.port}/` } } });
  // Prism checks that a security scheme's header is present, not the token: any bearer passes.
  const prismHeaders = { authorization: 'Bearer bench', 'content-type': 'application/json' };
  targets.push({ key: 'prism', target: prism, cases: {
    get: { url: `http://127.0.0.1:${prismPort}/customers/cus_bench`, headers: prismHeaders },
    post: { url: `http://127.0.0.1:${prismPort}/customers`, method: 'POST', headers: prismHeaders, body: CUSTOMER },
  } });
  // Largest first: the smallest size's GETs come right next to the writer's POSTs (below).
  for (const [i, sandbox] of [...sandboxes.entries()].reverse()) {
    targets.push({ key: `sandbox@${SIZES[i]}`, target: sandbox, compared: true, cases: { get: sandboxCases(sandbox, await accessToken(sandbox.port)).get } });
  }
  // Writes only at the smallest size: the rows at other sizes are about reads staying flat. Last in
  // the list, so in every round its POSTs run right after (or, in the reverse rounds, right before)
  // the GETs they are compared with: this machine's speed drifts over minutes, not over seconds.
  targets.push({ key: `sandbox@${SIZES[0]}`, target: writer, compared: true, cases: { post: sandboxCases(writer, await accessToken(writer.port)).post } });

  log('warm-up');
  for (const { target, cases } of targets) for (const options of Object.values(cases)) await cannon(options, QUICK ? 1 : 3);

  const report = (round, row, m, how = '') => {
    log(`round ${round} ${row.kind} ${row.key}: ${Math.round(m.rps)} req/s, p99 ${m.p99.toFixed(1)} ms, ${Math.round(m.cpuUs)} us/req${m.bad ? `, ${m.bad} not 2xx` : ''}${how}`);
    keep(`${row.kind} ${row.key}`, m);
  };
  for (let round = 1; round <= ROUNDS; round++) {
    const rows = inRoundOrder(targets, round).flatMap(({ key, target, compared, cases }) =>
      (round % 2 ? ['get', 'post'] : ['post', 'get']).filter((kind) => cases[kind]).map((kind) => ({ key, target, compared, kind, options: cases[kind] })));
    // The sandbox's rows are compared with each other (POST / GET, GET at 100k / 1k): they run in
    // interleaved slices, so that the machine's drift within the round falls on each of them alike.
    const sliced = rows.filter((row) => row.compared);
    for (const row of rows) {
      if (!sliced.includes(row)) {
        report(round, row, await measure(row.target, row.options));
      } else if (row === sliced[0]) {
        const runs = new Map(sliced.map((r) => [r, []]));
        for (const r of sliceOrder(sliced, SLICES)) runs.get(r).push(await counted(r.target, r.options, SECONDS / SLICES));
        for (const r of sliced) report(round, r, combined(runs.get(r)), ` (${SLICES} slices of ${fmt(SECONDS / SLICES, 1)} s, interleaved)`);
      }
    }
  }
  for (const t of targets) await stop(t.target);
}
if (SECTIONS.has('http')) await sideBySide();

// 2. POST /customers on the real CLI with --data, its file seeded with each size (a separate process,
// then one snapshot). Each measurement starts the CLI on the seeded snapshot, makes one first write
// (which builds the collection's index in memory: once per start), writes for BENCH_DATA_WARMUP
// seconds (past JIT warm-up and the major GC that follows loading a large file), then measures; sizes
// interleaved over the rounds. Each write has its own external_id, so the account's external-id
// index gains an entry per write too. Each measurement runs on a copy of the seeded file, removed
// after it. Each row also shows, for the measured seconds, the pages the process touched for the
// first time per write and its young collections (--trace-gc): how often, and how long each paused
// every request in flight, which is what a --data p99 is made of.
async function seeded(size) {
  const dir = DATA_DIR ? join(DATA_DIR, String(size)) : mkdtempSync(join(tmpdir(), 'bench-data-'));
  const file = join(dir, 'sandbox.json');
  if (DATA_DIR && existsSync(file)) {
    log(`--data with ${size} customers: reusing ${file}`);
    return { dir, file, keep: true };
  }
  mkdirSync(dir, { recursive: true });
  log(`--data with ${size} customers: seeding`);
  const seeding = spawn(process.execPath, ['scripts/bench/seed-data.mjs', '--size', String(size), '--file', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  seeding.stdout.on('data', (chunk) => { out += chunk; });
  const code = await new Promise((resolve) => seeding.on('exit', resolve));
  if (code !== 0) throw new Error(`seeding ${size} customers exited with ${code}`);
  const { seconds, bytes } = JSON.parse(out);
  log(`--data with ${size} customers: seeded in ${seconds.toFixed(1)} s, ${(bytes / 1048576).toFixed(1)} MB`);
  return { dir, file, keep: Boolean(DATA_DIR) };
}

/**
 * The collections a process started with --trace-gc reports on its stdout: each young collection's
 * pause (ms) and the count of full ones, since the last reset(). A young collection stops every
 * request in flight, so with -c 10 its pause is what the p99 of a --data row is made of.
 */
function collectionsOf(proc) {
  const seen = { scavenges: [], marks: 0, reset() { this.scavenges = []; this.marks = 0; } };
  let pending = '';
  proc.stdout.on('data', (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) {
      const young = /: Scavenge .*? MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/.exec(line);
      if (young) seen.scavenges.push(Number(young[1]));
      else if (/: Mark-Compact /.test(line)) seen.marks += 1;
    }
  });
  return seen;
}

/** Tells this run's writes from those of earlier runs in a reused data file (external ids are unique). */
const RUN_ID = Date.now().toString(36);

async function dataRound(size, { file: seed }, round) {
  // On a copy of the seeded file: the log a run appends may be compacted into its snapshot.
  const dir = mkdtempSync(join(tmpdir(), 'bench-run-'));
  const file = join(dir, 'sandbox.json');
  copyFileSync(seed, file);
  // --trace-gc: the row shows the collections of the measured seconds (one line each, a few a second).
  const run = await startCli(file, { timeoutMs: 600_000, nodeArgs: ['--trace-gc'] });
  const gc = collectionsOf(run.child);
  try {
    const headers = { authorization: `Bearer ${await cliToken(run.url)}`, 'content-type': 'application/json' };
    let n = 0;
    const post = {
      url: `${run.url}/customers`, method: 'POST', headers, connections: DATA_CONNECTIONS,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: 'Bench', email: 'bench@bench.test', external_id: `bench-${RUN_ID}-${round}-${n++}` }) }) }],
    };
    const first = await fetch(post.url, { method: 'POST', headers, body: JSON.stringify({ name: 'First', external_id: `first-${RUN_ID}-${round}` }), signal: AbortSignal.timeout(600_000) });
    if (first.status !== 201) throw new Error(`first write with ${size} customers: ${first.status}`);
    await cannon(post, DATA_WARMUP);
    const faults = minorFaults(run.child.pid);
    gc.reset();
    const measured = await measure({ pid: run.child.pid }, post);
    const writes = Math.max(1, measured.answered);
    const m = {
      ...measured, rss: rssMb(run.child.pid), startS: run.startSeconds,
      faultsPerWrite: (minorFaults(run.child.pid) - faults) / writes,
      writesPerScavenge: writes / Math.max(1, gc.scavenges.length),
      scavengeMs: median(gc.scavenges),
      marks: gc.marks,
    };
    log(`round ${round} post --data@${size}: ${Math.round(m.rps)} req/s, p99 ${m.p99.toFixed(1)} ms, ${Math.round(m.cpuUs)} us/req, RSS ${m.rss} MB, started in ${m.startS.toFixed(1)} s; ${m.faultsPerWrite.toFixed(2)} pages first touched a write, a young collection every ${Math.round(m.writesPerScavenge)} writes (${m.scavengeMs.toFixed(1)} ms median), ${m.marks} full${m.bad ? `, ${m.bad} not 2xx` : ''}`);
    keep(`post data@${size}`, m);
  } finally {
    run.child.kill('SIGKILL');
    await run.exit;
    rmSync(dir, { recursive: true, force: true });
  }
}

if (SECTIONS.has('data')) {
  const files = new Map();
  try {
    for (const size of DATA_SIZES) files.set(size, await seeded(size));
    for (let round = 1; round <= ROUNDS; round++) for (const size of inRoundOrder(DATA_SIZES, round)) await dataRound(size, files.get(size), round);
  } finally {
    for (const seed of files.values()) if (!seed.keep) rmSync(seed.dir, { recursive: true, force: true });
  }
}

// 3. Cold start to the first 200 on health, and idle RSS, of `node dist/cli.js`; bare node and Prism for scale.
async function coldStart(name, args, url, good) {
  const port = 4990 + Math.floor(Math.random() * 9);
  const started = performance.now();
  const proc = spawn(process.execPath, args(port), { cwd: ROOT, stdio: 'ignore' });
  try {
    await waitFor(url(port), 60_000, good);
    const ms = performance.now() - started;
    const faults = minorFaults(proc.pid);
    await sleep(1000);
    return { ms, rss: rssMb(proc.pid), faults };
  } finally {
    await stop({ proc });
  }
}
/**
 * What one first touch of a page costs on this machine, in microseconds: a start's time is partly the
 * memory it touches, and that price differs by a factor of fifty between machines (about 0.25 us on
 * bare metal, 13 us measured in a nested virtual machine), so the cold-start row reports it.
 */
function pageFaultUs() {
  const bytes = 32 * 1024 * 1024;
  const buffer = Buffer.allocUnsafeSlow(bytes);
  const started = performance.now();
  for (let at = 0; at < bytes; at += 4096) buffer[at] = 1;
  return ((performance.now() - started) * 1000) / (bytes / 4096);
}
const STARTS = SECTIONS.has('start') ? (QUICK ? 3 : 7) : 0;
const faultUs = STARTS ? pageFaultUs() : NaN;
// One start first, not measured, past the moment the CLI writes its code cache: the measured starts
// then all start with a cache made under their own flags, as every start after the first one following
// a build or install does. (The --data rows run the CLI with --trace-gc, and V8 refuses a code cache
// made under other flags: without this, the first measured start compiled everything, some 440 ms and
// 67-76 MB, and set the largest idle RSS.)
const sandboxColdStart = () => coldStart('sandbox', (p) => ['dist/cli.js', '--port', String(p), '--log-level', 'silent'], (p) => `http://127.0.0.1:${p}/_sandbox/health`);
if (STARTS) await sandboxColdStart();
for (let i = 0; i < STARTS; i++) {
  keep('start sandbox', await sandboxColdStart());
  keep('start node', await coldStart('node', (p) => ['-e', `require('http').createServer((q,s)=>s.end('ok')).listen(${p})`], (p) => `http://127.0.0.1:${p}/`));
}
if (STARTS) keep('start prism', await coldStart('prism', (p) => [require.resolve('@stoplight/prism-cli/dist/index.js'), 'mock', 'openapi/openapi.yaml', '-p', String(p), '-v', 'silent'], (p) => `http://127.0.0.1:${p}/customers/cus_x`, () => true));

// 4. Webhook deliveries per second: N customer_created events queued at once, delivered in order to a
// loopback receiver that answers 200.
async function webhooks(count) {
  const received = [];
  let done;
  const all = new Promise((resolve) => { done = resolve; });
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      res.end();
      received.push(JSON.parse(body).entity_id);
      if (received.length === count) done(performance.now());
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const sandbox = await startSandbox(0);
  try {
    const token = await accessToken(sandbox.port);
    const res = await fetch(`http://127.0.0.1:${sandbox.port}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint_url: `http://127.0.0.1:${receiver.address().port}/hook`, topic: 'customer_created' }),
    });
    if (res.status !== 201) throw new Error(`subscribing answered ${res.status}: ${await res.text()}`);
    const started = performance.now();
    sandbox.proc.stdin.write(`${JSON.stringify({ fire: count })}\n`);
    const timeout = sleep(120_000).then(() => { throw new Error(`${received.length} of ${count} deliveries in 120 s`); });
    const ended = await Promise.race([all, timeout]);
    // Strictly in order: the customers were made one after the other, so their ids are distinct and
    // each delivery's entity must be new (a repeat or a gap would show as a count mismatch).
    const inOrder = new Set(received).size === count;
    return { perSecond: count / ((ended - started) / 1000), inOrder };
  } finally {
    sandbox.proc.stdin.end();
    await stop(sandbox);
    receiver.close();
  }
}
for (let round = 1; round <= (SECTIONS.has('webhooks') ? ROUNDS : 0); round++) {
  const w = await webhooks(WEBHOOKS);
  log(`round ${round} webhooks: ${Math.round(w.perSecond)} deliveries/s${w.inOrder ? '' : ' (OUT OF ORDER)'}`);
  keep('webhooks', w);
}

// 5. Account snapshots: save and restore over HTTP, each row in a process of its own (seeding through
// the store takes a second or two): the goal's 10,000 objects in memory, then with --data, then twice
// as many objects.
async function snapshotRow(objects, data) {
  const child = spawn(process.execPath, ['scripts/bench/snapshots.mjs', '--objects', String(objects), '--rounds', String(SNAPSHOT_ROUNDS), ...(data ? ['--data'] : [])], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => { out += chunk; });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`the snapshot bench (${objects} objects${data ? ', --data' : ''}) exited with ${code}`);
  return JSON.parse(out);
}
const SNAPSHOT_ROWS = [[SNAPSHOT_OBJECTS, false], [SNAPSHOT_OBJECTS, true], [SNAPSHOT_OBJECTS * 2, false]];
if (SECTIONS.has('snapshots')) {
  for (const [objects, data] of SNAPSHOT_ROWS) {
    const measured = await snapshotRow(objects, data);
    log(`snapshots, ${objects} objects${data ? ', --data' : ''}: save ${median(measured.save_ms).toFixed(1)} ms, restore ${median(measured.restore_ms).toFixed(1)} ms (medians of ${measured.save_ms.length})`);
    keep(`snapshots@${objects}${data ? ' data' : ''}`, measured);
  }
}

// ---------------------------------------------------------------------------------------------
const rps = (key) => (results.get(key) ?? []).map((m) => m.rps);
const cpu = (key) => (results.get(key) ?? []).map((m) => m.cpuUs);
const p99 = (key) => (results.get(key) ?? []).map((m) => m.p99);
const small = `sandbox@${SIZES[0]}`;
const large = `sandbox@${SIZES.at(-1)}`;
// The sandbox's rows against each other are paired round by round (scripts/bench/stats.mjs).
const postGet = paired(rps(`post ${small}`), rps(`get ${small}`));
const getGrowth = paired(cpu(`get ${large}`), cpu(`get ${small}`));
const dataCpu = paired(cpu(`post data@${DATA_SIZES.at(-1)}`), cpu(`post data@${DATA_SIZES[0]}`));
const dataP99 = paired(p99(`post data@${DATA_SIZES.at(-1)}`), p99(`post data@${DATA_SIZES[0]}`));
const ratios = {
  getVsPrism: median(rps(`get ${small}`)) / median(rps('get prism')),
  getVsExpress: median(rps(`get ${small}`)) / median(rps('get express')),
  postVsGet: postGet.value,
  postVsPrism: median(rps(`post ${small}`)) / median(rps('post prism')),
  getGrowth: getGrowth.value,
  dataGrowthCpu: dataCpu.value,
  dataGrowthP99: dataP99.value,
};
if (HTTP_ONLY) {
  console.log(JSON.stringify({ ratios, rows: Object.fromEntries([...results].map(([k, v]) => [k, v.map((m) => [Math.round(m.rps), Math.round(m.cpuUs), Math.round(m.p99 * 10) / 10])])) }, null, 1));
  process.exit(0);
}
const starts = results.get('start sandbox') ?? [];
const coldMs = starts.map((s) => s.ms).sort((a, b) => a - b)[Math.floor(starts.length / 2)];
const idleRss = starts.length ? Math.max(...starts.map((s) => s.rss)) : NaN;
/** Pages first touched up to the first answer, the sandbox's and bare node's, and what the difference costs here. */
function startFaults() {
  const sandbox = median(starts.map((s) => s.faults));
  const node = median(results.get('start node').map((s) => s.faults));
  return `pages first touched ${fmt(sandbox)} against bare node's ${fmt(node)}, at ${faultUs.toFixed(2)} us each here: ${Math.round(((sandbox - node) * faultUs) / 1000)} ms of the difference`;
}
const largeRss = rss100k.at(-1);
const hooks = results.get('webhooks') ?? [];
const hookRate = median(hooks.map((w) => w.perSecond));

const lines = [];
const row = (...cells) => lines.push(`| ${cells.join(' | ')} |`);
if (targets.length || DATA_SIZES.some((size) => results.has(`post data@${size}`))) {
  row('target', 'GET /customers/{id} req/s', 'GET CPU us/req', 'POST /customers req/s', 'POST CPU us/req', 'p99 GET / POST ms');
  row('---', '---', '---', '---', '---', '---');
}
for (const key of new Set(targets.map((t) => t.key))) {
  const label = key === 'express' ? 'express 5 hello-world (GET /)' : key === 'prism' ? 'Prism 5.14 mock, silent' : `billing-sandbox, ${key.split('@')[1]} stored customers`;
  row(label, spread(rps(`get ${key}`)), spread(cpu(`get ${key}`)), results.has(`post ${key}`) ? spread(rps(`post ${key}`)) : '-',
    results.has(`post ${key}`) ? spread(cpu(`post ${key}`)) : '-', `${spread(p99(`get ${key}`), 1)} / ${results.has(`post ${key}`) ? spread(p99(`post ${key}`), 1) : '-'}`);
}
for (const size of DATA_SIZES) {
  const rows = results.get(`post data@${size}`);
  if (!rows) continue;
  const gcs = `pages first touched a write ${spread(rows.map((m) => m.faultsPerWrite), 2)}; a young collection every ${spread(rows.map((m) => m.writesPerScavenge))} writes, pausing ${spread(rows.map((m) => m.scavengeMs), 1)} ms; full collections ${rows.map((m) => m.marks).join('/')}`;
  row(`billing-sandbox --data, ${size} stored customers (-c ${DATA_CONNECTIONS}; RSS ${spread(rows.map((m) => m.rss))} MB, start ${rows.map((m) => m.startS.toFixed(1)).join('/')} s; ${gcs})`,
    '-', '-', spread(rps(`post data@${size}`)), spread(cpu(`post data@${size}`)), `- / ${spread(p99(`post data@${size}`), 1)}`);
}
const snapshotRows = SNAPSHOT_ROWS.map(([objects, data]) => [objects, data, results.get(`snapshots@${objects}${data ? ' data' : ''}`)?.[0]]).filter(([, , measured]) => measured);
if (snapshotRows.length) {
  lines.push('');
  row('account snapshot', 'objects (customers and their events)', 'document', 'save ms, median (range)', 'restore ms, median (range)');
  row('---', '---', '---', '---', '---');
  for (const [objects, data, measured] of snapshotRows) {
    row(data ? 'with --data (each answer waits for its file or log append)' : 'in memory', fmt(objects), `${(measured.bytes / 1048576).toFixed(1)} MB`,
      `${median(measured.save_ms).toFixed(1)} (${spread(measured.save_ms, 1)})`, `${median(measured.restore_ms).toFixed(1)} (${spread(measured.restore_ms, 1)})`);
  }
}
const snapshotGoalRow = results.get(`snapshots@${SNAPSHOT_OBJECTS}`)?.[0];
const snapshotSave = snapshotGoalRow ? median(snapshotGoalRow.save_ms) : NaN;
const snapshotRestore = snapshotGoalRow ? median(snapshotGoalRow.restore_ms) : NaN;
lines.push('');
/** A goal's line; its value is NaN when its section did not run (`--only`): "not measured". */
const goal = (name, value, target, ok) => [name, value, target, Number.isNaN(ok) ? 'not measured' : ok ? 'met' : '**missed**'];
const two = (value) => (Number.isFinite(value) ? value.toFixed(2) : '-');
const met = (value, test) => (Number.isFinite(value) ? test(value) : NaN);
/** A paired ratio's value (the median of the rounds), each round's own ratio, and the ratio of the medians. */
const pairedText = ({ value, rounds, ofMedians }) => (rounds.length ? `${two(value)} (rounds ${rounds.map(two).join(', ')}; ratio of the medians ${two(ofMedians)})` : '-');
const goals = [
  goal('GET sandbox / Prism', two(ratios.getVsPrism), `>= ${GOALS.getVsPrism}`, met(ratios.getVsPrism, (v) => v >= GOALS.getVsPrism)),
  goal('GET sandbox / express hello-world', two(ratios.getVsExpress), `>= ${GOALS.getVsExpress}`, met(ratios.getVsExpress, (v) => v >= GOALS.getVsExpress)),
  goal('POST / GET (sandbox), median of the rounds', pairedText(postGet), `>= ${GOALS.postVsGet}`, met(ratios.postVsGet, (v) => v >= GOALS.postVsGet)),
  goal('POST sandbox / Prism', two(ratios.postVsPrism), '(reported)', met(ratios.postVsPrism, () => true)),
  goal(`GET CPU/req at ${SIZES.at(-1)} / at ${SIZES[0]} stored, median of the rounds`, pairedText(getGrowth), `<= ${GOALS.getGrowth}`, met(ratios.getGrowth, (v) => v <= GOALS.getGrowth)),
  goal(`POST --data CPU/req at ${DATA_SIZES.at(-1)} / at ${DATA_SIZES[0]}, median of the rounds`, pairedText(dataCpu), `<= ${GOALS.dataGrowth}`, met(ratios.dataGrowthCpu, (v) => v <= GOALS.dataGrowth)),
  goal(`POST --data p99 at ${DATA_SIZES.at(-1)} / at ${DATA_SIZES[0]}, median of the rounds`, pairedText(dataP99), `<= ${GOALS.dataGrowth}`, met(ratios.dataGrowthP99, (v) => v <= GOALS.dataGrowth)),
  goal('cold start, `node dist/cli.js` to first 200 on health (median)',
    starts.length ? `${Math.round(coldMs)} ms (${spread(starts.map((s) => s.ms))}; bare node ${spread(results.get('start node').map((s) => s.ms))}, Prism ${fmt(results.get('start prism')[0].ms)}; ${startFaults()})` : '-',
    `<= ${GOALS.coldStartMs} ms`, met(coldMs, (v) => v <= GOALS.coldStartMs)),
  goal('idle RSS after start (largest of the starts)', starts.length ? `${idleRss} MB (bare node ${Math.max(...results.get('start node').map((s) => s.rss))} MB)` : '-', `<= ${GOALS.idleRssMb} MB`, met(idleRss, (v) => v <= GOALS.idleRssMb)),
  goal(`RSS with ${largeRss?.size ?? '-'} customers`, largeRss ? `${largeRss.mb} MB` : '-', `<= ${GOALS.rss100kMb} MB`, largeRss ? largeRss.size < 100_000 || largeRss.mb <= GOALS.rss100kMb : NaN),
  goal(`webhook deliveries/s (${WEBHOOKS} queued, in order)`, hooks.length ? `${Math.round(hookRate)} (${spread(hooks.map((w) => w.perSecond))})` : '-', `>= ${GOALS.webhooksPerSecond}`,
    met(hookRate, (v) => v >= GOALS.webhooksPerSecond && hooks.every((w) => w.inOrder))),
  goal(`snapshot save, ${fmt(SNAPSHOT_OBJECTS)} objects (median, POST /_sandbox/snapshots)`, Number.isFinite(snapshotSave) ? `${snapshotSave.toFixed(1)} ms` : '-', `<= ${GOALS.snapshotSaveMs} ms`, met(snapshotSave, (v) => v <= GOALS.snapshotSaveMs)),
  goal(`snapshot restore, ${fmt(SNAPSHOT_OBJECTS)} objects (median, POST .../restore)`, Number.isFinite(snapshotRestore) ? `${snapshotRestore.toFixed(1)} ms` : '-', `<= ${GOALS.snapshotRestoreMs} ms`, met(snapshotRestore, (v) => v <= GOALS.snapshotRestoreMs)),
];
row('measure', 'value', 'goal', 'verdict');
row('---', '---', '---', '---');
for (const [name, value, target, verdict] of goals) row(name, value, target, verdict);
lines.push('', `${new Date().toISOString().slice(0, 10)}, node ${process.version}${nodeNote}, ${cpus().length} cores, load average ${loadBefore} before and ${load()} after; ${SECONDS} s per run, ${ROUNDS} interleaved round(s) (ratios of medians; the sandbox's rows against each other: the median of each round's own ratio; its side-by-side rows in ${SLICES} interleaved slices a round), autocannon -c ${CONNECTIONS} (-c ${DATA_CONNECTIONS} for --data, after ${DATA_WARMUP} s of writes).`);
console.log(lines.join('\n'));

const missed = goals.filter((g) => g[3] === '**missed**');
if (CHECK && missed.length) {
  log(`missed: ${missed.map((g) => g[0]).join('; ')}`);
  process.exit(1);
}
process.exit(0);
