// Owns "did you mean": the valid name nearest to a mistyped one, for startSandbox() options and the
// command line's commands and topics. fastest-levenshtein does the edit distance (a small, well-kept
// library that ships both CommonJS and ESM, so the programmatic API stays loadable from either).
import { distance } from 'fastest-levenshtein';

/**
 * The candidate nearest to `name`. A candidate that contains the name or is contained in it wins
 * first (`data` -> `dataFile`, where plain edit distance would tie with `host` or `seed`); then the
 * smallest edit distance, ignoring case; ties go to the earlier candidate.
 */
export function nearest(name: string, candidates: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const score = (candidate: string) => distance(lower, candidate.toLowerCase());
  const related = candidates.filter((c) => c.toLowerCase().includes(lower) || lower.includes(c.toLowerCase()));
  const pool = related.length ? related : candidates;
  let best: string | undefined;
  for (const candidate of pool) if (best === undefined || score(candidate) < score(best)) best = candidate;
  return best;
}

/** ` did you mean X?` when a candidate exists, for the end of an error message. */
export function didYouMean(name: string, candidates: readonly string[]): string {
  const found = nearest(name, candidates);
  return found ? `; did you mean ${found}?` : '';
}
