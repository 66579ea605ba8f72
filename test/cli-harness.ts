// Builds the command line as `npm run build` lays it out (src/ compiled to dist/, beside openapi/,
// scenarios/ and fixtures/), in node_modules/.cache so the compiled files resolve node_modules, and
// runs it as a real child process. The build transpiles without a type check (npm test runs tsc).
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export const ROOT = process.cwd();

function transpileTree(from: string, to: string) {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (entry.isDirectory()) transpileTree(source, join(to, entry.name));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
        fileName: source,
      });
      mkdirSync(to, { recursive: true });
      writeFileSync(join(to, entry.name.replace(/\.ts$/, '.js')), outputText);
    } else if (entry.name.endsWith('.json')) {
      mkdirSync(to, { recursive: true });
      cpSync(source, join(to, entry.name));
    }
  }
}

export interface BuiltCli {
  /** The package directory (its package.json names billing-sandbox with the bin, as the published one). */
  dir: string;
  /** dist/cli.js */
  cli: string;
  remove(): void;
}

export function buildCli(name: string): BuiltCli {
  const dir = join(ROOT, 'node_modules', '.cache', `billing-sandbox-${name}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  transpileTree(join(ROOT, 'src'), join(dir, 'dist'));
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'billing-sandbox', version, type: 'module', bin: { 'billing-sandbox': 'dist/cli.js' } }));
  for (const sub of ['openapi', 'scenarios', 'fixtures', 'src']) {
    if (existsSync(join(ROOT, sub))) symlinkSync(relative(dir, join(ROOT, sub)), join(dir, sub));
  }
  return { dir, cli: join(dir, 'dist', 'cli.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Environment for a child: nothing of the contract's variables leaks in from the test runner. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(PORT|HOST|SANDBOX_\w+|NODE_OPTIONS|FORCE_COLOR|NO_COLOR|npm_\w+)$/.test(k)));
  return { ...env, SANDBOX_LOG_LEVEL: 'silent', ...extra };
}

export interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves when the output (stdout or stderr) matches; rejects after 40 s of real time. */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr'): Promise<string>;
  exit: Promise<number | null>;
}

/** Spawn `command args` and collect its output. */
export function spawnProcess(command: string, args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string; detached?: boolean } = {}): Running {
  const child = spawn(command, args, { env, cwd: options.cwd, detached: options.detached, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners: Array<() => void> = [];
  child.stdout!.on('data', (chunk) => { out += chunk; listeners.forEach((l) => l()); });
  child.stderr!.on('data', (chunk) => { err += chunk; listeners.forEach((l) => l()); });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitFor(pattern, stream = 'stdout') {
      return new Promise((resolve, reject) => {
        const text = () => (stream === 'stdout' ? out : err);
        const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${stream}; stdout=${out} stderr=${err}`)), 40_000);
        const check = () => {
          const match = pattern.exec(text());
          if (!match) return;
          clearTimeout(timer);
          resolve(match[0]);
        };
        listeners.push(check);
        check();
        void exit.then(() => { clearTimeout(timer); if (!pattern.test(text())) reject(new Error(`exited before ${pattern}; stdout=${out} stderr=${err}`)); });
      });
    },
  };
}

export interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Run the built CLI to completion (asynchronously: a sandbox in this process keeps answering meanwhile). */
export async function runCli(cli: BuiltCli, args: string[], env: Record<string, string> = {}): Promise<Result> {
  const run = spawnProcess(process.execPath, [cli.cli, ...args], childEnv(env));
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 30_000);
  const status = await run.exit;
  clearTimeout(timer);
  return { status, stdout: run.stdout(), stderr: run.stderr() };
}
