// Owns the bench's check of the Node it runs on against the package's `engines` range: the goals are
// for a Node the package supports, and another one gives other figures (on Node 20.20, RSS with 100k
// customers was 310 MB against 219 on 22.23, and POST / GET 0.35 against 0.53, the same hour). Apart
// from the bench, which runs on import, so that test/bench-stats.test.ts can pin it. semver reads the
// range as npm does, whatever form `engines` takes.
import semver from 'semver';

/**
 * What the bench says about running on `version`: a warning for its log and a note for the line
 * under its table, both empty when `engines` allows that version.
 */
export function nodeCheck(version, engines) {
  if (semver.satisfies(version, engines)) return { warning: '', note: '' };
  return {
    warning: `warning: node ${version} is outside the package's engines (${engines}); run the bench on a supported Node`,
    note: ` (outside the package's engines, ${engines}: not the figures the goals are for)`,
  };
}
