// Jest runs the TypeScript sources as native ESM through ts-jest, transpiling only (tsc --noEmit
// type-checks in `npm test`). ts-jest rather than swc: swc's platform binaries are not all on the
// registry mirror this project installs from, which breaks `npm ci` (see README, Gaps and choices).
export default {
  roots: ['<rootDir>/test'],
  // Partners' projects, run against the packed tarball by scripts/consumers.sh, not by this suite.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/consumers/'],
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testTimeout: 20000,
  // Both cores: Jest's default (cores - 1) leaves one worker on a 2-core CI machine, which ran the
  // files one after another while the main process idled.
  maxWorkers: 2,
};
