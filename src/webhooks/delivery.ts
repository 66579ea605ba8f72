// Owns one HTTP delivery attempt to a receiver: a JSON POST with the subscription's secret as a bearer
// token, a hard time-out over the whole exchange, no redirects, and at most a small capped read.
// The connection comes from the receiver's keep-alive pool when one is given (src/webhooks/connections.ts).
import type { ClientRequest, ClientRequestArgs, IncomingMessage } from 'node:http';
import { urlToHttpOptions } from 'node:url';
import { http, https } from '../node-http.js';
import { VERSION } from '../config.js';
import { LIMITS } from '../limits.js';
import type { ReceiverConnections } from './connections.js';

export interface AttemptOutcome {
  /** True for a 2xx answer. */
  ok: boolean;
  /** The receiver's status code; null when no answer came. */
  status_code: number | null;
  /** Why the attempt failed (status, redirect, connection error, time-out); null when delivered. */
  error: string | null;
  duration_ms: number;
}

export interface SendOptions {
  /** Time-out over connect, request and response headers, in real milliseconds. */
  timeoutMs: number;
  /** At most this many bytes of the receiver's answer are read; the rest is discarded unread. */
  maxResponseBytes: number;
  /**
   * Attempts under way, each as its interrupt (used when the sandbox shuts down): an attempt adds
   * itself while it runs. A plain set rather than an AbortSignal per attempt, whose event listeners
   * cost more than the rest of the attempt's own bookkeeping.
   */
  underWay?: Set<() => void>;
  /** Headers this attempt adds (an evolution drill's Sandbox-Drill). */
  headers?: Record<string, string>;
  /** Keep-alive pools per receiver; absent: a fresh connection per attempt. */
  connections?: ReceiverConnections;
}

export const DEFAULT_SEND_OPTIONS: SendOptions = { timeoutMs: 10_000, maxResponseBytes: 4096 };

/** Where an endpoint url sends, parsed once: node's request options for it (host, port, path, credentials). */
interface Target {
  https: boolean;
  origin: string;
  request: ClientRequestArgs;
}

/** Endpoint urls parsed, newest last; at most LIMITS.webhookParsedUrls (a url is cheap to parse again). */
const targets = new Map<string, Target | null>();

/** The url's target, or null when it is not a valid url. */
function targetOf(url: string): Target | null {
  let target = targets.get(url);
  if (target === undefined) {
    try {
      const parsed = new URL(url);
      // The options node itself makes of a URL (an IPv6 host without brackets, credentials as Basic),
      // made once instead of at every attempt.
      target = { https: parsed.protocol === 'https:', origin: parsed.origin, request: urlToHttpOptions(parsed) };
    } catch {
      target = null;
    }
    if (targets.size >= LIMITS.webhookParsedUrls) targets.delete(targets.keys().next().value as string);
    targets.set(url, target);
  }
  return target;
}

/** Send one delivery; never throws, never waits longer than the time-out. */
export function sendDelivery(url: string, body: string, secretKey: string | null, options: SendOptions, now: () => number = Date.now): Promise<AttemptOutcome> {
  const started = now();
  const elapsed = () => Math.max(0, now() - started);
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<AttemptOutcome, 'duration_ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.underWay?.delete(interrupt);
      resolve({ ...outcome, duration_ms: elapsed() });
    };
    const target = targetOf(url);
    if (!target) {
      resolve({ ok: false, status_code: null, error: 'invalid endpoint_url', duration_ms: 0 });
      return;
    }
    const headers: Record<string, string | number> = {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      'User-Agent': `billing-sandbox-webhooks/${VERSION}`,
    };
    if (secretKey) headers.Authorization = `Bearer ${secretKey}`;
    if (options.headers) Object.assign(headers, options.headers);
    const client = target.https ? https() : http;
    let req: ClientRequest | undefined;
    const timer = setTimeout(() => {
      finish({ ok: false, status_code: null, error: `timed out after ${options.timeoutMs} ms` });
      req?.destroy();
    }, options.timeoutMs);
    timer.unref?.();
    const interrupt = () => {
      finish({ ok: false, status_code: null, error: 'interrupted: the sandbox stopped during this attempt' });
      req?.destroy();
    };
    options.underWay?.add(interrupt);
    const send = (firstTry: boolean): void => {
      try {
        req = client.request({ ...target.request, method: 'POST', headers, agent: options.connections?.agentFor(target.origin, target.https) ?? false });
      } catch (error) {
        // Node refuses some requests before sending anything (a header with a character it cannot
        // carry, say, from a secret stored by an older version): a failed attempt like any other.
        finish({ ok: false, status_code: null, error: `request not sent: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
        return;
      }
      listen(req, firstTry);
      req.end(body);
    };
    const listen = (req: ClientRequest, firstTry: boolean): void => {
      let answered = false;
      req.on('response', (res) => {
        answered = true;
        onResponse(req, res);
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection the receiver closed while idle fails as the request goes out on it:
        // not the receiver's answer, so the same attempt goes again once, on a new connection.
        if (firstTry && !answered && req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE') && !settled) return send(false);
        finish({ ok: false, status_code: null, error: `connection error: ${error.code ?? error.message}` });
      });
    };
    const onResponse = (req: ClientRequest, res: IncomingMessage): void => {
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      const redirect = status >= 300 && status < 400;
      // The status decides the attempt; the body is only drained up to the cap, then the socket closes,
      // so a receiver that streams a huge or endless answer neither fills memory nor holds the queue.
      finish({
        ok,
        status_code: status,
        error: ok ? null : redirect ? `receiver answered ${status}; redirects are not followed` : `receiver answered ${status}`,
      });
      // A complete answer read to its end frees the connection for the pool; without a pool it closes.
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= options.maxResponseBytes) res.destroy();
      });
      res.on('error', () => undefined);
      if (!options.connections) res.on('end', () => req.destroy());
      const drainTimer = setTimeout(() => res.destroy(), options.timeoutMs);
      drainTimer.unref?.();
      res.on('close', () => clearTimeout(drainTimer));
    };
    send(true);
  });
}
