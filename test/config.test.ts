// Configuration is read once, in src/config.ts: no other module of the server reads the environment
// (the command line's own modules under src/cli/ read their client settings and flags), and each
// setting's default is there, for the command line and for a test runner's startSandbox() alike.
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Command } from 'commander';
import { DEFAULT_LOG_LEVEL, defaultConfig } from '../src/config.js';
import { environmentConfig, withServeOptions } from '../src/cli/serve.js';
import { startSandbox } from '../src/index.js';
import { createDeps } from '../src/app.js';
import { setup } from './helpers.js';

const SRC = join(process.cwd(), 'src');

/** Every TypeScript source of the server, as a path relative to src/. */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sources(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

const saved = { ...process.env };
afterEach(() => {
  for (const name of ['SANDBOX_LOG_LEVEL', 'SANDBOX_COMPACT_MIN_BYTES']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe('configuration is read once', () => {
  it('reads the environment in src/config.ts only (and the command line in src/cli/)', () => {
    const readers = sources().filter((file) => /process\.env\b/.test(readFileSync(join(SRC, file), 'utf8')));
    expect(readers.filter((file) => file !== 'config.ts' && !file.startsWith('cli/'))).toEqual([]);
    expect(readers).toContain('config.ts');
  });

  it('defaults the log level to info on the command line and warn for startSandbox(), from config.ts, SANDBOX_LOG_LEVEL over both', () => {
    expect(DEFAULT_LOG_LEVEL).toEqual({ 'command-line': 'info', library: 'warn' });
    expect(defaultConfig({}, 'command-line').logLevel).toBe('info');
    expect(defaultConfig({}).logLevel).toBe('warn');
    // An empty variable is unset, as every other variable of the contract.
    expect(defaultConfig({ SANDBOX_LOG_LEVEL: '' }).logLevel).toBe('warn');
    expect(defaultConfig({ SANDBOX_LOG_LEVEL: 'debug' }, 'command-line').logLevel).toBe('debug');
    expect(defaultConfig({ SANDBOX_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
  });

  it('gives the serve command info and startSandbox() warn when nothing says otherwise', async () => {
    delete process.env.SANDBOX_LOG_LEVEL;
    const flags = withServeOptions(new Command(), environmentConfig().env).parse([], { from: 'user' }).opts();
    expect(flags.logLevel).toBe('info');
    const sandbox = await startSandbox({ port: 0, rateLimit: 0 });
    try {
      expect(sandbox.deps.config.logLevel).toBe('warn');
      expect(sandbox.deps.log.level).toBe('warn');
    } finally {
      await sandbox.close();
    }
    process.env.SANDBOX_LOG_LEVEL = 'error';
    expect(withServeOptions(new Command(), environmentConfig().env).parse([], { from: 'user' }).opts().logLevel).toBe('error');
    const quieter = await startSandbox({ port: 0, rateLimit: 0 });
    try {
      expect(quieter.deps.log.level).toBe('error');
    } finally {
      await quieter.close();
    }
  });

  describe('SANDBOX_COMPACT_MIN_BYTES', () => {
    let dir: string | undefined;
    afterEach(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    });

    it('is read by config.ts into compactMinBytes, a whole number of bytes of at least 1', () => {
      expect(defaultConfig({}).compactMinBytes).toBeUndefined();
      expect(defaultConfig({ SANDBOX_COMPACT_MIN_BYTES: '65536' }).compactMinBytes).toBe(65_536);
      for (const bad of ['0', '-1', '1.5', 'lots']) {
        expect(() => defaultConfig({ SANDBOX_COMPACT_MIN_BYTES: bad })).toThrow(/SANDBOX_COMPACT_MIN_BYTES must be a whole number/);
      }
    });

    it('reaches the data file when set after the modules loaded (nothing reads it at module load)', async () => {
      dir = mkdtempSync(join(tmpdir(), 'config-'));
      const file = join(dir, 'sandbox.json');
      process.env.SANDBOX_COMPACT_MIN_BYTES = '20000';
      const sb = await setup({ dataFile: file, flushDelayMs: 0 });
      expect(sb.deps.config.compactMinBytes).toBe(20_000);
      const api = sb.as(await sb.token());
      for (let round = 0; round < 4; round++) {
        const made = await Promise.all(Array.from({ length: 25 }, (_, i) => api.post('/customers', { name: `R${round} C${i}`, external_id: `ext-${round}-${i}` })));
        expect(made.map((r) => r.status)).toEqual(Array(25).fill(201));
      }
      await sb.deps.store.close();
      // Compacted past 20 kB: the first log segments are gone (at 64 MB, the default, they would all be there).
      const segments = readdirSync(dir).filter((name) => name.startsWith('sandbox.json.log.')).sort();
      expect(segments[0]).not.toBe('sandbox.json.log.1');
    });

    it('refuses a start with a bad value, naming the variable', async () => {
      process.env.SANDBOX_COMPACT_MIN_BYTES = 'lots';
      await expect(createDeps({ logLevel: 'silent' })).rejects.toThrow(/SANDBOX_COMPACT_MIN_BYTES/);
      expect(environmentConfig().problem?.message).toMatch(/SANDBOX_COMPACT_MIN_BYTES/);
    });
  });
});
