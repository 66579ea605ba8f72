// A data file holding N customers for the `--data` rows of `npm run bench`, made through the store
// (the domain's createCustomer in the default production account, each with its own external_id),
// then compacted into one snapshot: a million HTTP calls would take longer than the run. Run as its
// own process so the memory of a large seed is gone before anything is measured.
//
//   node scripts/bench/seed-data.mjs --size N --file FILE   prints {"seconds": S, "bytes": B} when done
import { startSandbox } from '../../dist/index.js';
import { createCustomer } from '../../dist/domain/customers/customers.js';
import { dataBytes } from '../lib/data-cli.mjs';

const args = process.argv.slice(2);
const flag = (name) => args[args.indexOf(name) + 1];
const size = Number(flag('--size'));
const file = flag('--file');
const began = performance.now();
const sandbox = await startSandbox({ port: 0, dataFile: file, rateLimit: 0, logLevel: 'silent', seed: 'bench-data' });
const account = sandbox.deps.store.account('ptn_default', 'production');
for (let i = 0; i < size; i++) {
  // Each customer in a unit of work of its own, as a request makes it (a write outside one throws).
  account.transaction(() => createCustomer(sandbox.deps, account, { name: `Customer ${i}`, email: `c${i}@bench.test`, external_id: `seed-${i}` }));
  if (i % 100_000 === 99_999) process.stderr.write(`[seed] ${i + 1} of ${size} customers\n`);
  // Write what was sealed every 10k customers, so the sealed texts never pile up in memory.
  if (i % 10_000 === 9_999) await sandbox.deps.store.flush();
}
await sandbox.deps.store.compact?.();
await sandbox.close();
process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - began) / 1000, bytes: dataBytes(file) })}\n`);
