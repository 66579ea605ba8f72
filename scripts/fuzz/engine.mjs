// Owns the fuzz run: a sandbox listening on loopback (in this process, answers checked against the
// documents), a world of real objects, then `requests` generated requests spread evenly over every
// operation of both OpenAPI documents, each judged (status, HttpError body, strict checker) and,
// for a refused write, the store compared before and after. Then the isolation attempts, then (when
// asked) the hostile-document phase (hostile.mjs). Answers a report with per-operation figures,
// samples of each problem, and one summary line.
// The sandbox comes in as a module (`sandbox`), so the npm script runs the built code and the Jest
// slice runs the TypeScript sources through the same engine.
import { buildWorld, renewTokens, caller } from './world.mjs';
import { operationsOf } from './operations.mjs';
import { buildRequest, casesFrom } from './cases.mjs';
import { createClient, refusedConnections } from './client.mjs';
import { startFuzzSandbox } from './sandbox.mjs';
import { checkerFor, judge, routedOperation, storeDiff, storeSnapshot } from './checks.mjs';
import { runIsolation } from './isolation.mjs';
import { runHostile } from './hostile.mjs';

export { startFuzzSandbox };

export const DEFAULT_SEED = 20260302;
const CHUNK = 500;
const SAMPLES_PER_KIND = 3;

function newStats() {
  return { requests: 0, statuses: {}, '5xx': 0, 'non-HttpError': 0, invalid: 0, connection: 0, 'state-changed': 0, unsendable: 0 };
}

function record(samples, kind, operationId, detail) {
  const key = `${kind} ${operationId}`;
  const list = (samples[key] ??= []);
  if (list.length < SAMPLES_PER_KIND) list.push(detail);
}

function describe(req) {
  return `${req.method} ${req.path.slice(0, 160)}${req.path.length > 160 ? '…' : ''}${req.body !== undefined ? ` [${req.headers['content-type'] ?? ''}] ${String(req.body).slice(0, 200)}` : ''}${req.headers.prefer ? ` Prefer: ${req.headers.prefer}` : ''}`;
}

/**
 * Run the fuzz. Options: seed, requests (spread round-robin over every operation), isolation (number
 * of isolation attempts), epoch (requests between fresh worlds), log (progress lines).
 */
export async function runFuzz({ sandbox, seed = DEFAULT_SEED, requests = 100_000, isolation = 1_000, hostile = 0, epoch = 2_000, log = () => undefined }) {
  const started = Date.now();
  const crashes = [];
  const onCrash = (error) => crashes.push(String(error?.stack ?? error).slice(0, 500));
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  const { running, loggedErrors, unguard } = await startFuzzSandbox(sandbox);
  const client = createClient(running.url);
  const api = caller(client);
  const checkers = {
    api: sandbox.responseCheckerFor(sandbox.loadDocument('openapi').document),
    control: sandbox.responseCheckerFor(sandbox.loadDocument('control-plane').document),
  };
  const operations = [
    ...operationsOf(sandbox.loadDocument('openapi').document, 'api'),
    ...operationsOf(sandbox.loadDocument('control-plane').document, 'control'),
  ];
  const perOperation = Object.fromEntries(operations.map((op) => [op.id, newStats()]));
  /** Requests that carried a hostile document (hostile-values.mjs) among the mutations. */
  let hostileRequests = 0;
  const samples = {};
  const { deps, app } = running;
  // The store counts every change it notes (every write reports one, or the data file would miss it).
  const changes = { get count() { return deps.store.changeCount; } };
  const credentials = deps.config.credentials;

  let world;
  const rebuild = async () => { world = await buildWorld(client, { credentials }); };
  try {
    await rebuild();
    let cases = [];
    for (let n = 0; n < requests; n++) {
      if (n % CHUNK === 0) cases = casesFrom(seed + n / CHUNK, Math.min(CHUNK, requests - n));
      if (n > 0 && n % epoch === 0) {
        await rebuild();
        log(`  ${n} requests, ${Math.round((Date.now() - started) / 1000)} s`);
      }
      const op = operations[n % operations.length];
      const kase = cases[n % CHUNK];
      const req = buildRequest(op, kase, world);
      if (kase.mutation.kind === 'hostile') hostileRequests += 1;
      const stats = perOperation[op.id];
      // A read must not write (the store's change signal stays quiet); a write is compared in full.
      const isWrite = !['GET', 'HEAD', 'OPTIONS'].includes(req.method);
      let before;
      if (isWrite) {
        await deps.scheduler.idle();
        before = storeSnapshot(deps);
      }
      const changesBefore = changes.count;
      const res = await client.send(req);
      if (res.status === -1) {
        stats.unsendable += 1;
        continue;
      }
      stats.requests += 1;
      stats.statuses[res.status] = (stats.statuses[res.status] ?? 0) + 1;
      const reached = routedOperation(app, req.method, req.path);
      for (const [kind, detail] of judge({ res, operationId: reached, checker: checkerFor(checkers, req.path), forced: req.forced, method: req.method })) {
        stats[kind] += 1;
        record(samples, kind, op.id, `${describe(req)} -> ${detail}`);
      }
      if (!isWrite && res.status > 0) {
        await deps.scheduler.idle();
        if (changes.count !== changesBefore) {
          stats['state-changed'] += 1;
          record(samples, 'state-changed', op.id, `${describe(req)} -> ${res.status} ${res.text.slice(0, 160)}; the store was told of a change`);
        }
      }
      if (isWrite && res.status >= 400 && res.status < 500) {
        await deps.scheduler.idle();
        const after = storeSnapshot(deps);
        if (after.raw !== before.raw && after.normal() !== before.normal()) {
          stats['state-changed'] += 1;
          record(samples, 'state-changed', op.id, `${describe(req)} -> ${res.status} ${res.text.slice(0, 160)}; changed: ${storeDiff(JSON.parse(before.raw), JSON.parse(after.raw)).join('; ')}`);
        }
      }
      await afterEffects(op, req, res);
    }
    log(`  ${requests} requests, ${Math.round((Date.now() - started) / 1000)} s; isolation next`);
    const isolationReport = isolation > 0 ? await runIsolation({ client, deps, app, operations, seed, attempts: isolation, credentials, checkers }) : { attempts: 0, leaks: 0, failures: 0, targets: 0, byStatus: {}, bySurface: {}, pathIds: { attempts: 0, notFound: 0, asUnknown: 0 }, samples: [] };
    // Hostile documents to every write that takes one, on a sandbox of their own with a data file
    // (stored ones must read back after a restart).
    if (hostile > 0) log(`  isolation done, ${Math.round((Date.now() - started) / 1000)} s; hostile documents next`);
    const hostileReport = hostile > 0 ? await runHostile({ sandbox, seed, runs: hostile, log }) : undefined;
    return report();

    function report() {
      const totals = newStats();
      for (const stats of Object.values(perOperation)) {
        for (const key of ['requests', '5xx', 'non-HttpError', 'invalid', 'connection', 'state-changed', 'unsendable']) totals[key] += stats[key];
        for (const [status, count] of Object.entries(stats.statuses)) totals.statuses[status] = (totals.statuses[status] ?? 0) + count;
      }
      const seconds = Math.round((Date.now() - started) / 1000);
      const failures = totals['5xx'] + totals['non-HttpError'] + totals.invalid + totals.connection + totals['state-changed'] + crashes.length + loggedErrors.length + isolationReport.leaks + isolationReport.failures + (hostileReport?.failures.length ?? 0) + (hostileReport?.loggedErrors.length ?? 0);
      const ok = failures === 0 && totals.requests >= requests * 0.99;
      const summary = `fuzz ${ok ? 'PASS' : 'FAIL'}: seed ${seed}, ${totals.requests} requests over ${operations.length} operations, ` +
        `5xx ${totals['5xx']}, invalid bodies ${totals.invalid}, non-HttpError errors ${totals['non-HttpError']}, ` +
        `state changed by refused writes ${totals['state-changed']}, connection failures ${totals.connection}, crashes ${crashes.length}, ` +
        `errors logged ${loggedErrors.length}; isolation ${isolationReport.attempts} attempts (${isolationReport.pathIds?.asUnknown ?? 0} of ${isolationReport.pathIds?.attempts ?? 0} path ids refused as unknown, ${isolationReport.pathIds?.notFound ?? 0} of them 404), ${isolationReport.leaks} leaks, ` +
        `${isolationReport.failures} other failures; ${hostileRequests} requests carried a hostile document` +
        `${hostileReport ? `; ${hostileReport.summary.replace(/^hostile documents (PASS|FAIL): /, 'hostile documents: ')}` : ''}; ${seconds} s`;
      return { ok, summary, seed, totals, perOperation, samples, crashes, loggedErrors: loggedErrors.slice(0, 20), isolation: isolationReport, hostileRequests, hostile: hostileReport, refusedConnections: Object.fromEntries(refusedConnections), seconds };
    }
  } finally {
    client.close();
    await running.close();
    unguard();
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
  }

  /** Keep the world usable: undo loaded scenarios, renew tokens after the clock moved or tokens were expired, rebuild after a full reset. */
  async function afterEffects(op, req, res) {
    if (res.status < 200 || res.status >= 300) return;
    if (op.id === 'sandboxLoadScenario' && res.json?.id) {
      const headers = { ...req.headers };
      delete headers['content-type'];
      await api.call('DELETE', `/_sandbox/scenarios/${encodeURIComponent(res.json.id)}`, { headers });
    } else if (op.id === 'sandboxReset' && routedOperation(app, req.method, req.path) === 'sandboxReset') {
      await rebuild();
    } else if (['sandboxAdvanceClock', 'sandboxExpireTokens'].includes(op.id) && routedOperation(app, req.method, req.path) === op.id) {
      await renewTokens(world);
      await renewCheckoutTokens(world);
    }
  }
}

async function renewCheckoutTokens(world) {
  for (const [name, account] of Object.entries(world.accounts)) {
    const prefix = account.env === 'demo' ? '/demo' : '';
    const [customer] = account.ids.customer ?? [];
    const [invoice] = account.ids.invoice ?? [];
    const res = await world.api.call('POST', `${prefix}/checkout-auth/init`, { token: account.token, body: { customer_id: customer, invoice_id: invoice } });
    if (res.status === 200) account.ids.checkoutToken = res.json.token;
    else if (name === 'A:production') account.ids.checkoutToken = 'expired';
  }
}
