// Part of `npm run build` (after tsc): the command line (src/cli/program.ts, with the server it starts)
// bundled by esbuild into ES modules, dist/cli/bundle.mjs and its chunks, with its dependencies. `node
// dist/cli.js` then reads a few files instead of resolving and compiling some 900 modules, and
// faker's unused locales are left out (faker declares no side effects): start-up to the first answer goes from about a
// second to a few hundred milliseconds. src/cli.ts imports it, and falls back to the compiled
// modules (dist/cli/program.js) without it.
//
// Left out, loaded from node_modules when first needed: the packages scripts/lib/cli-externals.mjs
// lists, with why.
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_EXTERNALS } from './lib/cli-externals.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

// Chunks of an earlier build have other hashes: cleared first.
for (const name of readdirSync(join(ROOT, 'dist', 'cli'), { withFileTypes: true })) {
  if (name.isFile() && /^bundle-.*\.mjs$/.test(name.name)) rmSync(join(ROOT, 'dist', 'cli', name.name));
}

await build({
  absWorkingDir: ROOT,
  entryPoints: { bundle: 'src/cli/program.ts' },
  // Two directories below the package root, as every compiled module is: the paths the sources
  // compute from import.meta.url (openapi/, scenarios/, fixtures/, dist/openapi/) stay right. The
  // chunks sit beside the bundle for the same reason.
  outdir: join(ROOT, 'dist', 'cli'),
  outExtension: { '.js': '.mjs' },
  // What is imported dynamically (faker and the fixture factories, the parity runner, the commands
  // that drive a running sandbox) goes to chunks of its own, read only when first used: V8 keeps the
  // source of every loaded script for as long as the process runs.
  splitting: true,
  chunkNames: 'bundle-[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: CLI_EXTERNALS.flatMap((name) => [name, `${name}/*`]),
  // The CommonJS packages inside an ES module bundle still call require() for node's own modules.
  banner: { js: 'import { createRequire as __sandboxCreateRequire } from "node:module"; const require = __sandboxCreateRequire(import.meta.url);' },
  // Their licence notices travel with the code (every bundled package is also an installed dependency).
  legalComments: 'eof',
  // Less to read and compile at each start; names kept (error classes and logs show them).
  minify: true,
  keepNames: true,
  logLevel: 'warning',
});

// V8 keeps a script's source in memory for as long as it runs (lazy compilation reads it again), as
// one byte per character only when every character is Latin-1: one character past it (an en dash in
// a regular expression, which esbuild leaves as written) doubled the 2.4 MB bundle's share of the
// heap. Escape such characters in the sources (\u2013).
for (const name of readdirSync(join(ROOT, 'dist', 'cli')).filter((file) => /^bundle.*\.mjs$/.test(file))) {
  const text = readFileSync(join(ROOT, 'dist', 'cli', name), 'utf8');
  const wide = /[^\u0000-\u00ff]/.exec(text);
  if (wide) {
    console.error(`dist/cli/${name}: character U+${wide[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0')} near "${text.slice(Math.max(0, wide.index - 60), wide.index + 20)}": escape it in the source, the bundle must be Latin-1`);
    process.exit(1);
  }
}
