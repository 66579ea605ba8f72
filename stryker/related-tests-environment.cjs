// Jest environment used only under Stryker (see stryker.config.mjs). During the dry run, Stryker's
// per-test coverage says which tests reach which mutant; this environment turns that into "which
// test files, with how many such tests" and writes it to the sandbox's root, so that
// related-tests-sequencer.cjs can load only those files for each mutant (without it every mutant
// run would load, transform and link all of test/ only to skip most of it by name).
// In a mutant run it also bails: once a test fails the mutant is killed, so the remaining tests of
// the file are skipped (and related-tests-runner.cjs loads no further file).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

const MAP_FILE = 'stryker-related-tests.json';
const ACTIVE_MUTANT = '__STRYKER_ACTIVE_MUTANT__';

/** Mutant id -> { test file (relative to rootDir) -> how many of its tests reach the mutant }. */
const related = {};

/**
 * Whether a test of the current mutant run failed (reset by the sequencer when a run starts). A
 * process global, not module state: Stryker may load this file from another directory than Jest
 * loads the sequencer's and runner's copy from, and all must share it.
 */
const run = (globalThis[Symbol.for('stryker-related-tests.run')] ??= { failed: false });

/** A test's full name as Stryker's own environment names it (its per-test coverage key). */
function fullName(test) {
  const names = [];
  for (let block = test.parent; block && block.parent; block = block.parent) names.unshift(block.name);
  return `${names.join(' ')} ${test.name}`.trimStart();
}

class RelatedTestsEnvironment extends TestEnvironment {
  #names = new Set();
  #testPath;
  #rootDir;

  constructor(config, context) {
    super(config, context);
    this.#testPath = context.testPath;
    this.#rootDir = config.projectConfig.rootDir;
  }

  handleTestEvent(event) {
    const mutantRun = process.env[ACTIVE_MUTANT] !== undefined;
    if (event.name === 'test_start') {
      this.#names.add(fullName(event.test));
      // jest-circus reads the mode after this event: a skipped test runs no hooks either.
      if (mutantRun && run.failed) event.test.mode = 'skip';
    } else if (event.name === 'test_done' && mutantRun && event.test.errors.length) {
      run.failed = true;
    }
  }

  async teardown() {
    this.#record();
    await super.teardown();
  }

  #record() {
    // Only the dry run (no active mutant) carries per-test coverage.
    if (process.env[ACTIVE_MUTANT] !== undefined) return;
    const context = this.global[this.global.__strykerGlobalNamespace__ ?? '__stryker__'];
    const perTest = context?.mutantCoverage?.perTest;
    if (!perTest) return;
    const file = path.relative(this.#rootDir, this.#testPath);
    for (const name of this.#names) {
      for (const mutant of Object.keys(perTest[name] ?? {})) {
        const files = (related[mutant] ??= {});
        files[file] = (files[file] ?? 0) + 1;
      }
    }
    fs.writeFileSync(path.join(this.#rootDir, MAP_FILE), JSON.stringify(related));
  }
}

module.exports = RelatedTestsEnvironment;
module.exports.MAP_FILE = MAP_FILE;
module.exports.ACTIVE_MUTANT = ACTIVE_MUTANT;
module.exports.run = run;
