// Shared set-up of the receivables tests: a customer, a synced or API invoice, event lookups.
import { eventLog, type EventRecord } from '../src/events/events.js';
import type { Api, TestSandbox } from './helpers.js';

export function accountOf(sb: TestSandbox, env: 'production' | 'demo' = 'production') {
  return sb.deps.store.account('ptn_default', env);
}

export function events(sb: TestSandbox, topic?: string): EventRecord[] {
  return [...eventLog(accountOf(sb)).values()].filter((e) => !topic || e.topic === topic);
}

export async function customer(api: Api, name = 'Acme Corp'): Promise<string> {
  const res = await api.post('/customers', { name, email: `${name.toLowerCase().replace(/\W+/g, '.')}@example.test` });
  if (res.status !== 201) throw new Error(`customer: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

export async function invoice(api: Api, customerId: string, body: Record<string, unknown> = {}) {
  const res = await api.post('/invoices', { customer_id: customerId, line_items: [{ description: 'Consulting', quantity: 2, amount: 150 }], ...body });
  if (res.status !== 201) throw new Error(`invoice: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** An invoice synced through the control plane (the only kind that accepts a PDF). */
export async function syncedInvoice(sb: TestSandbox, token: string, customerId: string, body: Record<string, unknown> = {}) {
  const res = await sb.http.post('/_sandbox/accounting/sync').set('Authorization', `Bearer ${token}`)
    .send({ invoices: [{ customer_id: customerId, line_items: [{ description: 'Synced work', quantity: 1, amount: 500 }], ...body }] });
  if (res.status !== 201) throw new Error(`sync: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.invoices[0];
}

export async function card(api: Api, customerId: string, token = 'tok_visa'): Promise<string> {
  const res = await api.post(`/customers/${customerId}/payment-methods/card`, { card_provider_token: token, provider: 'evervault' });
  if (res.status !== 201) throw new Error(`card: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

export async function bank(api: Api, customerId: string, accountNumber = '000123456789'): Promise<string> {
  const res = await api.post(`/customers/${customerId}/payment-methods/bank`, {
    account_data_type: 'us', institution_name: 'First Sandbox Bank', receiver_name: 'Acme', subtype: 'checkings', type: 'depository',
    us_account_data: { account_number: accountNumber, routing_number: '011000015' },
  });
  if (res.status !== 201) throw new Error(`bank: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

export function control(sb: TestSandbox, token: string) {
  return {
    post: (path: string, body?: object) => sb.http.post(`/_sandbox${path}`).set('Authorization', `Bearer ${token}`).send(body ?? {}),
  };
}
