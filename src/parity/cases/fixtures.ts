// Owns the objects parity cases build on: customers, vendors, bills and inputs, each named with
// the run's prefix, made through the public API and failing the case (as setup) when refused.
import type { Area, CaseContext, ParityCase } from '../case.js';
import { DAY_MS } from '../../clock/durations.js';

/** A US bank account that the spec's bank-account body accepts (ABA-valid routing number). */
export const US_BANK = { account_number: '000123456789', routing_number: '011000015' };

/** A minimal PDF (the header is what the spec's upload rule checks first), base64. */
export const TINY_PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n').toString('base64');

export interface Named {
  id: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the other fields of a created object's JSON, as Exchange.body
  [field: string]: any;
}

export function customer(t: CaseContext, what: string): Promise<Named> {
  return t.made(`POST /customers (${what})`, t.api.post('/customers', {
    name: t.name(what),
    email: t.email(what),
    external_id: t.name(what),
  }), 201);
}

/** One customer per run for the cases that only add to it (invoices, validation). */
export function sharedCustomer(t: CaseContext, key = 'customer'): Promise<Named> {
  return t.shared(`customer:${key}`, () => customer(t, key));
}

export function vendor(t: CaseContext, what: string, extra: Record<string, unknown> = {}): Promise<Named> {
  return t.made(`POST /vendors (${what})`, t.api.post('/vendors', { name: t.name(what), email: t.email(what), ...extra }), 201);
}

export function sharedVendor(t: CaseContext, key = 'vendor'): Promise<Named> {
  return t.shared(`vendor:${key}`, () => vendor(t, key));
}

export function bill(t: CaseContext, vendorId: string, what: string, extra: Record<string, unknown> = {}): Promise<Named> {
  return t.made(`POST /bills (${what})`, t.api.post('/bills', {
    vendor_id: vendorId,
    amount: 125.5,
    number: t.name(what),
    description: t.name(what),
    issue_date: '2026-01-05',
    due_date: '2026-02-04',
    ...extra,
  }), 201);
}

export function bankMethodInput(t: CaseContext, what: string, account = US_BANK) {
  return {
    account_data_type: 'us',
    custom_name: t.name(what),
    institution_name: 'Parity Test Bank',
    receiver_name: t.name(what),
    subtype: 'checkings',
    type: 'depository',
    us_account_data: account,
  };
}

export function invoiceInput(customerId: string, t: CaseContext, what: string, extra: Record<string, unknown> = {}) {
  return {
    customer_id: customerId,
    // Never charged by autopay: the suite moves no money.
    exclude_from_autopay: true,
    currency: 'USD',
    line_items: [
      { description: t.name(`${what}-consulting`), quantity: 2, amount: 150.25 },
      { description: t.name(`${what}-travel`), quantity: 1, amount: 80 },
    ],
    ...extra,
  };
}

/** The UTC calendar date `days` after a timestamp the service gave (its clock, not ours). */
export function dayAfter(timestamp: string, days: number): string {
  const ms = Date.parse(timestamp);
  return new Date((Number.isNaN(ms) ? Date.now() : ms) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The case "an id that names no <noun> is 404" on each call ([method, path suffix, body]) of a collection. */
export function unknownIdCase(area: Area, noun: string, moves: string, calls: Array<[method: string, suffix: string, body?: unknown]>): ParityCase {
  return {
    id: `${area}/unknown-id`,
    area,
    title: `an id that names no ${noun} is 404 on ${moves}`,
    rule: { section: 'Errors', quote: '404 | object not found' },
    async run(t) {
      const path = `/${area}/${t.name(`no-such-${noun}`)}`;
      for (const [method, suffix, body] of calls) t.error(await t.api.send(method, `${path}${suffix}`, { body }), [404]);
    },
  };
}
