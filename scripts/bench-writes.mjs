#!/usr/bin/env node
// Write cost with --data against the number of stored objects (issue 11 item 2): POST /customers on
// the real CLI (`node dist/cli.js --data FILE`) whose data file already holds 1k and 1M customers.
// Seeding goes through the store directly (the domain's createCustomer, then one snapshot), never 1M
// HTTP calls. Each size is measured in its own process, sizes interleaved over --rounds rounds; the
// table gives req/s, latency, CPU time per request (the sandbox process's, from /proc) and RSS, and
// the ratio of the largest size to the smallest. Separate from `npm run bench` (which another part of
// the project owns); run with `npm run bench:writes` (builds first).
//
//   node scripts/bench-writes.mjs [--sizes 1000,1000000] [--seconds 10] [--connections 10] [--rounds 2] [--warmup 20] [--data-dir DIR]
//
// --data-dir keeps the seeded files (DIR/<size>/sandbox.json) and reuses them on the next run (seeding
// a million customers takes minutes on a loaded machine); without it they go to a temporary directory.
// Each measurement starts from the seeded snapshot: the log it appended is removed afterwards.
import autocannon from 'autocannon';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { dataBytes, ROOT, startCli, token } from './lib/data-cli.mjs';

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : process.argv[at + 1];
}
const SIZES = String(option('sizes', '1000,1000000')).split(',').map(Number);
const SECONDS = Number(option('seconds', 10));
const CONNECTIONS = Number(option('connections', 10));
const ROUNDS = Number(option('rounds', 2));
const DATA_DIR = option('data-dir', undefined);
/** Seconds of writes before measuring: past JIT warm-up and past the one major GC that follows loading a large file. */
const WARMUP = Number(option('warmup', 20));
const TICKS = 100; // USER_HZ on Linux

/** A data file holding `size` customers, made through the store directly, then compacted into one snapshot. */
async function seed(dir, size) {
  if (existsSync(join(dir, 'sandbox.json'))) return { file: join(dir, 'sandbox.json'), seconds: 0, bytes: dataBytes(join(dir, 'sandbox.json')), reused: true };
  mkdirSync(dir, { recursive: true });
  const { startSandbox } = await import(join(ROOT, 'dist', 'index.js'));
  const { createCustomer } = await import(join(ROOT, 'dist', 'domain', 'customers', 'customers.js'));
  const file = join(dir, 'sandbox.json');
  const began = performance.now();
  const sandbox = await startSandbox({ port: 0, dataFile: file, rateLimit: 0, logLevel: 'silent', seed: 'bench-writes' });
  const account = sandbox.deps.store.account('ptn_default', 'production');
  for (let i = 0; i < size; i++) createCustomer(sandbox.deps, account, { name: `Customer ${i}`, email: `c${i}@bench.test`, external_id: `seed-${i}` });
  await sandbox.deps.store.compact?.();
  await sandbox.close();
  return { file, seconds: (performance.now() - began) / 1000, bytes: dataBytes(file) };
}

/** CPU ticks (user + system) and RSS of a process. */
function usage(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  return { cpu: Number(fields[11]) + Number(fields[12]), rss };
}

function load(options) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, ...options }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

async function measure(file, size, round) {
  const run = await startCli(file, { timeoutMs: 600_000 });
  try {
    const headers = { authorization: `Bearer ${await token(run.url)}`, 'content-type': 'application/json' };
    // Each customer has its own external id: the account's external-id map gains an entry per write.
    let n = 0;
    const post = {
      url: `${run.url}/customers`, method: 'POST', headers,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: 'Bench', email: 'bench@bench.test', external_id: `bench-${round}-${n++}` }) }) }],
    };
    // The first write after start pays once for the collection's in-memory index (built on first use).
    const began = performance.now();
    const first = await fetch(post.url, { method: 'POST', headers, body: JSON.stringify({ name: 'First', external_id: `first-${round}` }), signal: AbortSignal.timeout(600_000) });
    if (first.status !== 201) throw new Error(`first write: ${first.status}`);
    const firstSeconds = (performance.now() - began) / 1000;
    await load({ ...post, duration: WARMUP });
    const before = usage(run.child.pid);
    const result = await load({ ...post, duration: SECONDS });
    const after = usage(run.child.pid);
    const requests = result.requests.total;
    return {
      stored: size, round, 'req/s': Math.round(result.requests.average), 'p50 ms': result.latency.p50, 'p99 ms': result.latency.p99,
      'CPU us/req': Math.round(((after.cpu - before.cpu) / TICKS) * 1e6 / Math.max(1, requests)),
      'RSS MB': Math.round(after.rss / 1024 / 1024), 'start s': Number(run.startSeconds.toFixed(1)), 'first write s': Number(firstSeconds.toFixed(1)), errors: result.errors + result.non2xx,
    };
  } finally {
    run.child.kill('SIGKILL');
    await run.exit;
    // Back to the seeded snapshot for the next measurement.
    for (const name of readdirSync(dirname(file))) if (name.startsWith('sandbox.json.log.')) rmSync(join(dirname(file), name));
  }
}

const dirs = [];
try {
  const files = new Map();
  for (const size of SIZES) {
    const dir = DATA_DIR ? join(DATA_DIR, String(size)) : mkdtempSync(join(tmpdir(), 'bench-writes-'));
    if (!DATA_DIR) dirs.push(dir);
    const seeded = await seed(dir, size);
    console.error(`${seeded.reused ? 'reused' : 'seeded'} ${size} customers${seeded.reused ? '' : ` in ${seeded.seconds.toFixed(1)} s`} (data file ${(seeded.bytes / 1024 / 1024).toFixed(1)} MB)`);
    files.set(size, seeded.file);
  }
  const rows = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const size of SIZES) {
      rows.push(await measure(files.get(size), size, round));
      console.error(JSON.stringify(rows.at(-1)));
    }
  }
  console.table(rows);
  const small = rows.filter((r) => r.stored === SIZES[0]);
  const large = rows.filter((r) => r.stored === SIZES.at(-1));
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
  for (const key of ['CPU us/req', 'p99 ms', 'req/s']) {
    console.log(`${key}: ${SIZES.at(-1)} stored / ${SIZES[0]} stored = ${(median(large.map((r) => r[key])) / median(small.map((r) => r[key]))).toFixed(2)} (medians over ${ROUNDS} rounds)`);
  }
} finally {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
