// Mutation testing (`npm run mutate`; docs/contributing.md). Not part of `npm test`: a full run
// takes long and is for finding what the suite would not notice, file by file.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  // The core files the store and unit-of-work rework leans on (issue 19); add files here as their
  // tests are made strong enough to hold a score.
  mutate: [
    'src/domain/machine.ts',
    'src/http/pagination.ts',
    'src/store/idempotency.ts',
    'src/domain/bills/**/*.ts',
    'src/webhooks/queue.ts',
    'src/clock/scheduler.ts',
    'src/auth/tokens.ts',
    'src/scenarios/engine.ts',
  ],
  testRunner: 'jest',
  // The suite is native ESM through ts-jest (jest.config.js): the runner's processes need vm modules.
  testRunnerNodeArgs: ['--experimental-vm-modules'],
  jest: {
    projectType: 'custom',
    configFile: 'jest.config.js',
    config: {
      // Per-test coverage (below) tells which tests reach a mutant; these turn that into which test
      // FILES to load for it, likeliest killer first, and stop at the first failing test, so a
      // mutant run does not load all of test/ (stryker/*.cjs).
      testEnvironment: './stryker/related-tests-environment.cjs',
      testSequencer: './stryker/related-tests-sequencer.cjs',
      runner: './stryker/related-tests-runner.cjs',
    },
    // Every test file imports the whole app, so --findRelatedTests would name them all anyway.
    enableFindRelatedTests: false,
  },
  coverageAnalysis: 'perTest',
  // A mutant in code that only runs while modules load (a table literal, a constant) would need the
  // whole suite, minutes, per mutant: such mutants are reported as ignored, not run. The tables
  // they hold are pinned by tests that compare them whole (e.g. "the bill state table").
  ignoreStatic: true,
  checkers: ['typescript'],
  // Stryker writes `// @ts-nocheck` atop the files it may mutate or that tests load; by default that
  // is every JavaScript and TypeScript file, examples/ included, whose copies the docs test then finds
  // different from the docs that quote them. Only the sources and the tests need it.
  disableTypeChecks: '{src,test}/**/*.{ts,mts,cts,js,mjs,cjs}',
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  // A rerun tests only mutants whose code or covering tests changed. The file lives with the
  // reports (git-ignored): committed, it would conflict on every merge of parallel work.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  thresholds: { high: 90, low: 85, break: null },
  // The machine is shared: two processes at most, nice'd by the npm script.
  concurrency: 2,
  timeoutMS: 10000,
  // The dry run is the whole suite with coverage: 5+ minutes on an idle machine, far more on a busy one.
  dryRunTimeoutMinutes: 90,
  ignorePatterns: ['dist', 'reports', 'coverage', '.sandbox-data', '*.tgz'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
