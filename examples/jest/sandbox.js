// Test helpers: one sandbox for the whole run (started by global-setup.js, reached through
// BILLING_SANDBOX_URL), and a partner of its own for each test file, so files can run in parallel.
import { connect } from 'billing-sandbox';

/** A fresh partner with its own empty accounts: `api`, `control`, `apiUrl`, `token()`. */
export async function newPartner(name) {
  const baseUrl = process.env.BILLING_SANDBOX_URL;
  if (!baseUrl) throw new Error('BILLING_SANDBOX_URL is not set: run through jest.config.js (globalSetup)');
  const sandbox = await connect({ baseUrl });
  return sandbox.partner({ name });
}
