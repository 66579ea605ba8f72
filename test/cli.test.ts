// The command line as a partner runs it: --help, --version, a bad flag, the startup line on port 0,
// environment variables, and SIGTERM flushing a --data file. The sources are transpiled (no type
// check; npm test runs tsc) into node_modules/.cache once, so each case spawns a real node process.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Command } from 'commander';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readdirSync } from 'node:fs';
import { buildCli, childEnv, ROOT, spawnProcess, type BuiltCli } from './cli-harness.js';
import { dataOnDisk, loadDataFile } from './helpers.js';

jest.setTimeout(90_000); // each case spawns node processes (two for a restart), slow on a loaded machine

let built: BuiltCli;
let CLI: string;
let scratch: string;
const running: ChildProcess[] = [];

beforeAll(() => {
  built = buildCli('cli-test');
  CLI = built.cli;
  scratch = mkdtempSync(join(tmpdir(), 'billing-sandbox-cli-'));
});

afterAll(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
  built.remove();
  rmSync(scratch, { recursive: true, force: true });
});

function runSync(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], { env: childEnv(env), encoding: 'utf8', timeout: 40000 });
}

interface Started {
  child: ChildProcess;
  line: string;
  url: string;
  exit: Promise<number | null>;
}

/** Spawn the CLI and resolve once it prints its startup line. */
function start(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, [CLI, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no startup line; stdout=${out} stderr=${err}`)), 40000);
    child.stderr!.on('data', (chunk) => (err += chunk));
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.includes(' listening on '));
      if (line) {
        clearTimeout(timer);
        resolve({ child, line, url: /listening on (\S+)/.exec(line)![1], exit });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before listening; stderr=${err}`));
    });
  });
}

async function token(url: string, id = 'sandbox_client_id', secret = 'sandbox_client_secret') {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  return { status: res.status, token: ((await res.json()) as { access_token?: string }).access_token };
}

describe('billing-sandbox CLI', () => {
  it('--help lists every contract flag with its environment variable and exits 0', () => {
    const res = runSync(['--help']);
    expect(res.status).toBe(0);
    for (const [flag, env] of [
      ['--port', 'PORT'], ['--host', 'HOST'], ['--data', 'SANDBOX_DATA'], ['--seed', 'SANDBOX_SEED'],
      ['--fixtures', 'SANDBOX_FIXTURES'], ['--scenario', 'SANDBOX_SCENARIOS'], ['--rate-limit', 'SANDBOX_RATE_LIMIT'],
      ['--allow-http-webhooks', 'SANDBOX_ALLOW_HTTP_WEBHOOKS'], ['--allow-private-urls', 'SANDBOX_ALLOW_PRIVATE_URLS'],
      ['--public-url', 'SANDBOX_PUBLIC_URL'], ['--admin-token', 'SANDBOX_ADMIN_TOKEN'], ['--log-level', 'SANDBOX_LOG_LEVEL'],
      ['--token-ttl', 'SANDBOX_TOKEN_TTL'],
    ]) {
      expect(res.stdout).toContain(flag);
      expect(res.stdout).toContain(env);
    }
  });

  it('names each default once: an option whose default commander prints as "(default: ...)" does not spell one in its text too', async () => {
    const { buildProgram } = await import('../src/cli/program.js');
    const shown: string[] = [];
    const walk = (command: Command) => {
      const help = command.createHelp();
      for (const option of help.visibleOptions(command)) {
        if (option.defaultValue !== undefined && help.optionDescription(option).includes('(default: ')) shown.push(`${command.name()} ${option.flags}: ${option.description}`);
      }
      for (const sub of command.commands) walk(sub);
    };
    walk(buildProgram());
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.filter((line) => /\bdefault\b/i.test(line.slice(line.indexOf(': '))))).toEqual([]);
    expect(shown).toContainEqual(expect.stringMatching(/^billing-sandbox --token-ttl <seconds>: /));
  });

  it.each([['--version'], ['-v']])('%s prints the package version and exits 0', (flag) => {
    const res = runSync([flag]);
    expect(res.status).toBe(0);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(res.stdout.trim()).toBe(version);
  });

  it('runs from the compiled modules, saying why, when dist/cli/bundle.cjs is not this build\'s bundle', () => {
    const stale = join(dirname(CLI), 'cli', 'bundle.cjs');
    writeFileSync(stale, 'exports.run = () => { throw new Error("a stale bundle ran"); };');
    try {
      const res = runSync(['--version']);
      expect(res.status).toBe(0);
      const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
      expect(res.stdout.trim()).toBe(version);
      expect(res.stderr).toBe(`billing-sandbox: ${stale} is not a bundle of this build (it does not start with its function's head): run npm run build; starting from the compiled modules meanwhile\n`);
    } finally {
      rmSync(stale);
    }
  });

  it.each([
    [['--port', 'abc'], /--port must be a whole number/],
    [['--rate-limit', '-1'], /--rate-limit must be a whole number/],
    [['--no-such-flag'], /unknown option/],
  ])('refuses %j with a clear message and a non-zero exit, without listening', (args, message) => {
    const res = runSync(args as string[]);
    expect(res.status).not.toBe(0);
    expect(res.stderr).toMatch(message);
    expect(res.stdout).not.toContain('listening on');
  });

  it('refuses a bad environment variable with exit code 2 and names it', () => {
    const res = runSync([], { SANDBOX_RATE_LIMIT: 'lots' });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('SANDBOX_RATE_LIMIT');
  });

  it('starts on --port 0, prints one startup line with the URL and default credentials, and serves the API', async () => {
    const run = await start(['--port', '0']);
    expect(run.line).toMatch(/^billing-sandbox \d+\.\d+\.\d+ listening on http:\/\/127\.0\.0\.1:\d+ /);
    expect(run.line).toContain('client_id=sandbox_client_id client_secret=sandbox_client_secret');
    expect(run.line).toContain('client_id=sandbox_demo_client_id client_secret=sandbox_demo_client_secret');
    expect(Number(new URL(run.url).port)).toBeGreaterThan(0);
    const health = await fetch(`${run.url}/_sandbox/health`);
    expect(await health.json()).toEqual({ status: 'ok', version: expect.any(String), reason: null, since: null });
    const { token: access } = await token(run.url);
    const list = await fetch(`${run.url}/customers`, { headers: { Authorization: `Bearer ${access}` } });
    expect(list.status).toBe(200);
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(0);
  });

  it('takes PORT and the credentials from the environment; a flag wins over its variable', async () => {
    const run = await start(['--port', '0'], { PORT: '1', SANDBOX_CLIENT_ID: 'env_id', SANDBOX_CLIENT_SECRET: 'env_secret' });
    expect(run.url).not.toMatch(/:1$/);
    expect(run.line).toContain('client_id=env_id client_secret=env_secret');
    expect((await token(run.url, 'env_id', 'env_secret')).status).toBe(200);
    expect((await token(run.url)).status).toBe(403);
    run.child.kill('SIGTERM');
    expect(await run.exit).toBe(0);
  });

  it('on SIGTERM finishes, flushes the --data file and exits 0; a restart on the same file has the data', async () => {
    const file = join(scratch, 'state', 'sandbox.json');
    mkdirSync(dirname(file), { recursive: true });
    const first = await start(['--port', '0', '--data', file, '--seed', '9']);
    const { token: access } = await token(first.url);
    const made = await fetch(`${first.url}/customers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${access}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Flushed Ltd', external_id: 'flush-1' }),
    });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    // Straight away: the coalesced write has not happened yet, so only the shutdown flush can save it.
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
    expect(dataOnDisk(file)).toContain('flush-1');

    const second = await start(['--port', '0', '--data', file]);
    const again = await token(second.url);
    const got = await fetch(`${second.url}/customers/${id}`, { headers: { Authorization: `Bearer ${again.token}` } });
    expect(got.status).toBe(200);
    expect(((await got.json()) as { name: string }).name).toBe('Flushed Ltd');
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe(0);
  }, 60_000); // two cold starts: 20 s is too tight on a loaded machine

  it('keeps every acknowledged write when killed with SIGKILL right after the acknowledgements', async () => {
    const file = join(scratch, 'killed', 'sandbox.json');
    mkdirSync(dirname(file), { recursive: true });
    const first = await start(['--port', '0', '--data', file, '--rate-limit', '0']);
    const { token: access } = await token(first.url);
    const create = (i: number) => fetch(`${first.url}/customers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${access}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `Acknowledged ${i}`, external_id: `ack-${i}` }),
    }).then(async (res) => ({ status: res.status, id: ((await res.json()) as { id: string }).id }));
    // Concurrent writes (they share file writes), then more one after the other.
    const made = await Promise.all(Array.from({ length: 30 }, (_, i) => create(i)));
    for (let i = 30; i < 35; i++) made.push(await create(i));
    expect(made.map((m) => m.status)).toEqual(Array(35).fill(201));
    // No grace: the process dies the moment the last acknowledgement has arrived.
    first.child.kill('SIGKILL');
    await first.exit;
    const saved = await loadDataFile(file);
    const stored = saved.accounts['ptn_default:production'].collections.customers.items;
    expect(made.filter((m) => !stored.has(m.id)).map((m) => m.id)).toEqual([]);

    const second = await start(['--port', '0', '--data', file, '--rate-limit', '0']);
    const again = await token(second.url);
    for (const { id } of made) {
      const got = await fetch(`${second.url}/customers/${id}`, { headers: { Authorization: `Bearer ${again.token}` } });
      expect(got.status).toBe(200);
    }
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe(0);
  }, 60_000);
});

/** Processes of a process group (Linux /proc), to prove nothing is left behind. */
function groupMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') found.push(Number(name));
    } catch {
      // the process went away while we looked
    }
  }
  return found;
}

async function gone(pgid: number): Promise<number[]> {
  // Real time here is the child's own shutdown, not a sleep standing in for the sandbox clock.
  for (let i = 0; i < 100 && groupMembers(pgid).length; i++) await new Promise((r) => setTimeout(r, 100));
  return groupMembers(pgid);
}

const onLinux = process.platform === 'linux' ? describe : describe.skip;

onLinux('npx billing-sandbox and signals (issue 17 item 7)', () => {
  it.each([
    ['SIGTERM to npx alone (a supervisor stopping the process it started)', 'npx'],
    ['Ctrl-C (SIGINT to the whole foreground process group)', 'group'],
  ])('%s stops every process and flushes the --data file', async (_what, target) => {
    const file = join(scratch, `npx-${target}`, 'sandbox.json');
    mkdirSync(dirname(file), { recursive: true });
    // npm exec runs the package's bin through `sh -c`, as `npx billing-sandbox` does for a user.
    const run = spawnProcess('npx', ['--no-install', 'billing-sandbox', '--port', '0', '--data', file], childEnv(), { cwd: built.dir, detached: true });
    running.push(run.child);
    const line = await run.waitFor(/listening on (\S+)/);
    const url = /listening on (\S+)/.exec(line)![1];
    const pgid = run.child.pid!;
    expect(groupMembers(pgid).length).toBeGreaterThanOrEqual(2);
    const { token: access } = await token(url);
    const made = await fetch(`${url}/customers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${access}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Signalled Ltd', external_id: `signal-${target}` }),
    });
    expect(made.status).toBe(201);
    if (target === 'npx') process.kill(pgid, 'SIGTERM');
    else process.kill(-pgid, 'SIGINT');
    await run.exit;
    expect(await gone(pgid)).toEqual([]);
    expect(dataOnDisk(file)).toContain(`signal-${target}`);
    await expect(fetch(`${url}/_sandbox/health`)).rejects.toThrow();
  });
});
