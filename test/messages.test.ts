// Messages a partner reads: an article agrees with the word the code fills in after it ("Cannot
// restore an invoice", not "a invoice"), for every transition table's refusals and every message
// template of the source. And a message naming a server setting names its flag, its variable and its
// startSandbox() option, so a test author finds the spelling they start the sandbox with.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { articleFor, withArticle, withCapitalArticle } from '../src/article.js';
import { transition, type Machine } from '../src/domain/machine.js';
import { ApiError } from '../src/errors.js';
import { billMachine } from '../src/domain/bills/bills.js';
import { customerMachine } from '../src/domain/customers/customers.js';
import { invoiceMachine } from '../src/domain/invoices/invoices.js';
import { paymentRequestMachine } from '../src/domain/payments/payment-requests.js';
import { paymentMachine } from '../src/domain/payments/payments.js';
import { payoutMachine } from '../src/domain/payouts/payouts.js';
import { vendorPaymentMachine } from '../src/domain/vendor-payments/records.js';
import { dataRequestMachine, vendorMachine } from '../src/domain/vendors/vendors.js';
import { deliveryMachine } from '../src/webhooks/history.js';
import { Command } from 'commander';
import { createDeps } from '../src/app.js';
import { withServeOptions } from '../src/cli/serve.js';
import { defaultConfig } from '../src/config.js';
import { howToSet, SETTINGS, type SettingName } from '../src/settings.js';
import { setup, useSession, type Session } from './helpers.js';

let s: Session;
useSession((session) => { s = session; });

const MACHINES: Array<Machine<string, string>> = [
  billMachine, customerMachine, invoiceMachine, paymentRequestMachine, paymentMachine, payoutMachine,
  vendorPaymentMachine, dataRequestMachine, vendorMachine, deliveryMachine,
] as unknown as Array<Machine<string, string>>;

/** The refusal message of a move the table does not allow. */
function refusalMessage(machine: Machine<string, string>, state: string, event: string): string {
  try {
    transition(machine, state, event);
  } catch (error) {
    if (error instanceof ApiError) return error.message;
    throw error;
  }
  throw new Error(`${machine.resource}: ${event} is allowed in ${state}`);
}

describe('articles', () => {
  it.each([
    ['invoice', 'an'], ['payout', 'a'], ['ach', 'an'], ['bill', 'a'], ['object', 'an'], ['undefined', 'an'], ['bigint', 'a'],
    ['Int8Array', 'an'], ['HTTP URL', 'an'], ['PDF (%PDF-)', 'a'], ['PNG', 'a'], ['JPEG', 'a'], ['SMS', 'an'],
    ['user', 'a'], ['unit', 'a'], ['hour', 'an'], ['vendor data request', 'a'], ['webhook delivery', 'a'], ['', 'a'],
  ])('%s takes "%s"', (word, article) => {
    expect(articleFor(word)).toBe(article);
    expect(withArticle(word)).toBe(`${article} ${word}`);
    expect(withCapitalArticle(word)).toBe(`${article === 'an' ? 'An' : 'A'} ${word}`);
  });

  it('gives "an" before any lower-case word beginning with a or i, and "a" before any beginning with a consonant but h', () => {
    fc.assert(fc.property(fc.constantFrom('a', 'i'), fc.stringMatching(/^[a-z]{0,8}$/), (first, rest) => {
      expect(articleFor(first + rest)).toBe('an');
    }));
    fc.assert(fc.property(fc.constantFrom(...'bcdfgjklmnpqrstvwxyz'), fc.stringMatching(/^[a-z]{0,8}$/), (first, rest) => {
      expect(articleFor(first + rest)).toBe('a');
    }));
  });

  it('every refusal of every transition table names its resource with the right article', () => {
    let walked = 0;
    for (const machine of MACHINES) {
      for (const state of machine.states) {
        for (const event of machine.events) {
          if (machine.table[state]?.[event] !== undefined) continue;
          const message = refusalMessage(machine, state, event);
          expect(message).toContain(`Cannot ${event} ${withArticle(machine.resource)} whose status is ${state}`);
          expect(message).not.toMatch(/\ba [aeiou]/);
          walked++;
        }
      }
    }
    expect(walked).toBeGreaterThan(100);
  });

  it('restoring an invoice that is not archived answers "Cannot restore an invoice" over HTTP, and the invoice is unchanged', async () => {
    const { body: customer } = await s.api.post('/customers', { name: 'Acme' }).expect(201);
    const { body: invoice } = await s.api.post('/invoices', { customer_id: customer.id, due_date: '2026-04-01', line_items: [{ description: 'Plan', amount: 10 }] }).expect(201);
    const res = await s.api.post(`/invoices/${invoice.id}/restore`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Cannot restore an invoice whose status is UPCOMING; allowed: start_payment, archive.');
    expect((await s.api.get(`/invoices/${invoice.id}`)).body.status).toBe('UPCOMING');
  });

  it('no message template of the source puts a bare "a" or "an" before a filled-in word (it calls withArticle)', () => {
    const found: string[] = [];
    const visit = (file: string, node: ts.Node, source: ts.SourceFile) => {
      const texts: string[] = [];
      if (ts.isTemplateExpression(node)) texts.push(node.head.text, ...node.templateSpans.map((span) => span.literal.text).slice(0, -1));
      for (const text of texts) {
        if (/(^|[^\w])(a|an|A|An)\s$/.test(text)) found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText().slice(0, 80)}`);
      }
      node.forEachChild((child) => visit(file, child, source));
    };
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === 'generated' ? [] : files(join(dir, e.name))) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
    for (const file of files('src')) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      visit(file, source, source);
    }
    expect(found).toEqual([]);
  });
});

describe('messages that name a setting name all three spellings: flag, variable and startSandbox() option', () => {
  const SAMPLES: Record<SettingName, string> = {
    rateLimit: '7', allowHttpWebhooks: '1', allowPrivateUrls: '1', adminToken: 'a-token', fixtures: 'demo', scenarios: 'slow-api',
    publicUrl: 'https://sandbox.test', dataFile: 'x.json', journalSize: '7', tokenTtl: '7', logLevel: 'debug',
  };

  it('each setting\'s flag is a flag of the server and its variable sets that startSandbox() option', () => {
    const flags = withServeOptions(new Command(), defaultConfig({})).options.map((o) => o.long);
    const defaults = defaultConfig({}) as unknown as Record<string, unknown>;
    for (const [name, { flag, env }] of Object.entries(SETTINGS) as Array<[SettingName, { flag: string; env: string }]>) {
      expect(flags).toContain(flag);
      expect(name in defaults).toBe(true);
      const set = defaultConfig({ [env]: SAMPLES[name] }) as unknown as Record<string, unknown>;
      expect([name, set[name]]).not.toEqual([name, defaults[name]]);
    }
  });

  it('spells a value and a switch in all three ways', () => {
    expect(howToSet('rateLimit', 0)).toBe('--rate-limit 0, SANDBOX_RATE_LIMIT=0 or startSandbox({ rateLimit: 0 })');
    expect(howToSet('allowHttpWebhooks', true)).toBe('--allow-http-webhooks, SANDBOX_ALLOW_HTTP_WEBHOOKS=1 or startSandbox({ allowHttpWebhooks: true })');
    expect(howToSet('adminToken', 'T')).toBe('--admin-token T, SANDBOX_ADMIN_TOKEN=T or startSandbox({ adminToken: "T" })');
  });

  it('no text of the server (src/ but the command lines: the CLI\'s own commands and the container module that spells the image\'s) names a server flag without its startSandbox() option', () => {
    const flagPattern = new RegExp(`(${Object.values(SETTINGS).map((s) => s.flag).join('|')})(?![\\w-])`);
    const found: string[] = [];
    const visit = (file: string, node: ts.Node, source: ts.SourceFile) => {
      let text: string | undefined;
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
      if (ts.isTemplateExpression(node)) text = node.getText();
      if (text !== undefined && flagPattern.test(text)) {
        const setting = Object.entries(SETTINGS).find(([, s]) => new RegExp(`${s.flag}(?![\\w-])`).test(text))![0];
        if (!text.includes('startSandbox') || !text.includes(setting)) found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${text.slice(0, 100)}`);
      }
      node.forEachChild((child) => visit(file, child, source));
    };
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (['generated', 'cli', 'parity', 'recording', 'testcontainers'].includes(e.name) ? [] : files(join(dir, e.name))) : e.name.endsWith('.ts') && e.name !== 'settings.ts' ? [join(dir, e.name)] : []));
    const checked = files('src');
    expect(checked.length).toBeGreaterThan(100);
    for (const file of checked) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      visit(file, source, source);
    }
    expect(found).toEqual([]);
  });

  it('the 429 names how to switch the limit off, and the default stays the real service\'s 5 per second', async () => {
    expect(defaultConfig({}).rateLimit).toBe(5);
    const limited = await setup({ rateLimit: 2 });
    // The token request is the key's first of this second.
    const api = limited.as(await limited.token());
    expect((await api.get('/customers')).status).toBe(200);
    const refused = await api.get('/customers');
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limit_exceeded');
    for (const spelling of ['--rate-limit 0', 'SANDBOX_RATE_LIMIT=0', 'rateLimit: 0']) expect(refused.body.message).toContain(spelling);
    expect(refused.body.message).toMatch(/^Too many requests: the limit is 2 requests per second per key\./);
    // A forced 429 (Prefer) says the same.
    const forced = await s.api.get('/customers').set('Prefer', 'code=429');
    expect(forced.status).toBe(429);
    expect(forced.body.message).toContain('--rate-limit 0, SANDBOX_RATE_LIMIT=0 or startSandbox({ rateLimit: 0 })');
  });

  it('the refused http webhook endpoint names the flag, the variable and the option, and creates nothing', async () => {
    const res = await s.api.post('/webhooks', { endpoint_url: 'http://hooks.test/in', topic: 'invoice_paid', secret_key: 's3cret' });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('--allow-http-webhooks, SANDBOX_ALLOW_HTTP_WEBHOOKS=1 or startSandbox({ allowHttpWebhooks: true })');
    expect((await s.api.get('/webhooks')).body.data).toEqual([]);
  });

  it('a bad fixtures or scenario argument names the option as startSandbox() takes it', async () => {
    await expect(createDeps({ fixtures: 'no-such-dataset', logLevel: 'silent' })).rejects.toThrow('--fixtures (SANDBOX_FIXTURES, startSandbox option fixtures) no-such-dataset: no such file');
    await expect(createDeps({ scenarios: ['no-such-scenario'], logLevel: 'silent' })).rejects.toThrow('--scenario (SANDBOX_SCENARIOS, startSandbox option scenarios) no-such-scenario: no such file');
  });
});
