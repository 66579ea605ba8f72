#!/usr/bin/env node
// The process-wide memory budget under the partner cap (npm run budget-test; test/memory-budget-process.test.ts
// runs a small version in CI): a sandbox in this process, driven over HTTP, gets 1,000 partners
// (POST /_sandbox/partners, the cap) x 2 environments = 2,000 accounts, each with a webhook
// subscription to a local receiver, then rounds of POST /customers on every account (each: a journal
// entry, an event, a delivery, an attempt). Run under a fixed heap (node --max-old-space-size=N), it
// checks and prints as one JSON line:
//   - the budget held: the bytes counted never passed it after an eviction, and are under it at the end;
//   - the oldest entries went first, across accounts: every entry evicted (journal, events, deliveries,
//     attempts) is of a round no later than every entry kept, besides each account's newest;
//   - the newest of every account are still readable: GET /_sandbox/requests and GET /webhooks/events
//     answer each account's last customer;
//   - the process is alive, and its heap after a collection.
// Exits 1 when a check fails.
//
//   node --max-old-space-size=512 --expose-gc scripts/memory-budget.mjs [--partners 1000] [--rounds 40]
//        [--budget-mb 64] [--fields 6] [--concurrency 32] [--dist DIR]
//
// --fields: how many 255-character fields each customer carries (0-6), so the size of an entry.
// --dist: the compiled sandbox to run (default: this checkout's dist/, as `npm run build` makes it).
import { Agent, createServer, request } from 'node:http';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const raw = process.argv[at + 1];
  if (typeof fallback === 'string') return raw;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`memory-budget: --${name} must be a number >= 0`);
    process.exit(2);
  }
  return value;
}

const DIST = resolve(option('dist', join(ROOT, 'dist')));
const { startSandbox } = await import(pathToFileURL(join(DIST, 'index.js')).href);
const { LIMITS } = await import(pathToFileURL(join(DIST, 'limits.js')).href);
const { eventLog } = await import(pathToFileURL(join(DIST, 'events', 'events.js')).href);
const { deliveries, attempts } = await import(pathToFileURL(join(DIST, 'webhooks', 'history.js')).href);

const PARTNERS = option('partners', LIMITS.partnersPerServer);
const ROUNDS = option('rounds', 40);
const BUDGET_MB = option('budget-mb', 64);
const FIELDS = Math.min(option('fields', 6), 6);
const CONCURRENCY = option('concurrency', 32);
const MB = 1024 * 1024;

const began = performance.now();
const gc = globalThis.gc ?? (() => undefined);
const heapMb = () => {
  gc();
  return Math.round(process.memoryUsage().heapUsed / MB);
};

/** Run `work` over every item with at most CONCURRENCY under way. */
async function pool(items, work) {
  let next = 0;
  const runners = Array.from({ length: Math.min(CONCURRENCY, items.length) }, async () => {
    while (next < items.length) {
      const at = next++;
      await work(items[at], at);
    }
  });
  await Promise.all(runners);
}

// node:http with kept-alive connections: fetch costs several times its CPU per request, and the
// sandbox shares this process (and, in CI, a loaded machine).
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
function call(url, init = {}, expected = 200) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== expected) reject(new Error(`${init.method ?? 'GET'} ${url}: ${res.statusCode} ${text.slice(0, 300)}`));
        else resolve(text ? JSON.parse(text) : undefined);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}
const phases = {};
let phaseBegan = performance.now();
const phase = (name) => {
  const now = performance.now();
  phases[name] = +((now - phaseBegan) / 1000).toFixed(1);
  phaseBegan = now;
};

// A receiver that answers 200 and keeps nothing.
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
});
await new Promise((done) => receiver.listen(0, '127.0.0.1', done));
const hook = `http://127.0.0.1:${receiver.address().port}/hooks`;

const sandbox = await startSandbox({ port: 0, rateLimit: 0, logLevel: 'silent', allowHttpWebhooks: true, memoryBudgetBytes: Math.round(BUDGET_MB * MB) });
const { url, deps } = sandbox;
const budget = deps.services.installed('memoryBudget');
const queue = deps.services.installed('webhooks');
const heapAtStart = heapMb();

// 1. Partners up to the cap (the default one is there), each with an account per environment.
const json = (body) => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
phaseBegan = performance.now();
const made = new Array(PARTNERS - 1);
await pool([...made.keys()], async (i) => {
  made[i] = await call(`${url}/_sandbox/partners`, json({ name: `Budget partner ${i}` }), 201);
});
const accounts = [];
for (const environment of ['production', 'demo']) {
  accounts.push({ partner: 'ptn_default', environment, credentials: sandbox.credentials[environment] });
  for (const partner of made) accounts.push({ partner: partner.id, environment, credentials: partner.credentials[environment] });
}
const prefix = (a) => (a.environment === 'demo' ? '/demo' : '');
phase('partners');

// 2. A token and a subscription per account.
await pool(accounts, async (a) => {
  const basic = Buffer.from(`${a.credentials.client_id}:${a.credentials.client_secret}`).toString('base64');
  const answer = await call(`${url}${prefix(a)}/oauth/token`, { method: 'POST', headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' }, 200);
  a.auth = { Authorization: `Bearer ${answer.access_token}` };
  await call(`${url}${prefix(a)}/webhooks`, { ...json({ endpoint_url: hook, topic: 'customer_created' }), headers: { ...a.auth, 'Content-Type': 'application/json' } }, 201);
  a.store = deps.store.account(a.partner, a.environment);
});
phase('tokens_and_subscriptions');

// 3. Rounds: a customer on every account, then every account's deliveries sent.
const filler = (n) => `${n}-`.padEnd(255, 'x');
const FIELD_NAMES = ['legal_name', 'street_address', 'sub_premise', 'city', 'state', 'country'];
let peakHeap = heapMb();
// Each round's span of real time (the account clocks follow it): an attempt is placed in its round by its time.
const spans = [];
for (let round = 1; round <= ROUNDS; round++) {
  const from = Date.now();
  await pool(accounts, async (a, i) => {
    const body = { name: `Account ${i} round ${round}`, external_id: `a${i}-r${round}` };
    for (const field of FIELD_NAMES.slice(0, FIELDS)) body[field] = filler(round);
    await call(`${url}${prefix(a)}/customers`, { ...json(body), headers: { ...a.auth, 'Content-Type': 'application/json' } }, 201);
  });
  await pool(accounts, (a) => queue.idle(a.store));
  spans.push({ round, from, to: Date.now() });
  peakHeap = Math.max(peakHeap, heapMb());
}
await deps.services.installed('journal').settled();
phase('rounds');

// 4. The checks.
const failures = [];
const figures = budget.figures();
if (figures.peak > figures.limit) failures.push(`the budget was passed: ${figures.peak} bytes counted after an eviction, over ${figures.limit}`);
if (figures.bytes > figures.limit) failures.push(`over the budget at the end: ${figures.bytes} > ${figures.limit}`);
for (const kind of ['journal', 'events', 'deliveries', 'attempts']) {
  if (!figures.evicted[kind].entries) failures.push(`nothing of ${kind} was evicted: the run did not fill the budget`);
}

/**
 * Each account's entries of one kind, oldest first, as rounds (0: the token and subscription
 * requests), sent and kept: what was kept must be the newest of what was sent (a suffix).
 */
const roundOf = (externalId) => Number(/-r(\d+)$/.exec(externalId ?? '')?.[1] ?? 0);
let maxEvicted = -1;
let minKept = Infinity;
function compare(a, kind, sent, kept) {
  const evicted = sent.length - kept.length;
  if (evicted < 0 || kept.some((round, at) => round !== sent[evicted + at])) {
    failures.push(`${a.partner}:${a.environment} ${kind}: kept ${JSON.stringify(kept)} is not the newest of ${JSON.stringify(sent)}`);
    return;
  }
  if (!kept.length) failures.push(`${a.partner}:${a.environment} ${kind}: nothing kept, not even the newest`);
  if (evicted) maxEvicted = Math.max(maxEvicted, sent[evicted - 1]);
  // The newest is kept whatever the budget: it says nothing of the order.
  if (kept.length > 1) minKept = Math.min(minKept, kept[0]);
}
const rounds = Array.from({ length: ROUNDS }, (_, i) => i + 1);
const journal = deps.services.installed('journal');
for (const a of accounts) {
  const entries = journal.list(a.store, { limit: LIMITS.journalEntries }).reverse();
  compare(a, 'journal', [0, 0, ...rounds], entries.map((e) => (e.path.endsWith('/customers') ? roundOf(e.request.body?.external_id) : 0)));
  compare(a, 'events', rounds, [...eventLog(a.store).values()].map((e) => roundOf(e.data.external_id)));
  const eventRound = new Map([...eventLog(a.store).values()].map((e) => [e.id, roundOf(e.data.external_id)]));
  const keptDeliveries = [...deliveries(a.store).values()];
  // A delivery whose event went first cannot be placed: none may exist (events go after their deliveries).
  if (keptDeliveries.some((d) => !eventRound.has(d.event_id))) failures.push(`${a.partner}:${a.environment}: a kept delivery lost its event`);
  compare(a, 'deliveries', rounds, keptDeliveries.map((d) => eventRound.get(d.event_id) ?? -1));
  compare(a, 'attempts', rounds, [...attempts(a.store).values()].map((t) => spans.find((span) => Date.parse(t.at) >= span.from && Date.parse(t.at) <= span.to)?.round ?? -1));
}
if (maxEvicted > minKept) failures.push(`not oldest first: an entry of round ${maxEvicted} was evicted while one of round ${minKept} was kept`);

// The newest of every account, read as a partner reads it.
let readable = 0;
await pool(accounts, async (a, i) => {
  const last = `a${i}-r${ROUNDS}`;
  const requests = await call(`${url}/_sandbox/requests?limit=1&path=/customers`, { headers: a.auth }, 200);
  const history = await call(`${url}${prefix(a)}/webhooks/events?limit=1`, { headers: a.auth }, 200);
  if (requests.data[0]?.request.body?.external_id === last && history.data[0]?.data.external_id === last) readable += 1;
  else failures.push(`${a.partner}:${a.environment}: its newest request or event is not readable`);
});

phase('checks');
const summary = {
  ok: failures.length === 0,
  accounts: accounts.length,
  rounds: ROUNDS,
  budget_mb: BUDGET_MB,
  counted_mb: +(figures.bytes / MB).toFixed(2),
  peak_counted_mb: +(figures.peak / MB).toFixed(2),
  evicted: Object.fromEntries(Object.entries(figures.evicted).map(([kind, e]) => [kind, { entries: e.entries, mb: +(e.bytes / MB).toFixed(2) }])),
  evicted_through_round: maxEvicted,
  oldest_kept_round: minKept === Infinity ? null : minKept,
  newest_readable: readable,
  heap_mb: { start: heapAtStart, peak_after_gc: peakHeap, end: heapMb(), limit: Math.round((await import('node:v8')).getHeapStatistics().heap_size_limit / MB) },
  seconds: +((performance.now() - began) / 1000).toFixed(1),
  phases,
  failures: failures.slice(0, 10),
};
console.log(JSON.stringify(summary));
await sandbox.close();
receiver.close();
process.exit(summary.ok ? 0 : 1);
