// The command line's subcommands, run as built (`node dist/cli.js ...`, see cli-harness.ts) against a
// sandbox started on port 0 in this process: clock, trigger, listen (with ordered forwarding),
// requests (and --follow), reset, scenario, snapshot; --json output; exit codes 0, 1, 2 and 3; colour
// only on a terminal.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type RunningSandbox } from '../src/index.js';
import { eventLog } from '../src/events/events.js';
import { streamHub } from '../src/stream/feature.js';
import { startWebhookReceiver, type WebhookReceiver } from '../src/testing/webhook-receiver.js';
import { buildCli, childEnv, runCli, spawnProcess, type BuiltCli, type Result } from './cli-harness.js';

jest.setTimeout(90_000); // every case spawns node, slow on a loaded machine

let built: BuiltCli;
let sandbox: RunningSandbox;
let scratch: string;
let env: Record<string, string>;
const ANSI = /\u001b\[/;

beforeAll(async () => {
  built = buildCli('cli-commands');
  sandbox = await startSandbox({ port: 0, logLevel: 'silent', rateLimit: 0 });
  scratch = mkdtempSync(join(tmpdir(), 'cli-commands-'));
  env = { SANDBOX_URL: sandbox.url };
});

afterAll(async () => {
  await sandbox.close();
  built.remove();
  rmSync(scratch, { recursive: true, force: true });
});

beforeEach(async () => {
  await sandbox.reset();
});

const cli = (args: string[], extra: Record<string, string> = {}): Promise<Result> => runCli(built, args, { ...env, ...extra });

async function api(method: string, path: string, body?: unknown) {
  const token = await sandbox.token();
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const account = () => sandbox.deps.store.account('ptn_default', 'production');

describe('help', () => {
  it.each([
    [['--help'], ['clock', 'trigger', 'listen', 'requests', 'reset', 'scenario', 'serve', '--port']],
    [['serve', '--help'], ['--port', '--data', '--token-ttl', 'SANDBOX_RATE_LIMIT']],
    [['clock', '--help'], ['advance', '--url', 'SANDBOX_URL', '--admin-token', '--client-id', '--client-secret', '--json']],
    [['clock', 'advance', '--help'], ['[duration]', '--to', '90s, 15m, 2h, 30d']],
    [['trigger', '--help'], ['<topic>', '--id', '--duplicate <n>', 'invoice_paid']],
    [['listen', '--help'], ['--topics', '--forward-to', '--secret']],
    [['requests', '--help'], ['--follow', '--method', '--path', '--limit']],
    [['reset', '--help'], ['--all']],
    [['scenario', '--help'], ['load', 'list', 'clear']],
    [['scenario', 'load', '--help'], ['<file|name>', 'slow-api']],
    [['snapshot', '--help'], ['save', 'restore', 'export', 'import', 'list', 'delete']],
    [['snapshot', 'restore', '--help'], ['<name>', '--environment']],
  ])('%j exits 0 and shows %j', async (args, words) => {
    const res = await cli(args);
    expect(res.status).toBe(0);
    for (const word of words) expect(res.stdout).toContain(word);
  });
});

describe('clock', () => {
  it('prints now, and advances by a duration or to an instant; --json parses', async () => {
    const shown = await cli(['clock']);
    expect(shown.status).toBe(0);
    expect(shown.stdout).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z {2}\(real time\)\n$/);
    expect(shown.stdout).not.toMatch(ANSI);

    const advanced = await cli(['clock', 'advance', '30d', '--json']);
    expect(advanced.status).toBe(0);
    const view = JSON.parse(advanced.stdout);
    expect(view).toEqual({ now: expect.any(String), offset_seconds: expect.any(Number), ran: expect.any(Number), failed_jobs: [] });
    // Real time moves on during the call: the clock reads the request's now plus 30 days.
    expect(Math.round(view.offset_seconds)).toBe(30 * 86_400);
    expect(Math.round(account().clock.offsetMs / 1000)).toBe(30 * 86_400);

    const human = await cli(['clock', 'advance', '1h30m']);
    expect(human.stdout).toMatch(/^Clock now \S+ {2}\(real time \+ 30d1h30m; \d+ due jobs? ran\)\n$/);
    const target = new Date(Date.parse(view.now) + 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const to = JSON.parse((await cli(['clock', 'advance', '--to', target, '--json'])).stdout);
    // The clock goes on with real time: it reads the target, or a few milliseconds past it.
    expect(Date.parse(to.now) - Date.parse(target)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(to.now) - Date.parse(target)).toBeLessThan(1_000);
    expect(JSON.parse((await cli(['clock', '--json'])).stdout).now.slice(0, 16)).toBe(to.now.slice(0, 16));
  });

  it.each([
    [['clock', 'advance', '3x'], /"3x" is not a duration/],
    [['clock', 'advance'], /give a duration/],
    [['clock', 'advance', '1d', '--to', '2030-01-01T00:00:00Z'], /not both/],
    [['clock', 'advance', '--to', 'tomorrow'], /RFC 3339/],
    [['clock', 'advance', '0s'], /zero/],
  ])('%j is a usage error: exit 2, nothing moves', async (args, message) => {
    const res = await cli(args);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(account().clock.offsetMs).toBe(0);
  });

  it('a time before now is refused by the sandbox: exit 1 with its HttpError (code, message, field)', async () => {
    const res = await cli(['clock', 'advance', '--to', '2020-01-01T00:00:00Z']);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('the sandbox refused POST /_sandbox/clock/advance: 422 unprocessable_entity: The clock only moves forward.');
    expect(res.stderr).toContain('  to: must not be earlier');
    const json = await cli(['clock', 'advance', '--to', '2020-01-01T00:00:00Z', '--json']);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stderr).error).toMatchObject({ exit_code: 1, status: 422, code: 'unprocessable_entity', validation_errors: { to: expect.any(String) } });
  });
});

describe('trigger', () => {
  it('fires the topic as POST /_sandbox/events does and prints the event id; --id (or --entity-id) names the object', async () => {
    const made = await api('POST', '/customers', { name: 'Triggered Ltd' });
    for (const flag of ['--id', '--entity-id']) {
      const res = await cli(['trigger', 'customer_updated', flag, made.body.id]);
      expect(res.status).toBe(0);
      const [event] = eventLog(account()).newest({ field: 'topic', value: 'customer_updated' });
      expect(res.stdout).toBe(`${event.idempotency_key}\n`);
      expect(event.entity_id).toBe(made.body.id);
      expect(res.stderr).toContain(`customer_updated on ${made.body.id} at `);
      expect(res.stderr).not.toContain('made ');
    }
    const json = JSON.parse((await cli(['trigger', 'customer_created', '--json'])).stdout);
    expect(json).toMatchObject({ topic: 'customer_created', entity_id: expect.not.stringMatching(made.body.id), idempotency_key: expect.stringMatching(/^evt_/), data: expect.any(Object), made: [{ object: 'customer', id: json.entity_id }] });
  });

  it('trigger invoice_paid makes a customer, a card, an invoice and its payment, prints them, and the invoice is PAID', async () => {
    const res = await cli(['trigger', 'invoice_paid']);
    expect(res.status).toBe(0);
    const [event] = eventLog(account()).newest({ field: 'topic', value: 'invoice_paid' });
    expect(res.stdout).toBe(`${event.idempotency_key}\n`);
    expect(res.stderr).toContain(`invoice_paid on ${event.entity_id} at `);
    expect(res.stderr).toMatch(new RegExp(`made customer cus_\\w+, payment method pm_\\w+, invoice ${event.entity_id}, payment pay_\\w+, payout po_\\w+`));
    expect((await api('GET', `/invoices/${event.entity_id}`)).body.status).toBe('PAID');
    // Named, a paid invoice: restated; an archived one: refused (exit 1) with the reason.
    const again = await cli(['trigger', 'invoice_paid', '--id', event.entity_id]);
    expect([again.status, again.stderr]).toEqual([0, expect.not.stringContaining('made ')]);
    const created = await cli(['trigger', 'invoice_created', '--json']);
    const archived = JSON.parse(created.stdout).entity_id;
    expect((await api('DELETE', `/invoices/${archived}`)).status).toBe(200);
    const refused = await cli(['trigger', 'invoice_paid', '--id', archived]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`409 invalid_state: Cannot fire invoice_paid for ${archived}: the invoice is archived`));
  });

  it('names the nearest topic for a misspelt one (exit 2) and prints the sandbox\'s 404 for an unknown entity (exit 1)', async () => {
    const typo = await cli(['trigger', 'invoice_payd']);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('unknown topic invoice_payd; did you mean invoice_paid?');
    const missing = await cli(['trigger', 'invoice_paid', '--id', 'inv_nope']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/refused POST \/_sandbox\/events: 404 not_found: .*inv_nope/);
  });
});

describe('trigger --duplicate', () => {
  it('has the event delivered, then sent N more times with the same idempotency_key, before the next event; refuses a bad N (exit 2) and a topic nobody receives (exit 1)', async () => {
    // Its own sandbox: the receiver is plain http on localhost.
    const local = await startSandbox({ port: 0, logLevel: 'silent', rateLimit: 0, allowHttpWebhooks: true });
    const receiver = await startWebhookReceiver();
    try {
      const token = await local.token();
      const post = (path: string, body: unknown) => fetch(`${local.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      expect((await post('/webhooks', { endpoint_url: `${receiver.url}/hooks`, topic: 'customer_created', secret_key: 'whsec_cli' })).status).toBe(201);
      const res = await cli(['trigger', 'customer_created', '--duplicate', '2'], { SANDBOX_URL: local.url });
      expect(res.status).toBe(0);
      const key = res.stdout.trim();
      expect(res.stderr).toContain('delivered, then sent 2 more times with the same idempotency_key');
      await post('/customers', { name: 'After The Drill' });
      await receiver.waitForCount('customer_created', 4, { timeoutMs: 10_000 });
      expect(receiver.deliveries.map((d) => (d.idempotency_key === key ? 'drill' : (d.topic === 'customer_created' ? d.data.name : d.topic)))).toEqual(['drill', 'drill', 'drill', 'After The Drill']);
      expect(receiver.countsByKey().get(key)).toBe(3);

      const tooMany = await cli(['trigger', 'customer_created', '--duplicate', '6'], { SANDBOX_URL: local.url });
      expect(tooMany.status).toBe(2);
      expect(tooMany.stderr).toContain('must be a whole number from 1 to 5');
      const nobody = await cli(['trigger', 'invoice_paid', '--duplicate', '1'], { SANDBOX_URL: local.url });
      expect(nobody.status).toBe(1);
      expect(nobody.stderr).toMatch(/refused POST \/_sandbox\/events: 422 unprocessable_entity: No active subscription of invoice_paid/);
      expect(receiver.deliveries).toHaveLength(4);
    } finally {
      await receiver.close();
      await local.close();
    }
  });
});

describe('requests', () => {
  it('prints the journal newest first in aligned columns; filters by method and path; --json parses', async () => {
    const made = await api('POST', '/customers', { name: 'Journal Co' });
    await api('GET', `/customers/${made.body.id}`);
    await api('GET', '/customers');
    const res = await cli(['requests']);
    expect(res.status).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME +METHOD +PATH +STATUS +MS +OPERATION$/);
    const rows = lines.slice(1).filter((l) => !l.includes('/oauth/token'));
    expect(rows.map((l) => l.split(/ +/).slice(1, 4))).toEqual([['GET', '/customers', '200'], ['GET', `/customers/${made.body.id}`, '200'], ['POST', '/customers', '201']]);
    // Aligned: every column starts at the header's offset.
    for (const header of ['METHOD', 'PATH', 'STATUS']) {
      const at = lines[0].indexOf(header);
      for (const line of lines.slice(1)) expect(line[at - 1]).toBe(' ');
    }
    const filtered = JSON.parse((await cli(['requests', '--method', 'get', '--path', '/customers/{id}', '--json'])).stdout);
    expect(filtered.data.map((r: { path: string }) => r.path)).toEqual([`/customers/${made.body.id}`]);
    // The command line's own token requests are the CLI's, not the partner's: hidden unless --all.
    const agent = (r: { request: { headers: Record<string, string> } }) => r.request.headers['user-agent'];
    const shown = JSON.parse((await cli(['requests', '--json'])).stdout).data;
    expect(shown.filter((r: never) => /^billing-sandbox-cli\//.test(agent(r)))).toEqual([]);
    const all = JSON.parse((await cli(['requests', '--all', '--json'])).stdout).data;
    expect(all.filter((r: never) => /^billing-sandbox-cli\//.test(agent(r))).length).toBeGreaterThanOrEqual(3);
  });

  it('--limit N shows N of the partner\'s requests: the command line\'s own token requests are left out first', async () => {
    for (let i = 0; i < 4; i++) await api('POST', '/customers', { name: `Limit ${i}` });
    // Each command asks for a token first: three more requests of the CLI's own, newest.
    for (let i = 0; i < 3; i++) expect((await cli(['clock'])).status).toBe(0);
    const shown = JSON.parse((await cli(['requests', '--limit', '5', '--json'])).stdout).data as Array<{ method: string; path: string; request: { headers: Record<string, string> } }>;
    expect(shown).toHaveLength(5);
    expect(shown.filter((r) => /^billing-sandbox-cli\//.test(r.request.headers['user-agent']))).toEqual([]);
    expect(shown.slice(0, 4).map((r) => `${r.method} ${r.path}`)).toEqual(['POST /customers', 'POST /oauth/token', 'POST /customers', 'POST /oauth/token']);
    const text = (await cli(['requests', '--limit', '5'])).stdout.trimEnd().split('\n');
    expect(text).toHaveLength(1 + 5);
  });

  it('--follow prints new requests as they arrive and stops cleanly on Ctrl-C', async () => {
    await api('POST', '/customers', { name: 'Before' });
    const follow = spawnProcess(process.execPath, [built.cli, 'requests', '--follow', '--method', 'POST', '--path', '/customers'], childEnv(env));
    await follow.waitFor(/Following new requests/, 'stderr');
    expect(follow.stdout()).toMatch(/POST +\/customers +201/);
    await api('GET', '/customers');
    await api('POST', '/customers', { name: 'After' });
    await follow.waitFor(/(POST +\/customers +201[^\n]*\n[^]*){2}/);
    expect(follow.stdout()).not.toMatch(/GET /);
    follow.child.kill('SIGINT');
    expect(await follow.exit).toBe(0);
    expect(streamHub(sandbox.deps).open).toBe(0);
  });
});

describe('listen', () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('--forward-to receives every event of the topics in order, with the real body and headers, retried on the account\'s schedule; Ctrl-C removes the forwarder', async () => {
    const listen = spawnProcess(process.execPath, [built.cli, 'listen', '--topics', 'customer_created,customer_updated', '--forward-to', `${receiver.url}/local`, '--secret', 'whsec_cli'], childEnv(env));
    await listen.waitFor(/Listening to ptn_default \(production\)/, 'stderr');
    expect(listen.stderr()).toContain(`forwarding customer_created, customer_updated to ${receiver.url}/local`);
    const a = (await api('POST', '/customers', { name: 'A' })).body.id;
    const b = (await api('POST', '/customers', { name: 'B' })).body.id;
    await api('PATCH', `/customers/${a}`, { city: 'Austin' });
    await receiver.waitForCount('customer_updated', 1);
    expect(receiver.deliveries.map((d) => [d.topic, d.entity_id])).toEqual([['customer_created', a], ['customer_created', b], ['customer_updated', a]]);
    const events = [...eventLog(account()).newest()].reverse();
    receiver.deliveries.forEach((d, i) => {
      expect(d.body).toEqual({ entity_id: events[i].entity_id, idempotency_key: events[i].idempotency_key, timestamp: events[i].timestamp, topic: events[i].topic, data: events[i].data });
      expect(d.secret).toBe('whsec_cli');
    });
    // A failing target: the next event is retried after 90 s of account clock, and the one after waits its turn.
    receiver.respondWith(503);
    const c = (await api('POST', '/customers', { name: 'C' })).body.id;
    await listen.waitFor(/delivery +customer_created +\S+ +forwarded to \S+ +failed: receiver answered 503 \(attempt 1, next /);
    receiver.respondWith(200);
    const d = (await api('POST', '/customers', { name: 'D' })).body.id;
    expect((await cli(['clock', 'advance', '90s'])).status).toBe(0);
    await receiver.waitForCount('customer_created', 4);
    expect(receiver.deliveries.slice(3).map((x) => [x.entity_id, x.status])).toEqual([[c, 503], [c, 200], [d, 200]]);
    await listen.waitFor(/(delivery +customer_created[^\n]*delivered[^]*){4}/);
    const lines = listen.stdout().trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^\\S+Z +event +customer_created +${a} +evt_`));
    expect(lines.some((l) => /^\S+Z +delivery +customer_updated +\S+ +forwarded to \S+\/local +200 delivered \(attempt 1\)$/.test(l))).toBe(true);
    expect(listen.stdout()).not.toMatch(ANSI);
    listen.child.kill('SIGINT');
    expect(await listen.exit).toBe(0);
    expect(listen.stderr()).toContain('Stopped.');
    expect(streamHub(sandbox.deps).open).toBe(0);
    // The forwarder is gone: later events reach nobody.
    await api('POST', '/customers', { name: 'E' });
    expect(receiver.deliveries).toHaveLength(6);
  });

  it('names a drill\'s attempts: the copies of a duplicate (a refused one is not "queue paused"), a wrong secret', async () => {
    await api('POST', '/_sandbox/scenarios', { name: 'drills', rules: [
      { match: { topic: 'customer_created' }, nth: 1, wrong_secret: true },
      { match: { topic: 'customer_created' }, nth: 1, duplicate_delivery: { count: 2 } },
    ] });
    const listen = spawnProcess(process.execPath, [built.cli, 'listen', '--topics', 'customer_created', '--forward-to', `${receiver.url}/local`, '--secret', 'whsec_cli'], childEnv(env));
    await listen.waitFor(/Listening to ptn_default/, 'stderr');
    let copies = 0;
    receiver.respondWith((d) => (d.secret !== 'whsec_cli' ? 401 : copies++ === 2 ? 409 : 200));
    await api('POST', '/customers', { name: 'Drilled' });
    await listen.waitFor(/failed: receiver answered 401 to a wrong secret \(scenario wrong_secret\) \(attempt 1, drill wrong_secret, next /);
    expect((await cli(['clock', 'advance', '90s'])).status).toBe(0);
    await listen.waitFor(/(delivery [^\n]*\n[^]*){4}/);
    await listen.waitFor(/failed: receiver answered 409 to a duplicate[^\n]* \(attempt 4, duplicate\)\n/);
    const lines = listen.stdout().split('\n').filter((l) => / delivery /.test(l)).map((l) => l.replace(/^.*forwarded to \S+ +/, ''));
    expect(lines.slice(1, 3)).toEqual(['200 delivered (attempt 2, drill duplicate_delivery)', '200 delivered (attempt 3, duplicate)']);
    listen.child.kill('SIGINT');
    expect(await listen.exit).toBe(0);
  });

  it('--json streams one JSON object per line', async () => {
    const listen = spawnProcess(process.execPath, [built.cli, 'listen', '--json', '--topics', 'customer_created'], childEnv(env));
    await listen.waitFor(/"type":"ready"/);
    await api('POST', '/customers', { name: 'Json' });
    await api('POST', '/vendors', { name: 'Not a customer event' });
    await listen.waitFor(/"type":"event"/);
    listen.child.kill('SIGTERM');
    expect(await listen.exit).toBe(0);
    const messages = listen.stdout().trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(messages.map((m) => m.type)).toEqual(['ready', 'event']);
    expect(messages[1]).toMatchObject({ type: 'event', topic: 'customer_created', data: { name: 'Json' } });
  });

  it('refuses a bad topic or URL as a usage error (exit 2), and exits 3 when the sandbox stops under it', async () => {
    expect((await cli(['listen', '--topics', 'custmer_created'])).stderr).toContain('did you mean customer_created?');
    expect((await cli(['listen', '--forward-to', 'ftp://x'])).status).toBe(2);
    expect((await cli(['listen', '--secret', 's'])).status).toBe(2);
    const other = await startSandbox({ port: 0, logLevel: 'silent' });
    const listen = spawnProcess(process.execPath, [built.cli, 'listen', '--url', other.url], childEnv(env));
    await listen.waitFor(/Listening/, 'stderr');
    await other.close();
    expect(await listen.exit).toBe(3);
    expect(listen.stderr()).toContain(`the sandbox at ${other.url} closed the stream`);
  });
});

describe('reset and scenario', () => {
  it('reset empties the account; reset --all goes back to the start state', async () => {
    await api('POST', '/customers', { name: 'Gone Soon' });
    const res = await cli(['reset']);
    expect(res.status).toBe(0);
    expect(res.stdout).toBe('Reset the account of sandbox_client_id to empty.\n');
    expect((await api('GET', '/customers')).body.data).toEqual([]);
    const partner = await (await fetch(`${sandbox.url}/_sandbox/partners`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).json() as { id: string };
    expect(JSON.parse((await cli(['reset', '--all', '--json'])).stdout)).toEqual({ reset: 'all' });
    expect(Object.keys(sandbox.deps.store.data.partners)).not.toContain(partner.id);
  });

  it('loads a shipped scenario by name and a file, lists them, clears them', async () => {
    const loaded = await cli(['scenario', 'load', 'slow-api']);
    expect(loaded.status).toBe(0);
    expect(loaded.stdout).toMatch(/^Loaded slow-api as scn_\w+\n$/);
    const file = join(scratch, 'mine.yaml');
    writeFileSync(file, 'name: my outage\nrules:\n  - match: { operation: listCustomers }\n    respond: { status: 503 }\n');
    const fromFile = JSON.parse((await cli(['scenario', 'load', file, '--json'])).stdout);
    expect(fromFile).toEqual({ id: expect.stringMatching(/^scn_/), source: file });
    expect((await api('GET', '/customers')).status).toBe(503);
    const list = await cli(['scenario', 'list']);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +SCOPE +RULES +LOADED AT$/);
    expect(lines.slice(1).map((l) => l.split(/  +/).slice(1, 4))).toEqual([['slow API', 'account', '3'], ['my outage', 'account', '1']]);
    expect(list.stderr).toContain('Shipped (load by name): api-evolution, bill-approval-conflicts, duplicate-deliveries, flaky-network, rate-limit-storm, receiver-outage, receiver-secret-check, slow-api');
    expect(JSON.parse((await cli(['scenario', 'list', '--json'])).stdout).data).toHaveLength(2);
    expect((await cli(['scenario', 'clear'])).stdout).toBe('Removed 2 scenarios.\n');
    expect((await api('GET', '/customers')).status).toBe(200);
  });

  it('a document the sandbox refuses is exit 1 with the field; an unknown name is exit 2 with the nearest one', async () => {
    const file = join(scratch, 'bad.json');
    writeFileSync(file, JSON.stringify({ name: 'bad', rules: [{ match: { method: 'GET' }, respond: { status: 99 } }] }));
    const bad = await cli(['scenario', 'load', file]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/refused POST \/_sandbox\/scenarios: 400 bad_request: .*\n {2}rules\[0\]\.respond\.status: /);
    const typo = await cli(['scenario', 'load', 'slow-apy']);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('no file slow-apy, and no shipped scenario of that name; did you mean slow-api?');
  });
});

describe('snapshot', () => {
  it('saves, lists, exports to a file, imports it back, restores (here and into demo) and deletes; refusals exit 1 with the field', async () => {
    const made = (await api('POST', '/customers', { name: 'Saved Co' })).body;
    const saved = await cli(['snapshot', 'save', 'after-setup']);
    expect(saved.status).toBe(0);
    expect(saved.stdout).toMatch(/^Saved after-setup: 2 objects, \d+ kB\.\n$/);
    const again = await cli(['snapshot', 'save', 'after-setup']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('snapshot_exists');
    expect(again.stderr).toContain('name: is the name of a snapshot the partner keeps');
    expect((await cli(['snapshot', 'save', 'after-setup', '--replace'])).status).toBe(0);

    const file = join(scratch, 'after-setup.json');
    expect((await cli(['snapshot', 'export', 'after-setup', '-o', file])).stdout).toBe(`Exported after-setup to ${file}.\n`);
    const imported = await cli(['snapshot', 'import', file, '--name', 'copy', '--json']);
    expect(JSON.parse(imported.stdout)).toMatchObject({ name: 'copy', redacted: true, counts: { customers: 1, events: 1 } });
    const exported = JSON.parse((await cli(['snapshot', 'export', 'copy'])).stdout);
    expect(exported).toMatchObject({ format: 'billing-sandbox-snapshot', name: 'copy' });

    const list = await cli(['snapshot', 'list']);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +FROM +CREATED AT +OBJECTS +SIZE$/);
    expect(lines.slice(1).map((l) => l.split(/  +/).slice(0, 2))).toEqual([['after-setup', 'ptn_default:production'], ['copy', 'ptn_default:production (imported)']]);

    await api('POST', '/customers', { name: 'Made after' });
    expect((await cli(['snapshot', 'restore', 'after-setup'])).stdout).toBe('Restored after-setup into ptn_default:production: 2 objects.\n');
    expect((await api('GET', '/customers')).body.data.map((c: { id: string }) => c.id)).toEqual([made.id]);
    expect(JSON.parse((await cli(['snapshot', 'restore', 'after-setup', '--environment', 'demo', '--json'])).stdout)).toMatchObject({ account: 'ptn_default:demo' });
    expect((await cli(['snapshot', 'restore', 'after-setup', '--environment', 'staging'])).status).toBe(2);

    expect((await cli(['snapshot', 'delete', 'copy'])).stdout).toBe('Deleted copy.\n');
    const gone = await cli(['snapshot', 'delete', 'copy']);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toContain('404 not_found');
    expect((await cli(['snapshot', 'import', join(scratch, 'missing.json')])).status).toBe(2);
  });
});

describe('accounts, admin token, exit codes and colour', () => {
  it('acts on the account of --client-id/--client-secret (a demo key too) and needs the admin token when the sandbox has one', async () => {
    await api('POST', '/customers', { name: 'Production Only' });
    const demoClock = JSON.parse((await cli(['clock', 'advance', '2h', '--json', '--client-id', 'sandbox_demo_client_id', '--client-secret', 'sandbox_demo_client_secret'])).stdout);
    expect(demoClock.offset_seconds).toBe(7200);
    expect(sandbox.deps.store.account('ptn_default', 'demo').clock.offsetMs).toBe(7_200_000);
    expect(account().clock.offsetMs).toBe(0);
    const wrong = await cli(['clock', '--client-id', 'sandbox_client_id', '--client-secret', 'nope']);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain('403 invalid_client');
    expect((await cli(['clock', '--client-id', 'sandbox_client_id'])).status).toBe(2);

    const guarded = await startSandbox({ port: 0, logLevel: 'silent', adminToken: 'let-me-in' });
    try {
      const refused = await cli(['clock', '--url', guarded.url]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('401 unauthorized');
      expect((await cli(['clock', '--url', guarded.url, '--admin-token', 'let-me-in'])).status).toBe(0);
      expect((await cli(['clock', '--url', guarded.url], { SANDBOX_ADMIN_TOKEN: 'let-me-in' })).status).toBe(0);
    } finally {
      await guarded.close();
    }
  });

  it('exit 3 names the URL and how to start a sandbox there; a bad --url or an unknown command is exit 2', async () => {
    const probe = await startSandbox({ port: 0, logLevel: 'silent' });
    const closedUrl = probe.url;
    await probe.close();
    const down = await cli(['clock'], { SANDBOX_URL: closedUrl });
    expect(down.status).toBe(3);
    expect(down.stderr).toContain(`cannot reach the sandbox at ${closedUrl} (ECONNREFUSED). Start one with \`npx billing-sandbox --port ${new URL(closedUrl).port}\``);
    expect((await cli(['clock', '--url', 'nope'])).status).toBe(2);
    const unknown = await cli(['clok']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'clok'; did you mean clock?");
    expect((await cli(['clock', '--no-such-flag'])).status).toBe(2);
  });

  it('colours only when asked for a terminal: plain text to a pipe, ANSI with FORCE_COLOR, none with NO_COLOR', async () => {
    await api('POST', '/customers', { name: 'Colour' });
    expect((await cli(['requests'])).stdout).not.toMatch(ANSI);
    const forced = await cli(['requests'], { FORCE_COLOR: '1' });
    expect(forced.stdout).toMatch(ANSI);
    // Colour never moves a column: without its escapes the header and every column start are the plain ones.
    const stripped = forced.stdout.replace(/\u001b\[\d+m/g, '').trimEnd().split('\n');
    const plain = (await cli(['requests'])).stdout.trimEnd().split('\n');
    expect(stripped[0]).toBe(plain[0]);
    for (const header of ['METHOD', 'PATH', 'STATUS', 'MS', 'OPERATION']) {
      const at = plain[0].indexOf(header);
      for (const line of stripped.slice(1)) expect(line[at - 1]).toBe(' ');
    }
    expect((await cli(['requests'], { FORCE_COLOR: '1', NO_COLOR: '1' })).stdout).toMatch(ANSI);
    expect((await cli(['clock'], { NO_COLOR: '1' })).stdout).not.toMatch(ANSI);
  });
});

describe('docs/command-line.md', () => {
  it('its transcript (examples/command-line/session.txt) runs: examples/command-line/tour.sh (the same commands, in order) passes against a fresh sandbox', async () => {
    const { readFileSync } = await import('node:fs');
    const { ROOT, spawnProcess: run } = await import('./cli-harness.js');
    // The transcript docs/command-line.md quotes (scripts/docs-examples.mjs keeps the page equal to it).
    const transcript = readFileSync(join(ROOT, 'examples', 'command-line', 'session.txt'), 'utf8');
    const documented = [...transcript.matchAll(/^\$ npx billing-sandbox (.+)$/gm)].map((m) => m[1]);
    const script = readFileSync(join(ROOT, 'examples', 'command-line', 'tour.sh'), 'utf8');
    const scripted = [...script.matchAll(/^billing-sandbox (.+)$/gm)].map((m) => m[1]);
    expect(documented).toEqual(scripted);
    const tour = run('bash', [join(ROOT, 'examples', 'command-line', 'tour.sh')], childEnv({ ...env, BILLING_SANDBOX: `${process.execPath} ${built.cli}` }));
    expect(await tour.exit).toBe(0);
    expect(tour.stdout()).toMatch(/^\S+Z {2}\(real time\)\nClock now \S+ {2}\(real time \+ 31d; \d+ due jobs? ran\)\nevt_\w+\nLoaded slow-api as scn_\w+\nID +NAME/);
    expect(tour.stdout()).toContain('Removed 1 scenario.\nReset the account of sandbox_client_id to empty.\n');
  });
});

