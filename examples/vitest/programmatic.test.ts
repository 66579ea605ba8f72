// Example (quoted in docs/running.md, "Programmatic use"): every helper of startSandbox() once, at the
// top level of a Vitest file, then checks of what each returned.
import { expect, test } from 'vitest';

// #region programmatic
import { startSandbox, SandboxRequestError, type RunningSandbox } from 'billing-sandbox';

const sandbox: RunningSandbox = await startSandbox({ port: 0, seed: '42', rateLimit: 0, fixtures: 'demo', scenarios: ['slow-api'] });
sandbox.url;                          // http://127.0.0.1:<free port>; the demo API is `${sandbox.url}/demo`
sandbox.credentials.production;       // { client_id, client_secret } of the default partner
const token = await sandbox.token();  // an access token (sandbox.token('demo') for the demo environment)

const now = await sandbox.advanceClock(3600);                 // the default production account's clock, running what falls due
await sandbox.advanceClock(86400, { environment: 'demo' });   // or { token } for another partner's account
const { id } = await sandbox.loadScenario({
  name: 'list throttled once',
  rules: [{ match: { operation: 'listCustomers' }, nth: 2, respond: { status: 429 } }],
});                                   // an object, or JSON/YAML text; { token } / { environment } selects the account
const removed = await sandbox.clearScenarios();               // that account's scenarios removed; resolves to how many
const saved = await sandbox.saveSnapshot('after-setup');      // the account kept as a snapshot of its partner: { bytes, counts }
await sandbox.restoreSnapshot('after-setup');                 // the account put back as saved (before each test, say)
const refused = await sandbox.reset({ token: 'not-a-token' }).catch((e) => e instanceof SandboxRequestError && e.status); // 401
await sandbox.reset();                // everything back to the start state; reset({ token }) one account only
await sandbox.close();                // in-flight requests finish, the data file is flushed; safe to call twice
// #endregion programmatic

test('each helper answered what the docs say', () => {
  expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(sandbox.credentials.production).toEqual({ client_id: 'sandbox_client_id', client_secret: 'sandbox_client_secret' });
  expect(token.split('.')).toHaveLength(3);
  expect(Date.parse(now) - Date.now()).toBeGreaterThan(3_500_000);
  expect(id).toEqual(expect.any(String));
  expect(removed).toBe(1);
  expect(saved.counts.customers).toBeGreaterThan(0);
  expect(refused).toBe(401);
});
