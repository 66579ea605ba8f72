// Owns the recording proxy of `billing-sandbox record`: an HTTP server that forwards every request
// to the target base URL as it came (method, path, query, headers, body; only the headers of one
// connection are dropped, and answers are asked for unencoded so bodies stay text) and streams the
// answer back, while it keeps a copy of both (at most LIMITS.recordBodyBytes each), masks their
// secrets (mask.ts) and appends the exchange to the HAR file (har.ts) when it ends. Closing stops
// taking requests, lets those under way finish (a bounded wait) and finishes the file.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { http, https } from '../node-http.js';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { LIMITS } from '../limits.js';
import { HarWriter, type HarEntry, type HarPair } from './har.js';
import { maskHeader, maskJsonText, maskParams, SecretLabels } from './mask.js';

export interface RecorderOptions {
  /** The base URL every request is forwarded to; a path in it is kept (`https://host/v1` + `/customers`). */
  target: string;
  /** The recording file (HAR 1.2). */
  out: string;
  /** Replace an existing file (else opening one that exists fails). */
  overwrite?: boolean;
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1: the proxy carries a partner's credentials, so it listens on this machine only unless told. */
  host?: string;
  /** Told of each exchange once it is in the file. */
  onExchange?: (exchange: RecordedLine) => void;
  /** How long close() lets requests under way finish before it cuts them (ms). */
  graceMs?: number;
  /** Exchanges written at most (default LIMITS.recordExchanges); later ones are forwarded, not written. */
  maxExchanges?: number;
  /** Told once, when the first exchange past maxExchanges is not written. */
  onFull?: (max: number) => void;
}

/** One exchange as the terminal shows it. */
export interface RecordedLine {
  index: number;
  method: string;
  /** Path and query as the client sent them, secrets masked. */
  path: string;
  /** 0: no answer (see error). */
  status: number;
  ms: number;
  error?: string;
  /** Forwarded but not written: the recording held maxExchanges already. */
  notRecorded?: true;
}

export interface RunningRecorder {
  /** The proxy's base URL: point the client here instead of at the target. */
  url: string;
  port: number;
  /** Exchanges written so far. */
  readonly count: number;
  /** Exchanges forwarded but not written (past maxExchanges). */
  readonly notRecorded: number;
  /** Stop taking requests, let those under way finish (up to graceMs), finish the file. Safe to call twice. */
  close(): Promise<void>;
  /** Cut every connection and finish the file at once (a second Ctrl-C). */
  abort(): void;
}

/** Headers of one connection (RFC 9110 section 7.6.1), never forwarded either way. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

/** Media types kept as text in the file; anything else (a PDF, an image) is kept as base64. */
const TEXT_TYPE = /^(text\/|application\/([\w.+-]*\+)?(json|xml|x-www-form-urlencoded|javascript|yaml|x-yaml|problem\+json)\b)/i;

/** Collects a body's first `max` bytes while it streams through; counts the rest. */
class BodyTap {
  private readonly chunks: Buffer[] = [];
  kept = 0;
  size = 0;
  cut = false;

  constructor(private readonly max: number) {}

  add(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.cut) return;
    if (this.kept + chunk.length > this.max) {
      this.cut = true;
      this.chunks.length = 0;
      this.kept = 0;
      return;
    }
    this.chunks.push(chunk);
    this.kept += chunk.length;
  }

  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function pairs(raw: string[]): HarPair[] {
  const out: HarPair[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push({ name: raw[i], value: raw[i + 1] });
  return out;
}

function forwardedHeaders(headers: IncomingHttpHeaders, connectionNamed: string | undefined): OutgoingHttpHeaders {
  // Headers the Connection header names belong to that connection too.
  const named = new Set((connectionNamed ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean));
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  // Unencoded answers: the file keeps bodies as text, and the client gets what it would have (it did not ask for an encoding it cannot read).
  out['accept-encoding'] = 'identity';
  return out;
}

function contentType(headers: HarPair[]): string {
  return headers.find((h) => h.name.toLowerCase() === 'content-type')?.value ?? '';
}

/** A body as kept: masked text for text types, base64 for the rest; an encoded answer decoded first. */
function keptBody(tap: BodyTap, mimeType: string, labels: SecretLabels, encoding?: string): { text?: string; encoding?: 'base64'; comment?: string } {
  if (tap.cut) return { comment: `${tap.size} bytes, more than the ${LIMITS.recordBodyBytes} a recording keeps of a body: not kept` };
  let bytes = tap.bytes;
  if (encoding && encoding !== 'identity') {
    try {
      bytes = encoding === 'gzip' ? gunzipSync(bytes) : encoding === 'deflate' ? inflateSync(bytes) : encoding === 'br' ? brotliDecompressSync(bytes) : bytes;
    } catch {
      return { text: bytes.toString('base64'), encoding: 'base64', comment: `content-encoding ${encoding} could not be decoded: kept as sent` };
    }
  }
  if (!bytes.length) return { text: '' };
  if (mimeType && !TEXT_TYPE.test(mimeType)) return { text: bytes.toString('base64'), encoding: 'base64' };
  const text = bytes.toString('utf8');
  if (/json/i.test(mimeType) || (!mimeType && /^\s*[[{]/.test(text))) return { text: maskJsonText(text, labels) };
  if (/x-www-form-urlencoded/i.test(mimeType)) return { text: maskParams(text, labels) };
  return { text: labels.scrub(text) };
}

/** The request URL with its secret query values masked, and its query string as HAR pairs. */
function maskedUrl(target: URL, path: string, labels: SecretLabels): { url: string; path: string; query: HarPair[] } {
  const mark = path.indexOf('?');
  const pathname = labels.scrub(mark < 0 ? path : path.slice(0, mark));
  const search = mark < 0 ? '' : maskParams(path.slice(mark + 1), labels);
  const shown = `${pathname}${search ? `?${search}` : ''}`;
  const query = [...new URLSearchParams(search)].map(([name, value]) => ({ name, value }));
  return { url: `${target.origin}${target.pathname.replace(/\/+$/, '')}${shown}`, path: shown, query };
}

export async function startRecorder(options: RecorderOptions): Promise<RunningRecorder> {
  const target = new URL(options.target);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`--target must be an http or https URL, got ${options.target}`);
  const base = `${target.origin}${target.pathname.replace(/\/+$/, '')}`;
  const writer = new HarWriter(options.out, base, options.overwrite);
  const labels = new SecretLabels();
  const secure = target.protocol === 'https:';
  const send = secure ? https().request : http.request;
  const agent = secure ? new (https().Agent)({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const underWay = new Set<Promise<void>>();
  const sockets = new Set<Socket>();
  const maxExchanges = options.maxExchanges ?? LIMITS.recordExchanges;
  let notRecorded = 0;
  let closing: Promise<void> | undefined;

  const server: Server = http.createServer((req, res) => {
    const done = exchange(req, res).catch(() => undefined);
    underWay.add(done);
    void done.finally(() => underWay.delete(done));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  function exchange(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return new Promise<void>((resolve) => {
      const startedAt = new Date();
      const t0 = performance.now();
      let sentAt = t0;
      let answeredAt = t0;
      const requestTap = new BodyTap(LIMITS.recordBodyBytes);
      const responseTap = new BodyTap(LIMITS.recordBodyBytes);
      let upstreamRes: IncomingMessage | undefined;
      let settled = false;

      const finish = (error?: string) => {
        if (settled) return;
        settled = true;
        const end = performance.now();
        try {
          record(error, end);
        } finally {
          resolve();
        }
      };

      const record = (error: string | undefined, end: number) => {
        // A full recording: the partner's client still gets its answers, the file grows no more.
        if (writer.count >= maxExchanges) {
          notRecorded += 1;
          if (notRecorded === 1) options.onFull?.(maxExchanges);
          options.onExchange?.({ index: writer.count + notRecorded, method: req.method ?? 'GET', path: labels.scrub(maskedUrl(target, req.url ?? '/', labels).path), status: upstreamRes?.statusCode ?? 0, ms: end - t0, error, notRecorded: true });
          return;
        }
        const requestHeaders = pairs(req.rawHeaders).map(({ name, value }) => ({ name, value: maskHeader(name, value, labels) }));
        const requestType = contentType(requestHeaders);
        const { url, path, query } = maskedUrl(target, req.url ?? '/', labels);
        const hasBody = requestTap.size > 0 || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
        const requestBody = hasBody ? keptBody(requestTap, requestType, labels) : undefined;
        const responseHeaders = upstreamRes ? pairs(upstreamRes.rawHeaders).map(({ name, value }) => ({ name, value: maskHeader(name, value, labels) })) : [];
        const responseType = contentType(responseHeaders);
        const answer = upstreamRes ? keptBody(responseTap, responseType, labels, String(upstreamRes.headers['content-encoding'] ?? '').toLowerCase() || undefined) : {};
        const entry: HarEntry = {
          startedDateTime: startedAt.toISOString(),
          time: round(end - t0),
          request: {
            method: req.method ?? 'GET',
            url,
            httpVersion: `HTTP/${req.httpVersion}`,
            cookies: [],
            headers: requestHeaders,
            queryString: query,
            ...(requestBody ? { postData: { mimeType: requestType, text: requestBody.text ?? '', ...(requestBody.comment ? { comment: requestBody.comment } : {}) } } : {}),
            headersSize: -1,
            bodySize: requestTap.size,
          },
          response: {
            status: upstreamRes?.statusCode ?? 0,
            statusText: upstreamRes?.statusMessage ?? '',
            httpVersion: upstreamRes ? `HTTP/${upstreamRes.httpVersion}` : '',
            cookies: [],
            headers: responseHeaders,
            content: { size: responseTap.size, mimeType: responseType, ...answer },
            redirectURL: upstreamRes?.headers.location ? labels.scrub(String(upstreamRes.headers.location)) : '',
            headersSize: -1,
            bodySize: responseTap.size,
            ...(error ? { _error: error } : {}),
          },
          cache: {},
          timings: { blocked: -1, dns: -1, connect: -1, send: round(sentAt - t0), wait: round(answeredAt - sentAt), receive: round(end - answeredAt), ssl: -1 },
          ...(requestTap.cut || responseTap.cut ? { _cut: { ...(requestTap.cut ? { request: true } : {}), ...(responseTap.cut ? { response: true } : {}) } } : {}),
        };
        writer.add(entry);
        options.onExchange?.({ index: writer.count, method: entry.request.method, path, status: entry.response.status, ms: entry.time, error });
      };

      let upstream: ReturnType<typeof send>;
      try {
        upstream = send(`${base}${req.url ?? '/'}`, { method: req.method, headers: forwardedHeaders(req.headers, req.headers.connection), agent });
      } catch (error) {
        // A request node cannot send on (a header value it refuses): answered here, and recorded.
        answerProblem(res, 400, 'bad_request', `billing-sandbox record could not forward this request: ${(error as Error).message}`);
        req.resume();
        finish(`not forwarded: ${(error as Error).message}`);
        return;
      }
      req.on('data', (chunk: Buffer) => requestTap.add(chunk));
      req.on('end', () => { sentAt = performance.now(); });
      req.on('error', () => upstream.destroy());
      req.pipe(upstream);
      upstream.on('response', (answer) => {
        upstreamRes = answer;
        answeredAt = performance.now();
        const headers: OutgoingHttpHeaders = {};
        const named = new Set(String(answer.headers.connection ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean));
        for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
          const name = answer.rawHeaders[i];
          const lower = name.toLowerCase();
          if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
          const prior = headers[name];
          headers[name] = prior === undefined ? answer.rawHeaders[i + 1] : [...(Array.isArray(prior) ? prior : [String(prior)]), answer.rawHeaders[i + 1]];
        }
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
        answer.on('data', (chunk: Buffer) => responseTap.add(chunk));
        answer.pipe(res);
        answer.on('end', () => finish());
        answer.on('error', (error) => {
          res.destroy();
          finish(`the answer broke off: ${error.message}`);
        });
      });
      upstream.on('error', (error: NodeJS.ErrnoException) => {
        const why = `the target gave no answer: ${error.code ?? error.message}`;
        if (!res.headersSent) answerProblem(res, 502, 'bad_gateway', `billing-sandbox record could not reach ${base} (${error.code ?? error.message}).`);
        else res.destroy();
        finish(upstreamRes ? `the answer broke off: ${error.code ?? error.message}` : why);
      });
      // The client went away before its answer was whole: the target's answer is dropped too.
      res.on('close', () => {
        if (!res.writableFinished) {
          upstream.destroy();
          finish(upstreamRes ? 'the client closed the connection before the answer ended' : 'the client closed the connection before an answer came');
        }
      });
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    writer.finish();
    throw error;
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  const abort = () => {
    for (const socket of sockets) socket.destroy();
    agent.destroy();
    server.close();
    writer.finish();
  };

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    get count() {
      return writer.count;
    },
    get notRecorded() {
      return notRecorded;
    },
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const grace = new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, options.graceMs ?? 10_000);
          timer.unref();
        });
        await Promise.race([Promise.all([...underWay]), grace]);
        for (const socket of sockets) socket.destroy();
        await stopped;
        agent.destroy();
        writer.finish();
      })();
      return closing;
    },
    abort,
  };
}

function round(ms: number): number {
  return Math.max(0, Math.round(ms * 1000) / 1000);
}

/** The proxy's own refusal, shaped like the API's errors (HttpError). */
function answerProblem(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ code, message, validation_errors: {} });
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Whether something accepts connections at the target's host and port now (a TCP connect, no HTTP
 * request, so the real service sees nothing); undefined when it does, else the reason (ECONNREFUSED,
 * ENOTFOUND, a time-out). `record` only warns: the target may come up later.
 */
export function probeTarget(target: string, timeoutMs = 3000): Promise<string | undefined> {
  const url = new URL(target);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (reason?: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => done(`no connection within ${timeoutMs / 1000} s`), timeoutMs);
    timer.unref();
    socket.once('connect', () => done());
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
}
