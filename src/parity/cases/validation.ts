// Owns the parity cases of input validation, as a table over every create operation: malformed JSON
// is a 400, a field of the wrong type is a 400 naming the field, and the semantic refusals the spec
// or the sandbox's choices give a 422. Every refusal carries the HttpError body.
import type { CaseContext, ParityCase, Rule } from '../case.js';
import { bankMethodInput, invoiceInput, sharedCustomer, sharedVendor, US_BANK } from './fixtures.js';

const MALFORMED: Rule = { section: 'Errors', quote: '400 | malformed JSON or missing or invalid field' };

interface CreateOperation {
  /** Short name in case ids: validation/<slug>-malformed-json. */
  slug: string;
  label: string;
  path(t: CaseContext): string | Promise<string>;
  /** A body with one field of the wrong type, and that field. */
  wrongType(t: CaseContext): { body: unknown; field: string } | Promise<{ body: unknown; field: string }>;
  /** A well-formed body the service refuses on its meaning (422), with the rule or choice behind it. */
  semantic?: { title: string; rule: Rule; gaps?: string[]; field?: string; send(t: CaseContext, path: string): Promise<import('../client.js').Exchange> };
}

const customerPath = async (t: CaseContext) => `/customers/${(await sharedCustomer(t, 'validation')).id}`;

const CREATES: CreateOperation[] = [
  {
    slug: 'customer',
    label: 'POST /customers',
    path: () => '/customers',
    wrongType: (t) => ({ body: { name: t.name('wrong-type'), email: 12345 }, field: 'email' }),
  },
  {
    slug: 'customer-user',
    label: 'POST /customers/{id}/users',
    path: async (t) => `${await customerPath(t)}/users`,
    wrongType: () => ({ body: { email: 42 }, field: 'email' }),
    semantic: {
      title: 'a second user with the same email for one customer is refused with 422',
      rule: { section: 'Endpoints > Customers and payment methods', quote: '| POST | /customers/{id}/users | email, first_name, last_name | 201 Customer user | 400, 422 |' },
      gaps: ['Customer users'],
      field: 'email',
      async send(t, path) {
        const body = { email: t.email('user-twice'), first_name: 'Parity', last_name: 'Twice' };
        await t.made('POST /customers/{id}/users (first)', t.api.post(path, body), 201);
        return t.api.post(path, body);
      },
    },
  },
  {
    slug: 'invoice',
    label: 'POST /invoices',
    path: () => '/invoices',
    wrongType: async (t) => ({ body: invoiceInput((await sharedCustomer(t, 'validation')).id, t, 'wrong-type', { exclude_from_autopay: 'yes' }), field: 'exclude_from_autopay' }),
    semantic: {
      title: 'an invoice for a customer that does not exist is refused with 422',
      rule: { section: 'Endpoints > Invoices', quote: '| POST | /invoices | CreateInvoiceInput | 201 Invoice | 400, 422 |' },
      gaps: ['Invoice creation'],
      field: 'customer_id',
      send: (t, path) => t.api.post(path, invoiceInput(t.name('no-such-customer'), t, 'unknown-customer')),
    },
  },
  {
    slug: 'bank-method',
    label: 'POST /customers/{id}/payment-methods/bank',
    path: async (t) => `${await customerPath(t)}/payment-methods/bank`,
    wrongType: (t) => ({ body: { ...bankMethodInput(t, 'wrong-type'), us_account_data: { ...US_BANK, account_number: 123456789 } }, field: 'account_number' }),
  },
  {
    slug: 'card-method',
    label: 'POST /customers/{id}/payment-methods/card',
    path: async (t) => `${await customerPath(t)}/payment-methods/card`,
    wrongType: () => ({ body: { card_provider_token: 42, provider: 'evervault' }, field: 'card_provider_token' }),
  },
  {
    slug: 'bill',
    label: 'POST /bills',
    path: () => '/bills',
    wrongType: async (t) => ({ body: { vendor_id: (await sharedVendor(t)).id, amount: 'one hundred', number: t.name('wrong-type') }, field: 'amount' }),
    semantic: {
      title: 'a bill for a vendor that does not exist is refused with 422',
      rule: { section: 'Errors', quote: '422 | semantic validation failure' },
      gaps: ['Bill create'],
      field: 'vendor_id',
      send: (t, path) => t.api.post(path, { vendor_id: t.name('no-such-vendor'), amount: 10, number: t.name('unknown-vendor') }),
    },
  },
  {
    slug: 'bill-upload',
    label: 'POST /bills/upload',
    path: () => '/bills/upload',
    wrongType: (t) => ({ body: { content: 42, content_type: 'application/pdf', filename: `${t.name('upload')}.pdf` }, field: 'content' }),
  },
  {
    slug: 'vendor',
    label: 'POST /vendors',
    path: () => '/vendors',
    wrongType: (t) => ({ body: { name: t.name('wrong-type'), email: t.email('wrong-type'), phone: 5550100 }, field: 'phone' }),
    semantic: {
      title: 'a second vendor with the same tax_id is refused with 422',
      rule: { section: 'Endpoints > Vendors', quote: '| POST | /vendors | name, email, phone, category, tax_id, street_address, city, state, postal_code, country, bank_account (account_number, account_type, bank_name, routing_number) | 201 Vendor | 400, 422 |' },
      gaps: ['Vendor tax_id 422'],
      field: 'tax_id',
      async send(t, path) {
        const taxId = t.name('tax-id');
        await t.made('POST /vendors (first with the tax_id)', t.api.post(path, { name: t.name('tax-id-first'), tax_id: taxId }), 201);
        return t.api.post(path, { name: t.name('tax-id-second'), tax_id: taxId });
      },
    },
  },
  {
    slug: 'payment-request',
    label: 'POST /payments/request',
    path: () => '/payments/request',
    wrongType: (t) => ({ body: { amount: 'ten dollars', currency: 'USD', redirect_url: 'https://example.com/parity/done', reference_id: t.name('wrong-type') }, field: 'amount' }),
  },
  {
    slug: 'checkout-token',
    label: 'POST /checkout-auth/init',
    path: () => '/checkout-auth/init',
    wrongType: () => ({ body: { customer_id: 42, invoice_id: 'parity-invoice' }, field: 'customer_id' }),
  },
  {
    slug: 'webhook',
    label: 'POST /webhooks',
    path: () => '/webhooks',
    wrongType: (t) => ({ body: { endpoint_url: `https://example.com/${t.name('wrong-type')}`, topic: 42 }, field: 'topic' }),
  },
];

export const validationCases: ParityCase[] = CREATES.flatMap((op): ParityCase[] => [
  {
    id: `validation/${op.slug}-malformed-json`,
    area: 'validation',
    title: `${op.label} with a body that is not JSON is refused with 400 and an HttpError`,
    rule: MALFORMED,
    async run(t) {
      t.error(await t.api.send('POST', await op.path(t), { raw: '{"name": "parity", ' }), [400]);
    },
  },
  {
    id: `validation/${op.slug}-wrong-type`,
    area: 'validation',
    title: `${op.label} with a field of the wrong type is refused with 400 naming the field`,
    rule: MALFORMED,
    async run(t) {
      const path = await op.path(t);
      const { body, field } = await op.wrongType(t);
      t.error(await t.api.post(path, body), [400], field);
    },
  },
  ...(op.semantic ? [{
    id: `validation/${op.slug}-unprocessable`,
    area: 'validation' as const,
    title: `${op.label}: ${op.semantic.title}`,
    rule: op.semantic.rule,
    gaps: op.semantic.gaps,
    async run(t: CaseContext) {
      const semantic = op.semantic!;
      t.error(await semantic.send(t, await op.path(t)), [422], semantic.field);
    },
  }] : []),
]);
