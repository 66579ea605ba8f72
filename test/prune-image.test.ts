// The image's dependency trim (scripts/prune-image.mjs --cli-externals, run by the Dockerfile) on a
// made-up node_modules: the command line's externals and everything they depend on stay (hoisted or
// nested, optional ones when installed), every other package goes, and so do the native canvas that
// the image leaves out on purpose, declarations, docs and the PDF builds Node never loads. A required dependency that is not installed stops the trim.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../scripts/prune-image.mjs', import.meta.url));

type Manifest = { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; peerDependencies?: Record<string, string> };

/** A package folder (relative to the project) with its manifest and the files named. */
function pkg(root: string, path: string, manifest: Manifest = {}, files: string[] = ['index.js']): void {
  const dir = join(root, path);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: path.split('node_modules/').at(-1), version: '1.0.0', ...manifest }));
  for (const file of files) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), '');
  }
}

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

function project(): string {
  const root = mkdtempSync(join(tmpdir(), 'prune-image-'));
  pkg(root, 'node_modules/pdfkit', { dependencies: { fontkit: '1' } });
  pkg(root, 'node_modules/fontkit', { dependencies: { tiny: '1' } }, ['index.js', 'index.d.ts', 'README.md', 'LICENSE']);
  pkg(root, 'node_modules/tiny');
  pkg(root, 'node_modules/pdf-parse', { dependencies: { 'pdfjs-dist': '5', '@napi-rs/canvas': '0' } },
    ['dist/pdf-parse/esm/index.js', 'dist/pdf-parse/web/pdf-parse.es.js', 'dist/pdf-parse/cjs/index.cjs', 'dist/worker/esm/index.js']);
  pkg(root, 'node_modules/pdfjs-dist', {},
    ['legacy/build/pdf.mjs', 'legacy/build/pdf.worker.mjs', 'legacy/build/pdf.min.mjs', 'legacy/build/pdf.sandbox.mjs', 'build/pdf.mjs', 'web/viewer.mjs', 'standard_fonts/a.pfb']);
  pkg(root, 'node_modules/@napi-rs/canvas', { optionalDependencies: { '@napi-rs/canvas-linux-x64-gnu': '0', '@napi-rs/canvas-darwin-arm64': '0' } });
  pkg(root, 'node_modules/@napi-rs/canvas-linux-x64-gnu', {}, ['canvas.node']);
  pkg(root, 'node_modules/@napi-rs/unrelated');
  // Its own, newer `tiny` nested: both copies stay, each for its dependant.
  pkg(root, 'node_modules/pino-pretty', { dependencies: { tiny: '2' }, optionalDependencies: { 'not-installed': '1' } });
  pkg(root, 'node_modules/pino-pretty/node_modules/tiny');
  pkg(root, 'node_modules/iconv-lite', { dependencies: { 'safer-buffer': '2' }, optionalDependencies: { 'optional-present': '1' }, peerDependencies: { 'peer-absent': '1' } });
  pkg(root, 'node_modules/optional-present');
  pkg(root, 'node_modules/safer-buffer');
  // Inside the CLI's bundle: removed with what only they need.
  pkg(root, 'node_modules/express', { dependencies: { accepts: '1' } });
  pkg(root, 'node_modules/accepts');
  pkg(root, 'node_modules/@types/node', {}, ['index.d.ts']);
  pkg(root, 'node_modules/.bin', {}, ['tsc']);
  return root;
}

const prune = (root: string) => spawnSync(process.execPath, [SCRIPT, '--cli-externals', join(root, 'node_modules')], { encoding: 'utf8' });

describe('prune-image --cli-externals', () => {
  it('keeps the externals and their dependencies, nested or hoisted, and drops the rest, declarations, docs and unused PDF builds', () => {
    const root = project();
    const run = prune(root);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('kept 10 packages');
    // pdf-parse requires the canvas, and the canvas its platform package: neither is kept.
    expect(files(join(root, 'node_modules'))).toEqual([
      'fontkit/LICENSE', 'fontkit/index.js', 'fontkit/package.json',
      'iconv-lite/index.js', 'iconv-lite/package.json',
      'optional-present/index.js', 'optional-present/package.json',
      'pdf-parse/dist/pdf-parse/esm/index.js', 'pdf-parse/package.json',
      'pdfjs-dist/legacy/build/pdf.mjs', 'pdfjs-dist/legacy/build/pdf.worker.mjs', 'pdfjs-dist/package.json', 'pdfjs-dist/standard_fonts/a.pfb',
      'pdfkit/index.js', 'pdfkit/package.json',
      'pino-pretty/index.js', 'pino-pretty/node_modules/tiny/index.js', 'pino-pretty/node_modules/tiny/package.json', 'pino-pretty/package.json',
      'safer-buffer/index.js', 'safer-buffer/package.json',
      'tiny/index.js', 'tiny/package.json',
    ]);
  });

  it('stops, naming the package, when a required dependency is not installed', () => {
    const root = project();
    pkg(root, 'node_modules/pdfkit', { dependencies: { fontkit: '1', 'missing-dep': '1' } });
    const run = prune(root);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('missing-dep is not installed');
    // Nothing was removed: the trim stops before deleting.
    expect(files(join(root, 'node_modules'))).toContain('express/index.js');
  });
});
