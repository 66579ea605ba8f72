// Owns the bench's arithmetic (scripts/bench.mjs): the middle of the rounds, the nearest-rank
// percentile of the answers' latencies, the round order, the order of the sandbox's interleaved
// slices and the figures of a row made of several, and the sandbox's rows paired round by round. Apart from the bench, which runs on import, so that test/bench-stats.test.ts can pin the
// figures the goals' verdicts come from.

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values) {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The value below which a share `q` of the values lie (the nearest-rank percentile, as HdrHistogram gives it); NaN for none. */
export function percentile(values, q) {
  if (!values.length) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

/** Every other round in the reverse order: a target measured last in one round is first in the next. */
export function inRoundOrder(list, round) {
  return round % 2 ? list : [...list].reverse();
}

/**
 * Two rows of the sandbox against each other, round by round: in each round the two ran one right
 * after the other, and the machine's speed drifts over minutes, so the value is the median of each
 * round's own ratio (a round where either row has no figure is left out). The ratio of the medians
 * is kept beside it, for the table.
 */
export function paired(a, b) {
  const rounds = a.map((value, i) => value / b[i]).filter(Number.isFinite);
  return { value: median(rounds), rounds, ofMedians: median(a) / median(b) };
}

/**
 * The order of `slices` passes over `rows`, every other pass reversed (A B C, C B A, A B C, ...):
 * each row gets `slices` slices, and a drift of the machine's speed that is steady over the passes
 * falls on every row alike instead of on the row that came last.
 */
export function sliceOrder(rows, slices) {
  const order = [];
  for (let pass = 0; pass < slices; pass++) order.push(...(pass % 2 ? [...rows].reverse() : rows));
  return order;
}

/**
 * One row's figures from its runs (a whole run, or the slices of one round): requests per second of
 * the 2xx answers over the time measured, p99 of all their latencies, the target's CPU per answer.
 * A run is { seconds, answered, bad, cpu (s), latencies (ms) }.
 */
export function combined(runs) {
  let seconds = 0;
  let answered = 0;
  let bad = 0;
  let cpu = 0;
  const latencies = [];
  for (const run of runs) {
    seconds += run.seconds;
    answered += run.answered;
    bad += run.bad;
    cpu += run.cpu;
    for (const ms of run.latencies) latencies.push(ms);
  }
  return {
    rps: seconds ? answered / seconds : Number.NaN,
    p99: percentile(latencies, 0.99),
    cpuUs: answered ? (cpu * 1e6) / answered : Number.NaN,
    answered,
    bad,
  };
}
