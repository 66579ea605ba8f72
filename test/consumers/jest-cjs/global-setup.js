// Jest's globalSetup in a CommonJS project: require() the package and start one sandbox for the run.
const { startSandbox } = require('billing-sandbox');

module.exports = async function globalSetup() {
  const sandbox = await startSandbox({ port: 0, seed: '42', rateLimit: 0 });
  globalThis.__BILLING_SANDBOX__ = sandbox;
  process.env.BILLING_SANDBOX_URL = sandbox.url;
};
