// The command line's code cache (src/cli/code-cache.ts): a CommonJS script runs as node would run it
// (exports, require beside it, __filename) with the loader's import(); no cache at first, one written when asked, used
// by the next load of the same content, never by other content; a damaged cache is refused by V8 and
// written again; the folder keeps the newest KEPT_CACHES, is this user's only, and is not used when
// others may write to it; caching off, or a folder that cannot be written, only costs speed.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { BUNDLE_HEAD, BUNDLE_TAIL, IMPORT_PARAMETER, KEPT_CACHES, NOT_A_BUNDLE, codeCacheDir, loadWithCodeCache } from '../src/cli/code-cache.js';

const SOURCE = fileURLToPath(new URL('../src/cli/code-cache.ts', import.meta.url));

// As the build writes the bundle: CommonJS code inside the loader's function head and tail.
const script = (answer: number) => `${BUNDLE_HEAD}
const path = require('node:path');
exports.answer = ${answer};
exports.sum = (n) => { let s = 0; for (let i = 1; i <= n; i++) s += i; return s; };
exports.file = __filename;
exports.beside = require.resolve('./beside.cjs');
exports.sep = async () => (await ${IMPORT_PARAMETER}('node:path')).sep;${BUNDLE_TAIL}`;

interface Load { cacheUsed: boolean; answer: number; sum: number; file: string; beside: string; sep: string; saveThrew: boolean }

let dir: string;
let cacheDir: string;
let file: string;
let loader: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'code-cache-'));
  cacheDir = join(dir, 'cache');
  file = join(dir, 'bundle.cjs');
  writeFileSync(file, script(42));
  writeFileSync(join(dir, 'beside.cjs'), 'module.exports = 1;');
  // Each load runs in a node of its own, as each start does: V8 keeps what it compiled in memory, and
  // a second load in one process would take that rather than read the cache.
  loader = join(dir, 'code-cache.mjs');
  writeFileSync(loader, ts.transpileModule(readFileSync(SOURCE, 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Load `file` in a new node with `cache` (null: off), call its functions, then save the cache when asked. */
function load(save: boolean, cache: string | null = cacheDir): Load {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', `
    const { loadWithCodeCache } = await import(${JSON.stringify(loader)});
    const loaded = loadWithCodeCache(${JSON.stringify(file)}, ${JSON.stringify(cache)});
    const e = loaded.exports;
    const answer = { cacheUsed: loaded.cacheUsed, answer: e.answer, sum: e.sum(10), file: e.file, beside: e.beside, sep: await e.sep(), saveThrew: false };
    if (${save}) try { loaded.saveCache(); loaded.saveCache(); } catch { answer.saveThrew = true; }
    console.log(JSON.stringify(answer));
  `], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout) as Load;
}

const caches = () => (existsSync(cacheDir) ? readdirSync(cacheDir) : []);

describe('loadWithCodeCache', () => {
  it('runs the script as node would, with no cache at first', () => {
    expect(load(false)).toEqual({ cacheUsed: false, answer: 42, sum: 55, file, beside: join(dir, 'beside.cjs'), sep: '/', saveThrew: false });
    expect(caches()).toEqual([]);
  });

  it('writes the cache when asked, once, and the next load of the same content uses it', () => {
    expect(load(true).cacheUsed).toBe(false);
    expect(caches()).toHaveLength(1);
    expect(caches()[0]).toMatch(new RegExp(`^[0-9a-f]{40}-${process.version.replace(/\./g, '\\.')}-${process.arch}\\.bin$`));
    const second = load(true); // it had one: nothing written
    expect(second).toMatchObject({ cacheUsed: true, answer: 42, sum: 55 });
    expect(caches()).toHaveLength(1);
  });

  it('never uses the cache of other content, even of the same length', () => {
    load(true);
    writeFileSync(file, script(43)); // same length: V8's own check would accept the old cache
    expect(load(true)).toMatchObject({ cacheUsed: false, answer: 43 });
    expect(caches()).toHaveLength(2);
  });

  it('refuses a damaged cache and writes it again', () => {
    load(true);
    const [name] = caches();
    writeFileSync(join(cacheDir, name!), Buffer.from('not a code cache'));
    expect(load(true)).toMatchObject({ cacheUsed: false, answer: 42, sum: 55 });
    expect(load(false).cacheUsed).toBe(true);
  });

  it(`keeps the newest ${KEPT_CACHES} caches`, () => {
    for (let version = 0; version < KEPT_CACHES + 2; version++) {
      writeFileSync(file, script(100 + version));
      load(true);
    }
    expect(caches()).toHaveLength(KEPT_CACHES);
    // The last written is among them: a load of the current content uses it.
    expect(load(false)).toMatchObject({ cacheUsed: true, answer: 100 + KEPT_CACHES + 1 });
  });

  it('only costs speed when caching is off or the folder cannot be written', () => {
    expect(load(true, null)).toMatchObject({ cacheUsed: false, answer: 42, saveThrew: false });
    expect(caches()).toEqual([]);
    writeFileSync(cacheDir, 'a file where the folder should be');
    expect(load(true)).toMatchObject({ cacheUsed: false, sum: 55, saveThrew: false });
  });

  it("neither reads nor writes a folder others may write to (a code cache is code), and makes its own folder this user's only", () => {
    load(true);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    chmodSync(cacheDir, 0o777);
    expect(load(true)).toMatchObject({ cacheUsed: false, answer: 42 });
    expect(caches()).toHaveLength(1); // nothing more written there
    chmodSync(cacheDir, 0o700);
    expect(load(false).cacheUsed).toBe(true);
  });

  it('refuses a file that is not the build\'s function expression, naming the fix', () => {
    const plain = join(dir, 'plain.cjs');
    writeFileSync(plain, 'exports.answer = 42;');
    expect(() => loadWithCodeCache(plain, cacheDir)).toThrow(expect.objectContaining({
      code: NOT_A_BUNDLE,
      message: `${plain} is not a bundle of this build (it does not start with its function's head): run npm run build`,
    }));
    expect(caches()).toEqual([]);
  });

  it('throws ENOENT when there is no script (the executable falls back to the compiled modules)', () => {
    expect(() => loadWithCodeCache(join(dir, 'missing.cjs'), cacheDir)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});

describe('codeCacheDir', () => {
  it("is billing-sandbox/ in Node's compile cache folder, and off with NODE_DISABLE_COMPILE_CACHE", () => {
    expect(codeCacheDir({ NODE_COMPILE_CACHE: '/var/cache/node' })).toBe('/var/cache/node/billing-sandbox');
    expect(codeCacheDir({})).toBe(join(tmpdir(), 'node-compile-cache', 'billing-sandbox'));
    expect(codeCacheDir({ NODE_DISABLE_COMPILE_CACHE: '1', NODE_COMPILE_CACHE: '/x' })).toBeNull();
  });
});
