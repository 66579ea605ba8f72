#!/usr/bin/env node
// npm run fuzz: schema-driven fuzzing of every operation of both OpenAPI documents, then the
// isolation attempts, against the built sandbox (run `npm run build` first; the npm script does).
// Flags: --seed N (default fixed), --requests N (default 100000), --isolation N (default 1000),
// --hostile N (hostile documents per write operation that takes one, default 25: scripts/fuzz/hostile.mjs),
// --report FILE (the full JSON report). Prints progress, the worst operations, and one summary line;
// exits 1 when any goal is missed (a 5xx, a crash, an invalid body, a changed state, a leak).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_SEED, runFuzz } from './fuzz/engine.mjs';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: String(DEFAULT_SEED) },
    requests: { type: 'string', default: '100000' },
    isolation: { type: 'string', default: '1000' },
    hostile: { type: 'string', default: '25' },
    report: { type: 'string' },
  },
});
const number = (name) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a whole number, got ${values[name]}`);
    process.exit(2);
  }
  return n;
};

const sandbox = {
  ...(await import('../dist/index.js')),
  ...(await import('../dist/http/response-check.js')),
  ...(await import('../dist/http/openapi.js')),
};
const result = await runFuzz({
  sandbox,
  seed: number('seed'),
  requests: number('requests'),
  isolation: number('isolation'),
  hostile: number('hostile'),
  log: (line) => console.log(line),
});

const failing = Object.entries(result.perOperation)
  .filter(([, s]) => s['5xx'] + s.invalid + s['non-HttpError'] + s['state-changed'] + s.connection > 0);
if (failing.length) {
  console.log('\nOperations with problems:');
  for (const [id, s] of failing) console.log(`  ${id}: ${s.requests} requests, 5xx ${s['5xx']}, invalid ${s.invalid}, non-HttpError ${s['non-HttpError']}, state changed ${s['state-changed']}, connection ${s.connection}`);
  console.log('\nSamples:');
  for (const [key, list] of Object.entries(result.samples)) for (const line of list) console.log(`  [${key}] ${line.slice(0, 700)}`);
}
if (result.crashes.length) console.log('\nCrashes:\n  ' + result.crashes.join('\n  '));
if (result.loggedErrors.length) console.log('\nErrors logged by the sandbox:\n  ' + result.loggedErrors.join('\n  '));
if (result.isolation.samples.length) console.log('\nIsolation:\n  ' + result.isolation.samples.join('\n  '));
if (result.hostile?.failures.length) console.log('\nHostile documents:\n  ' + result.hostile.failures.join('\n  '));
if (result.hostile?.loggedErrors.length) console.log('\nErrors logged in the hostile-document phase:\n  ' + result.hostile.loggedErrors.join('\n  '));
console.log(`\nStatuses: ${JSON.stringify(result.totals.statuses)}`);
console.log(`Isolation answers (real ids of another account): ${JSON.stringify(result.isolation.byStatus)}; by surface: ${JSON.stringify(result.isolation.bySurface)}`);
if (values.report) writeFileSync(values.report, JSON.stringify(result, null, 2));
console.log(result.summary);
process.exit(result.ok ? 0 : 1);
