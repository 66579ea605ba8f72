// Example (quoted in docs/running.md, "Programmatic use"): startSandbox()'s interface once, at the top
// level of a Vitest file (the typed api, the control plane, a partner, connect()), then checks of what
// each returned.
import { expect, test } from 'vitest';

// #region programmatic
import { connect, startSandbox, SandboxRequestError, type RunningSandbox } from 'billing-sandbox';

const sandbox: RunningSandbox = await startSandbox({ port: 0, seed: '42', rateLimit: 0, fixtures: 'demo' });
sandbox.url;                          // http://127.0.0.1:<free port>; the demo API is `${sandbox.url}/demo`
const { api, control } = sandbox;     // as the default partner's production key

const customer = await api.POST('/customers', { body: { name: 'Acme Corp', email: 'ap@acme.test' } });   // a typed Customer
const page = await api.GET('/customers', { params: { query: { limit: 5 } } });                           // { data, ...cursors }
const missing = await api.GET('/customers/{id}', { params: { path: { id: 'cus_missing' } } })
  .catch((e) => e instanceof SandboxRequestError && [e.status, e.code]);                                   // [404, 'not_found']
const { response } = await api.raw.GET('/customers');                                                     // openapi-fetch itself: no throw

const clock = await control.clock.advance('31d');            // this account's clock, running what falls due
const event = await control.trigger('customer_created');      // fired as the real operation would (typed per topic)
const events = await control.events.list({ topic: 'customer_created' });
const { id } = await control.scenarios.load({ name: 'list throttled once', rules: [{ match: { operation: 'listCustomers' }, nth: 2, respond: { status: 429 } }] });
const removed = await control.scenarios.clear();              // how many
const journal = await control.journal({ path: '/customers' }); // the API requests, newest first

const partner = await sandbox.partner({ name: 'one test' });  // a fresh partner: its own keys, accounts, api and control
await partner.api.POST('/customers', { body: { name: 'Only mine' } });
const again = await connect({ baseUrl: sandbox.url, clientId: partner.clientId, clientSecret: partner.clientSecret });
const seen = await again.api.GET('/customers');                // a sandbox already running: the same interface

const saved = await control.snapshots.save('after-setup');    // this account kept as a snapshot: { bytes, counts }
await control.snapshots.restore('after-setup');                // put back as saved (before each test, say)

await partner.control.reset();        // that account back to empty
await sandbox.reset();                // everything back to the start state (partners made since are gone)
await sandbox.close();                // in-flight requests finish, the data file is flushed; safe to call twice
// #endregion programmatic

test('each call answered what the docs say', () => {
  expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(customer.id).toMatch(/^cus_/);
  expect(page.data).toHaveLength(5);
  expect(missing).toEqual([404, 'not_found']);
  expect(response.status).toBe(200);
  expect(Date.parse(clock.now) - Date.now()).toBeGreaterThan(30 * 86_400_000);
  expect(event.topic).toBe('customer_created');
  expect(events.data.map((e) => e.entity_id)).toContain(event.entity_id);
  expect(id).toEqual(expect.any(String));
  expect(removed).toBe(1);
  expect(journal.map((entry) => entry.method)).toEqual(expect.arrayContaining(['GET', 'POST']));
  expect(partner.clientId).toMatch(/^ck_/);
  expect(seen.data.map((c) => c.name)).toEqual(['Only mine']);
  expect(saved.counts.customers).toBeGreaterThan(0);
});
