// A partner's Jest project on ES modules: run with NODE_OPTIONS=--experimental-vm-modules, no transform.
export default {
  testEnvironment: 'node',
  testTimeout: 30_000,
  transform: {},
  globalSetup: './global-setup.js',
  globalTeardown: './global-teardown.js',
};
