// A partner's Jest project as `npx jest --init` leaves it: CommonJS, no transform settings.
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testTimeout: 30_000,
  globalSetup: '<rootDir>/global-setup.js',
  globalTeardown: '<rootDir>/global-teardown.js',
};
