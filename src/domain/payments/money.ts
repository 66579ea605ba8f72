// Owns money arithmetic and the fee model: amounts are decimal dollars rounded to cents, and every
// fee (quotes, payment fees, payout fees) comes from the one table below.
import { LIMITS } from '../../limits.js';
/** Sandbox limit on any one amount (and invoice total), so totals stay exact in JSON numbers. */
export const MAX_AMOUNT = LIMITS.amountMax;

export function cents(value: number): number {
  return Math.round((value + Number.EPSILON) * 100) / 100;
}

/** True when the value has at most two decimals (dollars and cents). */
export function isCents(value: number): boolean {
  return Number.isFinite(value) && Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;
}

export type MethodKind = 'card' | 'standard_ach' | 'same_day_ach' | 'manual';

export interface FeeModel {
  name: string;
  /** Percent of the amount, e.g. 2.9. */
  percent: number;
  fixed: number;
  /** Upper bound of the whole fee, or null. */
  cap: number | null;
}

// Sandbox choice (the spec shows the fee fields but not the rates): the partner bears the fees,
// which are deducted from payouts; customers pay the invoice amount exactly.
export const FEES: Record<MethodKind, FeeModel> = {
  card: { name: 'Card processing', percent: 2.9, fixed: 0.3, cap: null },
  standard_ach: { name: 'ACH processing', percent: 0.8, fixed: 0, cap: 5 },
  same_day_ach: { name: 'Same-day ACH processing', percent: 1, fixed: 0, cap: 10 },
  manual: { name: 'Manual payment', percent: 0, fixed: 0, cap: null },
};

export function feeFor(kind: MethodKind, amount: number): number {
  const model = FEES[kind];
  const fee = cents((amount * model.percent) / 100 + model.fixed);
  return model.cap === null ? fee : Math.min(fee, model.cap);
}

export function decimal(value: number): string {
  return cents(value).toFixed(2);
}

/** Dollars as people read them on the hosted pages and the rendered PDF: "$12.30". */
export function money(value: number): string {
  return `$${value.toFixed(2)}`;
}
