// Messages a partner reads: an article agrees with the word the code fills in after it ("Cannot
// restore an invoice", not "a invoice"), for every transition table's refusals and every message
// template of the source.
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
import { useSession, type Session } from './helpers.js';

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

  it('gives "an" before any lower-case word beginning with a, e, i or o, and "a" before any beginning with a consonant but h', () => {
    fc.assert(fc.property(fc.constantFrom(...'aeio'), fc.stringMatching(/^[a-z]{0,8}$/), (first, rest) => {
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
