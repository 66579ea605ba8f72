// Stored documents (invoice PDFs, bill uploads): bytes on disk in one directory per account, never in
// memory; the copy a new upload replaces is deleted; a reset removes its account's documents; a
// per-account cap answers 422 limit_reached and creates nothing, and an upload that fails after
// claiming room gives it back; the temporary directory of a sandbox without --data goes when it
// closes; with --data the documents survive a restart.
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LIMITS } from '../src/limits.js';
import { startSandbox } from '../src/index.js';
import { BlobStore, type BlobReservation } from '../src/store/blobs.js';
import { gate } from './gate.js';
import { bytesPerWrite, setup, type Api, type TestSandbox } from './helpers.js';
import { customer, syncedInvoice } from './receivables-helpers.js';

const MB = 1024 * 1024;
const pdf = (text: string) => Buffer.from(`%PDF-1.4\n% ${text}\n%%EOF\n`);
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const png = (size: number) => {
  const bytes = Buffer.alloc(size, 0x41);
  Buffer.from(PNG_SIGNATURE).copy(bytes);
  return bytes;
};

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every stored file under the blob directory (documents being deleted in the background excluded). */
function storedFiles(sb: TestSandbox): Array<{ path: string; bytes: Buffer }> {
  const root = sb.deps.blobs.directory;
  if (!root || !existsSync(root)) return [];
  const out: Array<{ path: string; bytes: Buffer }> = [];
  for (const account of readdirSync(root)) {
    if (account === '.trash') continue;
    const dir = join(root, account);
    if (!statSync(dir).isDirectory()) continue;
    for (const name of readdirSync(dir)) out.push({ path: join(account, name), bytes: readFileSync(join(dir, name)) });
  }
  return out;
}

async function download(sb: TestSandbox, url: string) {
  const u = new URL(url);
  return sb.http.get(`${u.pathname}${u.search}`).buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });
}

async function start(config = {}) {
  const sb = await setup(config);
  const token = await sb.token();
  return { sb, token, api: sb.as(token) };
}

const uploadBill = (api: Api, bytes: Buffer, content_type = 'image/png', filename = 'scan.png') =>
  api.post('/bills/upload', { content: bytes.toString('base64'), content_type, filename });

describe('stored documents', () => {
  it('keeps an invoice PDF on disk, serves it by its signed link, and deletes the copy a new upload replaces', async () => {
    const { sb, token, api } = await start();
    const inv = await syncedInvoice(sb, token, await customer(api));
    expect((await api.post(`/invoices/${inv.id}/pdf`, { content: pdf('first').toString('base64') })).status).toBe(200);
    const link = (await api.get(`/invoices/${inv.id}/pdf-link`)).body.url;
    expect((await download(sb, link)).body.toString()).toContain('first');
    expect(storedFiles(sb).map((f) => f.bytes.toString())).toEqual([pdf('first').toString()]);
    expect(sb.deps.blobs.directory!.startsWith(tmpdir())).toBe(true);

    expect((await api.post(`/invoices/${inv.id}/pdf`, { content: pdf('second').toString('base64') })).status).toBe(200);
    expect((await download(sb, link)).body.toString()).toContain('second');
    // The replaced copy is gone from the disk and from the account's use.
    expect(storedFiles(sb).map((f) => f.bytes.toString())).toEqual([pdf('second').toString()]);
    expect(sb.deps.blobs.usage(sb.deps.store.account('ptn_default', 'production'))).toBe(pdf('second').length);
  });

  it('reads the bytes from the disk, not from memory: a file removed behind its back is no longer served', async () => {
    const { sb, api } = await start();
    const up = await uploadBill(api, png(2048));
    expect(up.status).toBe(201);
    const link = (await api.get(`/bills/${up.body.bill_id}/document`)).body.download_url;
    const served = await download(sb, link);
    expect([served.status, Buffer.compare(served.body as Buffer, png(2048))]).toEqual([200, 0]);
    const [file] = storedFiles(sb);
    unlinkSync(join(sb.deps.blobs.directory!, file.path));
    expect((await download(sb, link)).status).toBe(404);
  });

  it('frees an account\'s documents when the account is reset, and every document on a full reset', async () => {
    const { sb, token, api } = await start();
    const demoToken = await sb.token('demo');
    const demo = sb.as(demoToken, 'demo');
    const inv = await syncedInvoice(sb, token, await customer(api));
    expect((await api.post(`/invoices/${inv.id}/pdf`, { content: pdf('kept until reset').toString('base64') })).status).toBe(200);
    expect((await uploadBill(api, png(4096))).status).toBe(201);
    const demoBill = await uploadBill(demo, png(1024));
    expect(demoBill.status).toBe(201);
    expect(storedFiles(sb).map((f) => f.path.split('/')[0]).sort()).toEqual(['ptn_default.demo', 'ptn_default.production', 'ptn_default.production']);

    const reset = await sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${token}`);
    expect(reset.body).toEqual({ reset: 'account' });
    expect(storedFiles(sb).map((f) => f.path.split('/')[0])).toEqual(['ptn_default.demo']);
    expect(sb.deps.blobs.usage(sb.deps.store.account('ptn_default', 'production'))).toBe(0);
    // The other account's document is untouched and still served.
    const link = (await demo.get(`/bills/${demoBill.body.bill_id}/document`)).body.download_url;
    expect((await download(sb, link)).status).toBe(200);

    expect((await sb.http.post('/_sandbox/reset')).body).toEqual({ reset: 'all' });
    expect(storedFiles(sb)).toEqual([]);
  });

  it('holds no uploaded bytes in memory: after uploads and a full collection the heap is back where it was', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { sb, token, api } = await start();
    const inv = await syncedInvoice(sb, token, await customer(api));
    const big = Buffer.alloc(4 * MB, 0x20);
    big.write('%PDF-1.4\n');
    const content = big.toString('base64');
    expect((await api.post(`/invoices/${inv.id}/pdf`, { content })).status).toBe(200);
    gc();
    // Heap (strings, objects) plus external memory (Buffers: where an in-memory blob would sit).
    const used = () => { const m = process.memoryUsage(); return m.heapUsed + m.external; };
    const before = used();
    for (let i = 0; i < 10; i++) expect((await api.post(`/invoices/${inv.id}/pdf`, { content })).status).toBe(200);
    // A Buffer's memory goes back when V8's background sweeper gets to it, which on a loaded machine
    // (the whole suite in parallel) can be after gc() returns: collect again, between turns of the
    // event loop, while the figure is over. Bodies that are really kept stay over every time.
    let grown = Infinity;
    for (let turn = 0; turn < 20 && grown >= 20 * MB; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
      grown = used() - before;
    }
    // Ten 5.6 MB bodies: keeping any of them (a blob in memory, a journal entry holding the body) shows here.
    expect(grown).toBeLessThan(20 * MB);
    expect(storedFiles(sb)).toHaveLength(1);
  });

  it('caps every account at LIMITS.blobBytesPerAccount of documents', async () => {
    const { sb } = await start();
    expect(sb.deps.blobs.capBytes).toBe(LIMITS.blobBytesPerAccount);
    expect(LIMITS.blobBytesPerAccount).toBe(100 * MB);
  });

  it('refuses a document that would take the account past its cap with 422 limit_reached, creating nothing', async () => {
    const { sb, token, api } = await start();
    // The real cap is 100 MB (checked above); a 1 MB one here keeps the uploads small.
    sb.deps.blobs = new BlobStore(sb.deps.store, undefined, MB);
    const inv = await syncedInvoice(sb, token, await customer(api));
    const size = 300 * 1024;
    for (let i = 0; i < 3; i++) expect((await uploadBill(api, png(size))).status).toBe(201);
    const bills = (await api.get('/bills')).body.data.length;
    const vendors = (await api.get('/vendors')).body.data.length;

    const refused = await uploadBill(api, png(MB - 3 * size + 1));
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'limit_reached', validation_errors: { content: 'would pass the limit of 1 MB of documents per account' } });
    expect(refused.body.message).toMatch(/keeps 0\.9 MB of documents and may keep at most 1 MB/);
    expect((await api.get('/bills')).body.data.length).toBe(bills);
    expect((await api.get('/vendors')).body.data.length).toBe(vendors);
    // Exactly up to the cap fits.
    expect((await uploadBill(api, png(MB - 3 * size))).status).toBe(201);

    const pdfRefused = await api.post(`/invoices/${inv.id}/pdf`, { content: pdf('no room').toString('base64') });
    expect([pdfRefused.status, pdfRefused.body.code, Object.keys(pdfRefused.body.validation_errors)]).toEqual([422, 'limit_reached', ['content']]);
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
    expect(storedFiles(sb)).toHaveLength(4);

    // A reset gives the room back.
    await sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${token}`);
    expect((await uploadBill(api, png(size))).status).toBe(201);
    expect(storedFiles(sb)).toHaveLength(1);
  });

  it('gives back the room an upload claimed when it fails after the claim (its account reset while its bytes were written)', async () => {
    const { sb, token, api } = await start();
    sb.deps.blobs = new BlobStore(sb.deps.store, undefined, MB);
    const size = 600 * 1024;
    // Hold the document's write (the upload's await after its claim) while the account is reset.
    const hold = gate();
    const reserve = sb.deps.blobs.reserve.bind(sb.deps.blobs);
    sb.deps.blobs.reserve = (...args: Parameters<typeof reserve>): BlobReservation => {
      const room = reserve(...args);
      return { ...room, write: async (id, bytes) => { await hold.wait(); return room.write(id, bytes); } };
    };
    const raced = Promise.resolve(uploadBill(api, png(size)));
    await hold.reached;
    expect(sb.deps.blobs.usage(sb.deps.store.account('ptn_default', 'production'))).toBe(size);
    expect((await sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${token}`)).body).toEqual({ reset: 'account' });
    hold.release();
    const refused = await raced;
    expect([refused.status, refused.body.code]).toEqual([409, 'account_replaced']);
    sb.deps.blobs.reserve = reserve;
    expect(sb.deps.blobs.usage(sb.deps.store.account('ptn_default', 'production'))).toBe(0);
    // Two such documents pass the 1 MB cap: the next one fits only because the failed upload's room came back.
    const next = await uploadBill(api, png(size));
    expect(next.status).toBe(201);
    expect(sb.deps.blobs.usage(sb.deps.store.account('ptn_default', 'production'))).toBe(size);
    expect((await api.get('/bills')).body.data.map((b: { id: string }) => b.id)).toEqual([next.body.bill_id]);
    expect(storedFiles(sb).map((f) => f.bytes.length)).toEqual([size]);
  });

  it('answers 503 storage_unavailable when the disk will not take a document (bill upload or invoice PDF), filing nothing and giving its room back', async () => {
    const { sb, token, api } = await start();
    const inv = await syncedInvoice(sb, token, await customer(api));
    expect((await uploadBill(api, png(1024))).status).toBe(201);
    const account = sb.deps.store.account('ptn_default', 'production');
    const used = sb.deps.blobs.usage(account);
    // A file where the account's directory of documents belongs: every write of a document fails.
    const folder = join(sb.deps.blobs.directory as string, 'ptn_default.production');
    const kept = readdirSync(folder).map((name) => [name, readFileSync(join(folder, name))] as const);
    rmSync(folder, { recursive: true });
    writeFileSync(folder, 'in the way');
    const bills = (await api.get('/bills')).body.data.length;
    for (const refused of [await uploadBill(api, png(2048)), await api.post(`/invoices/${inv.id}/pdf`, { content: pdf('no disk').toString('base64') })]) {
      // Retry-After: the probe's period, as when the data file cannot be written (2 s by default).
      expect([refused.status, refused.body.code, refused.headers['retry-after']]).toEqual([503, 'storage_unavailable', '2']);
      expect(refused.body.message).toMatch(/^The document could not be written to disk \((EEXIST|ENOTDIR)\), so nothing was changed/);
    }
    expect((await api.get('/bills')).body.data.length).toBe(bills);
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
    expect(sb.deps.blobs.usage(account)).toBe(used);
    // The disk takes documents again: the same uploads go through.
    unlinkSync(folder);
    mkdirSync(folder);
    for (const [name, bytes] of kept) writeFileSync(join(folder, name), bytes);
    expect((await uploadBill(api, png(2048))).status).toBe(201);
    expect((await api.post(`/invoices/${inv.id}/pdf`, { content: pdf('disk back').toString('base64') })).status).toBe(200);
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(true);
  });

  it('removes the temporary directory of a sandbox without --data when it closes', async () => {
    const sandbox = await startSandbox({ port: 0, logLevel: 'silent', rateLimit: 0 });
    const token = await sandbox.token();
    const res = await fetch(`${sandbox.url}/bills/upload`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: png(512).toString('base64'), content_type: 'image/png', filename: 'a.png' }),
    });
    expect(res.status).toBe(201);
    const dir = sandbox.deps.blobs.directory!;
    expect(readdirSync(dir)).toEqual(['ptn_default.production']);
    await sandbox.close();
    expect(existsSync(dir)).toBe(false);
  });

  // The class: a write's cost never grows with what is stored. Every size was kept in one value,
  // written whole at each document: about 40 bytes more per document already stored.
  it('files a document at the same cost in the data file with 3 or 150 documents stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blobs-cost-'));
    scratch.push(dir);
    const file = join(dir, 'sandbox.json');
    const { sb, api } = await start({ dataFile: file });
    const upload = async () => { expect((await uploadBill(api, png(1024))).status).toBe(201); };
    const { atFew, atMany } = await bytesPerWrite(file, upload, () => sb.deps.store.flush(), { few: 3, many: 150, sample: 3 });
    expect(atMany).toBeLessThan(atFew * 1.1);
  });

  it('takes up at start the sizes an earlier version kept in one value: the same room used, and freed by a reset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blobs-legacy-'));
    scratch.push(dir);
    const file = join(dir, 'sandbox.json');
    const first = await start({ dataFile: file });
    for (const size of [1000, 2000]) expect((await uploadBill(first.api, png(size))).status).toBe(201);
    const account = first.sb.deps.store.account('ptn_default', 'production');
    const sizes = { ...(account.data.state.blob_sizes as Record<string, number>) };
    account.transaction(() => {
      account.data.state.blobs = { bytes: 3000, sizes };
      delete account.data.state.blob_sizes;
      account.stateChanged('blobs');
      account.stateChanged('blob_sizes');
    });
    await first.sb.deps.store.close();

    const second = await start({ dataFile: file });
    const taken = second.sb.deps.store.account('ptn_default', 'production');
    expect(taken.data.state.blobs).toEqual({ bytes: 3000 });
    expect(taken.data.state.blob_sizes).toEqual(sizes);
    expect(second.sb.deps.blobs.usage(taken)).toBe(3000);
    await second.sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${second.token}`).expect(200);
    expect(second.sb.deps.blobs.usage(second.sb.deps.store.account('ptn_default', 'production'))).toBe(0);
  });

  it('with --data keeps documents beside the data file, per account, across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blobs-data-'));
    scratch.push(dir);
    const file = join(dir, 'sandbox.json');
    const first = await start({ dataFile: file });
    const up = await uploadBill(first.api, png(3000));
    expect(up.status).toBe(201);
    expect(first.sb.deps.blobs.directory).toBe(`${file}.blobs`);
    expect(readdirSync(join(`${file}.blobs`, 'ptn_default.production'))).toHaveLength(1);
    await first.sb.deps.store.close();

    const second = await start({ dataFile: file });
    const link = (await second.api.get(`/bills/${up.body.bill_id}/document`)).body.download_url;
    const served = await download(second.sb, link);
    expect([served.status, Buffer.compare(served.body as Buffer, png(3000))]).toEqual([200, 0]);
    expect(second.sb.deps.blobs.usage(second.sb.deps.store.account('ptn_default', 'production'))).toBe(3000);
  });
});
