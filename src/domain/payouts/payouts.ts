// Owns payouts: settled payments (credits) and refunds or chargebacks (debits) of one customer are
// gathered into a scheduled payout each day, which processes at the daily cut-off and is paid (or
// fails, for the test value) on its arrival date, with fees and the payout_* event payloads.
import type { Deps } from '../../deps.js';
import { LIMITS } from '../../limits.js';
import { defineCollection, type Account } from '../../store/store.js';
import { defineStateMap } from '../../store/module-state.js';
import { applyTransition, defineMachine } from '../machine.js';
import { FEES, cents, type MethodKind } from '../payments/money.js';
import { payments, type Payment } from '../payments/records.js';
import { addDays, calendarDate, startOfCalendarDate, startOfNextDay } from '../dates.js';

export type PayoutStatus = 'scheduled' | 'processing' | 'succeeded' | 'failed';

export interface PayoutEntry {
  id: string;
  payment_id: string;
  invoice_id: string | null;
  description: string;
  direction: 'credit' | 'debit';
  method: MethodKind;
  /** Money of the entry before fees. */
  sub_total: number;
  fee: number;
}

export interface Payout {
  id: string;
  created_at: string;
  updated_at: string;
  customer_id: string | null;
  status: PayoutStatus;
  arrival_date: string;
  sub_total: number;
  total: number;
  fees: Array<{ name: string; type: 'method'; amount: number; covered_by_customer: boolean }>;
  entries: PayoutEntry[];
  failure_reason: string | null;
}

export const payouts = defineCollection<Payout>('payouts', ['customer_id']);

export const payoutMachine = defineMachine({
  resource: 'payout',
  states: ['scheduled', 'processing', 'succeeded', 'failed'] as const,
  events: ['process', 'pay', 'fail'] as const,
  internal: ['process', 'pay', 'fail'],
  table: {
    scheduled: { process: 'processing' },
    processing: { pay: 'succeeded', fail: 'failed' },
    succeeded: {},
    failed: {},
  },
});

// Sandbox choices: one payout per customer per day; it processes at the next 00:00 UTC cut-off and
// is paid at 00:00 UTC of its arrival date, two days after the cut-off.
export const ARRIVAL_DAYS_AFTER_CUTOFF = 2;
/** Test value: a payout that holds a payment of exactly this amount fails on its arrival date. */
export const FAILING_PAYOUT_AMOUNT = 777.77;
export const PAYOUT_FAILURE_REASON = 'bank_account_closed';

export const PAYOUT_PROCESS_JOB = 'payout.process';
export const PAYOUT_SETTLE_JOB = 'payout.settle';


/** Open (scheduled) payout id per customer ("-" for payments without a customer). */
const openPayouts = defineStateMap<string>('open_payouts', { type: 'string' });

export interface EntryInput {
  id: string;
  direction: 'credit' | 'debit';
  amount: number;
  fee: number;
  description: string;
}

/** Add a credit or debit to the customer's scheduled payout, opening one for today when needed. */
export function addToPayout(deps: Deps, account: Account, payment: Payment, input: EntryInput): Payout {
  const key = payment.customer_id ?? '-';
  const open = openPayouts(account);
  const openId = open.get(key);
  let payout = openId ? payouts(account).get(openId) : undefined;
  // A full payout (LIMITS.payoutTransactions) stays as it is; the payment starts another one.
  const isNew = !payout || payout.status !== 'scheduled' || payout.entries.length >= LIMITS.payoutTransactions;
  if (!payout || isNew) {
    const cutoff = startOfNextDay(account.clock.nowMs());
    const now = account.clock.iso();
    payout = payouts(account).insert({
      id: account.newId('po'),
      created_at: now,
      updated_at: now,
      customer_id: payment.customer_id,
      status: 'scheduled',
      arrival_date: calendarDate(addDays(cutoff, ARRIVAL_DAYS_AFTER_CUTOFF)),
      sub_total: 0,
      total: 0,
      fees: [],
      entries: [],
      failure_reason: null,
    });
    open.set(key, payout.id);
    deps.scheduler.schedule(account, PAYOUT_PROCESS_JOB, cutoff, { payout_id: payout.id });
  }
  // A new list, not a push: the stored payout changes only through update (a rollback puts the old list back).
  const entries: PayoutEntry[] = [...payout.entries, {
    id: input.id,
    payment_id: payment.id,
    invoice_id: payment.invoice_id,
    description: input.description,
    direction: input.direction,
    method: payment.payment_method,
    sub_total: cents(input.amount),
    fee: input.fee,
  }];
  payouts(account).update(payout.id, { entries, ...totals(entries), updated_at: account.clock.iso() });
  if (input.direction === 'credit' && payment.payout_id === null) payments(account).update(payment.id, { payout_id: payout.id });
  if (isNew) deps.events.record(account, 'payout_scheduled', payout.id, payoutEventData(payout));
  return payout;
}

function totals(entries: PayoutEntry[]): Pick<Payout, 'sub_total' | 'total' | 'fees'> {
  const subTotal = cents(entries.reduce((sum, e) => sum + (e.direction === 'credit' ? e.sub_total : -e.sub_total), 0));
  const byName = new Map<string, number>();
  for (const entry of entries) {
    if (entry.fee > 0) byName.set(FEES[entry.method].name, cents((byName.get(FEES[entry.method].name) ?? 0) + entry.fee));
  }
  const fees = [...byName].map(([name, amount]) => ({ name, type: 'method' as const, amount, covered_by_customer: false }));
  return { sub_total: subTotal, fees, total: cents(subTotal - fees.reduce((sum, f) => sum + f.amount, 0)) };
}

export function runPayoutProcessJob(deps: Deps, account: Account, payoutId: string): void {
  const payout = payouts(account).get(payoutId);
  if (!payout || payout.status !== 'scheduled') return;
  const open = openPayouts(account);
  const key = payout.customer_id ?? '-';
  if (open.get(key) === payout.id) open.delete(key);
  movePayout(account, payout, 'process');
  deps.events.record(account, 'payout_processing', payout.id, payoutEventData(payout));
  deps.scheduler.schedule(account, PAYOUT_SETTLE_JOB, startOfCalendarDate(payout.arrival_date), { payout_id: payout.id });
}

export function runPayoutSettleJob(deps: Deps, account: Account, payoutId: string): void {
  const payout = payouts(account).get(payoutId);
  if (!payout || payout.status !== 'processing') return;
  const fails = payout.entries.some((e) => e.direction === 'credit' && e.sub_total === FAILING_PAYOUT_AMOUNT);
  if (fails) {
    movePayout(account, payout, 'fail', { failure_reason: PAYOUT_FAILURE_REASON });
    deps.events.record(account, 'payout_failed', payout.id, { ...payoutEventData(payout), failure_reason: PAYOUT_FAILURE_REASON });
  } else {
    movePayout(account, payout, 'pay');
    deps.events.record(account, 'payout_paid', payout.id, payoutEventData(payout));
  }
}

function movePayout(account: Account, payout: Payout, event: (typeof payoutMachine.events)[number], changes: Partial<Payout> = {}): void {
  applyTransition(payoutMachine, payouts(account), payout, event, account.clock.iso(), changes);
}

export function payoutView(payout: Payout) {
  return {
    id: payout.id,
    created_at: payout.created_at,
    arrival_date: payout.arrival_date,
    customer_id: payout.customer_id,
    status: payout.status,
    sub_total: payout.sub_total,
    total: payout.total,
    fees: payout.fees,
  };
}

const ENTRY_STATUS: Record<PayoutStatus, 'created' | 'processing' | 'succeeded' | 'failed'> = {
  scheduled: 'created',
  processing: 'processing',
  succeeded: 'succeeded',
  failed: 'failed',
};

export function payoutTransactionsView(payout: Payout) {
  return {
    payout: payoutView(payout),
    transactions: payout.entries.map((e) => ({
      id: e.id,
      description: e.description,
      direction: e.direction,
      method: e.method,
      status: ENTRY_STATUS[payout.status],
      failure_reason: payout.status === 'failed' ? payout.failure_reason : null,
      sub_total: e.sub_total,
      total: cents(e.direction === 'credit' ? e.sub_total - e.fee : -e.sub_total),
    })),
  };
}

export function payoutEventData(payout: Payout): Record<string, unknown> {
  return { payout_id: payout.id, customer_id: payout.customer_id, status: payout.status, total: payout.total, arrival_date: payout.arrival_date };
}
