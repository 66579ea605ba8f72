// Owns which differences `diff` lists as known choices of the sandbox rather than failures: a small
// table, each row naming an operation (or any), a kind of difference and what the sandbox answers,
// and the row of docs/gaps-and-choices.md (its first-column text) that records the choice, as the
// parity cases name theirs. The first row that matches wins. A test checks every row named exists
// in the page and every operation in the document.
import type { Difference, DifferenceKind } from './compare.js';

/** The request a difference came from, as the rows need it. */
export interface ChoiceRequest {
  operationId: string | null;
  query: URLSearchParams;
  /** The replayed body's text ('' without one). */
  body: string;
  recordedStatus: number;
}

export interface Choice {
  /** First-column text of a row of docs/gaps-and-choices.md. */
  row: string;
  kind: DifferenceKind;
  /** operationIds of openapi.yaml; absent: any operation. */
  operations?: string[];
  /** field: the field's name (the last part of its path); absent: any. */
  fields?: string[];
  /** field: the side that has it. */
  side?: 'recording' | 'sandbox';
  /** field: only when the sandbox's value is null. */
  sandboxNull?: boolean;
  /** status: what the sandbox answered. */
  sandboxStatus?: number;
  /** status: only when the recorded status was a success (2xx). */
  recordedSuccess?: boolean;
  /** enum: the sandbox's value. */
  sandboxValues?: string[];
  /** A further condition on the request (a query parameter, a field of the body). */
  when?: (request: ChoiceRequest) => boolean;
}

const CUSTOMER_ANSWERS = ['createCustomer', 'getCustomer', 'updateCustomer', 'listCustomers', 'archiveCustomer', 'restoreCustomer'];
const INVOICE_ANSWERS = ['createInvoice', 'getInvoice', 'listInvoices', 'archiveInvoice', 'restoreInvoice', 'checkoutGetInvoice'];
const PAYMENT_METHOD_ANSWERS = ['createBankPaymentMethod', 'getPaymentMethod', 'listPaymentMethods', 'setDefaultPaymentMethod', 'checkoutListPaymentMethods', 'checkoutCreateBankPaymentMethod'];
const VENDOR_PAYMENT_ANSWERS = ['createVendorPayments', 'retryVendorPayment', 'cancelVendorPayment', 'bulkCancelVendorPayments', 'getBill', 'listBills'];
const BILL_ANSWERS_WITHOUT_HISTORY = ['listBills', 'createBill', 'updateBill', 'submitBill', 'rejectBill', 'setBillPayDate'];

export const CHOICES: readonly Choice[] = [
  { row: 'Customer status', kind: 'field', side: 'sandbox', fields: ['status'], operations: CUSTOMER_ANSWERS },
  { row: 'Customer archive/restore conflicts', kind: 'status', operations: ['archiveCustomer', 'restoreCustomer'], sandboxStatus: 400 },
  { row: 'Invoice fields', kind: 'field', side: 'sandbox', fields: ['pdf_uploaded', 'source'], operations: INVOICE_ANSWERS },
  { row: 'Bank accounts', kind: 'field', side: 'sandbox', fields: ['bank_name', 'account_last4', 'account_data_type'], operations: PAYMENT_METHOD_ANSWERS },
  { row: 'Vendor payment fields', kind: 'field', side: 'sandbox', fields: ['bill_id', 'hold_reason', 'created_at', 'updated_at'], operations: VENDOR_PAYMENT_ANSWERS },
  { row: 'Status history', kind: 'field', side: 'recording', fields: ['status_history'], operations: BILL_ANSWERS_WITHOUT_HISTORY },
  { row: 'Canceled payments', kind: 'enum', sandboxValues: ['canceled'] },
  { row: 'Fields never set', kind: 'field', side: 'sandbox', sandboxNull: true },
  { row: 'Page size', kind: 'status', sandboxStatus: 400, recordedSuccess: true, when: (r) => r.query.has('limit') && !(Number(r.query.get('limit')) >= 1 && Number(r.query.get('limit')) <= 500) },
  { row: 'Unknown query parameters', kind: 'status', sandboxStatus: 400, recordedSuccess: true, when: (r) => r.query.size > 0 },
  { row: 'Token endpoint credentials in the body', kind: 'status', operations: ['createToken'], sandboxStatus: 403, when: (r) => new URLSearchParams(r.body).has('client_secret') },
  { row: 'external_id', kind: 'status', operations: ['createCustomer', 'updateCustomer'], sandboxStatus: 400, when: (r) => r.body.includes('"external_id"') },
  { row: 'Vendor tax_id 422', kind: 'status', operations: ['createVendor', 'updateVendor'], sandboxStatus: 422, when: (r) => r.body.includes('"tax_id"') },
  { row: 'Vendor status', kind: 'status', operations: ['deactivateVendor', 'reactivateVendor'], sandboxStatus: 422 },
  { row: 'Deleted bills', kind: 'status', operations: ['deleteBill'], sandboxStatus: 200 },
  { row: 'DELETE /webhooks/{id}', kind: 'status', operations: ['deleteWebhook'], sandboxStatus: 404 },
  { row: 'Rate limit', kind: 'status', sandboxStatus: 429 },
];

const lastField = (path: string | undefined) => (path ?? '').split('.').pop()!.replace(/\[\]$/, '');

/** The row of docs/gaps-and-choices.md a difference is a known choice of, if one is. */
export function choiceFor(difference: Difference, request: ChoiceRequest, choices: readonly Choice[] = CHOICES): string | undefined {
  for (const choice of choices) {
    if (choice.kind !== difference.kind) continue;
    if (choice.operations && (!request.operationId || !choice.operations.includes(request.operationId))) continue;
    if (choice.fields && !choice.fields.includes(lastField(difference.path))) continue;
    if (choice.side && choice.side !== difference.side) continue;
    if (choice.sandboxNull && difference.sandbox !== 'null') continue;
    if (choice.sandboxStatus !== undefined && difference.sandbox.split(' ')[0] !== String(choice.sandboxStatus)) continue;
    if (choice.recordedSuccess && !(request.recordedStatus >= 200 && request.recordedStatus < 300)) continue;
    if (choice.sandboxValues && !choice.sandboxValues.includes(difference.sandbox.split(' ')[0])) continue;
    if (choice.when && !choice.when(request)) continue;
    return choice.row;
  }
  return undefined;
}
