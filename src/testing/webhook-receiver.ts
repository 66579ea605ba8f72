// Owns the webhook receiver for users' test suites: a local HTTP server that collects the sandbox's
// deliveries, answers with a status the test chooses (or 401 to a wrong secret, when it is told the
// right one), waits for a topic to arrive, and counts deliveries per idempotency_key, so a test can
// assert what the partner's own code did with a duplicate.
import type { IncomingHttpHeaders, Server } from 'node:http';
import { http } from '../node-http.js';
import type { AddressInfo } from 'node:net';
import type { Topic, WebhookBody } from '../client/index.js';

/**
 * One delivery of `T`, its body typed as the API document's `webhooks` section types that topic's
 * delivery (the receiver parses the JSON; it does not validate it). A union over topics narrows on
 * `topic`: `if (d.topic === 'invoice_paid') d.data.payment_id`.
 */
interface Received<T extends Topic> {
  topic: T;
  entity_id: string;
  idempotency_key: string;
  timestamp: string;
  /** The event's data: the object's state as the topic's schema documents it. */
  data: WebhookBody<T>['data'];
  /** The whole parsed body, as sent. */
  body: WebhookBody<T>;
  headers: IncomingHttpHeaders;
  /** The secret from `Authorization: Bearer <secret_key>`, or null when the subscription has none. */
  secret: string | null;
  /** The path the sandbox posted to (subscribe several topics to several paths of one receiver). */
  path: string;
  /** What the receiver answered. */
  status: number;
  received_at: Date;
}

/** A delivery the receiver got: of topic T (by default any topic, a union that narrows on `topic`). */
export type ReceivedWebhook<T extends Topic = Topic> = { [K in T]: Received<K> }[T];

/** Deliveries of one event (one idempotency_key), as the receiver got them. */
export interface KeyCount {
  idempotency_key: string;
  topic: string;
  /** How many deliveries carried the key (answered 2xx or not, unless `accepted` was asked). */
  count: number;
  /** Those deliveries, oldest first. */
  deliveries: ReceivedWebhook[];
}

export interface CountOptions {
  /** Only deliveries of this topic. */
  topic?: Topic;
  /** Only deliveries the receiver accepted (answered 2xx); default: every delivery received. */
  accepted?: boolean;
}

/** A delivery before the receiver has answered it (what a Responder function is given). */
export type PendingWebhook<T extends Topic = Topic> = { [K in T]: Omit<Received<K>, 'status'> }[T];

/** The status to answer (default 200), fixed or decided per delivery. */
export type Responder = number | ((delivery: PendingWebhook) => number | Promise<number>);

export interface WaitOptions<T extends Topic = Topic> {
  /** Real milliseconds to wait before rejecting (default 5000). */
  timeoutMs?: number;
  /** Only deliveries this accepts count. */
  where?: (delivery: ReceivedWebhook<T>) => boolean;
  /** Wait until this many matching deliveries have arrived (default 1). */
  count?: number;
}

export interface WebhookReceiver {
  /** Base URL, e.g. http://127.0.0.1:53211 (subscribe with `${url}/anything`). */
  url: string;
  port: number;
  /** Every delivery received, oldest first (including the ones answered with a failure status). */
  readonly deliveries: ReceivedWebhook[];
  /** Deliveries the receiver accepted (answered 2xx), oldest first; of one topic when given. */
  accepted<T extends Topic = Topic>(topic?: T): ReceivedWebhook<T>[];
  /** Change the answer for later deliveries. */
  respondWith(responder: Responder): void;
  /** Resolve with the accepted delivery of `topic` (already received or still to come; with `count`, the count-th). */
  waitFor<T extends Topic>(topic: T, options?: WaitOptions<T>): Promise<ReceivedWebhook<T>>;
  /** Resolve with `count` accepted deliveries of `topic`. */
  waitForCount<T extends Topic>(topic: T, count: number, options?: Omit<WaitOptions<T>, 'count'>): Promise<ReceivedWebhook<T>[]>;
  /** How many deliveries each idempotency_key had, in the order the keys first arrived (1 for an event received once). */
  countsByKey(options?: CountOptions): Map<string, number>;
  /** The keys delivered more than once, in the order they first arrived, each with its deliveries. */
  duplicates(options?: CountOptions): KeyCount[];
  clear(): void;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  port?: number;
  host?: string;
  respond?: Responder;
  /** Bodies larger than this are refused with 413 (default 1 MB). */
  maxBodyBytes?: number;
  /**
   * The subscription's secret_key: a delivery whose `Authorization: Bearer` is not exactly this is
   * answered 401 (recorded, the responder not called), as a receiver checking the secret does.
   * Absent: every delivery goes to the responder, whatever its bearer.
   */
  secret?: string;
}

interface Waiter {
  topic: string;
  count: number;
  where?: (d: ReceivedWebhook) => boolean;
  resolve: (found: ReceivedWebhook[]) => void;
}

/** Start a receiver on a free local port (plain http: run the sandbox with --allow-http-webhooks). */
export async function startWebhookReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const host = options.host ?? '127.0.0.1';
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  let responder: Responder = options.respond ?? 200;
  const deliveries: ReceivedWebhook[] = [];
  const waiters = new Set<Waiter>();

  const matching = (topic: string, where?: (d: ReceivedWebhook) => boolean) =>
    deliveries.filter((d) => d.status >= 200 && d.status < 300 && (!topic || d.topic === topic) && (!where || where(d)));

  const notify = () => {
    for (const waiter of waiters) {
      const found = matching(waiter.topic, waiter.where);
      if (found.length >= waiter.count) {
        waiters.delete(waiter);
        waiter.resolve(found.slice(0, waiter.count));
      }
    }
  };

  const server: Server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBody) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => {
      void (async () => {
        if (req.method !== 'POST') return void res.writeHead(405).end();
        if (tooLarge) return void res.writeHead(413).end();
        let body: ReceivedWebhook['body'];
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedWebhook['body'];
        } catch {
          return void res.writeHead(400).end('body is not JSON');
        }
        const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? null;
        // Typed as the document says the sandbox sends it; the fields read defensively all the same.
        const received = {
          topic: String(body?.topic ?? ''),
          entity_id: String(body?.entity_id ?? ''),
          idempotency_key: String(body?.idempotency_key ?? ''),
          timestamp: String(body?.timestamp ?? ''),
          data: body?.data ?? {},
          body,
          headers: req.headers,
          secret: bearer,
          path: req.url ?? '/',
          received_at: new Date(),
        } as PendingWebhook;
        let status = 500;
        try {
          if (options.secret !== undefined && bearer !== options.secret) status = 401;
          else status = typeof responder === 'number' ? responder : await responder(received);
        } catch {
          status = 500;
        }
        deliveries.push({ ...received, status });
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ received: status < 300 }));
        notify();
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const waitForCount = <T extends Topic>(topic: T, count: number, wait: Omit<WaitOptions<T>, 'count'> = {}) =>
    new Promise<ReceivedWebhook<T>[]>((resolve, reject) => {
      const timeoutMs = wait.timeoutMs ?? 5000;
      // The waiter matches on `topic`, so what it resolves with is of T.
      const waiter: Waiter = {
        topic,
        count,
        where: wait.where as Waiter['where'],
        resolve: (found) => { clearTimeout(timer); resolve(found as ReceivedWebhook<T>[]); },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        const seen = deliveries.map((d) => `${d.topic}(${d.status})`).join(', ') || 'none';
        reject(new Error(`no ${count > 1 ? `${count} deliveries` : 'delivery'} of ${topic} within ${timeoutMs} ms; received: ${seen}`));
      }, timeoutMs);
      waiters.add(waiter);
      notify();
    });

  /** Every delivery the options keep, grouped by key in the order the keys first arrived. */
  const byKey = (count: CountOptions = {}): KeyCount[] => {
    const groups = new Map<string, KeyCount>();
    for (const d of deliveries) {
      if (count.topic !== undefined && d.topic !== count.topic) continue;
      if (count.accepted && !(d.status >= 200 && d.status < 300)) continue;
      let group = groups.get(d.idempotency_key);
      if (!group) groups.set(d.idempotency_key, (group = { idempotency_key: d.idempotency_key, topic: d.topic, count: 0, deliveries: [] }));
      group.count += 1;
      group.deliveries.push(d);
    }
    return [...groups.values()];
  };

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    deliveries,
    accepted: <T extends Topic>(topic?: T) => matching(topic ?? '') as ReceivedWebhook<T>[],
    respondWith: (next) => { responder = next; },
    waitFor: async <T extends Topic>(topic: T, wait: WaitOptions<T> = {}) => (await waitForCount(topic, wait.count ?? 1, wait)).at(-1)!,
    waitForCount,
    countsByKey: (count) => new Map(byKey(count).map((group) => [group.idempotency_key, group.count])),
    duplicates: (count) => byKey(count).filter((group) => group.count > 1),
    clear: () => { deliveries.length = 0; },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
