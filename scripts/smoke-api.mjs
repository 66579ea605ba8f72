// The API check both smokes (packed tarball, container image) run against a started sandbox:
// health, a token with the default credentials, a customer created, read back and listed, a page and
// bodies that need what the bundle loads on first use, a scenario document loaded through its JSON
// Schema (and a bad one refused), the OpenAPI document served, and an invoice's rendered PDF read back
// by a bill upload (the PDF packages the CLI bundle leaves out).
// Usage: node scripts/smoke-api.mjs BASE_URL EXTERNAL_ID [MIN_CUSTOMERS] [LABEL]
const [base, externalId, minimumText = '1', label = 'smoke'] = process.argv.slice(2);

async function expectStatus(res, status, what) {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return res;
}

/** fetch, waiting out the spec's rate limit (5 requests per second per key) when it answers 429. */
async function call(url, init) {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, init);
    if (res.status !== 429 || attempt === 5) return res;
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(res.headers.get('retry-after') ?? 1)));
  }
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

// What the CLI's bundle evaluates only on first use (scripts/lib/on-first-use.mjs), each read back:
// a page typed by name (express's res.type, through mime-types), a gzip body (body-parser through
// node:zlib) and a UTF-16 one (through iconv-lite).
const landing = await expectStatus(await fetch(`${base}/`), 200, 'landing page');
if (landing.headers.get('content-type') !== 'text/html; charset=utf-8') throw new Error(`landing page typed ${landing.headers.get('content-type')}`);
const { gzipSync } = await import('node:zlib');
const encoded = [
  ['gzip', { 'Content-Encoding': 'gzip' }, (text) => gzipSync(text), `Zipped ${externalId}`],
  ['UTF-16', { 'Content-Type': 'application/json; charset=utf-16le' }, (text) => Buffer.from(text, 'utf16le'), `Caf\u00e9 ${externalId}`],
];
for (const [what, extra, encode, encodedName] of encoded) {
  const res = await call(`${base}/customers`, { method: 'POST', headers: { ...headers, ...extra }, body: encode(JSON.stringify({ name: encodedName })) });
  const made = await (await expectStatus(res, 201, `create customer from a ${what} body`)).json();
  const read = await (await expectStatus(await call(`${base}/customers/${made.id}`, { headers }), 200, `read back the ${what} customer`)).json();
  if (read.name !== encodedName) throw new Error(`the ${what} body was read as ${JSON.stringify(read.name)}`);
}

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

// The PDF stack, loaded from node_modules on first use (pdfkit renders, pdf-parse reads): an invoice's
// PDF rendered by the sandbox, fetched through its signed link, then uploaded as a bill and read back.
const invoiceBody = { customer_id: customer.id, due_date: '2030-01-31', line_items: [{ description: 'Smoke hours', quantity: 2, amount: 150 }] };
const invoice = await (await expectStatus(await call(`${base}/invoices`, { method: 'POST', headers, body: JSON.stringify(invoiceBody) }), 201, 'create invoice')).json();
const { url: pdfUrl } = await (await expectStatus(await call(`${base}/invoices/${invoice.id}/pdf-link`, { headers }), 200, 'invoice PDF link')).json();
const pdf = Buffer.from(await (await expectStatus(await fetch(pdfUrl), 200, 'invoice PDF')).arrayBuffer());
if (pdf.subarray(0, 5).toString() !== '%PDF-') throw new Error(`the invoice PDF is not a PDF: ${pdf.subarray(0, 16).toString()}`);
const uploadBody = { content: pdf.toString('base64'), content_type: 'application/pdf', filename: 'smoke.pdf' };
const upload = await (await expectStatus(await call(`${base}/bills/upload`, { method: 'POST', headers, body: JSON.stringify(uploadBody) }), 201, 'bill upload')).json();
const read = upload.extracted_data ?? {};
if (read.total !== 300 || read.due_date !== '2030-01-31' || read.description !== 'Smoke hours') throw new Error(`bill upload did not read the invoice's total, due date and line: ${JSON.stringify(upload)}`);
console.log(`[${label}] ${base}: token ok; created, read back and listed customer ${customer.id}; a typed page, gzip and UTF-16 bodies read; scenarios checked; /openapi.json and the inspector served; invoice PDF rendered (${pdf.length} bytes) and read back as a bill`);
