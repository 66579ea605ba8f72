// The README and docs/ show only code CI runs: every fenced block quotes a file under examples/
// (scripts/docs-examples.mjs); the data examples (scenario YAML, fixture and accounting-sync JSON) load
// into a sandbox and do what the docs say; the deployment examples that need Docker or a registry
// (compose, GitHub Actions, docker and npx commands) parse, and name only variables and flags the
// sandbox has. The shell examples run against a live sandbox in scripts/examples.sh; the TypeScript
// ones are Vitest files there too.
import { describe, expect, it } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { setup } from './helpers.js';
import { webhookSandbox } from './webhooks-support.js';
import { startWebhookReceiver } from '../src/testing/webhook-receiver.js';

const ROOT = new URL('..', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The environment variables the sandbox reads (src/config.ts), and the server flags docs/command-line.md documents. */
const CONFIG_VARIABLES = new Set([...read('src/config.ts').matchAll(/env\.([A-Z_]+)/g)].map((m) => m[1]));
const SERVER_FLAGS_TABLE = read('docs/command-line.md').split('\n## Server flags\n')[1]?.split('\n## ')[0] ?? '';
const DOCUMENTED_FLAGS = new Set([...SERVER_FLAGS_TABLE.matchAll(/^\| `(--[a-z-]+)/gm)].map((m) => m[1]));
/** Flags given to the sandbox on a command line: what follows the image or bin name. */
const sandboxFlags = (text: string) =>
  [...text.matchAll(/billing-sandbox((?: +[^\s#\\]+)*)/g)].flatMap((m) => m[1].split(/ +/).filter((a) => a.startsWith('--')));

describe('docs quote their examples', () => {
  it('every fenced block in README.md and docs/*.md equals the file under examples/ its marker names', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts/docs-examples.mjs')], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('every documentation example file is quoted somewhere', async () => {
    const { quotedFiles } = (await import(join(ROOT, 'scripts/docs-examples.mjs'))) as { quotedFiles: () => string[] };
    const quoted = new Set(quotedFiles());
    const files = ['readme', 'running', 'scenarios', 'fixtures', 'webhooks', 'snapshots', 'control-plane', 'logs', 'other-languages', 'first-test']
      .flatMap((dir) => readdirSync(join(ROOT, 'examples', dir), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && !entry.parentPath.includes('__pycache__'))
        .map((entry) => relative(ROOT, join(entry.parentPath, entry.name))));
    expect(files.filter((f) => !quoted.has(f))).toEqual([]);
  });

  it('the shell examples are valid bash', () => {
    for (const dir of ['readme', 'running', 'scenarios', 'webhooks', 'snapshots', 'other-languages', 'first-test']) {
      for (const file of readdirSync(join(ROOT, 'examples', dir)).filter((f) => f.endsWith('.sh'))) {
        expect(() => execFileSync('bash', ['-n', join(ROOT, 'examples', dir, file)])).not.toThrow();
      }
    }
  });
});

describe('the scenario document of docs/scenarios.md', () => {
  const text = read('examples/scenarios/approval-outage.yaml');

  it('loads as written (YAML) and lists its five rules', async () => {
    const sb = await setup();
    const loaded = await sb.http.post('/_sandbox/scenarios').type('application/yaml').send(text);
    expect(loaded.status).toBe(201);
    const listed = await sb.http.get('/_sandbox/scenarios').expect(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: loaded.body.id, name: 'approval outage' })]);
    expect(parseYaml(text).rules).toHaveLength(5);
  });

  it('refuses bill submission twice with 409 invalid_state, then lets it through; the third invoice list is a 429', async () => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    // The document without its random connection resets, so this test's requests are never dropped.
    const document = parseYaml(text);
    document.rules = document.rules.filter((rule: { drop?: string }) => !rule.drop);
    expect((await sb.http.post('/_sandbox/scenarios').send(document)).status).toBe(201);
    const vendor = (await api.post('/vendors', { name: 'Paper Supply' })).body;
    const bill = (await api.post('/bills', { vendor_id: vendor.id, amount: 120 })).body;
    const submits = [];
    for (let i = 0; i < 3; i++) submits.push(await api.post(`/bills/${bill.id}/submit`));
    expect(submits.map((r) => [r.status, r.body.code, r.body.message])).toEqual([
      [409, 'invalid_state', 'Another approver is on it'],
      [409, 'invalid_state', 'Another approver is on it'],
      [200, undefined, undefined],
    ]);
    expect(submits[2].body.status).not.toBe('draft');
    const lists = [];
    for (let i = 0; i < 4; i++) lists.push((await api.get('/invoices')).status);
    expect(lists).toEqual([200, 200, 429, 200]);
  });
});

describe('the delivery drills of docs/webhooks.md', () => {
  it('a wrong secret, then a duplicate, then an answer counted as a time-out, each in its place of the queue', async () => {
    const w = await webhookSandbox();
    const receiver = await startWebhookReceiver({ secret: 'whsec_docs' });
    try {
      expect((await w.sb.http.post('/_sandbox/scenarios').type('application/yaml').send(read('examples/webhooks/receiver-drills.yaml'))).status).toBe(201);
      for (const topic of ['customer_created', 'invoice_paid']) await w.api.post('/webhooks', { endpoint_url: `${receiver.url}/hooks`, topic, secret_key: 'whsec_docs' }).expect(201);
      const customer = async (name: string) => (await w.api.post('/customers', { name })).body.id as string;
      const a = await customer('A');
      const paid = await w.sb.http.post('/_sandbox/events').send({ topic: 'invoice_paid' }).expect(201);
      const b = await customer('B');
      await w.settle();
      await w.sb.advance(90).expect(200);
      const c = await customer('C');
      const d = await customer('D');
      await w.settle();
      await w.sb.advance(90).expect(200);
      const ip = paid.body.entity_id;
      const key = paid.body.idempotency_key;
      // The fired invoice_paid made its own customer (the second customer_created, before the invoice
      // was paid, so B's is the third: the one timed out and sent again) and paid the invoice at once:
      // one invoice_paid, the one fired.
      const x = paid.body.made.find((m: { object: string }) => m.object === 'customer').id;
      expect(receiver.deliveries.map((d) => `${d.entity_id} ${d.idempotency_key === key ? 'fired ' : ''}${d.status}`)).toEqual([
        `${a} 200`, `${x} 200`, `${ip} fired 401`, `${ip} fired 200`, `${ip} fired 200`, `${ip} fired 200`, `${b} 200`, `${b} 200`, `${c} 200`, `${d} 200`,
      ]);
      const drills = ((await w.sb.http.get('/_sandbox/webhooks/deliveries')).body.data as Array<{ drill: string | null }>).reverse().map((x) => x.drill);
      expect(drills).toEqual([null, null, 'wrong_secret', 'duplicate_delivery', 'duplicate_delivery', 'duplicate_delivery', 'timeout_after_delivery', null, null, null]);
    } finally {
      await receiver.close();
      await w.close();
    }
  });
});

describe('the data examples', () => {
  it('the fixture document of docs/scenarios.md loads with --fixtures FILE', async () => {
    const sb = await setup({ fixtures: join(ROOT, 'examples/fixtures/my-dataset.json'), seed: 'docs' });
    const api = sb.as(await sb.token());
    const customers = (await api.get('/customers?limit=500')).body.data as Array<{ name: string }>;
    expect(customers).toHaveLength(1 + 3);
    expect(customers.map((c) => c.name)).toContain('Acme Corp');
    const bills = (await api.get('/bills?limit=500')).body.data as Array<{ amount: number; status: string }>;
    expect(bills).toEqual(expect.arrayContaining([expect.objectContaining({ amount: 120, status: 'paid' })]));
    expect((await api.get('/webhooks')).body.data).toEqual([expect.objectContaining({ topic: 'invoice_paid', endpoint_url: 'https://hooks.example/billing' })]);
  });

  it('the snapshot export of docs/snapshots.md loads with --fixtures FILE: its objects, its masked secret and its due job', async () => {
    const exported = JSON.parse(read('examples/fixtures/after-setup.snapshot.json'));
    const sb = await setup({ fixtures: join(ROOT, 'examples/fixtures/after-setup.snapshot.json') });
    const api = sb.as(await sb.token());
    expect((await api.get('/customers')).body.data).toEqual([expect.objectContaining({ id: exported.collections.customers.items[0].id, name: 'Acme Corp' })]);
    expect((await api.get('/webhooks')).body.data).toEqual([expect.objectContaining({ topic: 'invoice_paid', secret_last_4_digits: '5678' })]);
    const [invoice] = (await api.get('/invoices')).body.data;
    await sb.http.post('/_sandbox/clock/advance').send({ to: '2030-02-01T06:00:00Z' }).expect(200);
    expect((await api.get(`/invoices/${invoice.id}`)).body.status).toBe('OVERDUE');
    // The same document imports through the control plane too.
    expect((await sb.http.post('/_sandbox/snapshots').send({ document: exported })).status).toBe(201);
  });

  it('the accounting sync of docs/api-coverage.md creates its four items, linked by position', async () => {
    const sb = await setup();
    const res = await sb.http.post('/_sandbox/accounting/sync').send(JSON.parse(read('examples/control-plane/accounting-sync.json')));
    expect(res.status).toBe(201);
    const { customers: [customer], invoices: [invoice], vendors: [vendor], bills: [bill] } = res.body;
    expect(bill).toMatchObject({ vendor_id: vendor.id, amount: 120.5, number: 'C-1001', source: 'accounting_integration' });
    expect(invoice).toMatchObject({ customer_id: customer.id, total: 250, source: 'accounting_integration' });
  });
});

describe('the deployment examples (Docker and CI are not available here: they are parsed and checked)', () => {
  it('the Compose file configures the sandbox with variables it reads and waits for the image health check', () => {
    const compose = parseYaml(read('examples/running/compose.yaml'));
    const service = compose.services['billing-sandbox'];
    expect(Object.keys(service.environment).filter((name) => !CONFIG_VARIABLES.has(name))).toEqual([]);
    expect(service.ports).toEqual(['4010:4010']);
    expect(compose.services.app.depends_on['billing-sandbox'].condition).toBe('service_healthy');
    expect(read('Dockerfile')).toMatch(/^HEALTHCHECK /m);
  });

  it('the GitHub Actions job and steps parse and use variables the sandbox reads', () => {
    const job = parseYaml(read('examples/running/github-actions.yaml')).jobs.integration;
    const service = job.services['billing-sandbox'];
    expect(Object.keys(service.env).filter((name) => !CONFIG_VARIABLES.has(name))).toEqual([]);
    expect(service.ports).toEqual(['4010:4010']);
    const steps = parseYaml(read('examples/running/github-actions-steps.yaml')) as Array<{ run: string }>;
    const script = steps.map((s) => s.run).join('\n');
    expect(() => execFileSync('bash', ['-n'], { input: script })).not.toThrow();
    const variables = [...script.matchAll(/-e ([A-Z_]+)=/g)].map((m) => m[1]);
    expect(variables.length).toBeGreaterThan(0);
    expect(variables.filter((name) => !CONFIG_VARIABLES.has(name))).toEqual([]);
    expect(script).toContain('/_sandbox/health');
  });

  it('the docker and npx commands give the sandbox only documented flags and variables', () => {
    expect([...DOCUMENTED_FLAGS]).toEqual(expect.arrayContaining(['--port', '--data', '--seed', '--token-ttl', '--memory-budget']));
    for (const file of ['examples/running/docker.sh', 'examples/running/npx.sh']) {
      const text = read(file);
      const flags = sandboxFlags(text);
      expect([file, flags.length > 0]).toEqual([file, true]);
      expect([file, flags.filter((flag) => !DOCUMENTED_FLAGS.has(flag))]).toEqual([file, []]);
      const variables = [...text.matchAll(/-e ([A-Z_]+)=/g)].map((m) => m[1]);
      expect([file, variables.filter((name) => !CONFIG_VARIABLES.has(name))]).toEqual([file, []]);
    }
  });

  it('the first test against a container sets only variables the sandbox reads, and runs the script beside it', () => {
    const text = read('examples/first-test/container.sh');
    const variables = [...text.matchAll(/-e ([A-Z_]+)=/g)].map((m) => m[1]);
    expect(variables).toEqual(['SANDBOX_ALLOW_HTTP_WEBHOOKS']);
    expect(variables.filter((name) => !CONFIG_VARIABLES.has(name))).toEqual([]);
    const script = /node (examples\/first-test\/[\w.-]+\.mjs)/.exec(text)?.[1];
    expect(script).toBe('examples/first-test/first-test.mjs');
    expect(read(script as string)).toContain('process.env.RECEIVER_HOST');
  });

  it('the other languages\' recipes give the sandbox only documented flags and variables, and the CI ones wait, subscribe and read the events', () => {
    // What a recipe passes to docker or Testcontainers besides the sandbox's own flags.
    const containerFlags = new Set(['--add-host', '--rm', '--name', '--health-interval', '--health-timeout', '--health-retries', '--wait', '--profile']);
    const recipes = ['java/BillingSandboxTest.java', 'python/conftest.py', 'go/billing_test.go', 'github-actions.yaml', 'gitlab-ci.yml', 'compose.yaml', 'ci-check.sh'];
    for (const file of recipes) {
      const text = read(`examples/other-languages/${file}`);
      const flags = [...text.matchAll(/["\s](--[a-z][a-z-]+)/g)].map((m) => m[1]).filter((flag) => !containerFlags.has(flag));
      expect([file, flags.filter((flag) => !DOCUMENTED_FLAGS.has(flag))]).toEqual([file, []]);
      const variables = [...text.matchAll(/\b(SANDBOX_[A-Z_]+)\b/g)].map((m) => m[1]);
      expect([file, variables.filter((name) => !CONFIG_VARIABLES.has(name))]).toEqual([file, []]);
    }
    // Each recipe's six steps: the wait, a partner's credentials, a token, a receiver on 0.0.0.0 with http webhooks, the events.
    const recipeFiles = { java: ['java/BillingSandboxTest.java'], python: ['python/conftest.py', 'python/sandbox_client.py', 'python/test_billing.py'], go: ['go/billing_test.go'], github: ['github-actions.yaml', 'ci-check.sh'], gitlab: ['gitlab-ci.yml', 'ci-check.sh'] };
    for (const [recipe, files] of Object.entries(recipeFiles)) {
      const text = files.map((file) => read(`examples/other-languages/${file}`)).join('\n');
      const missing = ['/_sandbox/health', '/_sandbox/partners', '/oauth/token', '/_sandbox/events', '0.0.0.0', /allow.http.webhooks/i]
        .filter((needed) => (typeof needed === 'string' ? !text.includes(needed) : !needed.test(text)));
      expect([recipe, missing]).toEqual([recipe, []]);
    }
    const github = parseYaml(read('examples/other-languages/github-actions.yaml')).jobs.integration;
    const service = github.services['billing-sandbox'];
    expect(Object.keys(service.env).filter((name) => !CONFIG_VARIABLES.has(name))).toEqual([]);
    expect(service.options).toContain('--add-host host.docker.internal:host-gateway');
    expect(service.options).toContain('--health-interval');
    const gitlab = parseYaml(read('examples/other-languages/gitlab-ci.yml')).integration;
    expect(gitlab.services[0].command.filter((arg: string) => arg.startsWith('--') && !DOCUMENTED_FLAGS.has(arg))).toEqual([]);
    expect(gitlab.variables.FF_NETWORK_PER_BUILD).toBe('true');
    const compose = parseYaml(read('examples/other-languages/compose.yaml')).services;
    expect(Object.keys(compose['billing-sandbox'].environment).filter((name) => !CONFIG_VARIABLES.has(name))).toEqual([]);
    expect(compose['billing-sandbox'].extra_hosts).toEqual(['host.docker.internal:host-gateway']);
    expect(compose.tests.depends_on['billing-sandbox'].condition).toBe('service_healthy');
    for (const script of [...github.steps, { run: gitlab.script.join('\n') }].map((step: { run?: string }) => step.run ?? '')) {
      for (const [, path] of script.matchAll(/bash (examples\/\S+)/g)) expect(existsSync(join(ROOT, path))).toBe(true);
    }
  });

  it('the quick start names npm scripts the package has', () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    const used = [...read('examples/readme/quick-start.sh').matchAll(/npm (start|test|run [\w:-]+)/g)].map((m) => m[1].replace(/^run /, ''));
    expect(used.sort()).toEqual(['start', 'test']);
    expect(used.filter((name) => !scripts[name])).toEqual([]);
  });
});
