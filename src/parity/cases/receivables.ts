// Owns the parity cases of receivables: customers (create, update, archive and restore), invoices
// (create and fields, links, archive and restore, the PDF rules), payment methods (add, list,
// default, delete) and payment requests (400 and 422). No case pays anything.
import type { CaseContext, ParityCase } from '../case.js';
import type { Exchange } from '../client.js';
import { bankMethodInput, customer, dayAfter, invoiceInput, sharedCustomer, TINY_PDF, unknownIdCase } from './fixtures.js';

const CUSTOMER_TABLE = '| archived | POST /customers/{id}/restore | active | returns the customer |';
const ARCHIVE_ROW = '| active | DELETE /customers/{id} | archived | returns the customer; topic customer_archived exists |';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the listed methods, JSON as Exchange.body
async function methods(t: CaseContext, customerId: string): Promise<{ answer: Exchange; list: any[] }> {
  const answer = t.status(await t.api.get(`/customers/${customerId}/payment-methods`), 200);
  t.check(Array.isArray(answer.body?.data), 'the payment methods answer has a data array', answer);
  return { answer, list: answer.body.data };
}

async function addBank(t: CaseContext, customerId: string, what: string): Promise<string> {
  const made = await t.made(`POST /customers/{id}/payment-methods/bank (${what})`, t.api.post(`/customers/${customerId}/payment-methods/bank`, bankMethodInput(t, what)), 201);
  return made.id;
}

export const receivableCases: ParityCase[] = [
  {
    id: 'customers/create-and-read',
    area: 'customers',
    title: 'a created customer (201) reads back with the fields it was given',
    rule: { section: 'Endpoints > Customers and payment methods', quote: '| POST | /customers | Customer create input | 201 Customer | 400, 422 |' },
    async run(t) {
      const input = { name: t.name('read'), email: t.email('read'), external_id: t.name('read'), city: 'Springfield', country: 'US' };
      const made = t.status(await t.api.post('/customers', input), 201);
      for (const [field, value] of Object.entries(input)) t.check(made.body?.[field] === value, `the created customer echoes ${field}`, made);
      const read = t.status(await t.api.get(`/customers/${made.body.id}`), 200);
      for (const [field, value] of Object.entries({ id: made.body.id, ...input })) t.check(read.body?.[field] === value, `GET /customers/{id} shows ${field}`, read);
    },
  },
  {
    id: 'customers/update',
    area: 'customers',
    title: 'PATCH /customers/{id} changes the fields sent and answers the customer',
    rule: { section: 'Endpoints > Customers and payment methods', quote: '| PATCH | /customers/{id} | Customer patch input | 200 Customer | 400, 404 |' },
    async run(t) {
      const made = await customer(t, 'update');
      const renamed = t.name('updated');
      const patched = t.status(await t.api.patch(`/customers/${made.id}`, { name: renamed, city: 'Shelbyville' }), 200);
      t.check(patched.body?.name === renamed && patched.body?.city === 'Shelbyville', 'the answer shows the new name and city', patched);
      const read = t.status(await t.api.get(`/customers/${made.id}`), 200);
      t.check(read.body?.name === renamed && read.body?.email === made.email, 'the change is kept and the other fields stay', read);
    },
  },
  {
    id: 'customers/archive-and-restore',
    area: 'customers',
    title: 'DELETE archives and POST restore brings back a customer, each answering the customer',
    rule: { section: 'States and transitions > Customer', quote: CUSTOMER_TABLE },
    async run(t) {
      const made = await customer(t, 'archive');
      const archived = t.status(await t.api.delete(`/customers/${made.id}`), 200);
      t.check(archived.body?.id === made.id, 'DELETE answers the customer', archived);
      const restored = t.status(await t.api.post(`/customers/${made.id}/restore`), 200);
      t.check(restored.body?.id === made.id, 'restore answers the customer', restored);
    },
  },
  {
    id: 'customers/status-field',
    area: 'customers',
    title: 'a customer shows status archived after DELETE and active after restore',
    rule: { section: 'States and transitions > Customer', quote: ARCHIVE_ROW },
    gaps: ['Customer status'],
    async run(t) {
      const made = await customer(t, 'status');
      t.check(made.status === 'active', `a new customer is active (status ${JSON.stringify(made.status)})`);
      t.status(await t.api.delete(`/customers/${made.id}`), 200);
      const archived = t.status(await t.api.get(`/customers/${made.id}`), 200);
      t.check(archived.body?.status === 'archived', 'GET shows status archived', archived);
      const restored = t.status(await t.api.post(`/customers/${made.id}/restore`), 200);
      t.check(restored.body?.status === 'active', 'restore answers status active', restored);
    },
  },
  {
    id: 'customers/archive-conflicts',
    area: 'customers',
    title: 'archiving an archived customer or restoring an active one is refused with 400',
    rule: { section: 'Endpoints > Customers and payment methods', quote: '| DELETE | /customers/{id} | archives the customer | 200 Customer | 400, 404, 500 |' },
    gaps: ['Customer archive/restore conflicts'],
    async run(t) {
      const made = await customer(t, 'conflict');
      t.error(await t.api.post(`/customers/${made.id}/restore`), [400]);
      t.status(await t.api.delete(`/customers/${made.id}`), 200);
      t.error(await t.api.delete(`/customers/${made.id}`), [400]);
    },
  },
  unknownIdCase('customers', 'customer', 'read, update, archive and restore', [['GET', ''], ['PATCH', '', { name: 'parity-unknown' }], ['DELETE', ''], ['POST', '/restore']]),
  {
    id: 'customers/external-id-unique',
    area: 'customers',
    title: 'a second customer with the same external_id is refused with 400 bad_request',
    rule: { section: 'Errors', quote: '400 | malformed JSON or missing or invalid field' },
    gaps: ['external_id'],
    async run(t) {
      const made = await customer(t, 'external-id');
      const again = t.error(await t.api.post('/customers', { name: t.name('external-id-again'), email: t.email('external-id-again'), external_id: made.external_id }), [400]);
      t.check(again.body.code === 'bad_request', `the code is bad_request (got ${again.body.code})`, again);
    },
  },
  {
    id: 'customers/users',
    area: 'customers',
    title: 'a customer user is created (201) and listed in the paginated users of its customer',
    rule: { section: 'Endpoints > Customers and payment methods', quote: '| GET | /customers/{id}/users | query: limit, after, before | 200 paginated Customer user | |' },
    async run(t) {
      const owner = await customer(t, 'users');
      const user = t.status(await t.api.post(`/customers/${owner.id}/users`, { email: t.email('user'), first_name: 'Parity', last_name: 'User' }), 201);
      t.check(user.body?.email === t.email('user') && typeof user.body?.id === 'string', 'the user has an id and its email', user);
      const list = t.status(await t.api.get(`/customers/${owner.id}/users`), 200);
      t.check(Array.isArray(list.body?.data) && list.body.data.some((u: { id: string }) => u.id === user.body.id), 'the user is listed', list);
    },
  },
  {
    id: 'invoices/create-and-fields',
    area: 'invoices',
    title: 'a created invoice (201) carries its customer, USD, the line items, totals, a number and a filter status',
    rule: { section: 'Resources and fields > Invoice', quote: '| status | string | filter values: UPCOMING, OVERDUE, RECEIVED, PAID, ARCHIVED |' },
    gaps: ['Invoice creation', 'Invoice states'],
    async run(t) {
      const owner = await sharedCustomer(t, 'invoices');
      const dueDate = dayAfter(owner.created_at, 30);
      const made = t.status(await t.api.post('/invoices', invoiceInput(owner.id, t, 'fields', { due_date: dueDate })), 201);
      const body = made.body ?? {};
      t.check(typeof body.id === 'string' && body.customer_id === owner.id, 'the invoice has an id and its customer_id', made);
      t.check(body.currency === 'USD' && body.due_date === dueDate, 'currency is USD and due_date is the one sent', made);
      t.check(typeof body.invoice_number === 'string' && body.invoice_number.length > 0, 'the invoice has an invoice_number', made);
      t.check(body.status === 'UPCOMING', `an invoice due in 30 days is UPCOMING (got ${body.status})`, made);
      const lines = Array.isArray(body.line_items) ? body.line_items : [];
      t.check(lines.length === 2 && lines[0].amount === 150.25 && lines[0].quantity === 2 && lines[0].description === t.name('fields-consulting'), 'the line items come back as sent', made);
      t.check(body.sub_total === 380.5 && body.total === 380.5, `sub_total and total are 2 x 150.25 + 80 = 380.5 (got ${body.sub_total}, ${body.total})`, made);
      const read = t.status(await t.api.get(`/invoices/${body.id}`), 200);
      t.check(read.body?.id === body.id && read.body?.total === body.total && read.body?.invoice_number === body.invoice_number, 'GET /invoices/{id} shows the same invoice', read);
      const listed = t.status(await t.api.get('/invoices', { query: { customer_id: owner.id } }), 200);
      t.check(listed.body?.data?.some((i: { id: string }) => i.id === body.id), 'GET /invoices?customer_id= lists it', listed);
    },
  },
  {
    id: 'invoices/due-date-default',
    area: 'invoices',
    title: 'an invoice created without due_date is due on the day it was created',
    rule: { section: 'Resources and fields > Invoice', quote: '| due_date | string | format YYYY-MM-DD; when omitted, defaults to the current date at creation |' },
    async run(t) {
      const owner = await sharedCustomer(t, 'invoices');
      const made = t.status(await t.api.post('/invoices', invoiceInput(owner.id, t, 'due-default')), 201);
      const created = String(made.body?.created_at ?? '').slice(0, 10);
      // A day either side: the service may count days in another time zone than UTC.
      const allowed = [dayAfter(made.body?.created_at, -1), created, dayAfter(made.body?.created_at, 1)];
      t.check(allowed.includes(made.body?.due_date), `due_date is the creation date ${created} (got ${made.body?.due_date})`, made);
    },
  },
  {
    id: 'invoices/archive-and-restore',
    area: 'invoices',
    title: 'DELETE archives an invoice (ARCHIVED) and POST restore brings it back (UPCOMING)',
    rule: { section: 'States and transitions > Invoice', quote: 'Operations exist to archive (DELETE) and restore (POST) an invoice.' },
    gaps: ['Invoice states'],
    async run(t) {
      const owner = await sharedCustomer(t, 'invoices');
      const made = await t.made('POST /invoices', t.api.post('/invoices', invoiceInput(owner.id, t, 'archive', { due_date: dayAfter(owner.created_at, 30) })), 201);
      const archived = t.status(await t.api.delete(`/invoices/${made.id}`), 200);
      t.check(archived.body?.id === made.id && archived.body?.status === 'ARCHIVED', `DELETE answers the invoice with status ARCHIVED (got ${archived.body?.status})`, archived);
      const listed = t.status(await t.api.get('/invoices', { query: { customer_id: owner.id, status: 'ARCHIVED' } }), 200);
      t.check(listed.body?.data?.some((i: { id: string }) => i.id === made.id), 'GET /invoices?status=ARCHIVED lists it', listed);
      const restored = t.status(await t.api.post(`/invoices/${made.id}/restore`), 200);
      t.check(restored.body?.status === 'UPCOMING', `restore answers status UPCOMING (got ${restored.body?.status})`, restored);
    },
  },
  {
    id: 'invoices/links',
    area: 'invoices',
    title: 'an invoice has a hosted payment link and a signed PDF link, both absolute URLs',
    rule: { section: 'Endpoints > Invoices', quote: '| GET | /invoices/{id}/payment-link | | 200 object with url (hosted payment link) | 400, 404 |' },
    async run(t) {
      const owner = await sharedCustomer(t, 'invoices');
      const made = await t.made('POST /invoices', t.api.post('/invoices', invoiceInput(owner.id, t, 'links')), 201);
      for (const link of ['payment-link', 'pdf-link']) {
        const answer = t.status(await t.api.get(`/invoices/${made.id}/${link}`), 200);
        t.check(typeof answer.body?.url === 'string' && /^https?:\/\//.test(answer.body.url), `${link} answers an absolute url`, answer);
      }
    },
  },
  {
    id: 'invoices/pdf-unsupported-invoice',
    area: 'invoices',
    title: 'a PDF upload to an invoice created with POST /invoices is refused with 422 unsupported_invoice',
    rule: { section: 'Endpoints > Invoices', quote: 'Only invoices synced from an accounting integration accept a PDF; an invoice created with POST /invoices gives 422 with code unsupported_invoice.' },
    async run(t) {
      const owner = await sharedCustomer(t, 'invoices');
      const made = await t.made('POST /invoices', t.api.post('/invoices', invoiceInput(owner.id, t, 'pdf')), 201);
      const answer = t.error(await t.api.post(`/invoices/${made.id}/pdf`, { content: TINY_PDF }), [422]);
      t.check(answer.body.code === 'unsupported_invoice', `the code is unsupported_invoice (got ${answer.body.code})`, answer);
    },
  },
  {
    id: 'invoices/pdf-content-and-url',
    area: 'invoices',
    title: 'a PDF upload with both content and url is refused with 400',
    rule: { section: 'Endpoints > Invoices', quote: 'Exactly one of content and url is given; both or neither gives 400.' },
    gaps: ['PDF rule order'],
    async run(t) {
      const owner = await sharedCustomer(t, 'invoices');
      const made = await t.made('POST /invoices', t.api.post('/invoices', invoiceInput(owner.id, t, 'pdf-both')), 201);
      t.error(await t.api.post(`/invoices/${made.id}/pdf`, { content: TINY_PDF, url: 'https://example.com/invoice.pdf' }), [400]);
    },
  },
  unknownIdCase('invoices', 'invoice', 'read, archive and restore', [['GET', ''], ['DELETE', ''], ['POST', '/restore']]),
  {
    id: 'invoices/status-filter-values',
    area: 'invoices',
    title: 'GET /invoices?status= with a value outside the filter values is refused with 400',
    rule: { section: 'Endpoints > Invoices', quote: 'status (UPCOMING, OVERDUE, RECEIVED, PAID, ARCHIVED) | 200 paginated Invoice | 400 |' },
    async run(t) {
      t.error(await t.api.get('/invoices', { query: { status: 'OPEN' } }), [400], 'status');
    },
  },
  {
    id: 'payment-methods/add-list-get',
    area: 'payment-methods',
    title: 'a bank account added to a customer (201 {id}) is listed and readable; the first method is the default',
    rule: { section: 'Endpoints > Customers and payment methods', quote: '| GET | /customers/{id}/payment-methods | | 200 object with data (array of Payment method), no cursors | |' },
    gaps: ['Default method', 'Bank accounts'],
    async run(t) {
      const owner = await customer(t, 'methods-add');
      const id = await addBank(t, owner.id, 'bank-add');
      const { answer, list } = await methods(t, owner.id);
      const listed = list.find((m) => m.id === id);
      t.check(listed, 'the new method is listed', answer);
      t.check(listed.default === true, 'the first method is the default', answer);
      const read = t.status(await t.api.get(`/customers/${owner.id}/payment-methods/${id}`), 200);
      t.check(read.body?.id === id, 'GET .../payment-methods/{method_id} answers it', read);
    },
  },
  {
    id: 'payment-methods/default',
    area: 'payment-methods',
    title: 'PATCH .../default (201 {response}) makes a method the default: it alone is default and the customer names it',
    rule: { section: 'Endpoints > Customers and payment methods', quote: '| PATCH | /customers/{id}/payment-methods/{method_id}/default | makes this method the default | 201 object with response (string) | |' },
    async run(t) {
      const owner = await customer(t, 'methods-default');
      const first = await addBank(t, owner.id, 'bank-first');
      const second = await addBank(t, owner.id, 'bank-second');
      const answer = t.status(await t.api.patch(`/customers/${owner.id}/payment-methods/${second}/default`), 201);
      t.check(typeof answer.body?.response === 'string', 'the answer is an object with response (a string)', answer);
      const { answer: listed, list } = await methods(t, owner.id);
      t.check(list.find((m) => m.id === second)?.default === true && list.find((m) => m.id === first)?.default === false, 'the second method is the default and the first is not', listed);
      const read = t.status(await t.api.get(`/customers/${owner.id}`), 200);
      t.check(read.body?.default_payment_method_id === second, 'the customer default_payment_method_id names the second method', read);
    },
  },
  {
    id: 'payment-methods/delete',
    area: 'payment-methods',
    title: 'DELETE of a payment method (201 {response}) removes it from the list; reading it is then 404',
    rule: { section: 'Endpoints > Customers and payment methods', quote: '| DELETE | /customers/{id}/payment-methods/{method_id} | | 201 object with response (string) | |' },
    async run(t) {
      const owner = await customer(t, 'methods-delete');
      const id = await addBank(t, owner.id, 'bank-delete');
      const answer = t.status(await t.api.delete(`/customers/${owner.id}/payment-methods/${id}`), 201);
      t.check(typeof answer.body?.response === 'string', 'the answer is an object with response (a string)', answer);
      const { answer: listed, list } = await methods(t, owner.id);
      t.check(!list.some((m) => m.id === id), 'the method is no longer listed', listed);
      t.error(await t.api.get(`/customers/${owner.id}/payment-methods/${id}`), [404]);
    },
  },
  {
    id: 'payment-methods/bank-both-account-data',
    area: 'payment-methods',
    title: 'a bank account with both us_account_data and ca_account_data is refused with 400',
    rule: { section: 'Endpoints > Customers and payment methods', quote: 'Rule: exactly one of us_account_data and ca_account_data is sent, matching account_data_type.' },
    async run(t) {
      const owner = await sharedCustomer(t, 'methods');
      const body = { ...bankMethodInput(t, 'bank-both'), ca_account_data: { account_number: '1234567', institution_code: '001', transit_number: '00011' } };
      t.error(await t.api.post(`/customers/${owner.id}/payment-methods/bank`, body), [400]);
    },
  },
  {
    id: 'payment-methods/bank-account-data-mismatch',
    area: 'payment-methods',
    title: 'account_data_type us with only ca_account_data is refused with 400',
    rule: { section: 'Endpoints > Customers and payment methods', quote: 'Rule: exactly one of us_account_data and ca_account_data is sent, matching account_data_type.' },
    async run(t) {
      const owner = await sharedCustomer(t, 'methods');
      const { us_account_data: _us, ...rest } = bankMethodInput(t, 'bank-mismatch');
      const body = { ...rest, ca_account_data: { account_number: '1234567', institution_code: '001', transit_number: '00011' } };
      t.error(await t.api.post(`/customers/${owner.id}/payment-methods/bank`, body), [400]);
    },
  },
  {
    id: 'payment-methods/card-add',
    area: 'payment-methods',
    title: 'a card added with a provider token (the sandbox test token tok_visa) is listed as type card with brand, last4 and expiry',
    rule: { section: 'Resources and fields > Payment method (as listed for a customer)', quote: '| type | string | value card appears; a client-side description uses CARD and ACH |' },
    gaps: ['Card details'],
    async run(t) {
      const owner = await customer(t, 'methods-card');
      const made = await t.made('POST /customers/{id}/payment-methods/card', t.api.post(`/customers/${owner.id}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault', custom_name: t.name('card') }), 201);
      const { answer, list } = await methods(t, owner.id);
      const card = list.find((m) => m.id === made.id);
      t.check(card?.type === 'card', 'the card is listed with type card', answer);
      t.check(typeof card.brand === 'string' && /^\d{4}$/.test(card.last4) && /^\d{2}$/.test(card.exp_month) && /^\d{4}$/.test(card.exp_year), 'the card shows brand, last4, a two-digit exp_month and a four-digit exp_year', answer);
    },
  },
  ...([
    ['amount', 'a payment request without amount is refused with 400'],
    ['currency', 'a payment request without currency is refused with 400'],
    ['redirect_url', 'a payment request without redirect_url is refused with 400'],
  ] as const).map(([field, title]): ParityCase => ({
    id: `payment-requests/missing-${field.replace('_', '-')}`,
    area: 'payment-requests',
    title,
    rule: { section: 'Errors', quote: 'for a payment request, a missing amount, currency or redirect_url' },
    async run(t) {
      const body: Record<string, unknown> = { amount: 12.5, currency: 'USD', redirect_url: 'https://example.com/parity/done', reference_id: t.name(`missing-${field}`) };
      delete body[field];
      t.error(await t.api.post('/payments/request', body), [400], field);
    },
  })),
  ...([
    ['unsupported-currency', 'a payment request in an unsupported currency (XXX) is refused with 422', { currency: 'XXX' }, 'currency'],
    ['negative-amount', 'a payment request for a negative amount is refused with 422', { amount: -5 }, 'amount'],
  ] as const).map(([name, title, change, field]): ParityCase => ({
    id: `payment-requests/${name}`,
    area: 'payment-requests',
    title,
    rule: { section: 'Errors', quote: 'semantic validation failure, for example an unsupported currency or negative amount for a payment request' },
    async run(t) {
      const body = { amount: 12.5, currency: 'USD', redirect_url: 'https://example.com/parity/done', reference_id: t.name(name), ...change };
      t.error(await t.api.post('/payments/request', body), [422], field);
    },
  })),
  {
    id: 'payment-requests/http-redirect-url',
    area: 'payment-requests',
    title: 'a payment request whose redirect_url is not HTTPS is refused with 400',
    rule: { section: 'Resources and fields > Payment request and transaction (example-based variant)', quote: 'Input: amount, currency (three-letter code), redirect_url (HTTPS), reference_id (optional string).' },
    gaps: ['Payment requests'],
    async run(t) {
      const body = { amount: 12.5, currency: 'USD', redirect_url: 'http://example.com/parity/done', reference_id: t.name('http-redirect') };
      t.error(await t.api.post('/payments/request', body), [400], 'redirect_url');
    },
  },
  {
    id: 'payment-requests/create-and-read',
    area: 'payment-requests',
    title: 'a payment request is created pending with a hosted url and reads back with its amount, currency and reference_id',
    rule: { section: 'Resources and fields > Payment request and transaction (example-based variant)', quote: 'Payment request: id, url (hosted checkout link), status, amount, currency, reference_id. Status values listed in a glossary: pending, paid, expired, cancelled.' },
    gaps: ['Payment requests'],
    async run(t) {
      const input = { amount: 42.1, currency: 'USD', redirect_url: 'https://example.com/parity/done', reference_id: t.name('request') };
      const made = t.status(await t.api.post('/payments/request', input), 200, 201);
      t.check(typeof made.body?.id === 'string' && typeof made.body?.url === 'string' && made.body?.status === 'pending', 'the answer has an id, a url and status pending', made);
      const read = t.status(await t.api.get(`/payments/request/${made.body.id}`), 200);
      const body = read.body ?? {};
      t.check(body.amount === 42.1 && body.currency === 'USD' && body.reference_id === input.reference_id && body.status === 'pending', 'GET shows the amount, currency, reference_id and status pending', read);
    },
  },
];
