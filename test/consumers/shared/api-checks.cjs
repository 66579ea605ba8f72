// The checks both Jest projects run, given the package as each loaded it (require in jest-cjs, import
// in jest-esm): what differs between them is only how billing-sandbox reached the test file.
// `client` is billing-sandbox/client, the test client without the server.
module.exports = function apiChecks({ startSandbox, SandboxRequestError }, client, { test, expect }, label) {
  async function token(url) {
    const res = await fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(res.status).toBe(200);
    return (await res.json()).access_token;
  }

  test('the sandbox globalSetup started answers a token, makes a customer and lists it', async () => {
    const url = process.env.BILLING_SANDBOX_URL;
    const auth = { Authorization: `Bearer ${await token(url)}` };
    const made = await fetch(`${url}/customers`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `Jest ${label} Co`, email: `ap@jest-${label}.test`, external_id: `jest-${label}-1` }),
    });
    expect(made.status).toBe(201);
    const { id } = await made.json();
    const list = await (await fetch(`${url}/customers?limit=10`, { headers: auth })).json();
    expect(list.data.map((c) => c.id)).toContain(id);
  });

  test('a test file can start a sandbox of its own, with fixtures, the clock and typed errors', async () => {
    const sandbox = await startSandbox({ port: 0, seed: '7', rateLimit: 0, fixtures: 'demo' });
    try {
      const auth = { Authorization: `Bearer ${await sandbox.token()}` };
      const list = await (await fetch(`${sandbox.url}/customers?limit=100`, { headers: auth })).json();
      expect(list.data).toHaveLength(8);
      // The account clock runs an hour ahead of real time once advanced by an hour.
      expect(Date.parse(await sandbox.advanceClock(3600)) - Date.now()).toBeGreaterThan(3_500_000);
      const refused = await sandbox.reset({ token: 'not-a-token' }).catch((error) => error);
      expect(refused).toBeInstanceOf(SandboxRequestError);
      expect(refused.status).toBe(401);
    } finally {
      await sandbox.close();
    }
  });

  test('connect() and the typed api from billing-sandbox/client, one SandboxRequestError for both entries', async () => {
    expect(client.SandboxRequestError).toBe(SandboxRequestError);
    const sandbox = await client.connect({ baseUrl: process.env.BILLING_SANDBOX_URL });
    const partner = await sandbox.partner({ name: `jest ${label}` });
    const made = await partner.api.POST('/customers', { body: { name: `Client ${label} Co` } });
    expect((await partner.api.GET('/customers')).data.map((c) => c.id)).toEqual([made.id]);
    const missing = await partner.api.GET('/customers/{id}', { params: { path: { id: 'cus_missing' } } }).catch((error) => error);
    expect(missing).toBeInstanceOf(SandboxRequestError);
    expect([missing.status, missing.code]).toEqual([404, 'not_found']);
    expect((await partner.control.clock.advance('1d')).offset_seconds).toBeGreaterThan(86_000);
  });
};
