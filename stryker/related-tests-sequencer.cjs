// Jest test sequencer used only under Stryker (see stryker.config.mjs): in a mutant run, keep only
// the test files whose tests covered the active mutant in the dry run (as recorded by
// related-tests-environment.cjs), those with the most such tests first: they are the likeliest to
// kill it, and after a kill related-tests-runner.cjs loads no further file. Stryker already narrows
// the tests by name; this narrows the files, which is where the time goes (each file loads the
// whole app as ES modules). Anything unknown (no map, a mutant not in it) runs every file, as
// Stryker would.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const { MAP_FILE, ACTIVE_MUTANT, run } = require('./related-tests-environment.cjs');

let cached;

function relatedFiles(rootDir) {
  const file = path.join(rootDir, MAP_FILE);
  let mtimeMs;
  try {
    mtimeMs = fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  if (!cached || cached.file !== file || cached.mtimeMs !== mtimeMs) {
    cached = { file, mtimeMs, map: JSON.parse(fs.readFileSync(file, 'utf8')) };
  }
  return cached.map;
}

class RelatedTestsSequencer extends Sequencer {
  sort(tests) {
    const mutant = process.env[ACTIVE_MUTANT];
    run.failed = false;
    if (mutant === undefined || !tests.length) return super.sort(tests);
    const rootDir = tests[0].context.config.rootDir;
    const files = relatedFiles(rootDir)?.[mutant];
    if (!files) return super.sort(tests);
    const weight = (test) => files[path.relative(rootDir, test.path)] ?? 0;
    const chosen = tests.filter((test) => weight(test) > 0).sort((a, b) => weight(b) - weight(a));
    return chosen.length ? chosen : super.sort(tests);
  }
}

module.exports = RelatedTestsSequencer;
