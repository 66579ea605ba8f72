// Owns the list of core files that mutation testing scores, one entry per `npm run mutate:files`
// name: what Stryker mutates and the test files that exercise it (a score from these is a lower
// bound of a full run's: a mutant only an unlisted test file would kill counts as surviving).
// scripts/mutate-by-file.sh runs them, and test/mutation-record.test.ts checks that each file has a
// current row in docs/mutation-scores.json. Run directly, it prints `name<TAB>mutate<TAB>tests`
// for the names given (all when none), for the shell script.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @type {Array<{ name: string, mutate: string, tests: string[] }>} */
export const MUTATION_FILES = [
  { name: 'machine', mutate: 'src/domain/machine.ts', tests: ['machine', 'bills-rules', 'vendor-payments', 'webhooks-machine', 'receivables-events', 'payments', 'payouts'] },
  { name: 'pagination', mutate: 'src/http/pagination.ts', tests: ['customers', 'bills', 'invoices', 'platform', 'webhooks-subscriptions'] },
  { name: 'idempotency', mutate: 'src/store/idempotency.ts', tests: ['idempotency', 'idempotency-restart', 'retention', 'vendor-payments', 'checkout', 'persistence'] },
  { name: 'bills', mutate: 'src/domain/bills/**/*.ts', tests: ['bills', 'bills-rules', 'ocr', 'pdf', 'vendor-payments', 'accounting-sync', 'fixtures', 'limits', 'blobs', 'vendors'] },
  { name: 'queue', mutate: 'src/webhooks/queue.ts', tests: ['webhooks-delivery', 'webhooks-durability', 'webhooks-fire', 'webhooks-history', 'webhooks-machine', 'webhooks-queue', 'webhooks-subscriptions', 'retention', 'webhooks-drills', 'snapshots', 'stream', 'evolution-drills'] },
  { name: 'scheduler', mutate: 'src/clock/scheduler.ts', tests: ['scheduler', 'clock-limit', 'webhooks-queue', 'bills-rules', 'payouts', 'persistence', 'durability'] },
  { name: 'tokens', mutate: 'src/auth/tokens.ts', tests: ['tokens', 'tokens-lifetime', 'auth', 'token-endpoint', 'control-partners', 'persistence', 'journal'] },
  { name: 'engine', mutate: 'src/scenarios/engine.ts', tests: ['scenarios', 'scenario-matching', 'scenarios-shipped', 'prefer', 'journal', 'evolution-drills'] },
  { name: 'work', mutate: 'src/store/unit-of-work.ts', tests: ['unit-of-work', 'accounting-sync', 'bills', 'vendor-payments'] },
  { name: 'state', mutate: 'src/store/module-state.ts', tests: ['unit-of-work', 'persistence', 'idempotency-restart', 'webhooks-queue', 'scenarios', 'blobs', 'module-state'] },
].map((entry) => ({ ...entry, tests: entry.tests.map((name) => `test/${name}.test.ts`) }));

/** The files a `mutate` pattern names now: a path, or `dir/**\/*.ext` (every such file under dir). */
export function filesOf(pattern, root = '.') {
  const glob = /^(.*)\/\*\*\/\*(\.[\w.]+)$/.exec(pattern);
  if (!glob) return [pattern];
  const [, dir, ext] = glob;
  return readdirSync(join(root, dir), { recursive: true })
    .map((file) => `${dir}/${String(file).split('\\').join('/')}`)
    .filter((file) => file.endsWith(ext))
    .sort();
}

/** The entry whose pattern names `path` (the name to give `npm run mutate:files`). */
export function entryOf(path, root = '.') {
  return MUTATION_FILES.find((entry) => filesOf(entry.mutate, root).includes(path));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  const all = MUTATION_FILES.map((entry) => entry.name);
  const unknown = names.filter((name) => !all.includes(name));
  if (unknown.length) {
    console.error(`unknown file name: ${unknown.join(', ')} (one of: ${all.join(' ')})`);
    process.exit(2);
  }
  // In the order asked (all: the list's order), so the files that matter most can go first.
  for (const entry of names.length ? names.map((name) => MUTATION_FILES.find((e) => e.name === name)) : MUTATION_FILES) {
    console.log(`${entry.name}\t${entry.mutate}\t${entry.tests.join(',')}`);
  }
}
