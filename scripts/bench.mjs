// Load benchmark (autocannon): shows that a request's cost does not grow with the number of stored
// objects. Seeds a small and a large account, then measures reads, pages and writes on each.
// Run with `npm run bench` (builds first). Bounded: a few seconds per measurement, loopback only.
import autocannon from 'autocannon';
import { startSandbox } from '../dist/index.js';
import { createCustomer } from '../dist/domain/customers/customers.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const SIZES = (process.env.BENCH_SIZES ?? '1000,100000').split(',').map(Number);

async function token(url) {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('sandbox_client_id:sandbox_client_secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  return (await res.json()).access_token;
}

function run(url, options) {
  return new Promise((resolve, reject) => {
    autocannon({ url, duration: DURATION, connections: 10, ...options }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

const rows = [];
for (const size of SIZES) {
  const sandbox = await startSandbox({ port: 0, rateLimit: 0, logLevel: 'silent', seed: 'bench', realTimeTicks: false });
  const account = sandbox.deps.store.account('ptn_default', 'production');
  let someId;
  for (let i = 0; i < size; i++) someId = createCustomer(sandbox.deps, account, { name: `Customer ${i}`, email: `c${i}@bench.test` }).id;
  const headers = { authorization: `Bearer ${await token(sandbox.url)}`, 'content-type': 'application/json' };
  const cases = {
    'GET /customers/{id}': { url: `${sandbox.url}/customers/${someId}`, headers },
    'GET /customers?limit=20': { url: `${sandbox.url}/customers?limit=20`, headers },
    'POST /customers': { url: `${sandbox.url}/customers`, method: 'POST', headers, body: JSON.stringify({ name: 'Bench', email: 'bench@bench.test' }) },
  };
  // One second of warm-up so the first measured case does not pay for JIT compilation.
  await run(cases['GET /customers/{id}'].url, { ...cases['GET /customers/{id}'], duration: 1 });
  for (const [name, options] of Object.entries(cases)) {
    const result = await run(options.url, options);
    rows.push({ stored: size, request: name, 'req/s': Math.round(result.requests.average), 'p99 ms': result.latency.p99, errors: result.errors + result.non2xx });
  }
  await sandbox.close();
}
console.table(rows);
