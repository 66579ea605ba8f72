// Shared set-up of the webhook tests: a sandbox that accepts http receivers, a local receiver (the
// exported helper users get), a way to wait for deliveries, and the document's delivery schemas.
import { afterEach } from '@jest/globals';
import type { SandboxConfig } from '../src/config.js';
import { loadDocument } from '../src/http/openapi.js';
import { responseCheckerFor } from '../src/http/response-check.js';
import { startWebhookReceiver, type WebhookReceiver } from '../src/testing/webhook-receiver.js';
import { WEBHOOKS_SERVICE, type WebhookQueue } from '../src/webhooks/queue.js';
import type { Account } from '../src/store/store.js';
import { setup, START, type Api, type TestSandbox } from './helpers.js';

export { START };

/**
 * Check a delivered body against the document's closed `WebhookDelivery_<topic>` schema; answers the
 * errors. Given the delivery's headers, a body an evolution drill shaped (Sandbox-Drill) is not held
 * to it, as the server's response check does not hold a drilled answer.
 */
export function deliveryErrors(body: { topic?: string }, headers?: Record<string, string | string[] | undefined>): string[] {
  if (headers?.['sandbox-drill']) return [];
  const problem = responseCheckerFor(loadDocument('openapi').document).checkComponent(`WebhookDelivery_${String(body.topic)}`, body);
  return (problem?.errors ?? []).map((e) => `${e.instancePath} ${e.message}${e.params?.unevaluatedProperty ? ` (${e.params.unevaluatedProperty})` : ''}`);
}

export interface WebhookSandbox {
  sb: TestSandbox;
  api: Api;
  token: string;
  account: Account;
  queue: WebhookQueue;
  receiver: WebhookReceiver;
  /** Wait for every delivery that is due now (what POST /_sandbox/clock/advance also waits for). */
  settle(account?: Account): Promise<void>;
  subscribe(topic: string, path?: string, secret?: string): Promise<{ id: string }>;
  /** A new access token, for `api` (tokens expire after an hour of real time: `sb.time.now`). */
  fresh(): Promise<void>;
  close(): Promise<void>;
}

export async function webhookSandbox(config: Partial<SandboxConfig> = {}): Promise<WebhookSandbox> {
  const sb = await setup({ allowHttpWebhooks: true, ...config });
  const token = await sb.token();
  const api = sb.as(token);
  const account = sb.deps.store.account('ptn_default', 'production');
  const queue = sb.deps.services.get(WEBHOOKS_SERVICE) as WebhookQueue;
  const receiver = await startWebhookReceiver();
  const w: WebhookSandbox = {
    sb,
    api,
    token,
    account,
    queue,
    receiver,
    settle: (target = account) => queue.idle(target),
    async fresh() {
      w.token = await sb.token();
      w.api = sb.as(w.token);
    },
    async subscribe(topic, path = '/hooks', secret) {
      const res = await w.api.post('/webhooks', { endpoint_url: `${receiver.url}${path}`, topic, ...(secret ? { secret_key: secret } : {}) });
      if (res.status !== 201) throw new Error(`subscribe failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    close: () => receiver.close(),
  };
  return w;
}

/**
 * A maker of webhook sandboxes that are settled and closed after each test of the file that calls
 * it (at its top level); `beforeClose` first lets go of what the test still holds (gates, drills).
 */
export function webhookSandboxesClosedAfterEach(beforeClose: () => void = () => {}): (config?: Partial<SandboxConfig>) => Promise<WebhookSandbox> {
  const open: WebhookSandbox[] = [];
  afterEach(async () => {
    beforeClose();
    for (const w of open.splice(0)) {
      await w.settle(w.sb.deps.store.account('ptn_default', 'production'));
      await w.close();
    }
  });
  return async (config = {}) => {
    const w = await webhookSandbox(config);
    open.push(w);
    return w;
  };
}

export const at = (seconds: number) => new Date(START + seconds * 1000).toISOString();
