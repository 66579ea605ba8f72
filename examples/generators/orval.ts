// A partner's client from orval (fetch client and types), generated from openapi/openapi.yaml into
// ./orval/api.ts by scripts/generators.sh, which compiles this file with
// tsc --strict --noUncheckedIndexedAccess. No casts: if the document stops giving these types, CI fails.
import { createCustomer, createInvoice, uploadInvoicePdf } from './orval/api.js';
import type { InvoicePdfUploadInput, WebhookDelivery, WebhookDeliveryInvoicePaid, WebhookEventRecord } from './orval/api.js';

// orval's fetch client takes the base URL from the document's server; the token goes in each request.
const auth = { headers: { Authorization: 'Bearer <access token>' } };

/** A customer, an invoice (exclude_from_autopay left out: it is optional) and its PDF as base64. */
export async function invoiceWithPdf(pdfBase64: string): Promise<string> {
  const customer = await createCustomer({ name: 'Acme Corp', email: 'ap@acme.example' }, auth);
  if (customer.status !== 201) throw new Error(`customer: ${customer.status}`);
  const invoice = await createInvoice({ customer_id: customer.data.id, line_items: [{ description: 'Annual plan', amount: 1200 }] }, auth);
  if (invoice.status !== 201) throw new Error(`invoice: ${invoice.status}`);
  const upload: InvoicePdfUploadInput = { content: pdfBase64 };
  const stored = await uploadInvoicePdf(invoice.data.id, upload, auth);
  if (stored.status !== 200) throw new Error(`pdf: ${stored.status}`);
  return stored.data.path;
}

/** One handler for every delivery: narrowed on topic, each topic's data typed. */
export function handle(delivery: WebhookDelivery): string {
  switch (delivery.topic) {
    case 'customer_created':
    case 'customer_archived':
      return `${delivery.topic} ${delivery.data.customer_id} ${delivery.data.status}`;
    case 'customer_updated':
      return `customer ${delivery.data.customer_id} changed ${delivery.data.changed_fields.join(', ')}`;
    case 'invoice_created':
    case 'invoice_updated':
    case 'invoice_archived':
      return `${delivery.topic} ${delivery.data.invoice_number}: ${delivery.data.total} ${delivery.data.currency}`;
    case 'invoice_paid':
      return `invoice ${delivery.data.invoice_id} paid by ${delivery.data.payment_id}`;
    case 'payment_succeeded':
      return `payment ${delivery.data.payment_id} ${delivery.data.amount}`;
    case 'payment_failed':
      return `payment ${delivery.data.payment_id} failed: ${delivery.data.failure_reason}`;
    case 'payment_refunded':
      return `payment ${delivery.data.payment_id} refunded ${delivery.data.refund_amount}`;
    case 'payment_chargeback':
      return `payment ${delivery.data.payment_id} charged back: ${delivery.data.chargeback_reason}`;
    case 'payment_method_added':
    case 'payment_method_deleted':
      return `${delivery.topic} ${delivery.data.payment_method_id} (default: ${String(delivery.data.default)})`;
    case 'default_payment_method_changed':
      return `default of ${delivery.data.customer_id} is ${delivery.data.payment_method_id}`;
    case 'payout_scheduled':
    case 'payout_processing':
    case 'payout_paid':
      return `payout ${delivery.data.payout_id} arrives ${delivery.data.arrival_date}`;
    case 'payout_failed':
      return `payout ${delivery.data.payout_id} failed: ${delivery.data.failure_reason}`;
    default: {
      // Every documented topic is handled (a new one in the document fails here); a topic the document
      // does not name yet is ignored at run time.
      const unhandled: never = delivery;
      void unhandled;
      return 'ignored';
    }
  }
}

/** A delivery history record holds the delivery's data: real data can be assigned to it. */
export function historyOf(delivery: WebhookDeliveryInvoicePaid, id: string): WebhookEventRecord {
  return {
    id, event_id: delivery.idempotency_key, subscription_id: 'sub_1', endpoint_url: 'https://receiver.example/hooks',
    entity_id: delivery.entity_id, idempotency_key: delivery.idempotency_key, topic: delivery.topic, timestamp: delivery.timestamp,
    status: 'sent', attempts: 1, last_error: null, last_attempt_at: delivery.timestamp, next_attempt_at: null, data: delivery.data,
  };
}

// @ts-expect-error a number is not an upload body
export const notABody: InvoicePdfUploadInput = 42;
// @ts-expect-error an upload names content or url
export const emptyBody: InvoicePdfUploadInput = {};
