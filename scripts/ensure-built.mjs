// `npm start`'s prestart: builds (npm run build) only when dist/ is missing or older than what it is
// built from, so a fresh clone's `npm ci && npm start` builds once and every later start starts at
// once. Compares modification times: the newest input against the oldest output.
import { execSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const INPUTS = ['src', 'openapi', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/cache-documents.mjs', 'scripts/bundle-cjs.mjs', 'scripts/bundle-cli.mjs'];
const OUTPUTS = ['dist/cli.js', 'dist/cli/bundle.cjs', 'dist/index.js', 'dist/cjs/index.cjs', 'dist/openapi/openapi.json', 'dist/openapi/control-plane.json', 'dist/openapi/openapi.requests.json', 'dist/openapi/control-plane.requests.json'];

/** Newest modification time under a file or folder (src/generated is an output of the build too: skipped). */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(path)) {
    const child = join(path, entry);
    if (child === join('src', 'generated')) continue;
    latest = Math.max(latest, newest(child));
  }
  return latest;
}

const oldestOutput = Math.min(...OUTPUTS.map((path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0));
const newestInput = Math.max(...INPUTS.map(newest));
if (oldestOutput === 0 || newestInput > oldestOutput) {
  console.error(oldestOutput === 0 ? 'dist/ is missing: building once (npm run build)' : 'sources are newer than dist/: building (npm run build)');
  execSync('npm run build', { stdio: 'inherit' });
}
