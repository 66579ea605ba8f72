// The fuzzer's slice in the test suite: the same engine as `npm run fuzz` (scripts/fuzz/), on the
// TypeScript sources, with a fixed seed: 2,000 generated requests spread over every operation of
// both OpenAPI documents (valid ones and mutations of them, hostile documents among them), then 200
// isolation attempts, then one hostile document per write operation that takes one (five for
// scenario documents) on a sandbox with a data file, restarted at the end.
import { describe, expect, it } from '@jest/globals';
import { DEFAULT_SEED, runFuzz } from '../scripts/fuzz/engine.mjs';
import * as index from '../src/index.js';
import { responseCheckerFor } from '../src/http/response-check.js';
import { loadDocument } from '../src/http/openapi.js';

describe('fuzz slice', () => {
  it('answers 2,000 generated requests without a 5xx, an invalid body or a changed state, leaks nothing in 200 isolation attempts, and refuses or stores (readably, across a restart) hostile documents', async () => {
    const result = await runFuzz({ sandbox: { ...index, responseCheckerFor, loadDocument }, seed: DEFAULT_SEED, requests: 2_000, isolation: 200, hostile: 1 });
    console.log(result.summary);
    expect(result.samples).toEqual({});
    expect(result.crashes).toEqual([]);
    expect(result.loggedErrors).toEqual([]);
    expect(result.isolation.samples).toEqual([]);
    // Hostile documents (nested up to 100,000 deep, cyclic aliases, huge strings, prototype-named keys,
    // odd numerals) went to the operations among the mutations, and in a phase of their own.
    expect(result.hostileRequests).toBeGreaterThan(100);
    expect(result.hostile?.failures).toEqual([]);
    expect(result.hostile?.loggedErrors).toEqual([]);
    expect(result.hostile?.operations.length).toBeGreaterThanOrEqual(45);
    expect(result.totals.requests).toBeGreaterThanOrEqual(1_980);
    expect(Object.keys(result.perOperation).length).toBeGreaterThanOrEqual(100);
    expect(result.isolation.attempts).toBe(200);
    // Another account's id in the path answers the unknown-object 404, exactly as a made-up id does,
    // every time (each attempt sends a body the operation's validation accepts, so it reaches the lookup).
    expect(result.isolation.pathIds.attempts).toBeGreaterThan(100);
    expect(result.isolation.pathIds.asUnknown).toBe(result.isolation.pathIds.attempts);
    expect(result.isolation.pathIds.notFound).toBe(result.isolation.pathIds.attempts);
  }, 600_000);
});
