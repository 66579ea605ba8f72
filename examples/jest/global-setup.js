// Starts the sandbox once per `jest` run. Workers are forked after this, so they inherit the env.
import { startSandbox } from 'billing-sandbox';

export default async function globalSetup() {
  const sandbox = await startSandbox({ port: 0, seed: '42', rateLimit: 0 });
  globalThis.__BILLING_SANDBOX__ = sandbox; // only globalTeardown (same process) can read this
  process.env.BILLING_SANDBOX_URL = sandbox.url;
}
