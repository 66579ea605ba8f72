// Owns the package entries for test runners (run by `npm run build` after tsc), each bundled by
// esbuild into one CommonJS file under dist/cjs/ with an ES module beside it that re-exports the same
// instance, so require() and import get one copy (one SandboxRequestError class, one set of helpers):
//   index.cjs           `billing-sandbox`: the programmatic API (src/index.ts), the sandbox itself
//   client.cjs          `billing-sandbox/client`: connect() and the typed test client (src/client/),
//                       no server code; the other two entries require it rather than carry a copy
//   testcontainers.cjs  `billing-sandbox/testcontainers`: the Testcontainers module, which requires
//                       the partner's own `testcontainers` (an optional peer dependency)
//
// Why a bundle: Jest runs test code through its own module loader, which cannot require() an ES
// module. lowdb, jose and faker are ESM-only, and openapi-backend (CommonJS) requires
// @apidevtools/json-schema-ref-parser, ESM-only from version 16, which is what a consumer's install
// gets (this package's `overrides` pin 11 only where it is the root project). Those four are bundled
// (with what they pull in, as locked here); every other dependency stays an ordinary require() of
// the consumer's install: they are CommonJS, and some (pdfkit, pdf-parse, pino-pretty) read files
// beside their own code.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = join(ROOT, 'dist', 'cjs');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

const ESM_ONLY = ['lowdb', 'jose', '@faker-js/faker'];
// openapi-fetch is bundled from its ES module build: required from a bundle of ES module sources,
// its CommonJS build's default export would be read the Node way (the exports object, not createClient).
const BUNDLED = [...ESM_ONLY, 'openapi-backend', 'openapi-fetch'];
const external = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies ?? {})]
  .filter((name) => !BUNDLED.includes(name))
  .flatMap((name) => [name, `${name}/*`]);

/**
 * The client module (src/client/) is its own bundle: an entry that imports it requires ./client.cjs
 * instead of carrying a copy, and imports it only through src/client/index.ts, the bundle's exports.
 */
const CLIENT_DIR = join(ROOT, 'src', 'client');
const clientThroughItsBundle = {
  name: 'client-through-its-bundle',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, ({ path, importer }) => {
      if (!importer || importer.startsWith(`${CLIENT_DIR}${sep}`)) return undefined;
      const target = join(dirname(importer), path);
      if (!target.startsWith(`${CLIENT_DIR}${sep}`)) return undefined;
      if (target !== join(CLIENT_DIR, 'index.js')) throw new Error(`${importer} imports ${path}: import the client through src/client/index.ts, the exports of dist/cjs/client.cjs`);
      return { path: './client.cjs', external: true };
    });
  },
};

const ENTRIES = [
  { name: 'client', source: 'src/client/index.ts', plugins: [] },
  { name: 'index', source: 'src/index.ts', plugins: [clientThroughItsBundle] },
  { name: 'testcontainers', source: 'src/testcontainers/index.ts', plugins: [clientThroughItsBundle] },
];
const inputs = {};
const exportCounts = [];
for (const entry of ENTRIES) {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [entry.source],
    outfile: join(OUT_DIR, `${entry.name}.cjs`),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external,
    plugins: entry.plugins,
    // The sources find the OpenAPI documents, scenarios and fixtures relative to import.meta.url; the
    // bundle sits two directories below the package root, as every compiled module does (dist/x/y.js).
    define: { 'import.meta.url': '__billingSandboxModuleUrl' },
    banner: { js: 'const __billingSandboxModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  Object.assign(inputs, result.metafile.inputs);
  // `export *` of another bundle becomes a copy made after module.exports is set, which a loader that
  // reads module.exports' own keys early (Vitest's) misses: name such exports instead.
  if (/__reExport\([^)]*require\(/.test(readFileSync(join(OUT_DIR, `${entry.name}.cjs`), 'utf8'))) {
    throw new Error(`${entry.source} re-exports another bundle with export *: list the names (export { a, b } from ...)`);
  }

  // The names the bundle exports, read from the bundle itself, re-exported by the ES module.
  const names = JSON.parse(
    execFileSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(Object.keys(require(process.argv[1]))))', join(OUT_DIR, `${entry.name}.cjs`)], { encoding: 'utf8' }),
  ).filter((name) => name !== 'default' && name !== '__esModule');
  writeFileSync(
    join(OUT_DIR, `${entry.name}.mjs`),
    `// The ES module entry: the same instance as require() of ${entry.name}.cjs.\nimport bundle from './${entry.name}.cjs';\nexport const { ${names.join(', ')} } = bundle;\n`,
  );
  exportCounts.push(`${entry.name}.cjs ${(readFileSync(join(OUT_DIR, `${entry.name}.cjs`)).length / 1024).toFixed(0)} kB, ${names.length} exports`);
}

// Types for require(): a copy of the declarations tsc wrote, under a package.json that makes
// TypeScript read them as CommonJS (dist/*.d.ts are ES module declarations, as "type": "module"
// says, and a CommonJS file may not require() those: TS1479).
rmSync(join(OUT_DIR, 'types'), { recursive: true, force: true });
for (const file of readdirSync(join(ROOT, 'dist'), { recursive: true, encoding: 'utf8' })) {
  if (!file.endsWith('.d.ts') || file.startsWith(`cjs${sep}`)) continue;
  mkdirSync(dirname(join(OUT_DIR, 'types', file)), { recursive: true });
  writeFileSync(join(OUT_DIR, 'types', file), asCommonJsDeclarations(readFileSync(join(ROOT, 'dist', file), 'utf8')));
}
writeFileSync(join(OUT_DIR, 'package.json'), '{ "type": "commonjs" }\n');

/**
 * A CommonJS declaration file may name an ES-module-only package's types only through a type-only
 * import with resolution-mode "import" (else TS1479/TS1541); declarations only use types anyway.
 */
function asCommonJsDeclarations(text) {
  return text.replace(/^import (?:type )?(.+?) from '([^']+)';$/gm, (line, names, specifier) =>
    ESM_ONLY.some((name) => specifier === name || specifier.startsWith(`${name}/`))
      ? `import type ${names} from '${specifier}' with { 'resolution-mode': 'import' };`
      : line);
}

// The licences of what the bundle carries (every bundled package is MIT; their notices must travel).
const packages = new Map();
for (const input of Object.keys(inputs)) {
  const at = input.lastIndexOf('node_modules/');
  const match = at < 0 ? null : /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input.slice(at));
  if (!match) continue;
  const dir = join(ROOT, input.slice(0, at + match[0].length));
  if (!packages.has(dir)) packages.set(dir, match[1]);
}
const notices = [...packages].sort((a, b) => a[1].localeCompare(b[1])).map(([dir, name]) => {
  const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const file = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license', 'LICENCE', 'license.md'].map((f) => join(dir, f)).find(existsSync);
  return `${name}@${meta.version} (${meta.license ?? 'see package'})\n\n${file ? readFileSync(file, 'utf8').trim() : `License: ${meta.license}`}\n`;
});
writeFileSync(
  join(OUT_DIR, 'THIRD_PARTY_LICENSES.txt'),
  `dist/cjs/*.cjs bundle these packages:\n\n${notices.join(`\n${'-'.repeat(72)}\n\n`)}`,
);

console.log(`dist/cjs: ${exportCounts.join('; ')}; ${packages.size} bundled packages`);
