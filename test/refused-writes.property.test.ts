// Issue 18's property (fast-check): a write the sandbox refuses with a 4xx leaves the account's stored
// data and its event log byte for byte as they were, and the rest of the store (the other accounts,
// partners, keys) too. One property per write operation (POST, PUT, PATCH, DELETE) of both documents,
// each with its own fixed seed and a fresh world of real objects (scripts/fuzz/world.mjs: customers,
// cards, invoices, payments, vendors, bills, vendor payments, data requests, webhooks, payouts, a
// scenario, a second partner and spare keys), so that path ids exist and states are the seeded ones.
// One request in four goes instead to an account that holds nothing at first (a third partner's, in
// the same environment): there every path id is unknown, and a first read of any collection or state
// must not store an empty record (or the account itself).
// Each run builds a valid request for the operation and applies one mutation to it (the fuzzer's own
// arbitraries, scripts/fuzz/cases.mjs: a body field replaced, deleted or added, the whole body, a raw
// body, the content type, a path id, the query, the credentials, a header, the method), sends it,
// and compares, for a 4xx answer only:
//   - storeJson(store.data.accounts[account]) (JSON, collections' objects included) before and after,
//     exactly (not the fuzzer's normalised form: an empty collection a read leaves behind is a change here);
//   - that account's event log (its `events` collection), exactly;
//   - storeJson of the whole store, exactly.
// An answer that is not a 4xx (accepted, 5xx, not sent) is skipped with fc.pre: not counted, and
// fast-check draws another case in its place, so every operation gets RUNS refused requests checked.
// A failure names the operation, the request, its answer and what changed (storeDiff), and the test
// lists every failing operation at once, not only the first.
//
// Requests go through the fuzzer's raw HTTP client (scripts/fuzz/client.mjs) to an in-process sandbox
// listening on loopback, rather than supertest: the client sends the built request byte for byte (odd
// percent-encodings and very long paths, any method, any content type, a raw or missing body, no
// content-length of its own making), which superagent would normalise or refuse before sending.
//
// Exclusions: none. The one 4xx designed to record state is an answer given by a loaded scenario's
// rule (src/scenarios/intercept.ts runs outside the request's unit of work, and counts the match in
// the account's `scenario_counters` state: `times`, `nth` and `from` depend on it). It cannot happen
// here: the world's only scenario matches a path no operation has, a scenario a run manages to load
// is removed at once, and control-plane operations are never intercepted. `Prefer: code=NNN` forced
// answers are documented as changing nothing, so they are checked like any other refusal. The request
// journal records every request, refused or not, by design; it lives outside the store.
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  WRITE_METHODS, buildRequest, buildWorld, caller, createClient, operationsOf, refusalCase, renewTokens, routedOperation,
  startFuzzSandbox, storeDiff, type FuzzRequest, type FuzzResponse, type World, type WorldAccount,
} from '../scripts/fuzz/refused-writes.mjs';
import { FREE_FORM_FACTOR, runHostile } from '../scripts/fuzz/hostile.mjs';
import * as index from '../src/index.js';
import { responseCheckerFor } from '../src/http/response-check.js';
import { loadDocument } from '../src/http/openapi.js';
import { setup, storeJson } from './helpers.js';

const SEED = 18;
/** Hostile documents per write operation that takes one (45 operations; scenario documents FREE_FORM_FACTOR times as many). */
const HOSTILE_RUNS = Number(process.env.HOSTILE_RUNS) || 4;
/** Refused requests checked per write operation (68 operations: 2,720 in all, about 35 s on 2 CPUs). */
const RUNS = 40;

/** A fixed seed per operation, from its id: adding an operation to a document changes no other's cases. */
function seedOf(operationId: string): number {
  return (createHash('sha256').update(`${SEED}|${operationId}`).digest().readUInt32BE(0) & 0x7fffffff) || 1;
}

interface OperationReport {
  /** Refused (4xx) requests whose account, event log and store were compared and found unchanged. */
  checked: number;
  /** Of those, the ones sent to the account that held nothing at first. */
  onEmpty: number;
  /** Answers that were not a 4xx, by status: skipped, not counted (-1: Node would not send it). */
  skipped: Record<string, number>;
}

const short = (text: string | undefined, max: number) => (text === undefined ? '' : text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text);

function describeRequest(req: FuzzRequest, res: FuzzResponse, toEmpty: boolean): string {
  const type = req.headers['content-type'];
  const extra = Object.entries(req.headers).filter(([name]) => !['authorization', 'content-type'].includes(name)).map(([name, value]) => `${name}: ${short(value, 60)}`);
  return [
    `${req.method} ${short(req.path, 200)} (${toEmpty ? `partner C's ${req.accountName.slice(2)} account, which held nothing` : req.accountName})`,
    ...(extra.length ? [`  headers ${extra.join('; ')}`] : []),
    ...(req.body !== undefined ? [`  body [${type ?? 'no content type'}] ${short(req.body, 300)}`] : []),
    `  answered ${res.status} ${short(res.text, 200)}`,
  ].join('\n');
}

describe('refused writes', () => {
  it('leave the account\'s stored data, its event log and the whole store byte for byte as they were, for generated refusals of every write operation', async () => {
    const sandbox = { ...index, responseCheckerFor, loadDocument };
    const { running, loggedErrors, unguard } = await startFuzzSandbox(sandbox);
    const client = createClient(running.url);
    const { deps, app } = running;
    const operations = [
      ...operationsOf(loadDocument('openapi').document, 'api'),
      ...operationsOf(loadDocument('control-plane').document, 'control'),
    ].filter((op) => WRITE_METHODS.has(op.method.toUpperCase()));
    const reports: Record<string, OperationReport> = {};
    const failures: Record<string, string> = {};
    const api = caller(client);
    let world: World | undefined;
    /** Partner C's accounts: nothing made in them, a token and the key each (for the token endpoint). */
    let empty: Record<'production' | 'demo', { account: WorldAccount; key: { client_id: string; client_secret: string } }> | undefined;
    const tokenOf = async (env: 'production' | 'demo', key: { client_id: string; client_secret: string }): Promise<string> => {
      const res = await api.call('POST', `${env === 'demo' ? '/demo' : ''}/oauth/token`, {
        headers: { authorization: `Basic ${Buffer.from(`${key.client_id}:${key.client_secret}`).toString('base64')}` },
        form: { grant_type: 'client_credentials' },
      });
      const token = (res.json as { access_token?: unknown } | undefined)?.access_token;
      if (res.status !== 200 || typeof token !== 'string') throw new Error(`no token for partner C ${env}: ${res.status} ${res.text.slice(0, 200)}`);
      return token;
    };
    const renewEmptyTokens = async () => {
      for (const env of ['production', 'demo'] as const) if (empty) empty[env].account.token = await tokenOf(env, empty[env].key);
    };
    const rebuild = async () => {
      world = await buildWorld(client, { credentials: deps.config.credentials });
      const res = await api.call('POST', '/_sandbox/partners', { body: { name: 'Partner C (holds nothing)' } });
      const partner = res.json as { id: string; credentials: Record<'production' | 'demo', { client_id: string; client_secret: string }> } | undefined;
      if (res.status !== 201 || !partner) throw new Error(`partner C: ${res.status} ${res.text.slice(0, 200)}`);
      const blank = (env: 'production' | 'demo') => ({ account: { env, token: '', ids: {}, partner: partner.id }, key: partner.credentials[env] });
      empty = { production: blank('production'), demo: blank('demo') };
      await renewEmptyTokens();
    };
    /**
     * The world a case sees: the fuzzer's, or (`toEmpty`) the same with the account of the case's
     * environment swapped for partner C's (buildRequest takes ids, token and key from it).
     */
    const viewFor = (toEmpty: boolean, env: 'production' | 'demo'): World => {
      if (!world || !empty) throw new Error('no world');
      if (!toEmpty) return world;
      const name = env === 'demo' ? 'A:demo' : 'A:production';
      return { ...world, accounts: { ...world.accounts, [name]: empty[env].account }, keys: { ...world.keys, [name]: empty[env].key } };
    };

    /** The store's id of the account a world account name stands for (partner:environment). */
    const accountIdOf = (view: World, name: string): string => {
      const account = view.accounts[name];
      if (!account) throw new Error(`no world account ${name}`);
      return `${account.partner}:${account.env}`;
    };
    const snapshot = (accountId: string) => {
      const data = deps.store.data;
      const account = data.accounts[accountId];
      return {
        account: storeJson(account),
        events: storeJson(account?.collections.events),
        store: storeJson(data),
      };
    };
    type Snapshot = ReturnType<typeof snapshot>;
    const parse = (text: string | undefined): unknown => (text === undefined ? undefined : JSON.parse(text));

    /** What differs, by part: the account (its keys), its event log, and the store outside the account. */
    const changesBetween = (accountId: string, before: Snapshot, after: Snapshot): string[] => {
      const changes: string[] = [];
      if (after.account !== before.account) {
        changes.push(`account ${accountId}: ${storeDiff(parse(before.account), parse(after.account)).join('; ') || '(same JSON value, other text: key order?)'}`);
      }
      if (after.events !== before.events) {
        const count = (text: string | undefined) => (text === undefined ? 'no events collection' : `${(JSON.parse(text) as { order: unknown[] }).order.length} events`);
        changes.push(`event log of ${accountId}: ${count(before.events)} -> ${count(after.events)}`);
      }
      if (after.store !== before.store) {
        const outside = (text: string) => {
          const data = JSON.parse(text) as { accounts: Record<string, unknown> };
          delete data.accounts[accountId];
          return data;
        };
        const elsewhere = storeDiff(outside(before.store), outside(after.store));
        if (elsewhere.length) changes.push(`store outside the account: ${elsewhere.join('; ')}`);
      }
      return changes;
    };

    /** An accepted request may have reset the world, moved its clock, expired tokens or loaded a scenario. */
    const keepWorldUsable = async (req: FuzzRequest, res: FuzzResponse) => {
      if (res.status < 200 || res.status >= 300 || !world) return;
      const reached = routedOperation(app, req.method, req.path);
      if (reached === 'sandboxReset') await rebuild();
      else if (reached === 'sandboxLoadScenario') {
        const id = (res.json as { id?: unknown } | undefined)?.id;
        if (typeof id !== 'string') return;
        const headers = { ...req.headers };
        delete headers['content-type'];
        // Its rules would answer later requests (and count them: see the exclusions above).
        const removed = await caller(client).call('DELETE', `/_sandbox/scenarios/${encodeURIComponent(id)}`, { headers });
        if (removed.status !== 200) throw new Error(`a loaded scenario could not be removed: ${removed.status} ${removed.text.slice(0, 200)}`);
      } else if (reached === 'sandboxAdvanceClock' || reached === 'sandboxExpireTokens') {
        await renewTokens(world);
        await renewEmptyTokens();
      }
    };

    const started = Date.now();
    try {
      for (const op of operations) {
        const report: OperationReport = { checked: 0, onEmpty: 0, skipped: {} };
        reports[op.id] = report;
        // Once a run failed, fast-check shrinks it: those runs are neither counted nor skipped.
        let failed = false;
        await rebuild();
        try {
          await fc.assert(
            fc.asyncProperty(refusalCase, fc.constantFrom(false, false, false, true), async (kase, toEmpty) => {
              const view = viewFor(toEmpty, kase.env);
              const req = buildRequest(op, kase, view);
              const accountId = accountIdOf(view, req.accountName);
              await deps.scheduler.idle();
              const before = snapshot(accountId);
              const res = await client.send(req);
              if (res.status < 400 || res.status >= 500) {
                if (!failed) report.skipped[res.status] = (report.skipped[res.status] ?? 0) + 1;
                await keepWorldUsable(req, res);
                // Not a refusal: says nothing here, and fast-check draws another case instead.
                fc.pre(false);
              }
              await deps.scheduler.idle();
              const changes = changesBetween(accountId, before, snapshot(accountId));
              if (changes.length) {
                failed = true;
                throw new Error(`${op.id}: a refused request changed the store\n${describeRequest(req, res, toEmpty)}\n  changed: ${changes.join('\n           ')}`);
              }
              if (!failed) {
                report.checked += 1;
                if (toEmpty) report.onEmpty += 1;
              }
            }),
            // Shrinking sends more requests to a world that keeps changing: bounded in time.
            { seed: seedOf(op.id), numRuns: RUNS, interruptAfterTimeLimit: 30_000 },
          );
        } catch (error) {
          // fast-check's report (how many runs, the seed and path that replay it, the counterexample,
          // shrinks) and then, from the error it carries as its cause, the request and what changed.
          const text = String((error as Error).message);
          const lines = text.split('\n').map((line) => line.trim());
          const head = lines.slice(0, Math.max(1, lines.findIndex((line) => line.startsWith('Shrunk')) + 1)).filter(Boolean).map((line) => short(line, 240));
          const cause = (error as { cause?: unknown }).cause;
          const detail = cause instanceof Error ? cause.message : text.includes('Got error: ') ? text.slice(text.indexOf('Got error: ') + 11).split('\n    at ')[0] : '';
          failures[op.id] = [...head, short(detail, 2_000)].filter(Boolean).join('\n');
        }
      }
    } finally {
      client.close();
      await running.close();
      unguard();
    }

    const seconds = Math.round((Date.now() - started) / 1000);
    const lines = operations.map((op) => {
      const { checked, onEmpty, skipped } = reports[op.id] ?? { checked: 0, onEmpty: 0, skipped: {} };
      const skips = Object.entries(skipped).map(([status, n]) => `${status}×${n}`).join(' ');
      return `${op.id.padEnd(36)} ${String(checked).padStart(3)} refused checked (${String(onEmpty).padStart(2)} on the empty account)${skips ? `; skipped ${skips}` : ''}${failures[op.id] ? '; FAILED' : ''}`;
    });
    const total = Object.values(reports).reduce((sum, r) => sum + r.checked, 0);
    console.log(`refused writes: ${operations.length} write operations, ${total} refused requests checked, ${Object.keys(failures).length} failing, ${seconds} s\n${lines.join('\n')}`);

    // Every failing operation, with its shrunk request and what it changed.
    expect(failures).toEqual({});
    expect(loggedErrors).toEqual([]);
    // Both documents' write operations are all here, and each met refused requests (so the property
    // said something about every one of them).
    expect(operations.length).toBeGreaterThanOrEqual(68);
    expect(operations.filter((op) => op.doc === 'control').length).toBeGreaterThanOrEqual(20);
    expect(operations.filter((op) => !reports[op.id]?.checked).map((op) => op.id)).toEqual([]);
    // Skipped answers were not counted: each operation's count is exactly its refused runs.
    for (const op of operations) expect(reports[op.id].checked).toBe(RUNS);
  }, 600_000);

  it('hostile documents sent to every write operation that takes one are refused with a 4xx naming the field that changes nothing, or stored and read back, also after a restart on the data file', async () => {
    // scripts/fuzz/hostile.mjs: HOSTILE_RUNS generated hostile documents per operation (nested up to
    // 100,000 deep, cyclic YAML aliases, alias bombs, strings of megabytes, prototype-named keys, odd
    // numerals, values JSON cannot hold); `npm run fuzz` runs more.
    const report = await runHostile({ sandbox: { ...index, responseCheckerFor, loadDocument }, seed: SEED, runs: HOSTILE_RUNS });
    console.log(`${report.summary}\n${Object.entries(report.perOperation).map(([id, r]) => `${id.padEnd(36)} refused ${r.refused}, stored ${r.stored} (${Object.entries(r.statuses).map(([status, n]) => `${status}×${n}`).join(' ')})`).join('\n')}`);
    expect(report.failures).toEqual([]);
    expect(report.loggedErrors).toEqual([]);
    expect(report.operations.length).toBeGreaterThanOrEqual(45);
    expect(report.operations).toEqual(expect.arrayContaining(['sandboxLoadScenario', 'sandboxAccountingSync', 'sandboxFireEvent', 'createCustomer']));
    // Every operation met every one of its documents (none was skipped), and some were stored and read back after the restart.
    for (const id of report.operations) expect(report.perOperation[id].refused + report.perOperation[id].stored).toBe(id === 'sandboxLoadScenario' ? HOSTILE_RUNS * FREE_FORM_FACTOR : HOSTILE_RUNS);
    expect(report.perOperation.sandboxLoadScenario.stored).toBeGreaterThan(0);
    expect(report.probes).toBeGreaterThan(0);
  }, 300_000);

  it('accounting sync with two customers sharing an external_id stores nothing', async () => {
    const sb = await setup();
    const token = await sb.token();
    const api = sb.as(token);
    // An account holding objects (an account not stored yet would compare `undefined` with itself).
    expect((await api.post('/customers', { name: 'Existing', external_id: 'erp-0' })).status).toBe(201);
    const accountId = 'ptn_default:production';
    const account = () => storeJson(sb.deps.store.data.accounts[accountId]);
    const events = () => storeJson(sb.deps.store.data.accounts[accountId]?.collections.events);
    const before = { account: account(), events: events(), store: storeJson(sb.deps.store.data) };
    expect(before.account).toEqual(expect.any(String));
    expect(before.events).toEqual(expect.any(String));

    const res = await sb.http.post('/_sandbox/accounting/sync').set('Authorization', `Bearer ${token}`).send({
      customers: [{ name: 'A', external_id: 'erp-1' }, { name: 'B', external_id: 'erp-1' }],
    });
    expect(res.status).toBe(400);
    expect((res.body as { validation_errors?: unknown }).validation_errors).toEqual({ 'customers[1].external_id': 'is already used by another customer' });
    await sb.deps.scheduler.idle();
    // Exactly as it was: no customer A (created before B met the rule), no event, no id or counter used.
    expect(account()).toBe(before.account);
    expect(events()).toBe(before.events);
    expect(storeJson(sb.deps.store.data)).toBe(before.store);
    const customers = (await api.get('/customers')).body as { data: Array<{ name: string }> };
    expect(customers.data.map((c) => c.name)).toEqual(['Existing']);
  });
});
