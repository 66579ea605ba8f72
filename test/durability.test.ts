// The acknowledgement rule of --data, in process: a write's answer waits until its change is in the
// file (a held file write holds the answer), reads never wait, concurrent writes share a file write,
// and a failed file write answers 503 storage_unavailable, with the change rolled back (memory stays
// what the file holds). The same against a real full disk: test/disk-full.test.ts.
// The same rule against the real CLI and kill -9: test/cli.test.ts and `npm run crash-test`.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { customers } from '../src/domain/customers/customers.js';
import { dataOnDisk, hookWrites, setup } from './helpers.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'durability-'));
  file = join(dir, 'sandbox.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const onDisk = () => dataOnDisk(file);

describe('acknowledged writes with --data', () => {
  it('answers a write only once its change is in the file; a read meanwhile is answered at once', async () => {
    const sb = await setup({ dataFile: file, flushDelayMs: 60_000 });
    const api = sb.as(await sb.token());
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    let writeStarted!: () => void;
    const started = new Promise<void>((resolve) => { writeStarted = resolve; });
    hookWrites(sb, async (write) => {
      writeStarted();
      await gate;
      await write();
    });

    let answered = false;
    const posting = api.post('/customers', { name: 'Held' }).then((res) => { answered = true; return res; });
    await started;
    // The change is made and visible to reads, but the file write is held: no acknowledgement yet.
    const listed = await api.get('/customers');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((c: { name: string }) => c.name)).toEqual(['Held']);
    expect(answered).toBe(false);
    expect(onDisk()).not.toContain('Held');

    release();
    const res = await posting;
    expect(res.status).toBe(201);
    expect(onDisk()).toContain(res.body.id);
  });

  it('lets concurrent writes share one file write (group commit)', async () => {
    const sb = await setup({ dataFile: file, flushDelayMs: 60_000 });
    const api = sb.as(await sb.token());
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    let writes = 0;
    hookWrites(sb, async (write) => {
      writes += 1;
      if (writes === 1) await gate; // the first write is held while the others queue behind it
      await write();
    });
    const first = api.post('/customers', { name: 'First' }).then((r) => r);
    while (writes === 0) await new Promise((resolve) => setImmediate(resolve));
    const rest = Array.from({ length: 10 }, (_, i) => api.post('/customers', { name: `Next ${i}` }).then((r) => r));
    // Let the ten requests make their changes while the first write is held.
    const stored = customers(sb.deps.store.account('ptn_default', 'production'));
    while (stored.size < 11) await new Promise((resolve) => setImmediate(resolve));
    release();
    const answers = await Promise.all([first, ...rest]);
    expect(answers.map((r) => r.status)).toEqual(Array(11).fill(201));
    expect(writes).toBeLessThanOrEqual(3);
    for (const r of answers) expect(onDisk()).toContain(r.body.id);
  });

  it('answers 503 storage_unavailable when the file cannot be written, rolls the change back, refuses writes until the file takes them, and serves reads meanwhile', async () => {
    const sb = await setup({ dataFile: file, flushDelayMs: 60_000, storageRetryMs: 20 });
    const api = sb.as(await sb.token());
    const kept = (await api.post('/customers', { name: 'Before' }).expect(201)).body.id;
    let failing = true;
    hookWrites(sb, async (write) => {
      if (failing) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return write();
    });
    const refused = await api.post('/customers', { name: 'Not acknowledged' });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toEqual({ code: 'storage_unavailable', message: expect.stringContaining('nothing was changed'), validation_errors: {} });
    // Memory is what the file holds: the refused customer is nowhere, the earlier one is still served.
    const listed = (await api.get('/customers').expect(200)).body.data.map((c: { name: string }) => c.name);
    expect(listed).toEqual(['Before']);
    expect((await api.get(`/customers/${kept}`)).status).toBe(200);
    const health = (await sb.http.get('/_sandbox/health').expect(200)).body;
    expect(health).toMatchObject({ status: 'degraded', reason: expect.stringContaining('ENOSPC') });
    // Refused at the wall while the file cannot be written: nothing changes, and a duplicate is still a 400.
    const again = await api.post('/customers', { name: 'Also refused' });
    expect(again.status).toBe(503);
    expect(onDisk()).not.toContain('Not acknowledged');
    failing = false;
    for (let i = 0; i < 200 && (await sb.http.get('/_sandbox/health')).body.status !== 'ok'; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await sb.http.get('/_sandbox/health')).body.status).toBe('ok');
    // The retry the 503 asks for makes the customer once.
    const retried = await api.post('/customers', { name: 'Not acknowledged' }).expect(201);
    expect(onDisk()).toContain(retried.body.id);
    const names = (await api.get('/customers').expect(200)).body.data.map((c: { name: string }) => c.name);
    expect(names).toEqual(['Not acknowledged', 'Before']);
  });
});
