// Owns what a parity run leaves behind: it watches every answer for objects the run created (and
// for the archive, delete or deactivate that already undid them), then at the end archives,
// deletes or deactivates what is left, newest first, through the public API.
import type { Exchange, ParityClient } from './client.js';
import type { MatchedOperation, ShapeChecker } from './shapes.js';

interface Tracked {
  what: string;
  method: string;
  path: string;
  done: boolean;
}

export interface CleanupSummary {
  /** Objects archived, deleted or deactivated at the end of the run. */
  done: number;
  /** Undo requests the service refused. */
  failed: Array<{ what: string; request: string; status: number }>;
  /** Objects the API offers no way to remove, by kind. */
  left: Record<string, number>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request body the run sent, JSON as Exchange.body
type Rule = (m: MatchedOperation, body: any) => void;

export class CleanupTracker {
  private readonly tracked = new Map<string, Tracked>();
  private readonly left: Record<string, number> = {};
  private readonly rules: Record<string, Rule>;

  constructor(private readonly shapes: ShapeChecker) {
    const add = (key: string, what: string, method: string, path: string) => {
      if (!this.tracked.has(key)) this.tracked.set(key, { what, method, path, done: false });
    };
    const mark = (key: string, done: boolean) => {
      const item = this.tracked.get(key);
      if (item) item.done = done;
    };
    const keep = (kind: string) => {
      this.left[kind] = (this.left[kind] ?? 0) + 1;
    };
    this.rules = {
      createCustomer: (_m, b) => add(`customer:${b.id}`, `customer ${b.id}`, 'DELETE', `/customers/${b.id}`),
      archiveCustomer: (m) => mark(`customer:${m.params.id}`, true),
      restoreCustomer: (m) => mark(`customer:${m.params.id}`, false),
      createInvoice: (_m, b) => add(`invoice:${b.id}`, `invoice ${b.id}`, 'DELETE', `/invoices/${b.id}`),
      archiveInvoice: (m) => mark(`invoice:${m.params.id}`, true),
      restoreInvoice: (m) => mark(`invoice:${m.params.id}`, false),
      createBill: (_m, b) => add(`bill:${b.id}`, `bill ${b.id}`, 'DELETE', `/bills/${b.id}`),
      deleteBill: (m) => mark(`bill:${m.params.id}`, true),
      bulkDeleteBills: (_m, b) => {
        for (const result of Array.isArray(b?.results) ? b.results : []) if (result?.success) mark(`bill:${result.bill_id}`, true);
      },
      createVendor: (_m, b) => add(`vendor:${b.id}`, `vendor ${b.id}`, 'POST', `/vendors/${b.id}/deactivate`),
      deactivateVendor: (m) => mark(`vendor:${m.params.id}`, true),
      reactivateVendor: (m) => mark(`vendor:${m.params.id}`, false),
      createWebhook: (_m, b) => add(`webhook:${b.id}`, `webhook subscription ${b.id}`, 'DELETE', `/webhooks/${b.id}`),
      deleteWebhook: (m) => mark(`webhook:${m.params.subscription_id}`, true),
      createBankPaymentMethod: (m, b) => add(`method:${b.id}`, `payment method ${b.id}`, 'DELETE', `/customers/${m.params.id}/payment-methods/${b.id}`),
      createCardPaymentMethod: (m, b) => add(`method:${b.id}`, `payment method ${b.id}`, 'DELETE', `/customers/${m.params.id}/payment-methods/${b.id}`),
      deletePaymentMethod: (m) => mark(`method:${m.params.method_id}`, true),
      createCustomerUser: () => keep('customer users'),
      createPaymentRequest: () => keep('payment requests'),
    };
  }

  /** Watch one answer of the run's environment. */
  observe(exchange: Exchange): void {
    if (exchange.foreign || exchange.status < 200 || exchange.status > 299) return;
    const matched = this.shapes.match(exchange.method, exchange.path);
    const rule = matched && this.rules[matched.operationId];
    const body = exchange.body;
    if (!rule || (matched.operationId.startsWith('create') && typeof body?.id !== 'string')) return;
    rule(matched, body);
  }

  /** Undo what is still there, newest first. */
  async run(client: ParityClient): Promise<CleanupSummary> {
    const summary: CleanupSummary = { done: 0, failed: [], left: { ...this.left } };
    for (const item of [...this.tracked.values()].reverse()) {
      if (item.done) continue;
      let status: number;
      try {
        status = (await client.send(item.method, item.path)).status;
      } catch {
        status = 0;
      }
      if (status >= 200 && status <= 299) summary.done += 1;
      else summary.failed.push({ what: item.what, request: `${item.method} ${item.path}`, status });
    }
    return summary;
  }
}
