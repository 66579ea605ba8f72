// Jest's globalSetup in an ES module project: import the package and start one sandbox for the run.
import { startSandbox } from 'billing-sandbox';

export default async function globalSetup() {
  const sandbox = await startSandbox({ port: 0, seed: '42', rateLimit: 0 });
  globalThis.__BILLING_SANDBOX__ = sandbox;
  process.env.BILLING_SANDBOX_URL = sandbox.url;
}
