#!/usr/bin/env node
// npm run soak: a long run of realistic mixed traffic against the built CLI, with its resident
// memory sampled every 30 s. Several virtual partner test suites run side by side, each in its own
// partner's accounts, the way CI jobs share a team sandbox: a full pass over every area (customers,
// payment methods, invoices and their hosted links and PDF, control-plane payments and refunds, the
// checkout surface, payment requests, vendors, bills and vendor payments, webhooks to a local
// receiver, scenarios, the journal, payouts after clock advances, the demo environment), then a
// reset of their accounts, and again. Goals: no 5xx and no unexpected status, and RSS growth under
// 10% between the end of the warm-up (the first 30% of the run) and the end, read on the RSS floor.
// Flags: --minutes N (10), --suites N (4), --warmup FRACTION (0.3). One summary line; exit 1 on a missed goal.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { freePort, startCli } from './harness/cli-process.mjs';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, suites: { type: 'string', default: '4' }, warmup: { type: 'string', default: '0.3' } } });
const MINUTES = Number(values.minutes);
const SUITES = Number(values.suites);
const WARMUP = Number(values.warmup);
const SAMPLE_MS = Number(process.env.SOAK_SAMPLE_MS) || 30_000;

// A webhook receiver that accepts everything.
let deliveries = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { deliveries += 1; res.writeHead(200).end(); });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const child = await startCli(port, ['--allow-http-webhooks', '--rate-limit', '1000', '--seed', 'soak', '--log-level', 'error']);

const rssMb = () => {
  const line = readFileSync(`/proc/${child.pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
};

// ---- traffic -----------------------------------------------------------------------------------

const stats = { requests: 0, passes: 0, byStatus: {} };
const unexpected = [];

async function call(method, path, { token, body, form, basic, expect = [200] } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (basic) headers.authorization = `Basic ${Buffer.from(`${basic.client_id}:${basic.client_secret}`).toString('base64')}`;
  let payload;
  if (form) { headers['content-type'] = 'application/x-www-form-urlencoded'; payload = new URLSearchParams(form).toString(); }
  else if (body !== undefined) { headers['content-type'] = 'application/json'; payload = JSON.stringify(body); }
  let status = 0;
  let text = '';
  try {
    const res = await fetch(`${base}${path}`, { method, headers, body: payload, redirect: 'manual' });
    status = res.status;
    text = await res.text();
  } catch (error) {
    text = String(error.message);
  }
  stats.requests += 1;
  stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
  if (!expect.includes(status)) {
    if (unexpected.length < 50) unexpected.push(`${method} ${path.split('?')[0]} -> ${status} (expected ${expect.join('/')}): ${text.slice(0, 200)}`);
    else unexpected.length += 0;
    stats.unexpected = (stats.unexpected ?? 0) + 1;
  }
  let json;
  try { json = text && JSON.parse(text); } catch { json = undefined; }
  return { status, body: json, text };
}

const local = (url) => { const u = new URL(url); return `${u.pathname}${u.search}`; };

/** One pass of a partner's test suite in one environment, then a reset of that account. */
async function pass(keys, env, n) {
  const p = env === 'demo' ? '/demo' : '';
  const credentials = keys[env];
  const token = async () => (await call('POST', `${p}/oauth/token`, { basic: credentials, form: { grant_type: 'client_credentials' } })).body.access_token;
  let t = await token();
  const api = (method, path, options = {}) => call(method, `${p}${path}`, { token: t, ...options });
  const ctl = (method, path, options = {}) => call(method, `/_sandbox${path}`, { token: t, ...options });

  for (const topic of ['customer_created', 'invoice_paid', 'payment_succeeded']) await api('POST', '/webhooks', { body: { endpoint_url: hookUrl, topic }, expect: [201] });
  const c1 = (await api('POST', '/customers', { body: { name: `Soak ${n} A`, email: `a${n}@soak.test` }, expect: [201] })).body.id;
  const c2 = (await api('POST', '/customers', { body: { name: `Soak ${n} B` }, expect: [201] })).body.id;
  await api('GET', '/customers?limit=10');
  await api('GET', `/customers/${c1}`);
  await api('PATCH', `/customers/${c2}`, { body: { legal_name: `Soak ${n} B LLC` } });
  await api('DELETE', `/customers/${c2}`);
  await api('POST', `/customers/${c2}/restore`);
  await api('GET', '/customers/cus_missing', { expect: [404] });
  const card = (await api('POST', `/customers/${c1}/payment-methods/card`, { body: { card_provider_token: 'tok_visa', provider: 'evervault' }, expect: [201] })).body.id;
  await api('POST', `/customers/${c1}/payment-methods/bank`, { body: { account_data_type: 'us', institution_name: 'Soak Bank', receiver_name: 'Soak', subtype: 'checkings', type: 'depository', us_account_data: { account_number: '000123456789', routing_number: '011000015' } }, expect: [201] });
  await api('GET', `/customers/${c1}/payment-methods`);
  await api('POST', `/customers/${c1}/payment-methods/${card}/fees`, { body: { amount: '100.00' } });
  const inv1 = (await api('POST', '/invoices', { body: { customer_id: c1, exclude_from_autopay: true, line_items: [{ description: 'Soak work', quantity: 2, amount: 150 }] }, expect: [201] })).body;
  const inv2 = (await api('POST', '/invoices', { body: { customer_id: c1, exclude_from_autopay: true, line_items: [{ description: 'More', quantity: 1, amount: 80 }] }, expect: [201] })).body;
  await api('GET', `/invoices?customer_id=${c1}`);
  await api('POST', '/invoices', { body: { customer_id: c1, line_items: [] }, expect: [400, 422] });
  const payLink = (await api('GET', `/invoices/${inv1.id}/payment-link`)).body?.url;
  const pdfLink = (await api('GET', `/invoices/${inv1.id}/pdf-link`)).body?.url;
  if (payLink) await call('GET', local(payLink));
  if (pdfLink && n % 3 === 0) await call('GET', local(pdfLink));
  const checkout = (await api('POST', '/checkout-auth/init', { body: { customer_id: c1, invoice_id: inv2.id } })).body?.token;
  if (checkout) {
    const co = (method, path, options = {}) => call(method, `${p}/checkout${path}`, { token: checkout, ...options });
    await co('GET', '/invoice');
    await co('GET', '/payment-methods');
    await co('GET', '/preferences/theme');
    await co('POST', '/payments', { body: { amount: '80.00', customer_id: c1, invoice_id: inv2.id, payment_method: 'card', payment_method_id: card }, expect: [201] });
  }
  const payment = (await ctl('POST', `/invoices/${inv1.id}/pay`, { body: {} })).body;
  const request = (await api('POST', '/payments/request', { body: { amount: 25, currency: 'USD', redirect_url: 'https://shop.example/done', reference_id: `soak-${n}` }, expect: [201] })).body;
  if (request?.url) await call('GET', local(request.url));
  await api('GET', `/payments/request/${request?.id}`);
  await api('GET', '/payments?limit=20');

  const vendor = (await api('POST', '/vendors', { body: { name: `Soak vendor ${n}`, bank_account: { account_number: '000123456789', routing_number: '011000015', account_type: 'checking', bank_name: 'Soak Bank' } }, expect: [201] })).body.id;
  const bill = (await api('POST', '/bills', { body: { vendor_id: vendor, amount: 120, number: `S-${n}`, status: 'needs_approval' }, expect: [201] })).body.id;
  await api('POST', '/bills', { body: { vendor_id: vendor, amount: 10, number: `S-${n}-draft` }, expect: [201] });
  await api('GET', '/bills?limit=20');
  const today = (await ctl('GET', '/clock')).body.now.slice(0, 10);
  await api('POST', `/bills/${bill}/pay-date`, { body: { pay_date: today } });
  await api('POST', '/vendor-payments', { body: { idempotency_key: `soak-${n}`, items: [{ bill_id: bill, payment_speed: 'instant' }] } });
  await api('POST', `/vendors/${vendor}/data-request`, { expect: [201] });
  await api('GET', `/vendors/${vendor}/data-requests`);

  const scenario = (await ctl('POST', '/scenarios', { body: { name: 'soak busy', rules: [{ match: { operation: 'listVendors' }, times: 1, respond: { status: 503, code: 'service_unavailable', message: 'Busy' } }] }, expect: [201] })).body?.id;
  await api('GET', '/vendors', { expect: [503] });
  await api('GET', '/vendors');
  if (scenario) await ctl('DELETE', `/scenarios/${scenario}`);

  // A day on the clock: payments settle, payouts are made, the vendor payment completes.
  await ctl('POST', '/clock/advance', { body: { seconds: 26 * 3600 } });
  t = await token();
  if (payment?.id) await ctl('POST', `/payments/${payment.id}/refund`, { body: { amount: 10 } });
  await api('GET', '/payouts');
  await api('GET', '/webhooks/events?limit=50');
  await ctl('GET', '/webhooks/deliveries?limit=20');
  await ctl('GET', '/requests?limit=20');
  await ctl('POST', '/reset', { body: {} });
  stats.passes += 1;
}

/** A suite: its own partner, passes in production and now and then in demo, until the end. */
async function suite(index, until) {
  const partner = (await call('POST', '/_sandbox/partners', { body: { name: `Soak suite ${index}` }, expect: [201] })).body;
  for (let n = 0; Date.now() < until; n++) await pass(partner.credentials, n % 4 === 3 ? 'demo' : 'production', n * SUITES + index);
}

// ---- the run -----------------------------------------------------------------------------------

const started = Date.now();
const until = started + MINUTES * 60_000;
const samples = [{ at: 0, rss: rssMb() }];
const sampler = setInterval(() => {
  samples.push({ at: Math.round((Date.now() - started) / 1000), rss: rssMb() });
  const last = samples[samples.length - 1];
  console.log(`  ${last.at} s: RSS ${last.rss.toFixed(1)} MB, ${stats.requests} requests, ${stats.passes} passes, ${deliveries} webhooks`);
}, SAMPLE_MS);
try {
  await Promise.all(Array.from({ length: SUITES }, (_, i) => suite(i, until)));
} finally {
  clearInterval(sampler);
}
samples.push({ at: Math.round((Date.now() - started) / 1000), rss: rssMb() });
child.kill('SIGTERM');
receiver.close();

// RSS follows the garbage collector's sawtooth (a collection can free 100 MB between two samples),
// so growth is read on its floor: the lowest sample of the first third after the warm-up against
// the lowest of the last third. A leak raises the floor; a late collection does not.
const warm = samples.filter((s) => s.at >= MINUTES * 60 * WARMUP);
const third = Math.max(1, Math.floor(warm.length / 3));
const floor = (list) => Math.min(...list.map((s) => s.rss));
const baseline = floor(warm.slice(0, third));
const end = floor(warm.slice(-third));
const growth = baseline ? (end / baseline - 1) * 100 : 0;
const fivexx = Object.entries(stats.byStatus).filter(([s]) => Number(s) >= 500 && Number(s) !== 503).reduce((sum, [, c]) => sum + c, 0);
const errors = stats.unexpected ?? 0;
const ok = growth < 10 && errors === 0 && warm.length >= 3;
if (unexpected.length) console.log(`Unexpected answers:\n  ${unexpected.join('\n  ')}`);
console.log(`RSS samples (s: MB): ${samples.map((s) => `${s.at}: ${s.rss.toFixed(1)}`).join(', ')}`);
console.log(`Statuses: ${JSON.stringify(stats.byStatus)}`);
console.log(`soak ${ok ? 'PASS' : 'FAIL'}: ${MINUTES} min, ${SUITES} suites, ${stats.requests} requests, ${stats.passes} passes, ${deliveries} webhooks delivered, ` +
  `${fivexx} unexpected 5xx, ${errors} unexpected statuses, RSS floor ${baseline.toFixed(1)} MB after warm-up -> ${end.toFixed(1)} MB at the end (${growth >= 0 ? '+' : ''}${growth.toFixed(1)}%), peak ${Math.max(...samples.map((s) => s.rss)).toFixed(1)} MB`);
process.exit(ok ? 0 : 1);
