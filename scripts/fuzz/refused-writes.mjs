// Owns the property of issue 18: a write the sandbox refuses (any 4xx) leaves everything the store
// keeps (every account's objects, event log, ids, counters, module state, due work; partners and keys)
// byte for byte as it was. fast-check draws the operation and the case (a valid request, then one
// mutation of it: a field replaced with an odd value, deleted or added, the whole body, the content
// type, a path id, the query, the credentials, a header, the method) from the fuzzer's own
// arbitraries (cases.mjs), sends it through HTTP to an in-process sandbox holding objects of every
// kind, and compares the store's JSON before and after, exactly.
import fc from 'fast-check';
import { createClient } from './client.mjs';
import { buildRequest, mutation } from './cases.mjs';
import { routedOperation, storeDiff } from './checks.mjs';
import { startFuzzSandbox } from './engine.mjs';
import { operationsOf } from './operations.mjs';
import { buildWorld, caller, renewTokens } from './world.mjs';

const MAX_U32 = 2 ** 32 - 1;
export const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A case whose request is mutated (a valid one would mostly be accepted, and say nothing here). */
export const refusalCase = fc.record({
  env: fc.constantFrom('production', 'production', 'production', 'demo'),
  v1: fc.boolean(),
  jsfSeed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  picks: fc.array(fc.nat({ max: MAX_U32 }), { minLength: 24, maxLength: 24 }),
  mutation: mutation.filter((m) => m.kind !== 'valid'),
});

/**
 * Run the property over every write operation of both documents. Answers, per operation, how many
 * refused requests were checked and the statuses seen; throws fast-check's report (with the shrunk
 * request and what changed) on the first refused request that changed the store.
 */
export async function checkRefusedWrites({ sandbox, seed, runs }) {
  const { running, loggedErrors, unguard } = await startFuzzSandbox(sandbox);
  const client = createClient(running.url);
  const { deps, app } = running;
  const operations = [
    ...operationsOf(sandbox.loadDocument('openapi').document, 'api'),
    ...operationsOf(sandbox.loadDocument('control-plane').document, 'control'),
  ].filter((op) => WRITE_METHODS.has(op.method.toUpperCase()));
  const checked = Object.fromEntries(operations.map((op) => [op.id, 0]));
  const statuses = {};
  let world;
  const rebuild = async () => { world = await buildWorld(client, { credentials: deps.config.credentials }); };
  try {
    await rebuild();
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: operations.length - 1 }), refusalCase, async (index, kase) => {
        const op = operations[index];
        const req = buildRequest(op, kase, world);
        await deps.scheduler.idle();
        const before = JSON.stringify(deps.store.data);
        const res = await client.send(req);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status < 400 || res.status >= 500) {
          await keepWorldUsable(op, req, res);
          return true;
        }
        await deps.scheduler.idle();
        const after = JSON.stringify(deps.store.data);
        if (after !== before) {
          const changed = storeDiff(JSON.parse(before), JSON.parse(after)).join('; ');
          throw new Error(`${req.method} ${req.path.slice(0, 200)} answered ${res.status} ${res.text.slice(0, 200)} and changed the store: ${changed}`);
        }
        checked[op.id] += 1;
        return true;
      }),
      { seed, numRuns: runs, endOnFailure: true },
    );
    return { operations: operations.map((op) => op.id), checked, statuses, loggedErrors: loggedErrors.slice(0, 20) };
  } finally {
    client.close();
    await running.close();
    unguard();
  }

  /** A request that was accepted may have reset the world, moved its clock or loaded a scenario. */
  async function keepWorldUsable(op, req, res) {
    if (res.status < 200 || res.status >= 300) return;
    const reached = routedOperation(app, req.method, req.path);
    if (reached === 'sandboxReset') await rebuild();
    else if (reached === 'sandboxLoadScenario' && res.json?.id) {
      const headers = { ...req.headers };
      delete headers['content-type'];
      await caller(client).call('DELETE', `/_sandbox/scenarios/${encodeURIComponent(res.json.id)}`, { headers });
    } else if (reached === 'sandboxAdvanceClock' || reached === 'sandboxExpireTokens') {
      await renewTokens(world);
    }
  }
}

// The pieces test/refused-writes.property.test.ts drives itself, one property per write operation
// (typed in refused-writes.d.mts, so the TypeScript test needs no declarations of the other modules).
export { createClient, buildRequest, routedOperation, storeDiff, startFuzzSandbox, operationsOf, buildWorld, caller, renewTokens };
