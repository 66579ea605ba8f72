// `record` then `diff` end to end: a second sandbox plays the real demo environment. A session goes
// through the recording proxy to it; the file is checked for secrets (none) and HAR shape; `diff`
// replays it against the sandbox on a fresh partner and finds no difference when the two behave
// alike (different seeds: other ids, tokens and data), and exactly the planted ones when scenario
// rules make the "real" one differ: a 422 for one operation, an answer with an unknown field and a
// status outside the enumeration, another Content-Type, and a 409 where the sandbox chose 400 (a
// known choice). Ids the recording's answers introduced are mapped, and the sandbox's state shows it.
// Then the class of secrets: generated secrets in every place a client puts them never reach the
// file; the `record` command's messages (an unreachable target, a taken port, an existing file), its
// exchange cap, and the known-choice rows checked against the docs and the document.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { parse as parseYaml } from 'yaml';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import type { ClientClock } from '../src/parity/client.js';
import { diffCommand } from '../src/recording/diff-command.js';
import { diffJsonReport, diffJunitReport, diffTextReport } from '../src/recording/diff-report.js';
import { CHOICES } from '../src/recording/choices.js';
import { compareAnswers, type Answer } from '../src/recording/compare.js';
import { ShapeChecker } from '../src/parity/shapes.js';
import { readRecording } from '../src/recording/har.js';
import { startRecorder } from '../src/recording/proxy.js';
import { recordCommand } from '../src/recording/record-command.js';
import { CliError } from '../src/cli/errors.js';
import { LIMITS } from '../src/limits.js';
import { runDiff, type DiffReport } from '../src/recording/replay.js';
import { START } from './helpers.js';

const time = { now: START };
/** diff's limiter waits on this clock: a wait moves it, no real time passes. */
const clock: ClientClock = { now: () => time.now, sleep: async (ms) => { time.now += ms; } };

let real: RunningSandbox;
let sandbox: RunningSandbox;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'record-diff-'));
  // Two servers of the same build, with other seeds: other ids, secrets and generated data.
  [real, sandbox] = await Promise.all([
    startSandbox({ port: 0, seed: 'the-real-service', rateLimit: 0, logLevel: 'silent' }),
    startSandbox({ port: 0, seed: 'the-sandbox', rateLimit: 0, logLevel: 'silent', validateResponses: true }),
  ]);
});

afterAll(async () => {
  await Promise.all([real?.close(), sandbox?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

interface Call {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON as it comes
  body: any;
  headers: Headers;
}

/** A partner's client: every call through `base` (the proxy) with the key's Basic credentials, then its token. */
function client(base: string, key: { client_id: string; client_secret: string }) {
  let token = '';
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Call> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  return {
    async login() {
      const res = await call('POST', '/oauth/token', undefined, {
        Authorization: `Basic ${Buffer.from(`${key.client_id}:${key.client_secret}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      });
      // The form body: through fetch directly, since call() sends JSON.
      return res;
    },
    call,
    set token(value: string) {
      token = value;
    },
    get token() {
      return token;
    },
  };
}

/** The secrets a session sends or is answered with: none may be in the recording. */
interface Secrets {
  values: string[];
}

/** Loads scenario rules on the "real" server's account of the default production key, mid-session. */
async function plant(rules: unknown[]): Promise<void> {
  await real.loadScenario({ name: 'planted', rules } as never);
}

/**
 * The partner's session: a token, a customer made, read, patched, an invoice for it, lists, a bank
 * account (a secret account number), a webhook subscription (a secret key), a vendor, the customer
 * archived twice. With `planted`, rules are loaded on the "real" server as it goes.
 */
async function session(base: string, planted: boolean): Promise<{ secrets: Secrets; customerId: string }> {
  const key = real.credentials.production;
  const api = client(base, key);
  const basic = Buffer.from(`${key.client_id}:${key.client_secret}`).toString('base64');
  const tokenRes = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  expect(tokenRes.status).toBe(200);
  api.token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const secrets = [key.client_secret, basic, api.token, 'whsec_live_0123456789abcdef', '000987654321'];

  const customer = await api.call('POST', '/customers', { name: 'Acme Payroll', email: 'ap@acme.example', external_id: 'acme-ext-1' });
  expect(customer.status).toBe(201);
  expect((await api.call('GET', `/customers/${customer.body.id}`)).status).toBe(200);
  const patched = await api.call('PATCH', `/customers/${customer.body.id}`, { city: 'Chicago' });
  expect(patched.status).toBe(200);
  if (planted) {
    await plant([
      // An answer the sandbox would not give: a field the document does not name, a status outside its enumeration.
      { match: { operation: 'getCustomer' }, nth: 1, respond: { status: 200, body: { ...patched.body, loyalty_tier: 'gold', status: 'on_hold' } } },
      // A refusal the sandbox does not make.
      { match: { operation: 'createVendor' }, respond: { status: 422, code: 'unprocessable_entity', message: 'Vendor onboarding is paused.' } },
      // The spec's 409 where the sandbox chose 400 (docs/gaps-and-choices.md, "Customer archive/restore conflicts").
      { match: { operation: 'archiveCustomer' }, nth: 2, respond: { status: 409, body: { code: 'invalid_state', message: 'The customer is archived already.', validation_errors: {} } } },
    ]);
  }
  expect((await api.call('GET', `/customers/${customer.body.id}`)).status).toBe(200);
  const invoice = await api.call('POST', '/invoices', { customer_id: customer.body.id, line_items: [{ description: 'Payroll, March', amount: 120.5 }], exclude_from_autopay: true });
  expect(invoice.status).toBe(201);
  // The same invoice under another media type.
  if (planted) await plant([{ match: { operation: 'getInvoice' }, nth: 1, respond: { status: 200, body: invoice.body, headers: { 'Content-Type': 'application/vnd.acme+json' } } }]);
  const readInvoice = await api.call('GET', `/invoices/${invoice.body.id}`);
  expect(readInvoice.status).toBe(200);
  // The planted answer came whole, with its own media type: the proxy passes answers through.
  if (planted) expect(readInvoice.headers.get('content-type')).toMatch(/^application\/vnd\.acme\+json/);
  expect((await api.call('GET', '/customers?limit=10')).status).toBe(200);
  // A token in a query string (refused: an unknown parameter) is masked there too.
  expect((await api.call('GET', `/invoices?limit=10&access_token=${api.token}`)).status).toBe(400);
  const bank = await api.call('POST', `/customers/${customer.body.id}/payment-methods/bank`, {
    account_data_type: 'us', us_account_data: { account_number: '000987654321', routing_number: '011000015' },
  });
  expect(bank.status).toBe(201);
  expect((await api.call('GET', `/customers/${customer.body.id}/payment-methods`)).status).toBe(200);
  const hook = await api.call('POST', '/webhooks', { topic: 'payout_failed', endpoint_url: 'https://example.com/acme-hooks', secret_key: 'whsec_live_0123456789abcdef' });
  expect(hook.status).toBe(201);
  expect((await api.call('DELETE', `/webhooks/${hook.body.id}`)).status).toBe(200);
  expect((await api.call('POST', '/vendors', { name: 'Paper & Co', email: 'billing@paper.example' })).status).toBe(planted ? 422 : 201);
  expect((await api.call('DELETE', `/customers/${customer.body.id}`)).status).toBe(200);
  expect((await api.call('DELETE', `/customers/${customer.body.id}`)).status).toBe(planted ? 409 : 400);
  expect((await api.call('GET', '/customers/cus_00000000000000000000')).status).toBe(404);
  return { secrets: { values: secrets }, customerId: customer.body.id };
}

async function record(name: string, planted: boolean): Promise<{ file: string; secrets: Secrets; lines: string[] }> {
  const file = join(dir, `${name}.har`);
  const lines: string[] = [];
  const recorder = await startRecorder({ target: real.url, out: file, onExchange: (line) => lines.push(`${line.method} ${line.path} ${line.status}`) });
  try {
    const { secrets } = await session(recorder.url, planted);
    return { file, secrets, lines };
  } finally {
    await recorder.close();
    await real.reset({ token: await real.token() });
  }
}

const diff = (file: string) => runDiff({ recording: file, baseUrl: sandbox.url, clock, runId: 'abc123' });

/** Every difference as one line: exchange, request, kind, where, recorded -> sandbox, [choice]. */
const differences = (report: DiffReport) => report.exchanges.flatMap((e) => e.differences.map((d) => `#${e.index} ${e.request.replace(/[a-z]+_[0-9a-f]{20}/g, '{id}')}: ${d.kind}${d.path ? ` ${d.path}` : ''}${d.side ? ` (${d.side})` : ''}: ${d.recorded} -> ${d.sandbox}${d.choice ? ` [${d.choice}]` : ''}`));

/** The sandbox's objects of one kind in the report's fresh account, read through its control plane. */
async function objects(report: DiffReport, kind: string) {
  const res = await fetch(`${sandbox.url}/_sandbox/objects/${kind}`, { headers: { 'X-Sandbox-Account': `${report.account.partner_id}:production` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Array<{ object: Record<string, unknown> }> }).data.map((item) => item.object);
}

describe('a recording of a sandbox that behaves like the one it is diffed against', () => {
  let recorded: Awaited<ReturnType<typeof record>>;
  let report: DiffReport;

  beforeAll(async () => {
    recorded = await record('alike', false);
    report = await diff(recorded.file);
  }, 60_000);

  it('is a HAR 1.2 file with every exchange in the order its answer came, each with timings', () => {
    const { log, notes } = readRecording(recorded.file);
    expect(notes).toEqual([]);
    expect(log.version).toBe('1.2');
    expect(log.creator.name).toBe('billing-sandbox record');
    expect(log._target).toBe(real.url);
    expect(log.entries.map((e) => `${e.request.method} ${e.request.url.slice(real.url.length)} ${e.response.status}`)).toEqual(recorded.lines);
    expect(log.entries).toHaveLength(17);
    for (const entry of log.entries) {
      expect(entry.request.url.startsWith(real.url)).toBe(true);
      expect(Date.parse(entry.startedDateTime)).not.toBeNaN();
      for (const part of ['send', 'wait', 'receive'] as const) expect(entry.timings[part]).toBeGreaterThanOrEqual(0);
      expect(entry.time).toBeGreaterThanOrEqual(entry.timings.wait);
      expect(entry.response.content.size).toBe(entry.response.bodySize);
    }
    const created = log.entries[1];
    expect(created.request.postData).toEqual({ mimeType: 'application/json', text: JSON.stringify({ name: 'Acme Payroll', email: 'ap@acme.example', external_id: 'acme-ext-1' }) });
    expect(JSON.parse(created.response.content.text!)).toMatchObject({ name: 'Acme Payroll', external_id: 'acme-ext-1' });
  });

  it('holds no secret, token or client secret: each is ***#n, the same n for the same value', () => {
    const text = readFileSync(recorded.file, 'utf8');
    for (const secret of recorded.secrets.values) expect(text).not.toContain(secret);
    // The key's client secret also in its decoded form, and no JWT at all.
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
    const { log } = readRecording(recorded.file);
    const auth = log.entries.map((e) => e.request.headers.find((h) => h.name.toLowerCase() === 'authorization')?.value);
    expect(auth[0]).toMatch(/^Basic \*\*\*#\d+$/);
    const bearer = auth[1];
    expect(bearer).toMatch(/^Bearer \*\*\*#\d+$/);
    expect(auth.slice(1).every((value) => value === bearer)).toBe(true);
    // The token's answer introduced that number.
    expect(JSON.parse(log.entries[0].response.content.text!).access_token).toBe(bearer!.slice('Bearer '.length));
    const query = log.entries.find((e) => e.request.url.includes('access_token='))!;
    expect(query.request.queryString).toContainEqual({ name: 'access_token', value: bearer!.slice('Bearer '.length) });
    const bodies = log.entries.map((e) => e.request.postData?.text ?? '').join('\n');
    expect(bodies).toMatch(/"secret_key":"\*\*\*#\d+"/);
    expect(bodies).toMatch(/"account_number":"\*\*\*#\d+"/);
  });

  it('diffs with no difference at all: other ids, tokens and data are not differences', () => {
    expect(differences(report)).toEqual([]);
    expect(report.summary).toEqual({ exchanges: 17, same: 17, differ: 0, known: 0, skipped: 0, differences: 0, known_differences: 0 });
    expect(report.exchanges.map((e) => e.sandbox_status)).toEqual(report.exchanges.map((e) => e.recorded_status));
    expect(report.account).toMatchObject({ fresh: true, environment: 'production' });
    expect(report.account.partner_id).toMatch(/^ptn_/);
  });

  it('maps ids as objects are created: the customer\'s GET and PATCH and the invoice used the sandbox\'s customer', async () => {
    expect(report.mapped.ids).toBeGreaterThanOrEqual(4);
    // The token, and an error message under a field named access_token (masked by its name).
    expect(report.mapped.masked).toBe(2);
    const [customer] = await objects(report, 'customers');
    const [invoice] = await objects(report, 'invoices');
    expect(customer).toMatchObject({ name: 'Acme Payroll', city: 'Chicago', status: 'archived' });
    expect(invoice.customer_id).toBe(customer.id);
    const byIndex = (n: number) => report.exchanges[n - 1];
    expect(byIndex(3).replayed).toBe(`GET /customers/${customer.id}`);
    expect(byIndex(4).replayed).toBe(`PATCH /customers/${customer.id}`);
    expect(byIndex(3).request).not.toBe(byIndex(3).replayed);
    // The webhook subscription made and deleted by id; the bank account with a stand-in number.
    expect((await objects(report, 'webhook_subscriptions'))[0]).toMatchObject({ topic: 'payout_failed', is_active: false });
    expect((await objects(report, 'payment_methods'))).toHaveLength(1);
    expect(report.notes.join('\n')).toMatch(/stand-ins: .*account_number as 000123456789.*secret_key as replay-secret-<n>/);
  });

  it('leaves every other account of the sandbox as it was: the replay ran on a fresh partner', async () => {
    const token = await sandbox.token();
    const res = await fetch(`${sandbox.url}/customers`, { headers: { Authorization: `Bearer ${token}` } });
    expect(((await res.json()) as { data: unknown[] }).data).toEqual([]);
  });

  it('writes the text report with one line per exchange and the totals', () => {
    const text = diffTextReport(report);
    expect(text).toContain(`replayed against ${sandbox.url}`);
    expect(text.match(/^SAME {4}/gm)).toHaveLength(17);
    expect(text).toMatch(/^17 exchanges: 17 same, 0 differ, 0 with known choices only, 0 skipped; 0 differences, 0 known choices$/m);
  });
});

describe('a recording of a sandbox made to differ on purpose', () => {
  let recorded: Awaited<ReturnType<typeof record>>;
  let report: DiffReport;

  beforeAll(async () => {
    recorded = await record('planted', true);
    report = await diff(recorded.file);
  }, 60_000);

  it('finds exactly the planted differences, and lists the 409 as the known choice it is', () => {
    expect(differences(report)).toEqual([
      '#5 GET /customers/{id}: enum status: on_hold (not in the document) -> active',
      '#5 GET /customers/{id}: field loyalty_tier (recording): gold -> absent',
      '#7 GET /invoices/{id}: header Content-Type: application/vnd.acme+json -> application/json',
      '#14 POST /vendors: status: 422 unprocessable_entity -> 201',
      '#16 DELETE /customers/{id}: status: 409 invalid_state -> 400 invalid_state [Customer archive/restore conflicts]',
    ]);
  });
});

describe('the reports of a diff with differences', () => {
  let report: DiffReport;

  beforeAll(async () => {
    report = await diff((await record('planted-reports', true)).file);
  }, 60_000);

  it('the text names each difference under its exchange, the known choice with its row, and the totals', () => {
    const text = diffTextReport(report);
    expect(text).toMatch(/^DIFF {4} 5 {2}GET \/customers\/cus_\w+\n {12}value of status: recorded on_hold \(not in the document\), sandbox active\n {12}field loyalty_tier only in the recording \(gold\)$/m);
    expect(text).toMatch(/^DIFF {4}14 {2}POST \/vendors\n {12}status: recorded 422 unprocessable_entity, sandbox 201$/m);
    expect(text).toMatch(/^KNOWN {3}16 {2}DELETE \/customers\/cus_\w+\n {12}status: recorded 409 invalid_state, sandbox 400 invalid_state {2}\(known choice: "Customer archive\/restore conflicts", docs\/gaps-and-choices\.md\)$/m);
    expect(text).toMatch(/^17 exchanges: 13 same, 3 differ, 1 with known choices only, 0 skipped; 4 differences, 1 known choice$/m);
  });

  it('the JSON is the report as data', () => {
    const parsed = JSON.parse(diffJsonReport(report)) as DiffReport;
    expect(parsed).toEqual(JSON.parse(JSON.stringify(report)));
    expect(parsed.summary).toEqual({ exchanges: 17, same: 13, differ: 3, known: 1, skipped: 0, differences: 4, known_differences: 1 });
    expect(parsed.exchanges[13]).toMatchObject({ index: 14, operation: 'createVendor', status: 'differ', recorded_status: 422, sandbox_status: 201 });
  });

  it('the JUnit XML parses: one testcase per exchange, a failure per differing one, the known choice in system-out', () => {
    const xml = diffJunitReport(report);
    expect(XMLValidator.validate(xml)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);
    expect(parsed.testsuites).toMatchObject({ tests: '17', failures: '3', skipped: '0', errors: '0' });
    const cases = parsed.testsuites.testsuite.testcase as Array<Record<string, any>>;
    expect(cases).toHaveLength(17);
    expect(cases.filter((c) => c.failure).map((c) => c.name.replace(/cus_\w+|inv_\w+/, '{id}'))).toEqual(['#5 GET /customers/{id}', '#7 GET /invoices/{id}', '#14 POST /vendors']);
    expect(cases[13].failure).toMatchObject({ message: 'status: recorded 422 unprocessable_entity, sandbox 201', type: '1 difference' });
    expect(cases[15]['system-out']).toContain('known choice: "Customer archive/restore conflicts"');
    expect(cases[15].failure).toBeUndefined();
  });
});

describe('billing-sandbox diff (the command)', () => {
  let alike: string;
  let planted: string;

  beforeAll(async () => {
    alike = (await record('command-alike', false)).file;
    planted = (await record('command-planted', true)).file;
  }, 60_000);

  async function run(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const codes: number[] = [];
    const command = diffCommand({ exit: (code) => codes.push(code), stdout: (t) => out.push(t), stderr: (t) => err.push(t), progress: false, clock });
    command.configureOutput({ writeOut: (t) => out.push(t), writeErr: (t) => err.push(t) });
    await command.parseAsync(args, { from: 'user' }).catch(() => undefined);
    return { code: codes.at(-1), out: out.join(''), err: err.join('') };
  }

  it('exits 0 when nothing differs, and writes JUnit beside the text', async () => {
    const junit = join(dir, 'alike.xml');
    const result = await run([alike, '--base-url', sandbox.url, '--junit', junit]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^17 exchanges: 17 same/m);
    expect(XMLValidator.validate(readFileSync(junit, 'utf8'))).toBe(true);
  });

  it('exits 1 when something differs; --json prints the report as JSON', async () => {
    const result = await run([planted, '--base-url', sandbox.url, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.out)).toMatchObject({ tool: 'billing-sandbox diff', summary: { differences: 4, known_differences: 1 } });
  });

  it('replays on a given key\'s account as it is with --client-id and --client-secret, and says so', async () => {
    const key = sandbox.credentials.demo;
    const result = await run([alike, '--base-url', `${sandbox.url}/demo`, '--client-id', key.client_id, '--client-secret', key.client_secret]);
    expect(result.code).toBe(0);
    expect(result.out).toContain(`account: the demo account of ${key.client_id}, as it was;`);
    expect(result.out).toContain('note: replayed on the account of sandbox_demo_client_id as it was (not a fresh one)');
    await sandbox.reset({ environment: 'demo' });
  });

  it('exits 3 naming the URL when nothing answers at --base-url', async () => {
    const result = await run([alike, '--base-url', 'http://127.0.0.1:1']);
    expect(result.code).toBe(3);
    expect(result.err).toMatch(/http:\/\/127\.0\.0\.1:1 could not be reached/);
    expect(result.out).toBe('');
  });

  it('exits 1 with the reason when the sandbox refuses to make the partner (an admin token is needed)', async () => {
    const guarded = await startSandbox({ port: 0, rateLimit: 0, logLevel: 'silent', adminToken: 'let-me-in' });
    try {
      const refused = await run([alike, '--base-url', guarded.url]);
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(/_sandbox\/partners answered 401 unauthorized.*needs --admin-token/);
      const admitted = await run([alike, '--base-url', guarded.url, '--admin-token', 'let-me-in']);
      expect(admitted.code).toBe(0);
      process.env.SANDBOX_ADMIN_TOKEN = 'let-me-in';
      try {
        expect((await run([alike, '--base-url', guarded.url])).code).toBe(0);
      } finally {
        delete process.env.SANDBOX_ADMIN_TOKEN;
      }
    } finally {
      await guarded.close();
    }
  });

  it.each([
    [['missing.har'], /cannot read the recording missing\.har: ENOENT/],
    [['NOT_JSON'], /is not a HAR file \(not JSON\)/],
    [['NO_ENTRIES'], /is not a HAR file \(no log\.entries\)/],
    [['ALIKE', '--base-url', 'ftp://x'], /--base-url must be an absolute http\(s\) base URL/],
    [['ALIKE', '--client-id', 'x'], /--client-id and --client-secret go together/],
    [['ALIKE', '--rate', '0'], /--rate must be/],
    [[], /missing required argument 'recording'/],
  ])('refuses %j with exit code 2 and the reason', async (args, reason) => {
    writeFileSync(join(dir, 'not-json.har'), 'HAR? no');
    writeFileSync(join(dir, 'no-entries.har'), '{"log":{"version":"1.2"}}');
    const named = args.map((a) => (a === 'NOT_JSON' ? join(dir, 'not-json.har') : a === 'NO_ENTRIES' ? join(dir, 'no-entries.har') : a === 'ALIKE' ? alike : a));
    const result = await run(named);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(reason);
  });
});

/** A stand-in target that answers every request with what it got: its body, query and credentials, echoed. */
async function echoTarget(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://x');
      let echo: unknown = text;
      if (/json/.test(req.headers['content-type'] ?? '')) echo = JSON.parse(text);
      else if (/x-www-form-urlencoded/.test(req.headers['content-type'] ?? '')) echo = Object.fromEntries(new URLSearchParams(text));
      // Unnamed places: only the memory of secrets already seen can mask these.
      const body = JSON.stringify({ echo, query: Object.fromEntries(url.searchParams), seen_authorization: String(req.headers.authorization ?? '').replace(/^Bearer /, ''), seen_api_key: req.headers['x-api-key'] ?? null });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('what a recording keeps of secrets', () => {
  let target: Awaited<ReturnType<typeof echoTarget>>;
  beforeAll(async () => {
    target = await echoTarget();
  });
  afterAll(() => new Promise<void>((resolve) => target.server.close(() => resolve())));

  const secretName = fc.constantFrom('client_secret', 'secret_key', 'webhook_secret', 'access_token', 'refresh_token', 'token', 'password', 'account_number', 'card_number', 'card_provider_token', 'cvv', 'Client_Secret');
  const secretValue = fc.stringMatching(/^[A-Za-z0-9_-]{16,40}$/).map((v) => `Zq${v}`);

  it('holds none of the secrets a client sends or is answered with, wherever they are (JSON at any depth, forms, query strings, credential headers, echoed in unnamed fields), and keeps the rest', async () => {
    let run = 0;
    await fc.assert(fc.asyncProperty(
      secretName, secretValue, fc.array(fc.constantFrom('data', 'items', 'owner', 'nested'), { maxLength: 4 }), fc.constantFrom('json', 'form', 'query'), secretValue, secretValue,
      async (name, secret, path, where, bearer, apiKey) => {
        const file = join(dir, `secrets-${run++}.har`);
        const recorder = await startRecorder({ target: target.url, out: file });
        let answer: string;
        try {
          let body: string | undefined;
          let type: string | undefined;
          let query = '';
          if (where === 'json') {
            let node: unknown = { [name]: secret, name: 'visible-name-1234' };
            for (const key of path.reverse()) node = key === 'items' ? [node] : { [key]: node };
            body = JSON.stringify(node);
            type = 'application/json';
          } else if (where === 'form') {
            body = new URLSearchParams({ [name]: secret, name: 'visible-name-1234' }).toString();
            type = 'application/x-www-form-urlencoded';
          } else query = `?${new URLSearchParams({ [name]: secret, name: 'visible-name-1234' })}`;
          const res = await fetch(`${recorder.url}/echo${query}`, {
            method: body === undefined ? 'GET' : 'POST',
            headers: { Authorization: `Bearer ${bearer}`, 'X-Api-Key': apiKey, ...(type ? { 'Content-Type': type } : {}) },
            body,
          });
          answer = await res.text();
        } finally {
          await recorder.close();
        }
        // The client got its answer whole; the file has none of the three secrets, and the rest as it was.
        for (const value of [secret, bearer, apiKey]) expect(answer).toContain(value);
        const text = readFileSync(file, 'utf8');
        for (const value of [secret, bearer, apiKey]) expect(text).not.toContain(value);
        expect(text).toContain('visible-name-1234');
        expect(text).toMatch(/\*\*\*#\d+/);
        rmSync(file);
      },
    ), { numRuns: 40 });
  });

  it('masks the client secrets the control plane answers with (a new partner\'s keys)', async () => {
    const file = join(dir, 'partner.har');
    const recorder = await startRecorder({ target: real.url, out: file });
    let credentials: Record<string, { client_id: string; client_secret: string }>;
    try {
      const res = await fetch(`${recorder.url}/_sandbox/partners`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'recorded-partner' }) });
      expect(res.status).toBe(201);
      credentials = ((await res.json()) as { credentials: typeof credentials }).credentials;
    } finally {
      await recorder.close();
    }
    const text = readFileSync(file, 'utf8');
    for (const key of Object.values(credentials)) {
      expect(text).toContain(key.client_id);
      expect(text).not.toContain(key.client_secret);
    }
  });
});

describe('billing-sandbox record (the command)', () => {
  /** Runs `record` until stop() (its Ctrl-C); listening resolves with the proxy's URL. */
  function start(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const controller = new AbortController();
    let listening!: (url: string) => void;
    const url = new Promise<string>((resolve) => { listening = resolve; });
    const command = recordCommand({ stdout: (t) => out.push(t), stderr: (t) => err.push(t), signal: controller.signal, onListening: (u) => listening(u) });
    const done = command.parseAsync(args, { from: 'user' });
    return { url, done, stop: () => controller.abort(), out: () => out.join(''), err: () => err.join('') };
  }

  it('says at once when the target cannot be reached, answers 502 bad_gateway naming it, records the exchange as without an answer, and diff skips it', async () => {
    const file = join(dir, 'unreachable.har');
    const run = start(['--target', 'http://127.0.0.1:1', '--port', '0', '--out', file]);
    const url = await run.url;
    expect(run.err()).toMatch(/^warning: http:\/\/127\.0\.0\.1:1 cannot be reached now \(ECONNREFUSED\): requests through the proxy are answered 502 bad_gateway/);
    const res = await fetch(`${url}/customers`);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ code: 'bad_gateway', message: 'billing-sandbox record could not reach http://127.0.0.1:1 (ECONNREFUSED).', validation_errors: {} });
    run.stop();
    await run.done;
    expect(run.out()).toMatch(/^ {4}1 {2}GET {5}--- +\d+ ms {2}\/customers {2}\(the target gave no answer: ECONNREFUSED\)$/m);
    expect(run.err()).toContain(`Recorded 1 exchange in ${file}.`);
    const report = await diff(file);
    expect(report.summary).toMatchObject({ exchanges: 1, skipped: 1, differences: 0 });
    expect(report.exchanges[0].reason).toBe('the target gave no answer when it was recorded (the target gave no answer: ECONNREFUSED)');
  });

  it('refuses an existing --out (unless --overwrite) and a taken --port with exit code 2 and the reason', async () => {
    const existing = join(dir, 'existing.har');
    writeFileSync(existing, 'keep me');
    await expect(start(['--target', real.url, '--port', '0', '--out', existing]).done).rejects.toMatchObject({ exitCode: 2, message: `${existing} exists already: choose another --out, or add --overwrite` });
    expect(readFileSync(existing, 'utf8')).toBe('keep me');
    const taken = new URL(real.url).port;
    const refused = start(['--target', real.url, '--port', taken, '--out', join(dir, 'taken.har')]).done;
    await expect(refused).rejects.toBeInstanceOf(CliError);
    await expect(refused).rejects.toMatchObject({ exitCode: 2, message: `port ${taken} is taken: choose another --port (0 picks a free one)` });
    const overwrite = start(['--target', real.url, '--port', '0', '--out', existing, '--overwrite']);
    await overwrite.url;
    overwrite.stop();
    await overwrite.done;
    expect(readRecording(existing).log.entries).toEqual([]);
  });

  it('past the exchange cap forwards every request but writes no more, says so once, and counts them; diff refuses a longer recording', async () => {
    const file = join(dir, 'capped.har');
    const full: number[] = [];
    const lines: string[] = [];
    const recorder = await startRecorder({ target: real.url, out: file, maxExchanges: 2, onFull: (max) => full.push(max), onExchange: (line) => lines.push(`${line.index} ${line.status}${line.notRecorded ? ' not recorded' : ''}`) });
    try {
      for (let i = 0; i < 4; i++) expect((await fetch(`${recorder.url}/_sandbox/health`)).status).toBe(200);
    } finally {
      await recorder.close();
    }
    expect(full).toEqual([2]);
    expect(lines).toEqual(['1 200', '2 200', '3 200 not recorded', '4 200 not recorded']);
    expect(recorder.notRecorded).toBe(2);
    expect(readRecording(file).log.entries).toHaveLength(2);
    expect(() => readRecording(file, LIMITS.recordingFileBytes, 1)).toThrow(`the recording ${file} holds 2 exchanges, more than the 1 diff replays (LIMITS.recordExchanges): record shorter sessions`);
    expect(() => readRecording(file, 100, LIMITS.recordExchanges)).toThrow(/bytes, more than the 100 bytes diff reads \(LIMITS.recordingFileBytes\)/);
  });
});

describe('the known choices diff names', () => {
  it('name rows that exist in docs/gaps-and-choices.md (by their first-column text) and operations of openapi.yaml', () => {
    const doc = readFileSync(join(process.cwd(), 'docs', 'gaps-and-choices.md'), 'utf8');
    const rows = new Set(doc.split('\n').filter((line) => line.startsWith('| ')).map((line) => line.split('|')[1].trim()));
    expect(CHOICES.map((c) => c.row).filter((row) => !rows.has(row))).toEqual([]);
    const document = parseYaml(readFileSync(join(process.cwd(), 'openapi', 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const operations = new Set(Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op?.operationId)));
    expect(CHOICES.flatMap((c) => c.operations ?? []).filter((op) => !operations.has(op))).toEqual([]);
  });
});

describe('what diff calls a difference (compareAnswers)', () => {
  const shapes = new ShapeChecker();
  const json = { 'content-type': 'application/json; charset=utf-8' };
  const answer = (status: number, body: unknown, headers: Record<string, string> = json): Answer => ({ status, headers, text: body === undefined ? '' : JSON.stringify(body) });
  const kinds = (recorded: Answer, sandbox: Answer, operationId: string | null = null) => compareAnswers(recorded, sandbox, { operationId, shapes }).map((d) => `${d.kind}${d.path ? ` ${d.path}` : ''}: ${d.recorded} -> ${d.sandbox}`);

  /** Every string and number replaced by another of its type: what two accounts' answers differ by. */
  const otherValues = (value: unknown): unknown => {
    if (typeof value === 'string') return `${value}-other`;
    if (typeof value === 'number') return value + 1;
    if (Array.isArray(value)) return value.map(otherValues);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, otherValues(v)]));
    return value;
  };

  it('finds nothing between two answers of the same shape, whatever their ids, strings and numbers (generated bodies)', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.constantFrom(200, 201, 400, 404), (body, status) => {
      // A top-level code (or error) is the error code, compared as such: left out here.
      const shaped = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...body, code: undefined, error: undefined } : body;
      const clean = JSON.parse(JSON.stringify(shaped ?? null)) as unknown;
      expect(kinds(answer(status, clean), answer(status, clean))).toEqual([]);
      expect(kinds(answer(status, clean), answer(status, otherValues(clean)))).toEqual([]);
    }), { numRuns: 200 });
  });

  it.each([
    ['another code at the same status', answer(400, { code: 'invalid_state', message: 'a' }), answer(400, { code: 'validation_error', message: 'b' }), ['code: invalid_state -> validation_error']],
    ['another status (the shapes then not compared)', answer(409, { code: 'invalid_state' }), answer(200, { id: 'x' }), ['status: 409 invalid_state -> 200']],
    ['another JSON type', answer(200, { amount: 12.5, tags: [] }), answer(200, { amount: '12.5', tags: {} }), ['type amount: number -> string', 'type tags: array -> object']],
    ['a field on one side only, at any depth', answer(200, { a: { b: 1 } }), answer(200, { a: { c: 1 } }), ['field a.b: 1 -> absent', 'field a.c: absent -> 1']],
    ['another list length', answer(200, { data: [{ id: 1 }, { id: 2 }] }), answer(200, { data: [{ id: 3 }] }), ['items data: 2 items -> 1 items']],
    ['Retry-After present on one side', answer(503, {}, { ...json, 'retry-after': '2' }), answer(503, {}), ['header Retry-After: seconds -> absent']],
    ['Retry-After in another form', answer(429, {}, { ...json, 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' }), answer(429, {}, { ...json, 'retry-after': '1' }), ['header Retry-After: an HTTP date -> seconds']],
    ['another media type (parameters aside)', answer(200, {}, { 'content-type': 'application/problem+json' }), answer(200, {}, { 'content-type': 'application/json; charset=utf-8' }), ['header Content-Type: application/problem+json -> application/json']],
    ['a JSON body against an empty one', answer(200, { ok: true }), answer(200, undefined), ['type (body): JSON -> empty']],
  ])('reports %s', (_what, recorded, sandbox, expected) => {
    expect(kinds(recorded, sandbox)).toEqual(expected);
  });

  it('compares the values of enumerated fields only, naming those outside the document', () => {
    const invoice = { status: 'PAID', id: 'inv_1', number: 'INV-1' };
    expect(kinds(answer(200, invoice), answer(200, { ...invoice, status: 'OVERDUE', id: 'inv_2', number: 'INV-2' }), 'getInvoice')).toEqual(['enum status: PAID -> OVERDUE']);
    expect(kinds(answer(200, { ...invoice, status: 'ON_HOLD' }), answer(200, invoice), 'getInvoice')).toEqual(['enum status: ON_HOLD (not in the document) -> PAID']);
  });
});
