// Jest test runner used only under Stryker (see stryker.config.mjs): in a mutant run, once a test
// has failed (the mutant is killed) the remaining test files are not loaded at all. Loading a file
// costs seconds (it imports the whole app as ES modules), and a mutant in widely used code is
// covered by most of test/. Stryker cannot use Jest's own bail (it exits the process when run
// programmatically). Outside mutant runs this is Jest's default runner, unchanged.
'use strict';
const TestRunner = require('jest-runner').default;
const { ACTIVE_MUTANT, run } = require('./related-tests-environment.cjs');

class BailingTestRunner extends TestRunner {
  async runTests(tests, watcher, options) {
    if (process.env[ACTIVE_MUTANT] === undefined || !options.serial) return super.runTests(tests, watcher, options);
    for (const test of tests) {
      if (run.failed || watcher.isInterrupted()) break;
      await super.runTests([test], watcher, options);
    }
  }
}

module.exports = BailingTestRunner;
