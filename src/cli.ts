#!/usr/bin/env node
// The `billing-sandbox` executable: serving (the default) and the commands that drive a running
// sandbox, all defined under src/cli/ (program.ts lists them). It runs the build's bundle of them
// (scripts/bundle-cli.mjs: start-up reads one script rather than hundreds of modules) with a code
// cache taken after start-up (src/cli/code-cache.ts), else the compiled modules (a build without
// the bundle).
import { codeCacheDir, loadWithCodeCache, NOT_A_BUNDLE } from './cli/code-cache.js';

// Built-ins without an ES module facade each (see src/cli/code-cache.ts).
const nodeModule = process.getBuiltinModule('node:module');
const { fileURLToPath } = process.getBuiltinModule('node:url');

type Program = typeof import('./cli/program.js');

// Node 22's on-disk cache of compiled code (NODE_COMPILE_CACHE names its folder; default: the system's
// temporary folder), for the compiled modules and the packages loaded from node_modules. Absent in
// Node 20: skipped.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

async function program(): Promise<{ run: Program['run']; saveCodeCache?: () => void }> {
  try {
    const bundle = loadWithCodeCache<Program>(fileURLToPath(new URL('./cli/bundle.cjs', import.meta.url)), codeCacheDir());
    return { run: bundle.exports.run, saveCodeCache: bundle.saveCache };
  } catch (error) {
    // No bundle, or one another build left (an install half replaced): the compiled modules serve,
    // slower to start; the second case says so, since the next build mends it.
    const code = (error as { code?: string }).code;
    if (code !== 'ENOENT' && code !== NOT_A_BUNDLE) throw error;
    if (code === NOT_A_BUNDLE) process.stderr.write(`billing-sandbox: ${(error as Error).message}; starting from the compiled modules meanwhile\n`);
    return import('./cli/program.js');
  }
}

void program().then(({ run, saveCodeCache }) => run(process.argv, { settled: saveCodeCache }));
