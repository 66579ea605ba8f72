// A sandbox for `npm run bench`: the built package started through its public startSandbox() as the
// CLI starts it (real-time ticks, log silent, rate limit off), with `--customers N` customers made
// in the default production account through the domain function (as fast as the store takes them,
// HTTP would take minutes at 1M). Prints one JSON line {port, id} once seeded; then reads commands on
// stdin, one JSON line each:
//   {"fire": N}  make N customers at once (N customer_created events, for the webhook throughput row)
import { createInterface } from 'node:readline';
import { startSandbox } from '../../dist/index.js';
import { createCustomer } from '../../dist/domain/customers/customers.js';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const customers = Number(flag('--customers', '1'));
const sandbox = await startSandbox({
  port: Number(flag('--port', '0')),
  host: '127.0.0.1',
  rateLimit: 0,
  logLevel: 'silent',
  seed: 'bench',
  realTimeTicks: true,
  allowHttpWebhooks: true,
  ...(flag('--data') ? { dataFile: flag('--data') } : {}),
});
const account = sandbox.deps.store.account('ptn_default', 'production');
// Each customer in a unit of work of its own, as a request makes it (a write outside one throws).
const make = (i) => account.transaction(() => createCustomer(sandbox.deps, account, { name: `Customer ${i}`, email: `c${i}@bench.test` }));
let id;
for (let i = 0; i < customers; i++) {
  id = make(i).id;
  // Let the group commit and the scheduler breathe while a large account is made.
  if (i % 10_000 === 9_999) await new Promise((resolve) => setImmediate(resolve));
}
global.gc?.();
process.stdout.write(`${JSON.stringify({ port: sandbox.port, id })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  const command = JSON.parse(line);
  if (command.fire) {
    for (let i = 0; i < command.fire; i++) make(`fire-${i}`);
      }
});
process.stdin.on('end', () => void sandbox.close().then(() => process.exit(0)));
