// Owns the customer payment records: their fields and the collection. Below payments.ts (what moves
// them) and payouts.ts (which groups them), so neither imports the other for them.
import { defineCollection } from '../../store/store.js';
import type { MethodKind } from './money.js';

export type PaymentStatus = 'pending' | 'processing' | 'succeeded' | 'failed' | 'refunded';
export type PaymentType = 'invoice_payment' | 'payment_request';
export type PaymentSource = 'hosted_page' | 'checkout' | 'sandbox' | 'autopay';

export interface Payment {
  id: string;
  created_at: string;
  updated_at: string;
  type: PaymentType;
  status: PaymentStatus;
  amount: number;
  currency: string;
  customer_id: string | null;
  invoice_id: string | null;
  payment_request_id: string | null;
  payment_method: MethodKind;
  payment_method_id: string | null;
  failure_reason: string | null;
  fees: number;
  due_date: string | null;
  payout_id: string | null;
  refunded_amount: number;
  chargeback: boolean;
  chargeback_reason: string | null;
  source: PaymentSource;
  /** Failure the money path will end with (a test value), decided when the payment starts. */
  planned_failure: string | null;
  settled_at: string | null;
}

export const payments = defineCollection<Payment>('payments', ['customer_id', 'invoice_id']);
