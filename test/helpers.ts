// Shared test set-up: a fresh sandbox per test file on a controllable "real" time, with every
// response checked against the OpenAPI document, and shortcuts for tokens and requests.
import { afterAll, afterEach, beforeEach, expect } from '@jest/globals';
import { LIMITS } from '../src/limits.js';
import request from 'supertest';
import { createApp, createDeps, createSandboxServer } from '../src/app.js';
import type { SandboxConfig } from '../src/config.js';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { StoreData } from '../src/store/store.js';
import type { CollectionData } from '../src/store/collection.js';
import { readDataFile } from '../src/store/persistence/read.js';

export const START = Date.parse('2026-03-02T09:00:00.000Z');

export interface TestSandbox {
  app: ReturnType<typeof createApp>;
  deps: Awaited<ReturnType<typeof createDeps>>;
  http: ReturnType<typeof request>;
  time: { now: number };
  token(env?: 'production' | 'demo', credentials?: { client_id: string; client_secret: string }): Promise<string>;
  /** Authorized request helpers for one environment's base path. */
  as(token: string, env?: 'production' | 'demo'): Api;
  advance(seconds: number, token?: string): request.Test;
}

export interface Api {
  get(path: string): request.Test;
  post(path: string, body?: object): request.Test;
  patch(path: string, body?: object): request.Test;
  delete(path: string): request.Test;
}

/**
 * SANDBOX_VERIFY_DATA=1 runs every test sandbox on a data file and, after the test file, checks that
 * what the file loads equals what the sandbox held: a change the persistence log missed (an object
 * edited in place, say) fails here. A diagnostic run of the suite, not part of `npm test`.
 */
const verified: Array<{ deps: Awaited<ReturnType<typeof createDeps>>; file: string }> = [];
if (process.env.SANDBOX_VERIFY_DATA) {
  afterAll(async () => {
    for (const { deps, file } of verified.splice(0)) {
      // Whatever was noted but never waited for (state made by a read, say) is written too.
      await deps.store.compact();
      expect(comparable(await loadDataFile(file))).toEqual(comparable(deps.store.data));
    }
  });
}

/**
 * Store data as JSON, a collection's objects (a Map in memory) written out by id as the data file's
 * reader sees them, objects not read since a start (cold: a number in the map) as their objects.
 */
export function storeJson(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, _key, v: unknown) {
    if (!(v instanceof Map)) return v;
    const cold = (this as CollectionData<{ id: string }>).cold;
    return Object.fromEntries([...(v as Map<string, unknown>)].map(([id, item]) => [id, typeof item === 'number' && cold ? cold.read(item) : item]));
  });
}

/**
 * The document as sorted JSON, without what a read creates empty on first access (an empty collection,
 * an account holding nothing): the same whether it was ever written or not.
 */
function comparable(data: StoreData): string {
  const plain = JSON.parse(storeJson(data)) as StoreData;
  const isEmpty = (v: unknown) => (Array.isArray(v) ? !v.length : v && typeof v === 'object' ? !Object.keys(v).length : false);
  for (const [id, account] of Object.entries(plain.accounts)) {
    for (const [name, c] of Object.entries(account.collections)) if (!c.order.length && !c.base) delete account.collections[name];
    if (!Object.keys(account.collections).length && !Object.keys(account.counters).length && !account.jobs.length && !account.clock.offset_ms && Object.values(account.state).every(isEmpty)) delete plain.accounts[id];
  }
  return JSON.stringify(plain, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));
}

export async function setup(config: Partial<SandboxConfig> = {}): Promise<TestSandbox> {
  const time = { now: START };
  if (process.env.SANDBOX_VERIFY_DATA && !config.dataFile) config = { ...config, dataFile: join(mkdtempSync(join(tmpdir(), 'verify-data-')), 'sandbox.json') };
  const deps = await createDeps(
    { rateLimit: 0, validateResponses: true, logLevel: 'silent', ...config },
    { realNow: () => time.now },
  );
  if (process.env.SANDBOX_VERIFY_DATA) verified.push({ deps, file: config.dataFile as string });
  const app = createApp(deps);
  // The server startSandbox listens with (supertest starts it on a free port per request).
  const http = request(createSandboxServer(app));
  const prefix = (env: 'production' | 'demo') => (env === 'demo' ? '/demo' : '');
  const sandbox: TestSandbox = {
    app,
    deps,
    http,
    time,
    async token(env = 'production', credentials = deps.config.credentials[env]) {
      const res = await http
        .post(`${prefix(env)}/oauth/token`)
        .auth(credentials.client_id, credentials.client_secret)
        .type('form')
        .send({ grant_type: 'client_credentials' });
      if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.access_token as string;
    },
    as(token, env = 'production') {
      const p = prefix(env);
      return {
        get: (path) => http.get(`${p}${path}`).set('Authorization', `Bearer ${token}`),
        post: (path, body) => http.post(`${p}${path}`).set('Authorization', `Bearer ${token}`).send(body ?? {}),
        patch: (path, body) => http.patch(`${p}${path}`).set('Authorization', `Bearer ${token}`).send(body ?? {}),
        delete: (path) => http.delete(`${p}${path}`).set('Authorization', `Bearer ${token}`),
      };
    },
    advance(seconds, token) {
      const req = http.post('/_sandbox/clock/advance').send({ seconds });
      return token ? req.set('Authorization', `Bearer ${token}`) : req;
    },
  };
  return sandbox;
}

export interface Session {
  sb: TestSandbox;
  token: string;
  api: Api;
}

/**
 * A fresh sandbox before each test with a default production token and its API; `advance` moves
 * the account clock and keeps the token (tokens live in real time, never on the account clock).
 * `bind` receives the session after each change, so a test file can keep plain `sb`, `token` and
 * `api` variables.
 */
export function useSession(bind: (session: Session) => void, config: Partial<SandboxConfig> = {}) {
  const session = {} as Session;
  const renew = async () => {
    session.token = await session.sb.token();
    session.api = session.sb.as(session.token);
    bind(session);
  };
  beforeEach(async () => {
    session.sb = await setup(config);
    await renew();
  });
  return {
    async advance(seconds: number): Promise<void> {
      expect((await session.sb.advance(seconds, session.token)).status).toBe(200);
    },
  };
}

/** Replace the store's file writer for the test: `hook` decides what each write does; answers the undo. */
export function hookWrites(sb: TestSandbox, hook: (write: () => Promise<void>) => Promise<void>): () => void {
  const adapter = (sb.deps.store as unknown as { adapter: { write(data: unknown): Promise<void> } }).adapter;
  const real = adapter.write.bind(adapter);
  adapter.write = (data) => {
    // Snapshot now, as the real writer does: later changes belong to the next write.
    const snapshot = JSON.parse(JSON.stringify(data));
    return hook(() => real(snapshot));
  };
  return () => { adapter.write = real; };
}

/**
 * The bytes one write adds to a --data file, measured over `sample` writes after `few` and again after
 * `many` more: `write` makes one (the same shape each time), `settle` waits for what it started and
 * flushes. The class these figures check: a write's cost never grows with what is stored.
 */
export async function bytesPerWrite(file: string, write: () => Promise<void>, settle: () => Promise<void>, counts: { few: number; many: number; sample?: number }): Promise<{ atFew: number; atMany: number }> {
  const more = async (count: number) => {
    for (let i = 0; i < count; i++) await write();
    await settle();
  };
  const measure = async () => {
    const before = dataOnDisk(file).length;
    await more(counts.sample ?? 5);
    return (dataOnDisk(file).length - before) / (counts.sample ?? 5);
  };
  await more(counts.few);
  const atFew = await measure();
  await more(counts.many);
  return { atFew, atMany: await measure() };
}

/** Everything a --data file holds on disk (its snapshot and log segments), as text: for "is it written" checks. */
export function dataOnDisk(file: string): string {
  const dir = dirname(file);
  const prefix = `${basename(file)}.log.`;
  const segments = readdirSync(dir).filter((name) => name.startsWith(prefix)).sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
  return [file, ...segments.map((name) => join(dir, name))].map((path) => readFileSync(path, 'utf8')).join('');
}

/** The document a --data file holds, as a sandbox starting on it would load it. */
export async function loadDataFile(file: string): Promise<StoreData> {
  const loaded = await readDataFile(file);
  if (!loaded) throw new Error(`no data in ${file}`);
  return loaded.data;
}

const limitsToRestore: Array<() => void> = [];
afterEach(() => {
  for (const undo of limitsToRestore.splice(0).reverse()) undo();
});

/** Run a test with a smaller value of a limit (the same code path, fewer requests); put back after the test. */
export function lowerLimit(name: keyof typeof LIMITS, value: number): void {
  // LIMITS is read-only to the code; a test changes one number of it and puts it back.
  const limits = LIMITS as unknown as Record<string, number>;
  const before = limits[name];
  limits[name] = value;
  limitsToRestore.push(() => { limits[name] = before; });
}
