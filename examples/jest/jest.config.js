// One sandbox for the whole Jest run: globalSetup starts it on a free port before any test file,
// globalTeardown stops it after the last. Test files reach it through BILLING_SANDBOX_URL.
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/**/*.test.js'],
  transform: {},
  globalSetup: '<rootDir>/global-setup.js',
  globalTeardown: '<rootDir>/global-teardown.js',
};
