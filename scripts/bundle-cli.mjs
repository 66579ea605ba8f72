// Part of `npm run build` (after tsc): the command line (src/cli/program.ts, with the server it starts)
// bundled by esbuild into one CommonJS script, dist/cli/bundle.cjs, with its dependencies, inside one
// function expression (the loader's BUNDLE_HEAD and BUNDLE_TAIL, src/cli/code-cache.ts). `node
// dist/cli.js` runs it through src/cli/code-cache.ts: one file to read instead of some 900 modules
// to resolve and compile, and a V8 code cache taken after start-up, which a script (unlike an ES
// module) can have. What is imported on first use (faker's factories, the parity runner, the client
// commands) is inside too, evaluated only when first imported; faker's unused locales are left out
// (faker declares no side effects). src/cli.ts falls back to the compiled modules
// (dist/cli/program.js) without it.
//
// Left out, loaded from node_modules when first needed: the packages scripts/lib/cli-externals.mjs
// lists, with why.
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_EXTERNALS } from './lib/cli-externals.mjs';
import { onFirstUse } from './lib/on-first-use.mjs';
// The loader's name for it, from its compiled module: `npm run build` runs tsc before this script.
import { BUNDLE_HEAD, BUNDLE_TAIL, IMPORT_PARAMETER } from '../dist/cli/code-cache.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

// Bundles of earlier builds (ES module chunks before 0.1.0's code cache) cleared first.
for (const name of readdirSync(join(ROOT, 'dist', 'cli'), { withFileTypes: true })) {
  if (name.isFile() && /^bundle.*\.(mjs|cjs)$/.test(name.name)) rmSync(join(ROOT, 'dist', 'cli', name.name));
}

await build({
  absWorkingDir: ROOT,
  entryPoints: { bundle: 'src/cli/program.ts' },
  // Two directories below the package root, as every compiled module is: the paths the sources
  // compute from import.meta.url (openapi/, scenarios/, fixtures/, dist/openapi/) stay right.
  outdir: join(ROOT, 'dist', 'cli'),
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: CLI_EXTERNALS.flatMap((name) => [name, `${name}/*`]),
  // Those packages are imported through src/packages.ts, here replaced: a script has no import() of
  // its own, so the loader (src/cli/code-cache.ts) hands the script one as IMPORT_PARAMETER.
  plugins: [{
    name: 'packages-through-the-loader',
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]packages\.ts$/ }, () => ({
        contents: `export function importPackage(name) { return ${IMPORT_PARAMETER}(name); }`,
        loader: 'js',
      }));
    },
  }, onFirstUse(CLI_EXTERNALS)],
  // The sources find their files relative to import.meta.url, which a script has not: its own
  // file's URL stands in (src/cli/code-cache.ts passes the script its __filename, as node would).
  define: { 'import.meta.url': '__billingSandboxBundleUrl' },
  // The file is one function expression (the loader's BUNDLE_HEAD and BUNDLE_TAIL), which the loader
  // compiles as it is: no second copy of the text at each start.
  banner: { js: `${BUNDLE_HEAD}const __billingSandboxBundleUrl = require("node:url").pathToFileURL(__filename).href;` },
  footer: { js: BUNDLE_TAIL },
  // Their licence notices travel with the code (every bundled package is also an installed dependency).
  legalComments: 'eof',
  // Less to read and compile at each start. Functions and classes keep their short names: keeping
  // the source's names (keepNames) redefined the name of some 3,700 functions as the bundle loaded,
  // 1.4 MB of memory and 15 to 25 ms of every start, and made a write some 20% dearer (each function
  // given a map of its own, in `npm run bench`). What a reader sees by name
  // does not depend on it: the sandbox's error classes set their name, and the log reports an
  // error's name, not its class's (src/log.ts).
  minify: true,
  keepNames: false,
  logLevel: 'warning',
});

// V8 keeps a script's source in memory for as long as it runs (lazy compilation reads it again), as
// one byte per character only when every character is Latin-1: one character past it (an en dash in
// a regular expression, which esbuild leaves as written) doubled the 2.4 MB bundle's share of the
// heap. Escape such characters in the sources (\u2013).
for (const name of readdirSync(join(ROOT, 'dist', 'cli')).filter((file) => /^bundle.*\.cjs$/.test(file))) {
  const text = readFileSync(join(ROOT, 'dist', 'cli', name), 'utf8');
  // A script has no import(): every package goes through src/packages.ts.
  const dynamicImport = /\bimport\(/.exec(text);
  if (dynamicImport) {
    console.error(`dist/cli/${name}: import( near "${text.slice(Math.max(0, dynamicImport.index - 80), dynamicImport.index + 40)}": the bundle runs as a script, which has no import(); load the package through src/packages.ts`);
    process.exit(1);
  }
  const wide = /[^\u0000-\u00ff]/.exec(text);
  if (wide) {
    console.error(`dist/cli/${name}: character U+${wide[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0')} near "${text.slice(Math.max(0, wide.index - 60), wide.index + 20)}": escape it in the source, the bundle must be Latin-1`);
    process.exit(1);
  }
}
