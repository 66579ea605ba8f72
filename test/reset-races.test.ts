// Work that races a reset: a request that waits at an await (a scenario delay, a document being
// written, a due job, a signature) while its account is reset (with its token) or everything is reset
// writes nothing when it resumes and answers 409 account_replaced; the account that took its place
// holds nothing of it; with --data a restart finds the same, and creates go on with no duplicate id.
// Every async handler of the sandbox is in the table below (a test fails when a new one is not).
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FEATURES } from '../src/app.js';
import { SCENARIO_SLEEP } from '../src/scenarios/intercept.js';
import type { BlobReservation } from '../src/store/blobs.js';
import { setup, type Api, type TestSandbox } from './helpers.js';
import { gate } from './gate.js';
import { customer, syncedInvoice } from './receivables-helpers.js';
import { webhookSandbox } from './webhooks-support.js';

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});


type Mode = 'memory' | 'data';
type ResetKind = 'account' | 'everything';

async function open(mode: Mode, file?: string) {
  const dataFile = mode === 'data' ? file ?? join(mkdtempSync(join(tmpdir(), 'races-')), 'sandbox.json') : undefined;
  if (dataFile && !file) scratch.push(join(dataFile, '..'));
  const sb = await setup({ dataFile, flushDelayMs: 0 });
  const token = await sb.token();
  return { sb, token, api: sb.as(token), dataFile };
}

/** POST /_sandbox/reset: of the token's account, or (without one) of everything. */
async function reset(sb: TestSandbox, token: string, kind: ResetKind) {
  const req = sb.http.post('/_sandbox/reset');
  const res = await (kind === 'account' ? req.set('Authorization', `Bearer ${token}`) : req);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ reset: kind === 'account' ? 'account' : 'all' });
}

/** Start a request now (supertest sends on the first then), answering its response later. */
function started(test: PromiseLike<{ status: number; body: Record<string, unknown> }>) {
  return Promise.resolve(test);
}

function expectReplaced(res: { status: number; body: Record<string, unknown> }) {
  expect(res.status).toBe(409);
  expect(res.body).toEqual({ code: 'account_replaced', message: expect.stringContaining('nothing was written'), validation_errors: {} });
}

/** After the race: the new account holds `what` nowhere, and with --data neither does a restart; new creates work. */
async function afterwards(run: Awaited<ReturnType<typeof open>>, list: string, absent: (body: { data: Array<Record<string, unknown>> }) => void) {
  const token = await run.sb.token();
  const api = run.sb.as(token);
  absent((await api.get(list).expect(200)).body);
  // The journal of the new account holds none of the raced request.
  const journal = (await run.sb.http.get('/_sandbox/requests').set('Authorization', `Bearer ${token}`).expect(200)).body.data as Array<{ status: number }>;
  expect(journal.filter((entry) => entry.status === 409)).toEqual([]);
  await api.post('/customers', { name: 'After the race' }).expect(201);
  if (!run.dataFile) return;
  await run.sb.deps.store.close();
  const again = await open('data', run.dataFile);
  const againApi = again.api;
  absent((await againApi.get(list).expect(200)).body);
  // The id counter is where the file says: a new create never meets an id already taken.
  for (let i = 0; i < 3; i++) await againApi.post('/customers', { name: `After restart ${i}` }).expect(201);
  await again.sb.deps.store.close();
}

const MODES: Mode[] = ['memory', 'data'];
const RESETS: ResetKind[] = ['account', 'everything'];

describe('a request held by a scenario delay while its account is reset', () => {
  // Each a write the delay holds before its handler runs; `prepare` makes what it needs.
  const operations: Array<{ op: string; list: string; send: (api: Api, made: Record<string, string>) => PromiseLike<{ status: number; body: Record<string, unknown> }>; prepare?: (api: Api) => Promise<Record<string, string>> }> = [
    { op: 'createCustomer', list: '/customers', send: (api) => api.post('/customers', { name: 'Raced', external_id: 'raced-1' }) },
    { op: 'createInvoice', list: '/invoices', prepare: async (api) => ({ customer: await customer(api) }), send: (api, made) => api.post('/invoices', { customer_id: made.customer, line_items: [{ amount: 10 }] }) },
    { op: 'createVendor', list: '/vendors', send: (api) => api.post('/vendors', { name: 'Raced vendor' }) },
    { op: 'createWebhook', list: '/webhooks', send: (api) => api.post('/webhooks', { endpoint_url: 'https://hooks.example.com/raced', topic: 'customer_created' }) },
  ];
  for (const mode of MODES) {
    for (const kind of RESETS) {
      for (const { op, list, send, prepare } of operations) {
        it(`${op}, ${kind} reset, ${mode}`, async () => {
          const run = await open(mode);
          const made = prepare ? await prepare(run.api) : {};
          const hold = gate();
          run.sb.deps.services.set(SCENARIO_SLEEP, () => hold.wait());
          await run.sb.http.post('/_sandbox/scenarios').set('Authorization', `Bearer ${run.token}`)
            .send({ name: 'hold', rules: [{ match: { operation: op }, delay_ms: 1 }] }).expect(201);
          const pending = started(send(run.api, made));
          await hold.reached;
          await reset(run.sb, run.token, kind);
          hold.release();
          expectReplaced(await pending);
          await afterwards(run, list, (body) => expect(body.data.filter((o) => o.name === 'Raced' || o.name === 'Raced vendor' || String(o.endpoint_url ?? '').endsWith('/raced'))).toEqual([]));
        });
      }
    }
  }
});

/** Hold every document write of the sandbox at `hold` (the upload's await between its checks and its filing). */
function holdDocumentWrites(sb: TestSandbox, hold: ReturnType<typeof gate>) {
  const reserve = sb.deps.blobs.reserve.bind(sb.deps.blobs);
  sb.deps.blobs.reserve = (...args: Parameters<typeof reserve>): BlobReservation => {
    const room = reserve(...args);
    return { ...room, write: async (id, bytes) => { await hold.wait(); return room.write(id, bytes); } };
  };
}

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 0x41)]);
const PDF = Buffer.from('%PDF-1.4\n% raced\n%%EOF\n');

function documentFiles(sb: TestSandbox): string[] {
  const root = sb.deps.blobs.directory;
  if (!root || !existsSync(root)) return [];
  return readdirSync(root).filter((name) => name !== '.trash').flatMap((dir) => readdirSync(join(root, dir)));
}

describe('an upload whose document is being written while its account is reset', () => {
  for (const mode of MODES) {
    for (const kind of RESETS) {
      it(`POST /bills/upload, ${kind} reset, ${mode}: no bill, no vendor, no document, no room taken`, async () => {
        const run = await open(mode);
        const hold = gate();
        holdDocumentWrites(run.sb, hold);
        const pending = started(run.api.post('/bills/upload', { content: PNG.toString('base64'), content_type: 'image/png', filename: 'raced.png' }));
        await hold.reached;
        await reset(run.sb, run.token, kind);
        hold.release();
        expectReplaced(await pending);
        const account = run.sb.deps.store.account('ptn_default', 'production');
        expect(run.sb.deps.blobs.usage(account)).toBe(0);
        expect(documentFiles(run.sb)).toEqual([]);
        await afterwards(run, '/bills', (body) => expect(body.data).toEqual([]));
      });

      it(`POST /invoices/{id}/pdf, ${kind} reset, ${mode}: the document is not kept anywhere`, async () => {
        const run = await open(mode);
        const invoice = await syncedInvoice(run.sb, run.token, await customer(run.api));
        const hold = gate();
        holdDocumentWrites(run.sb, hold);
        const pending = started(run.api.post(`/invoices/${invoice.id}/pdf`, { content: PDF.toString('base64') }));
        await hold.reached;
        await reset(run.sb, run.token, kind);
        hold.release();
        expectReplaced(await pending);
        expect(documentFiles(run.sb)).toEqual([]);
        expect(run.sb.deps.blobs.usage(run.sb.deps.store.account('ptn_default', 'production'))).toBe(0);
        await afterwards(run, '/invoices', (body) => expect(body.data).toEqual([]));
      });
    }
  }
});

describe('a clock advance whose due job waits while its account is reset', () => {
  for (const mode of MODES) {
    for (const kind of RESETS) {
      it(`POST /_sandbox/clock/advance, ${kind} reset, ${mode}: the new account's clock did not move`, async () => {
        const run = await open(mode);
        const hold = gate();
        run.sb.deps.scheduler.register('test.hold', () => hold.wait());
        const account = run.sb.deps.store.account('ptn_default', 'production');
        account.transaction(() => run.sb.deps.scheduler.schedule(account, 'test.hold', account.clock.nowMs() + 1000));
        const pending = started(run.sb.advance(3600, run.token));
        await hold.reached;
        await reset(run.sb, run.token, kind);
        hold.release();
        expectReplaced(await pending);
        const clock = (await run.sb.http.get('/_sandbox/clock').set('Authorization', `Bearer ${run.token}`).expect(200)).body;
        expect(clock.offset_seconds).toBe(0);
        await afterwards(run, '/invoices', (body) => expect(body.data).toEqual([]));
      });
    }
  }
});

describe('a checkout token being signed while its account is reset', () => {
  for (const kind of RESETS) {
    it(`POST /checkout-auth/init, ${kind} reset: no token for an invoice of the replaced account`, async () => {
      const run = await open('memory');
      const cus = await customer(run.api);
      const invoice = (await run.api.post('/invoices', { customer_id: cus, line_items: [{ amount: 10 }] }).expect(201)).body;
      const hold = gate();
      const signFor = run.sb.deps.tokens.signFor.bind(run.sb.deps.tokens);
      run.sb.deps.tokens.signFor = async (...args: Parameters<typeof signFor>) => { await hold.wait(); return signFor(...args); };
      const pending = started(run.api.post('/checkout-auth/init', { customer_id: cus, invoice_id: invoice.id }));
      await hold.reached;
      await reset(run.sb, run.token, kind);
      hold.release();
      expectReplaced(await pending);
    });
  }
});

describe('a webhook attempt under way while its account is reset', () => {
  for (const mode of MODES) {
    for (const kind of RESETS) {
      it(`the run writes nothing into the new account, ${kind} reset, ${mode}`, async () => {
        const dir = mode === 'data' ? mkdtempSync(join(tmpdir(), 'races-')) : undefined;
        if (dir) scratch.push(dir);
        const w = await webhookSandbox({ dataFile: dir && join(dir, 'sandbox.json'), flushDelayMs: 0 });
        try {
          await w.subscribe('customer_created');
          const hold = gate();
          w.receiver.respondWith(async () => { await hold.wait(); return 200; });
          await w.api.post('/customers', { name: 'Delivered to the old account' }).expect(201);
          const running = w.settle();
          await hold.reached;
          await reset(w.sb, w.token, kind);
          hold.release();
          await running.catch(() => undefined);
          const fresh = w.sb.deps.store.account('ptn_default', 'production');
          await w.queue.idle(fresh);
          const token = await w.sb.token();
          const deliveries = (await w.sb.http.get('/_sandbox/webhooks/deliveries').set('Authorization', `Bearer ${token}`).expect(200)).body.data;
          expect(deliveries).toEqual([]);
          expect((await w.sb.as(token).get('/webhooks/events').expect(200)).body.data).toEqual([]);
          expect(fresh.data.state.webhook_queue).toBeUndefined();
          if (dir) {
            await w.sb.deps.store.close();
            const again = await open('data', join(dir, 'sandbox.json'));
            expect((await again.sb.http.get('/_sandbox/webhooks/deliveries').set('Authorization', `Bearer ${again.token}`).expect(200)).body.data).toEqual([]);
            await again.sb.deps.store.close();
          }
        } finally {
          await w.close();
        }
      });
    }
  }
});

describe('every async handler is raced above, or is not bound to an account', () => {
  it('lists exactly the async handlers of the sandbox', () => {
    // Why each is safe; a new async handler fails here until it has a race of its own above.
    const known: Record<string, string> = {
      uploadBill: 'raced above (the document write)',
      uploadInvoicePdf: 'raced above (the document write; a url fetch awaits before it, behind the same wall)',
      initCheckoutAuth: 'raced above (the signature)',
      sandboxAdvanceClock: 'raced above (a due job)',
      sandboxReset: 'is the reset: a full reset awaits its steps while every request waits at the store gate',
      sandboxFireEvent: 'awaits the event factories module, then writes in one unit of work behind the wall (409 when replaced)',
      createToken: 'not bound to account data: the key and the token generation are read before the await, and a reset keeps keys',
      sandboxListRequests: 'reads the in-memory journal, which skips requests of replaced accounts',
      sandboxClearRequests: 'clears the in-memory journal of the account id, which skips requests of replaced accounts',
      sandboxSaveSnapshot: 'reads the account in one synchronous step before its await (the snapshot file) and writes no account data',
      sandboxDeleteSnapshot: 'writes no account data: removes a snapshot of the partner (and its file)',
    };
    const async = FEATURES.flatMap((feature) => Object.entries({ ...feature.handlers, ...feature.control }))
      .filter(([, handler]) => (handler as () => unknown).constructor.name === 'AsyncFunction')
      .map(([name]) => name)
      .sort();
    expect(async).toEqual(Object.keys(known).sort());
  });
});
