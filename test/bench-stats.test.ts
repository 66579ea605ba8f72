// The bench's arithmetic (scripts/bench/stats.mjs), which every verdict of `npm run bench` comes from:
// the median of the rounds, the nearest-rank p99 of the answers' own latencies, the reversed order of
// every other round, the order and sum of the sandbox's interleaved slices, and the sandbox's rows
// paired round by round. The paired figures are those of a
// real run (2026-11-27 11:31, POST / GET at 1,000 customers), as the bench printed them. And its
// check of the Node it runs on against the package's engines (scripts/bench/node-check.mjs).
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { combined, inRoundOrder, median, paired, percentile, sliceOrder } from '../scripts/bench/stats.mjs';
import { nodeCheck } from '../scripts/bench/node-check.mjs';

describe('bench arithmetic', () => {
  it('interleaves the slices, every other pass reversed: each row gets as many, and a steady drift falls on all alike', () => {
    expect(sliceOrder(['get@100k', 'get@1k', 'post@1k'], 4)).toEqual([
      'get@100k', 'get@1k', 'post@1k', 'post@1k', 'get@1k', 'get@100k',
      'get@100k', 'get@1k', 'post@1k', 'post@1k', 'get@1k', 'get@100k',
    ]);
    // A machine slowing by 1 us a slice: each row's mean slice position, so its share of the drift, is the same.
    const order = sliceOrder(['a', 'b', 'c'], 4);
    const meanAt = (row: string) => order.reduce((sum, r, i) => sum + (r === row ? i : 0), 0) / 4;
    expect(new Set(['a', 'b', 'c'].map(meanAt))).toEqual(new Set([5.5]));
    expect(sliceOrder(['a'], 3)).toEqual(['a', 'a', 'a']);
  });

  it('sums the slices of a row: answers over the time measured, CPU per answer, p99 of every answer, errors counted', () => {
    const slices = [
      { seconds: 2, answered: 30_000, bad: 0, cpu: 1.2, latencies: [1, 2, 3] },
      { seconds: 2.02, answered: 20_000, bad: 3, cpu: 1.3, latencies: [9, 4] },
    ];
    const row = combined(slices);
    expect(row.rps).toBeCloseTo(50_000 / 4.02, 6);
    expect(row.cpuUs).toBeCloseTo(50, 6);
    expect(row.p99).toBe(9);
    expect(row).toMatchObject({ answered: 50_000, bad: 3 });
    // One slice: its own figures.
    expect(combined([slices[0]])).toMatchObject({ rps: 15_000, cpuUs: 40, p99: 3 });
    expect(combined([]).rps).toBeNaN();
  });

  it('takes the middle value, or the mean of the two middle ones, without reordering its input', () => {
    const rounds = [143, 103, 111];
    expect(median(rounds)).toBe(111);
    expect(rounds).toEqual([143, 103, 111]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNaN();
  });

  it('gives the nearest-rank percentile: the smallest value with that share of the values at or below it', () => {
    const latencies = Array.from({ length: 200 }, (_, i) => 200 - i); // 200 down to 1, in no order the percentile relies on
    expect(percentile(latencies, 0.99)).toBe(198);
    expect(percentile(latencies, 0.5)).toBe(100);
    expect(percentile(latencies, 1)).toBe(200);
    expect(percentile(latencies, 0)).toBe(1);
    // Fractions of a millisecond are kept (autocannon's own histogram counts whole milliseconds).
    expect(percentile([7.25, 9.125, 8.5], 0.99)).toBe(9.125);
    expect(percentile([], 0.99)).toBeNaN();
  });

  it('measures every other round in the reverse order, so no target is always last', () => {
    const targets = ['express', 'prism', 'sandbox'];
    expect(inRoundOrder(targets, 1)).toEqual(['express', 'prism', 'sandbox']);
    expect(inRoundOrder(targets, 2)).toEqual(['sandbox', 'prism', 'express']);
    expect(inRoundOrder(targets, 3)).toEqual(['express', 'prism', 'sandbox']);
    expect(targets).toEqual(['express', 'prism', 'sandbox']);
  });

  it('pairs two rows round by round: the median of the rounds\' own ratios, with the ratio of the medians beside it', () => {
    const postRps = [9672, 10075, 7543];
    const getRps = [13533, 20228, 19531];
    const postGet = paired(postRps, getRps);
    expect(postGet.rounds.map((r) => r.toFixed(2))).toEqual(['0.71', '0.50', '0.39']);
    expect(postGet.value.toFixed(3)).toBe('0.498');
    expect(postGet.ofMedians.toFixed(3)).toBe('0.495');
    // A slow minute in round 2 slows its GETs: the ratio of the medians pairs one round's POSTs with
    // another round's GETs (100 / 400); the paired value compares what ran side by side.
    const drift = paired([80, 100, 300], [100, 400, 400]);
    expect(drift.rounds).toEqual([0.8, 0.25, 0.75]);
    expect(drift.value).toBe(0.75);
    expect(drift.ofMedians).toBe(0.25);
  });

  it('leaves out a round where either row has no figure', () => {
    const result = paired([10, Number.NaN, 30, 8], [20, 20, 0, 16]);
    expect(result.rounds).toEqual([0.5, 0.5]);
    expect(result.value).toBe(0.5);
    expect(paired([], []).value).toBeNaN();
  });
});

describe('bench Node check', () => {
  const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node;

  it('says nothing on a Node the package supports, and warns and notes on one it does not', () => {
    expect(nodeCheck('v22.23.3', engines)).toEqual({ warning: '', note: '' });
    const old = nodeCheck('v20.20.2', engines);
    expect(old.warning).toBe(`warning: node v20.20.2 is outside the package's engines (${engines}); run the bench on a supported Node`);
    expect(old.note).toBe(` (outside the package's engines, ${engines}: not the figures the goals are for)`);
  });

  it('reads the range as npm does, whatever its form', () => {
    expect(nodeCheck('v22.19.0', '>=22.19').warning).toBe('');
    expect(nodeCheck('v22.18.9', '>=22.19').warning).not.toBe('');
    // An upper bound and an alternative, which a reading of ">=X.Y" alone would get wrong.
    expect(nodeCheck('v23.1.0', '^22.19 || >=24').warning).not.toBe('');
    expect(nodeCheck('v24.0.0', '^22.19 || >=24').warning).toBe('');
  });
});
