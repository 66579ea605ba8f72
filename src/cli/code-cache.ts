// Owns running the command line's bundle (dist/cli/bundle.cjs: CommonJS code inside one function
// expression, BUNDLE_HEAD to BUNDLE_TAIL) with a V8 code
// cache taken after start-up. Node's own compile cache (module.enableCompileCache) stores a script as
// compiled when it loads, which is its top-level code only: every function that start-up then calls
// was compiled again at each start, about 45 ms of a 400 ms start on a 2-core machine. This cache is
// made once the server has settled (src/cli/serve.ts), so it holds every function start-up and the
// first answers ran, and the next start deserializes them instead of compiling.
//
// Where: the folder Node's compile cache uses (NODE_COMPILE_CACHE, else node-compile-cache in the
// system's temporary folder), in billing-sandbox/: one file per bundle file (see readScript: V8
// itself checks only the source's length) and Node version, the newest KEPT_CACHES kept. Written to a
// temporary file, then renamed. NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's. A cache
// V8 refuses (other flags) is made again; failing to read or write one costs speed, never the start.
// A code cache is code: the folder is made readable and writable by this user only, and one that
// another user owns or may write to (a shared temporary folder) is neither read nor written.
//
// Node's built-in modules come through process.getBuiltinModule, not import: an ES module's import of
// a built-in makes a module facade of all its exports first, which for these six cost about 3 ms of
// every start (this module is on the path of every command).
const { hash } = process.getBuiltinModule('node:crypto');
const { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { createRequire } = process.getBuiltinModule('node:module');
const { tmpdir } = process.getBuiltinModule('node:os');
const nodePath = process.getBuiltinModule('node:path');
const dirname = (path: string): string => nodePath.dirname(path);
const join = (...paths: string[]): string => nodePath.join(...paths);
const { Script } = process.getBuiltinModule('node:vm');

/**
 * The name the bundle's import of a package (src/packages.ts, as the build replaces it) calls: a
 * script has no import() of its own (see src/packages.ts), so the script's wrapper gets this module's.
 */
export const IMPORT_PARAMETER = '__billingSandboxImport';

/**
 * The bundle's file is one function expression with these parameters, written by the build
 * (scripts/bundle-cli.mjs) around the code: compiled as it is, the file's text is the source V8 keeps.
 * Wrapping it here, at every start, made a second string of the whole 1.9 MB text that V8 then copied
 * flat once more: some 470 pages touched and 8 ms (measured, with the cache: compiling took 15-16 ms
 * against 24).
 */
export const BUNDLE_HEAD = `(function (exports, require, module, __filename, __dirname, ${IMPORT_PARAMETER}) {`;
export const BUNDLE_TAIL = '\n})';

/** The `code` of the error loadWithCodeCache throws for a file that does not start with BUNDLE_HEAD. */
export const NOT_A_BUNDLE = 'ERR_NOT_A_BUNDLE';

/** import() from here: dist/cli/, beside the bundle, so a package resolves as it would from the bundle. */
const importFromHere = (name: string): Promise<unknown> => import(name);

/** How many caches the folder keeps (one per bundle file and Node version): older ones are deleted. */
export const KEPT_CACHES = 3;

export interface LoadedScript<T> {
  exports: T;
  /** Whether V8 used a cache for this load. */
  cacheUsed: boolean;
  /** Write the cache now, when this load had none (or V8 refused it); once. Never throws. */
  saveCache: () => void;
}

/** The cache folder, or null when caching is off (NODE_DISABLE_COMPILE_CACHE). */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.NODE_DISABLE_COMPILE_CACHE) return null;
  return join(env.NODE_COMPILE_CACHE || join(tmpdir(), 'node-compile-cache'), 'billing-sandbox');
}

/**
 * Run `file` (CommonJS code inside BUNDLE_HEAD and BUNDLE_TAIL, Latin-1 as the build checks) as node
 * would require it, with the code cache from `cacheDir` when there is one for this content, and
 * IMPORT_PARAMETER bound to an import() of packages. Throws what reading or running the script throws
 * (code ENOENT when there is no bundle, NOT_A_BUNDLE when the file is not such a function).
 */
export function loadWithCodeCache<T>(file: string, cacheDir: string | null): LoadedScript<T> {
  const { source, key } = readScript(file);
  const cacheFile = cacheDir && key && ownFolder(cacheDir) && join(cacheDir, `${key}-${process.version}-${process.arch}.bin`);
  let cachedData: Buffer | undefined;
  if (cacheFile) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // None yet: made once the server settles.
    }
  }
  if (!source.startsWith(BUNDLE_HEAD)) {
    throw Object.assign(new Error(`${file} is not a bundle of this build (it does not start with its function's head): run npm run build`), { code: NOT_A_BUNDLE });
  }
  const script = new Script(source, { filename: file, cachedData });
  const cacheUsed = cachedData !== undefined && !script.cachedDataRejected;
  const module = { exports: {} as T };
  const wrapper = script.runInThisContext() as (exports: T, require: NodeJS.Require, module: { exports: T }, filename: string, dirname: string, importer: (name: string) => Promise<unknown>) => void;
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file), importFromHere);
  let saved = cacheUsed || !cacheFile;
  return {
    exports: module.exports,
    cacheUsed,
    saveCache: () => {
      if (saved || !cacheDir || !cacheFile) return;
      saved = true;
      writeCache(cacheDir, cacheFile, script.createCachedData());
    },
  };
}

/**
 * The script's text and which file it is, without reading it twice: a SHA-1 of its device, inode,
 * size and modification and change times, taken from the open file before and after reading (null
 * when they differ: it was being written). Writing or replacing the file (a build, an install, a
 * copy) gives it a new change time, which no program can set, so other content never meets this
 * key; the same content copied elsewhere only makes a new cache. (Hashing the content instead costs
 * 5 to 18 ms of a start.)
 */
function readScript(file: string): { source: string; key: string | null } {
  const fd = openSync(file, 'r');
  try {
    const identity = () => {
      const stat = fstatSync(fd, { bigint: true });
      return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
    };
    const before = identity();
    const source = readFileSync(fd, 'latin1');
    return { source, key: identity() === before ? hash('sha1', before) : null };
  } finally {
    closeSync(fd);
  }
}

/** Whether `dir` is missing (it will be made so) or this user's own, writable by no one else (never on Windows: no owner to compare). */
function ownFolder(dir: string): boolean {
  try {
    const stat = statSync(dir);
    return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
  } catch {
    return true;
  }
}

function writeCache(dir: string, file: string, data: Buffer): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!ownFolder(dir)) return;
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, data);
    renameSync(temporary, file);
    const caches = readdirSync(dir)
      .filter((name) => name.endsWith('.bin'))
      .map((name) => ({ name, mtime: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    for (const old of caches.slice(KEPT_CACHES)) rmSync(join(dir, old.name), { force: true });
  } catch {
    // A read-only or full disk: the next start compiles as it did without a cache.
  }
}
