// Used by the Dockerfile: deletes what the image never runs. Under each folder named: TypeScript
// declarations, source maps, Markdown docs, and @types packages (licence and notice files stay).
// With --cli-externals, a node_modules folder keeps only the packages the command line's bundle
// loads from node_modules (scripts/lib/cli-externals.mjs) and what they depend on, since everything
// else is inside the bundle, less the packages the image leaves out on purpose (the native canvas);
// and of the PDF packages, only the files a Node process loads.
// Node rather than find(1): the image's base may be as small as node, npm, sh and tar.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CLI_EXTERNALS, NOT_IN_IMAGE } from './lib/cli-externals.mjs';

const DROP = /\.(d\.[mc]?ts|map|md|markdown)$/i;
const KEEP = /^(licen[cs]e|notice)/i;

/**
 * Files of the kept PDF packages that a Node process never loads, by package. pdf-parse's Node entry
 * (its "import" export) loads pdf.js's legacy build, whose fake worker imports pdf.worker.mjs beside
 * it; the browser builds, the viewer, the minified copies, the scripting sandbox and the image
 * decoders' own entry are for browsers or other entries. The container smoke's PDF round trip (an
 * invoice rendered by pdfkit, read back by a bill upload) runs on what is left.
 */
const NOT_LOADED_BY_NODE = {
  'pdf-parse': ['dist/pdf-parse/web', 'dist/pdf-parse/cjs', 'dist/worker', 'dist/node/cjs'],
  'pdfjs-dist': ['build', 'web', 'image_decoders', 'types', 'legacy/web', 'legacy/image_decoders',
    'legacy/build/pdf.min.mjs', 'legacy/build/pdf.worker.min.mjs', 'legacy/build/pdf.sandbox.mjs', 'legacy/build/pdf.sandbox.min.mjs'],
};

function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === '@types') rmSync(path, { recursive: true, force: true });
      else prune(path);
    } else if (DROP.test(entry.name) && !KEEP.test(entry.name)) {
      rmSync(path, { force: true });
    }
  }
}

/** Where `name` resolves from the package at `from`, as node finds it: its own node_modules, then each folder above, up to `root`'s. */
function resolvePackage(root, from, name) {
  for (let dir = from; dir.startsWith(dirname(root)); dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === dirname(dir)) break;
  }
  return undefined;
}

/**
 * The folders of `names` and of every package they depend on (optional and peer dependencies when
 * installed), except the packages NOT_IN_IMAGE names and what only they bring.
 */
function closure(root, names) {
  const kept = new Set();
  const visit = (from, name, required) => {
    if (NOT_IN_IMAGE.includes(name)) return;
    const dir = resolvePackage(root, from, name);
    if (!dir) {
      if (required) throw new Error(`prune-image: ${name} is not installed under ${root}`);
      return;
    }
    if (kept.has(dir)) return;
    kept.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dir, dep, true);
    for (const dep of Object.keys({ ...manifest.optionalDependencies, ...manifest.peerDependencies })) visit(dir, dep, false);
  };
  for (const name of names) visit(dirname(root), name, true);
  return kept;
}

/** Delete the packages of `root` (a node_modules folder) outside the CLI's externals and their dependencies. */
function keepCliExternals(root) {
  const kept = closure(root, CLI_EXTERNALS);
  const packages = readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .flatMap((e) => (e.name.startsWith('@') ? readdirSync(join(root, e.name)).map((n) => join(root, e.name, n)) : [join(root, e.name)]));
  let removed = 0;
  for (const dir of packages) {
    if (kept.has(dir)) continue;
    rmSync(dir, { recursive: true, force: true });
    removed += 1;
  }
  for (const scope of readdirSync(root).filter((n) => n.startsWith('@'))) {
    if (!readdirSync(join(root, scope)).length) rmSync(join(root, scope), { recursive: true });
  }
  rmSync(join(root, '.bin'), { recursive: true, force: true });
  for (const [name, paths] of Object.entries(NOT_LOADED_BY_NODE)) {
    const dir = resolvePackage(root, dirname(root), name);
    for (const path of paths) if (dir) rmSync(join(dir, path), { recursive: true, force: true });
  }
  console.log(`prune-image: kept ${kept.size} packages (${CLI_EXTERNALS.join(', ')} and their dependencies), removed ${removed}`);
}

const args = process.argv.slice(2);
const cliExternals = args.includes('--cli-externals');
for (const dir of args.filter((a) => a !== '--cli-externals')) {
  if (cliExternals) keepCliExternals(resolve(dir));
  prune(dir);
}
