// A real full disk under --data: the built CLI runs with its data file on a 2 MB tmpfs, mounted in a
// mount namespace of its own (unshare -rm: no root needed, nothing mocked). While the tmpfs is full,
// writes answer 503 storage_unavailable with Retry-After and change nothing (memory stays what the
// file holds), a refused write still answers its own 4xx, reads go on, /_sandbox/health says
// degraded, and no stray file is left; once space returns, writing resumes by itself, the retry the
// 503 asked for makes the object once, and a restart finds exactly what was acknowledged.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCli, childEnv, type BuiltCli } from './cli-harness.js';

/** unshare -rm (a user and a mount namespace, no root needed) works on this machine. */
const CAN_RUN = spawnSync('unshare', ['-rm', 'true']).status === 0;
if (!CAN_RUN) console.warn('disk-full test skipped: it needs `unshare -rm` (util-linux, with user namespaces allowed)');

/** A shell inside its own mount namespace, driven line by line: each command ends by echoing a marker. */
class NamespaceShell {
  private output = '';
  private marker = 0;
  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (chunk: Buffer) => { this.output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { this.output += chunk.toString(); });
  }

  static start(): NamespaceShell {
    return new NamespaceShell(spawn('unshare', ['-rm', 'sh', '-s'], { stdio: ['pipe', 'pipe', 'pipe'], env: childEnv() }));
  }

  /** Run a command in the namespace and answer what it printed. */
  async run(command: string): Promise<string> {
    const mark = `__done_${(this.marker += 1)}__`;
    const from = this.output.length;
    this.child.stdin.write(`${command}\necho ${mark}\n`);
    for (let i = 0; i < 1000 && !this.output.includes(mark, from); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    if (!this.output.includes(mark, from)) throw new Error(`no answer from the namespace to: ${command}\n${this.output.slice(from)}`);
    return this.output.slice(from, this.output.indexOf(mark, from));
  }

  async exit(): Promise<void> {
    this.child.stdin.end('exit\n');
    await new Promise((resolve) => this.child.once('close', resolve));
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, tries = 300): Promise<T> {
  let value = await read().catch(() => undefined as T);
  for (let i = 0; i < tries && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await read().catch(() => undefined as T);
  }
  if (!done(value)) throw new Error(`${what}: still ${JSON.stringify(value)}`);
  return value;
}

(CAN_RUN ? describe : describe.skip)('a full disk under --data (a real tmpfs, in a mount namespace)', () => {
  let shell: NamespaceShell;
  let built: BuiltCli;
  let mount: string;
  let logs: string;
  let port: number;
  let base: string;
  let token = '';

  const start = async () => {
    await shell.run(`SANDBOX_STORAGE_RETRY_MS=50 ${process.execPath} ${built.cli} --port ${port} --data ${mount}/sandbox.json --rate-limit 0 --log-level warn >> ${logs}/sandbox.log 2>&1 & echo $! > ${logs}/pid`);
    await until('the sandbox starts', async () => (await fetch(`${base}/_sandbox/health`)).status, (status) => status === 200);
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    token = ((await res.json()) as { access_token: string }).access_token;
  };
  const stop = async () => {
    await shell.run(`kill $(cat ${logs}/pid); while kill -0 $(cat ${logs}/pid) 2>/dev/null; do sleep 0.05; done`);
  };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  const names = async () => ((await call('GET', '/customers?limit=500')).body.data as Array<{ name: string }>).map((c) => c.name);
  const files = async () => (await shell.run(`ls -A ${mount}`)).split('\n').filter(Boolean).sort();
  /** The files, less the probe's own file while a probe is writing it (it removes it, full disk or not). */
  const settled = async () => (await files()).filter((name) => name !== '.sandbox.json.probe');

  beforeAll(async () => {
    built = buildCli('disk-full');
    mount = mkdtempSync(join(tmpdir(), 'disk-full-mount-'));
    logs = mkdtempSync(join(tmpdir(), 'disk-full-logs-'));
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    shell = NamespaceShell.start();
    await shell.run(`mount -t tmpfs -o size=2m tmpfs ${mount}`);
    await start();
  }, 30_000);

  afterAll(async () => {
    await stop().catch(() => undefined);
    await shell.exit();
    rmSync(mount, { recursive: true, force: true });
    rmSync(logs, { recursive: true, force: true });
    built.remove();
  });

  it('refuses writes honestly while the disk is full, and resumes by itself when space returns', async () => {
    expect((await call('POST', '/customers', { name: 'Before', external_id: 'taken' })).status).toBe(201);
    const before = await settled();

    await shell.run(`dd if=/dev/zero of=${mount}/filler bs=16k 2>/dev/null; true`);
    // The log's last page may still have room: writes are acknowledged until one needs a page more.
    const acknowledged = ['Before'];
    let first: Awaited<ReturnType<typeof call>> | undefined;
    for (let n = 0; n < 500 && !first; n++) {
      const res = await call('POST', '/customers', { name: `Fill ${n}`, email: `fill-${n}@example.com`, street_address: 'x'.repeat(200) });
      if (res.status === 201) acknowledged.unshift(`Fill ${n}`);
      else first = res;
    }
    for (const res of [first!, ...await Promise.all([1, 2, 3, 4, 5].map((n) => call('POST', '/customers', { name: `Refused ${n}` })))]) {
      // The first failed write, then five together while the file cannot be written: each 503, none kept.
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('storage_unavailable');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // Reads go on, and memory is what the file holds: every acknowledged write, nothing else.
    expect(await names()).toEqual(acknowledged);
    const health = await call('GET', '/_sandbox/health');
    expect(health.body).toMatchObject({ status: 'degraded', reason: expect.stringContaining('ENOSPC') });
    // A write the API refuses for its own reason still answers that reason.
    const duplicate = await call('POST', '/customers', { name: 'Twin', external_id: 'taken' });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.validation_errors).toHaveProperty('external_id');
    for (let n = 0; n < 7; n++) expect((await call('POST', '/customers', { name: `Again ${n}` })).status).toBe(503);
    // No stray segment: what the disk held, and the filler.
    expect(await settled()).toEqual([...before, 'filler'].sort());

    await shell.run(`rm ${mount}/filler`);
    await until('writing resumes', async () => (await call('GET', '/_sandbox/health')).body.status, (status) => status === 'ok');
    // The probe that found the disk writable removed its file, and made the segment writes go on in.
    expect((await files()).filter((name) => name.endsWith('.probe') || name.endsWith('.tmp'))).toEqual([]);
    // The retry the 503 asked for makes the customer once.
    expect((await call('POST', '/customers', { name: 'Refused 1' })).status).toBe(201);
    expect(await names()).toEqual(['Refused 1', ...acknowledged]);

    await stop();
    await start();
    expect(await names()).toEqual(['Refused 1', ...acknowledged]);
    expect((await call('POST', '/customers', { name: 'After restart' })).status).toBe(201);
    expect(readFileSync(join(logs, 'sandbox.log'), 'utf8')).toContain('writing the data file failed');
  }, 60_000);
});
