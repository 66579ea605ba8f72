// Owns the pieces of issue 18's property (test/refused-writes.property.test.ts drives it): a write
// the sandbox refuses (any 4xx) leaves everything the store keeps byte for byte as it was. The case
// arbitrary is the fuzzer's (cases.mjs) with a mutated request always (a valid one would mostly be
// accepted, and say nothing here); the rest are the fuzzer's own modules, passed through with types
// (refused-writes.d.mts) so the TypeScript test needs no declarations of the other modules.
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

export { createClient, buildRequest, routedOperation, storeDiff, startFuzzSandbox, operationsOf, buildWorld, caller, renewTokens };
