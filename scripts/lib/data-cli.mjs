// Shared by scripts/crash-test.mjs, scripts/bench.mjs and scripts/bench/seed-data.mjs: the real CLI (dist/cli.js) started on
// a data file, a token for the default partner, and the bytes of a data file (snapshot and log).
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');
const BASIC = `Basic ${Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64')}`;

/** `node dist/cli.js --data FILE` on a free port, quiet and without rate limit; resolves once it listens. */
export function startCli(file, { env: extra = {}, timeoutMs = 60_000, nodeArgs = [] } = {}) {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(PORT|HOST|SANDBOX_\w+|NODE_OPTIONS)$/.test(k))), ...extra };
  const began = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, CLI, '--port', '0', '--data', file, '--rate-limit', '0', '--log-level', 'silent'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no startup line within ${timeoutMs / 1000} s; stderr=${err}`)); }, timeoutMs);
    child.stderr.on('data', (chunk) => { err += chunk; });
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) { clearTimeout(timer); resolve({ child, url: match[1], exit, startSeconds: (performance.now() - began) / 1000 }); }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code} before listening; stderr=${err.trim()}`)); });
  });
}

export async function token(url) {
  const res = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { Authorization: BASIC, 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
  if (res.status !== 200) throw new Error(`token: ${res.status}`);
  return (await res.json()).access_token;
}

/** Bytes of the snapshot and its log segments. */
export function dataBytes(file) {
  try {
    return readdirSync(dirname(file)).filter((name) => name.startsWith(basename(file))).reduce((sum, name) => sum + statSync(join(dirname(file), name)).size, 0);
  } catch {
    return 0;
  }
}
