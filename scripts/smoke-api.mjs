// The API check both smokes (packed tarball, container image) run against a started sandbox:
// health, a token with the default credentials, a customer created, read back and listed, a scenario
// document loaded through its JSON Schema (and a bad one refused), and the OpenAPI document served.
// Usage: node scripts/smoke-api.mjs BASE_URL EXTERNAL_ID [MIN_CUSTOMERS] [LABEL]
const [base, externalId, minimumText = '1', label = 'smoke'] = process.argv.slice(2);

async function expectStatus(res, status, what) {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return res;
}

await expectStatus(await fetch(`${base}/_sandbox/health`), 200, 'health');
const basic = Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64');
const tokenRes = await fetch(`${base}/oauth/token`, {
  method: 'POST',
  headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
  body: 'grant_type=client_credentials',
});
const { access_token: token } = await (await expectStatus(tokenRes, 200, 'token')).json();
const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };

const name = `Smoke ${externalId}`;
const made = await fetch(`${base}/customers`, { method: 'POST', headers, body: JSON.stringify({ name, external_id: externalId }) });
const customer = await (await expectStatus(made, 201, 'create customer')).json();
const back = await (await expectStatus(await fetch(`${base}/customers/${customer.id}`, { headers }), 200, 'read back')).json();
if (back.name !== name) throw new Error(`read back: ${JSON.stringify(back)}`);
const list = await (await fetch(`${base}/customers?limit=100`, { headers })).json();
if (!list.data.some((c) => c.external_id === externalId)) throw new Error(`list: ${JSON.stringify(list)}`);
if (list.data.length < Number(minimumText)) throw new Error(`expected at least ${minimumText} customers, got ${list.data.length}`);

const yaml = 'name: smoke\nrules:\n  - match: { operation: listInvoices }\n    nth: 2\n    respond: { status: 429 }\n';
const scenarioHeaders = (type) => ({ Authorization: `Bearer ${token}`, 'Content-Type': type });
await expectStatus(await fetch(`${base}/_sandbox/scenarios`, { method: 'POST', headers: scenarioHeaders('application/yaml'), body: yaml }), 201, 'load scenario');
const bad = '{"name":"bad","rules":[{"match":{},"respond":{"status":99}}]}';
await expectStatus(await fetch(`${base}/_sandbox/scenarios`, { method: 'POST', headers: scenarioHeaders('application/json'), body: bad }), 400, 'a bad scenario');

const doc = await (await expectStatus(await fetch(`${base}/openapi.json`), 200, 'OpenAPI document')).json();
if (!doc.openapi) throw new Error('the OpenAPI document is not served');
// The web inspector's page and script ship in the package (inspector/), read from beside the code.
const ui = await (await expectStatus(await fetch(`${base}/_sandbox/ui`), 200, 'inspector page')).text();
if (!ui.includes('/_sandbox/ui/app.js')) throw new Error('the inspector page does not load its script');
await expectStatus(await fetch(`${base}/_sandbox/ui/app.js`), 200, 'inspector script');
console.log(`[${label}] ${base}: token ok; created, read back and listed customer ${customer.id}; scenarios checked; /openapi.json and the inspector served`);
