// The receivables' recorded events match the document's webhook payloads (WebhookDelivery_<topic>),
// every transition table answers each (state, event) pair, and each README test value does what it says.
import { describe, expect, it } from '@jest/globals';
import { loadDocument } from '../src/http/openapi.js';
import { responseCheckerFor } from '../src/http/response-check.js';
import { ApiError } from '../src/errors.js';
import { transition, type Machine } from '../src/domain/machine.js';
import { invoiceMachine } from '../src/domain/invoices/invoices.js';
import { paymentMachine } from '../src/domain/payments/payments.js';
import { paymentRequestMachine } from '../src/domain/payments/payment-requests.js';
import { payoutMachine } from '../src/domain/payouts/payouts.js';
import { useSession, type Api, type TestSandbox } from './helpers.js';
import { bank, card, control, customer, events, invoice } from './receivables-helpers.js';


let sb: TestSandbox;
let api: Api;
let token: string;
/** Advance the default account's clock; the session's token keeps working (tokens live in real time). */
const { advance } = useSession((session) => ({ sb, api, token } = session));

const RECEIVABLES_TOPICS = [
  'invoice_created', 'invoice_updated', 'invoice_paid', 'invoice_archived',
  'payment_method_added', 'default_payment_method_changed', 'payment_method_deleted',
  'payment_succeeded', 'payment_failed', 'payment_refunded', 'payment_chargeback',
  'payout_scheduled', 'payout_processing', 'payout_paid', 'payout_failed',
];

describe('event payloads', () => {
  it('records every receivables topic with a body that matches the document\'s webhook schema', async () => {
    const checker = responseCheckerFor(loadDocument('openapi').document);

    const cus = await customer(api);
    const pm = await card(api, cus);
    const second = await bank(api, cus);
    await api.patch(`/customers/${cus}/payment-methods/${second}/default`).expect(201);
    await api.delete(`/customers/${cus}/payment-methods/${second}`).expect(201);
    await api.patch(`/customers/${cus}/payment-methods/${pm}/default`).expect(201);
    const paid = await invoice(api, cus, { exclude_from_autopay: true });
    const archived = await invoice(api, cus, { exclude_from_autopay: true });
    await api.delete(`/invoices/${archived.id}`).expect(200);
    const { body: payment } = await control(sb, token).post(`/invoices/${paid.id}/pay`).expect(200);
    const failing = await invoice(api, cus, { exclude_from_autopay: true });
    const { body: doomed } = await control(sb, token).post(`/invoices/${failing.id}/pay`).expect(200);
    await control(sb, token).post(`/payments/${doomed.id}/fail`).expect(200);
    const big = await invoice(api, cus, { exclude_from_autopay: true, line_items: [{ amount: 777.77 }] });
    await control(sb, token).post(`/invoices/${big.id}/pay`).expect(200);
    await advance(3660);
    await control(sb, token).post(`/payments/${payment.id}/refund`, { amount: 10 }).expect(200);
    await control(sb, token).post(`/payments/${payment.id}/chargeback`).expect(200);
    await advance(3 * 86_400);
    const other = await customer(api, 'Other');
    await card(api, other);
    const fine = await invoice(api, other, { exclude_from_autopay: true });
    await control(sb, token).post(`/invoices/${fine.id}/pay`).expect(200);
    await advance(4 * 86_400);

    const recorded = events(sb).filter((e) => RECEIVABLES_TOPICS.includes(e.topic));
    expect(new Set(recorded.map((e) => e.topic))).toEqual(new Set(RECEIVABLES_TOPICS));
    for (const event of recorded) {
      const { id: _id, ...body } = event;
      const problem = checker.checkComponent(`WebhookDelivery_${event.topic}`, body);
      if (problem) throw new Error(`${event.topic}: ${JSON.stringify(problem.errors)} in ${JSON.stringify(body)}`);
    }
  });
});

// The documented tables; any change to a machine's table must change this too.
const EXPECTED_TABLES: Record<string, Record<string, Record<string, string>>> = {
  invoice: {
    UPCOMING: { become_overdue: 'OVERDUE', start_payment: 'RECEIVED', archive: 'ARCHIVED' },
    OVERDUE: { start_payment: 'RECEIVED', archive: 'ARCHIVED' },
    RECEIVED: { start_payment: 'RECEIVED', settle: 'PAID', reopen: 'UPCOMING', reopen_overdue: 'OVERDUE' },
    PAID: {},
    ARCHIVED: { restore: 'UPCOMING', restore_overdue: 'OVERDUE' },
  },
  payment: {
    pending: { process: 'processing', fail: 'failed' },
    processing: { succeed: 'succeeded', fail: 'failed' },
    succeeded: { refund: 'refunded', refund_partial: 'succeeded', chargeback: 'succeeded' },
    failed: {},
    refunded: {},
  },
  'payment request': {
    pending: { pay: 'paid', expire: 'expired', cancel: 'cancelled' },
    paid: {},
    expired: {},
    cancelled: {},
  },
  payout: {
    scheduled: { process: 'processing' },
    processing: { pay: 'succeeded', fail: 'failed' },
    succeeded: {},
    failed: {},
  },
};

describe('transition tables', () => {
  const machines: Array<Machine<string, string>> = [invoiceMachine, paymentMachine, paymentRequestMachine, payoutMachine] as never;

  it.each(machines.map((m) => [m.resource, m] as const))('the %s table is the documented one', (resource, machine) => {
    expect(machine.table).toEqual(EXPECTED_TABLES[resource]);
  });

  const cases = machines.flatMap((m) => m.states.flatMap((s) => m.events.map((e) => [m.resource, s, e, m] as const)));

  it.each(cases)('%s: %s + %s moves per the documented table or is refused naming the state', (resource, state, event, machine) => {
    const next = EXPECTED_TABLES[resource][state]?.[event];
    if (next !== undefined) {
      expect(transition(machine, state, event)).toBe(next);
      return;
    }
    try {
      transition(machine, state, event);
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(machine.refusal?.status ?? 409);
      expect((error as ApiError).message).toContain(`status is ${state}`);
    }
  });
});

describe('README test values', () => {
  async function payWith(add: (cus: string) => Promise<string>) {
    const cus = await customer(api);
    await add(cus);
    const inv = await invoice(api, cus, { exclude_from_autopay: true });
    return (await control(sb, token).post(`/invoices/${inv.id}/pay`)).body;
  }

  it.each([
    ['card token tok_card_declined', (c: string) => card(api, c, 'tok_card_declined'), 'failed', 'card_declined'],
    ['card token tok_insufficient_funds', (c: string) => card(api, c, 'tok_insufficient_funds'), 'failed', 'insufficient_funds'],
    ['a checkout card whose number ends 0002', (c: string) => card(api, c, JSON.stringify({ number_secret: 'ev:num_4000000000000002', expiry_month: '12', expiry_year: '2030' })), 'failed', 'card_declined'],
    ['a checkout card whose number ends 9995', (c: string) => card(api, c, JSON.stringify({ number_secret: 'ev:num_4000000000009995', expiry_month: '12', expiry_year: '2030' })), 'failed', 'insufficient_funds'],
    ['card token tok_visa', (c: string) => card(api, c, 'tok_visa'), 'succeeded', null],
  ])('%s: the card payment ends %s at once or on the clock', async (_what, add, status, reason) => {
    const p = await payWith(add);
    await advance(3660);
    const [got] = (await api.get(`/payments?invoice_id=${p.invoice_id}`)).body.data;
    expect(got).toMatchObject({ status, failure_reason: reason });
  });

  it.each([
    ['US account 000111111116', '000111111116', 'account_closed'],
    ['US account 000222222227', '000222222227', 'insufficient_funds'],
  ])('%s: the bank payment fails at settlement with %s', async (_what, number, reason) => {
    const p = await payWith((c) => bank(api, c, number));
    expect(p.status).toBe('pending');
    await advance(60 + 2 * 86_400);
    expect((await api.get(`/payments?invoice_id=${p.invoice_id}`)).body.data[0]).toMatchObject({ status: 'failed', failure_reason: reason });
  });

  it('CA account 00011116: the bank payment fails at settlement with account_closed', async () => {
    const p = await payWith(async (c) => (await api.post(`/customers/${c}/payment-methods/bank`, {
      account_data_type: 'ca', ca_account_data: { account_number: '00011116', institution_code: '001', transit_number: '12345' },
    })).body.id);
    await advance(60 + 2 * 86_400);
    expect((await api.get(`/payments?invoice_id=${p.invoice_id}`)).body.data[0]).toMatchObject({ status: 'failed', failure_reason: 'account_closed' });
  });
});
