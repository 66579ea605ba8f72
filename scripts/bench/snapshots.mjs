// The snapshot rows of `npm run bench`: one sandbox (dist/, in this process, listening on a free
// port) whose default production account holds N objects, made through the store (the domain's
// createCustomer, each customer recording its customer_created event: N/2 customers make N objects),
// then POST /_sandbox/snapshots and POST /_sandbox/snapshots/{name}/restore timed over HTTP from the
// first byte sent to the whole answer, ROUNDS times each, alternating. Without --data, and with it
// (each answer then waits for its file: the snapshot's, or the log's append of the restored account).
//
//   node scripts/bench/snapshots.mjs --objects N [--rounds R] [--data]
//   prints {"objects": N, "bytes": B, "save_ms": [...], "restore_ms": [...]}
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../../dist/index.js';
import { createCustomer } from '../../dist/domain/customers/customers.js';

const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const objects = Number(flag('--objects', '10000'));
const rounds = Number(flag('--rounds', '7'));
const withData = args.includes('--data');
const dir = withData ? mkdtempSync(join(tmpdir(), 'bench-snapshots-')) : undefined;

const sandbox = await startSandbox({ port: 0, rateLimit: 0, logLevel: 'silent', seed: 'bench-snapshots', journalSize: 0, ...(dir ? { dataFile: join(dir, 'sandbox.json') } : {}) });
try {
  const account = sandbox.deps.store.account('ptn_default', 'production');
  for (let i = 0; i < objects / 2; i++) {
    account.transaction(() => createCustomer(sandbox.deps, account, { name: `Customer ${i}`, email: `c${i}@bench.test`, external_id: `seed-${i}` }));
    if (dir && i % 5_000 === 4_999) await sandbox.deps.store.flush();
  }
  await sandbox.deps.store.flush();
  const token = await sandbox.token();
  const call = async (path, body) => {
    const began = performance.now();
    const res = await fetch(`${sandbox.url}/_sandbox${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await res.json();
    const ms = performance.now() - began;
    if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(answer)}`);
    return { ms, answer };
  };
  const save = [];
  const restore = [];
  let bytes = 0;
  // One of each first, not counted: the first calls compile the code paths.
  await call('/snapshots', { name: 'warm-up', replace: true });
  await call('/snapshots/warm-up/restore', {});
  for (let round = 0; round < rounds; round++) {
    const saved = await call('/snapshots', { name: 'bench', replace: true });
    save.push(saved.ms);
    bytes = saved.answer.bytes;
    const counted = Object.values(saved.answer.counts).reduce((a, b) => a + b, 0);
    if (counted !== objects) throw new Error(`the snapshot holds ${counted} objects, not ${objects}`);
    restore.push((await call('/snapshots/bench/restore', {})).ms);
  }
  process.stdout.write(`${JSON.stringify({ objects, bytes, save_ms: save, restore_ms: restore })}\n`);
} finally {
  await sandbox.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
