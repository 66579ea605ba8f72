// Owns the hostile-document phase: one fast-check property per write operation of both documents
// that takes a body, each sending hostile documents (hostile-values.mjs: nested up to 100,000 deep,
// cyclic YAML aliases, alias bombs, strings of megabytes, prototype-named keys, odd numerals, values
// JSON cannot hold) in an otherwise valid request, to a sandbox with a data file. Each answer must be
// a 4xx that names its field (a 400 or 413 `validation_errors` that is not empty) and changes nothing
// in the store, or a 2xx whose stored value reads back: a loaded scenario answers its probe request
// with the body it was given, a created object answers its GET. After every operation, the sandbox
// is closed and started again on the same data file, and every probe must read the same again.
// Used by test/refused-writes.property.test.ts (a few runs per operation, in `npm test`) and by
// `npm run fuzz` (more runs).
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { buildRequest } from './cases.mjs';
import { judge, routedOperation, storeDiff, storeSnapshot } from './checks.mjs';
import { createClient } from './client.mjs';
import { operationsOf } from './operations.mjs';
import { startFuzzSandbox } from './sandbox.mjs';
import { buildWorld, renewTokens } from './world.mjs';
import { describeHostile, hostileJson, hostileJsonText, hostileYaml, jsonWithText, spotsOf, valueAt, yamlValue, yamlWith } from './hostile-values.mjs';

const MAX_U32 = 2 ** 32 - 1;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The scenario document holds the one free-form field (respond.body): it gets this many times the runs. */
export const FREE_FORM_FACTOR = 5;
/** Where a scenario rule's free-form value sits in the base document below. */
const RESPOND_BODY = ['rules', 0, 'respond', 'body'];

/** One hostile case: the valid request's seeds, where the hostile value goes, and the value. */
export const hostileCase = fc.record({
  env: fc.constantFrom('production', 'production', 'demo'),
  v1: fc.boolean(),
  jsfSeed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  picks: fc.array(fc.nat({ max: MAX_U32 }), { minLength: 24, maxLength: 24 }),
  spot: fc.nat(),
  /** For a scenario document: into `respond.body`, the one field its schema leaves free (most of the time). */
  intoFreeForm: fc.constantFrom(true, true, true, false),
  /** For an operation that takes YAML: sent as YAML, with a YAML-only value half of the time. */
  asYaml: fc.boolean(),
  json: hostileJson,
  yaml: fc.option(hostileYaml, { freq: 2 }),
});

/** A scenario document whose one rule answers only the probe request (GET /vendors with its header). */
function scenarioBase(probe) {
  return { name: `hostile ${probe}`, rules: [{ match: { operation: 'listVendors', header: { 'x-hostile-probe': probe } }, respond: { status: 200, body: { kept: true, list: [1, { a: 'b' }] } } }] };
}

/** The request of a case: the operation's valid request with the hostile value in its body. */
export function hostileRequest(op, kase, world, probe) {
  const valid = buildRequest(op, { env: kase.env, v1: kase.v1, jsfSeed: kase.jsfSeed, picks: kase.picks, mutation: { kind: 'valid' } }, world);
  const types = Object.keys(op.body?.content ?? {});
  const scenario = op.id === 'sandboxLoadScenario';
  let base = {};
  if (scenario) base = scenarioBase(probe);
  else if (valid.body !== undefined && valid.headers['content-type'] === 'application/json') base = JSON.parse(valid.body);
  const spots = spotsOf(base);
  const path = scenario && kase.intoFreeForm ? RESPOND_BODY : spots[kase.spot % spots.length];
  // The valid request's optional header parameters carry made-up values (an account selector that
  // names no account, say): left out, so the answer is about the document.
  const headers = { ...valid.headers };
  for (const header of op.headerParams) if (!header.required) delete headers[header.name.toLowerCase()];
  let body;
  let value = kase.json;
  if (types.includes('application/yaml') && kase.asYaml) {
    value = kase.yaml ?? kase.json;
    const yamlPart = kase.yaml ?? { kind: 'yamlScalar', text: hostileJsonText(kase.json, valueAt(base, path)) };
    body = yamlWith(base, path, yamlPart);
    headers['content-type'] = 'application/yaml';
  } else {
    body = jsonWithText(base, path, hostileJsonText(kase.json, valueAt(base, path)));
    headers['content-type'] = 'application/json';
  }
  return { request: { ...valid, headers, body }, what: `${describeHostile(value)} at ${path.join('.') || 'the root'}` };
}

/** What a stored document should read back as: the value at respond.body of the document as sent. */
function expectedScenarioBody(request, probe) {
  let doc;
  try {
    doc = request.headers['content-type'] === 'application/yaml' ? yamlValue(request.body) : JSON.parse(request.body);
  } catch {
    return undefined;
  }
  const rule = doc?.rules?.[0];
  if (rule?.match?.operation !== 'listVendors' || rule.match.header?.['x-hostile-probe'] !== probe || rule.respond?.status !== 200) return undefined;
  return { body: rule.respond.body };
}

/** The GET that reads an object a create answered (POST /customers -> GET /customers/{id}), if the document has one. */
function readerOf(op, operations) {
  return operations.find((other) => other.doc === op.doc && other.method === 'GET' && new RegExp(`^${op.template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/\\{[^}/]+\\}$`).test(other.template));
}

const short = (text, max = 300) => (text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text);

/** A fixed seed per operation, from its id. */
function seedOf(seed, operationId) {
  return (createHash('sha256').update(`${seed}|hostile|${operationId}`).digest().readUInt32BE(0) & 0x7fffffff) || 1;
}

/**
 * Run the phase. Options: sandbox (startSandbox, responseCheckerFor, loadDocument), seed, runs (per
 * operation), log. Answers a report: per operation, how many hostile documents were refused and
 * stored, the probes read back after the restart, and every failure with its request.
 */
export async function runHostile({ sandbox, seed = 40, runs = 3, log = () => undefined }) {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'hostile-'));
  const dataFile = join(dir, 'sandbox.json');
  const checkers = {
    api: sandbox.responseCheckerFor(sandbox.loadDocument('openapi').document),
    control: sandbox.responseCheckerFor(sandbox.loadDocument('control-plane').document),
  };
  const all = [
    ...operationsOf(sandbox.loadDocument('openapi').document, 'api'),
    ...operationsOf(sandbox.loadDocument('control-plane').document, 'control'),
  ];
  // Every write that takes a document; a full reset would only empty the world the others write to.
  const operations = all.filter((op) => WRITE_METHODS.has(op.method) && op.body && op.id !== 'sandboxReset');
  const perOperation = {};
  const failures = [];
  const probes = [];
  let current = await startFuzzSandbox(sandbox, { dataFile });
  let client = createClient(current.running.url);
  const loggedErrors = [...current.loggedErrors];
  const world = await buildWorld(client, { credentials: current.running.deps.config.credentials });
  let probeCount = 0;
  try {
    for (const op of operations) {
      const report = { refused: 0, stored: 0, statuses: {} };
      perOperation[op.id] = report;
      let failed = false;
      try {
        await fc.assert(fc.asyncProperty(hostileCase, (kase) => check(kase).catch((error) => {
          // Once a run failed, fast-check shrinks it: those runs are not counted.
          failed = true;
          throw error;
        })), { seed: seedOf(seed, op.id), numRuns: op.id === 'sandboxLoadScenario' ? runs * FREE_FORM_FACTOR : runs, interruptAfterTimeLimit: 60_000 });
        /** One case: sent, judged, and when stored, read back (its probe kept for after the restart). */
        async function check(kase) {
          const { deps, app } = current.running;
          const probe = `p${(probeCount += 1)}`;
          const { request, what } = hostileRequest(op, kase, world, probe);
          await deps.scheduler.idle();
          const before = storeSnapshot(deps);
          const res = await client.send(request);
          report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
          const said = `${op.id}: ${what}\n  ${request.method} ${request.path} [${request.headers['content-type']}] ${short(request.body ?? '', 200)}\n  answered ${res.status} ${short(res.text)}`;
          const reached = routedOperation(app, request.method, request.path);
          const checker = request.path.startsWith('/_sandbox') ? checkers.control : checkers.api;
          const problems = res.status === -1 ? [] : judge({ res, operationId: reached, checker, forced: false, method: request.method });
          if (problems.length) throw new Error(`${said}\n  ${problems.map(([kind, detail]) => `${kind}: ${short(detail)}`).join('\n  ')}`);
          if (res.status === -1) return;
          if (res.status >= 400 && res.status < 500) {
            const named = Object.keys(res.json?.validation_errors ?? {});
            if ((res.status === 413 || res.json?.code === 'bad_request') && !named.length) throw new Error(`${said}\n  a refusal of a document that names no field`);
            await deps.scheduler.idle();
            const after = storeSnapshot(deps);
            if (after.raw !== before.raw && after.normal() !== before.normal()) {
              throw new Error(`${said}\n  the refusal changed the store: ${storeDiff(JSON.parse(before.raw), JSON.parse(after.raw)).join('; ')}`);
            }
            if (!failed) report.refused += 1;
            return;
          }
          if (!failed) report.stored += 1;
          // Stored: it must read back, now and after the restart.
          if (reached === 'sandboxLoadScenario') {
            const expected = expectedScenarioBody(request, probe);
            if (expected) {
              const account = world.accounts[request.accountName];
              const read = { method: 'GET', path: `${account.env === 'demo' ? '/demo' : ''}/vendors`, headers: { authorization: `Bearer ${account.token}`, 'x-hostile-probe': probe } };
              let expectText;
              try {
                expectText = expected.body === undefined ? undefined : JSON.stringify(expected.body);
              } catch (error) {
                throw new Error(`${said}\n  stored a value JSON cannot write: ${error.message.split('\n')[0]}`);
              }
              const got = await client.send(read);
              if (got.status !== 200 || (expectText !== undefined && JSON.stringify(got.json) !== expectText)) {
                throw new Error(`${said}\n  stored, but its probe answered ${got.status} ${short(got.text)} instead of ${short(expectText ?? '(the documented example)')}`);
              }
              probes.push({ said, read, expectText: JSON.stringify(got.json) });
            }
          } else if (typeof res.json?.id === 'string') {
            const reader = readerOf(op, all);
            if (reader) {
              const read = { method: 'GET', path: `${request.path.split('?')[0]}/${encodeURIComponent(res.json.id)}`, headers: { authorization: request.headers.authorization } };
              const got = await client.send(read);
              if (got.status !== 200) throw new Error(`${said}\n  stored, but ${read.path} answered ${got.status} ${short(got.text)}`);
              probes.push({ said, read, expectText: JSON.stringify(got.json) });
            }
          }
          if (['sandboxAdvanceClock', 'sandboxExpireTokens', 'sandboxRevokeKey'].includes(reached)) await renewTokens(world);
        }
      } catch (error) {
        const cause = error?.cause instanceof Error ? error.cause.message : String(error?.message ?? error).split('\n').slice(0, 12).join('\n');
        failures.push(short(cause, 2_000));
      }
    }
    // Everything stored must load again: close, start on the same file, read every probe again.
    log(`  hostile documents: ${operations.length} operations, restarting on the data file for ${probes.length} probes`);
    await current.running.deps.scheduler.idle();
    client.close();
    await current.running.close();
    current.unguard();
    loggedErrors.push(...current.loggedErrors);
    current = await startFuzzSandbox(sandbox, { dataFile });
    client = createClient(current.running.url);
    for (const { said, read, expectText } of probes) {
      const got = await client.send(read);
      if (got.status !== 200 || JSON.stringify(got.json) !== expectText) {
        failures.push(`${said}\n  after a restart, ${read.method} ${read.path} answered ${got.status} ${short(got.text)} instead of ${short(expectText)}`);
      }
    }
  } finally {
    client.close();
    await current.running.close();
    current.unguard();
    loggedErrors.push(...current.loggedErrors);
    rmSync(dir, { recursive: true, force: true });
  }
  const totals = Object.values(perOperation).reduce((sum, r) => ({ refused: sum.refused + r.refused, stored: sum.stored + r.stored }), { refused: 0, stored: 0 });
  const seconds = Math.round((Date.now() - started) / 1000);
  const ok = failures.length === 0 && loggedErrors.length === 0;
  const summary = `hostile documents ${ok ? 'PASS' : 'FAIL'}: seed ${seed}, ${operations.length} operations × ${runs} (scenario documents × ${runs * FREE_FORM_FACTOR}), ${totals.refused} refused (4xx naming the field, store unchanged), ` +
    `${totals.stored} stored, ${probes.length} read back before and after a restart; ${failures.length} failures, ${loggedErrors.length} errors logged; ${seconds} s`;
  return { ok, summary, operations: operations.map((op) => op.id), perOperation, totals, probes: probes.length, failures, loggedErrors: loggedErrors.slice(0, 20), seconds };
}
