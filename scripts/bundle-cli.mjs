// Part of `npm run build` (after tsc): the command line (src/cli/program.ts, with the server it starts)
// bundled by esbuild into one ES module, dist/cli/bundle.mjs, with its dependencies. `node dist/cli.js`
// then reads one file instead of resolving and compiling some 900 modules, and faker's unused locales
// are left out (faker declares no side effects): start-up to the first answer goes from about a
// second to a few hundred milliseconds. src/cli.ts imports it, and falls back to the compiled
// modules (dist/cli/program.js) without it.
//
// Left out, loaded from node_modules when first needed: pdfkit and pdf-parse (they read font and
// worker files beside their own code, and only PDF requests use them), pino-pretty (a terminal only)
// and the native canvas pdf.js may load.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const LAZY = ['pdfkit', 'pdf-parse', 'pino-pretty', '@napi-rs/canvas'];

await build({
  absWorkingDir: ROOT,
  entryPoints: ['src/cli/program.ts'],
  // Two directories below the package root, as every compiled module is: the paths the sources
  // compute from import.meta.url (openapi/, scenarios/, fixtures/, dist/openapi/) stay right.
  outfile: join(ROOT, 'dist', 'cli', 'bundle.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: LAZY.flatMap((name) => [name, `${name}/*`]),
  // The CommonJS packages inside an ES module bundle still call require() for node's own modules.
  banner: { js: 'import { createRequire as __sandboxCreateRequire } from "node:module"; const require = __sandboxCreateRequire(import.meta.url);' },
  // Their licence notices travel with the code (every bundled package is also an installed dependency).
  legalComments: 'eof',
  // Less to read and compile at each start; names kept (error classes and logs show them).
  minify: true,
  keepNames: true,
  logLevel: 'warning',
});
