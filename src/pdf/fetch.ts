// Owns the one-time fetch of a PDF url upload: HTTPS only, public addresses only (every redirect
// hop resolved and checked again), the checked address pinned for the connection (TLS still verifies
// the hostname), a redirect limit, an overall time-out, non-2xx refused, a streamed 10 MB cap and
// the PDF header check. --allow-private-urls relaxes only the address rule. node:https (https()),
// node:tls and node:dns (process.getBuiltinModule) are loaded by the first fetch, not by every start.
import { https } from '../node-http.js';
import type { IncomingMessage } from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import { ApiError, Errors, invalidFields } from '../errors.js';
import { looksNumeric, refusalOf } from './address-policy.js';
import { LIMITS } from '../limits.js';
import { howToSet } from '../settings.js';

export const PDF_MAX_BYTES = LIMITS.pdfBytes;
/** Sandbox choices (the spec says limits exist without values): 5 redirects, 10 s for the whole fetch. */
export const PDF_MAX_REDIRECTS = LIMITS.pdfRedirects;
export const PDF_FETCH_TIMEOUT_MS = LIMITS.pdfFetchTimeoutMs;

/**
 * Programmatic-only options (tests): `deps.services.set(PDF_FETCH_SERVICE, {ca})` trusts an extra CA,
 * e.g. a local test server's self-signed certificate. Not reachable from flags or the API.
 */
export const PDF_FETCH_SERVICE = 'pdf.fetchOptions';

export interface FetchOptions {
  allowPrivate: boolean;
  ca?: string | Buffer;
  maxBytes?: number;
  maxRedirects?: number;
  timeoutMs?: number;
  /** Name resolution (tests may replace it); defaults to the system resolver. */
  resolve?: (hostname: string) => Promise<Array<{ address: string; family: number }>>;
  /** The address rule (tests may narrow or widen it); defaults to public unicast only. */
  policy?: (address: string) => string | null;
}

const refuse = (why: string) => invalidFields({ url: why }, `The PDF url was refused: ${why}.`);

export function tooLarge(): ApiError {
  return new ApiError(Errors.payloadTooLarge, { message: 'The PDF is larger than 10 MB.', validation_errors: { url: 'the PDF is larger than 10 MB' } });
}

export async function fetchPdf(rawUrl: string, options: FetchOptions): Promise<Buffer> {
  const deadline = Date.now() + (options.timeoutMs ?? PDF_FETCH_TIMEOUT_MS);
  const maxRedirects = options.maxRedirects ?? PDF_MAX_REDIRECTS;
  let url = parse(rawUrl);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'https:') throw refuse(hop === 0 ? 'must be an absolute HTTPS link' : `redirects to a non-HTTPS location (${url.protocol}//${url.host})`);
    const address = await checkedAddress(url, options, deadline);
    const response = await request(url, address, options, deadline);
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && response.headers.location) {
      response.resume();
      if (hop + 1 > maxRedirects) throw refuse(`more than ${maxRedirects} redirects`);
      url = parse(response.headers.location, url);
      continue;
    }
    if (status < 200 || status >= 300) {
      response.resume();
      throw refuse(`the server answered HTTP ${status}`);
    }
    const body = await readCapped(response, options.maxBytes ?? PDF_MAX_BYTES, deadline);
    if (!isPdf(body)) throw refuse('the response is not a PDF (it does not begin with %PDF-)');
    return body;
  }
}

export function isPdf(bytes: Buffer): boolean {
  return bytes.subarray(0, 5).toString('latin1') === '%PDF-';
}

function parse(value: string, base?: URL): URL {
  try {
    return new URL(value, base);
  } catch {
    throw refuse(base ? 'redirects to an invalid location' : 'must be an absolute HTTPS link');
  }
}

/** Resolve the host (within the fetch's deadline) and check every address it has; answer the one to connect to. */
async function checkedAddress(url: URL, options: FetchOptions, deadline: number): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else if (looksNumeric(host)) {
    throw refuse(`the host ${host} is a numeric form of an address`);
  } else {
    const resolve = options.resolve ?? ((h: string) => process.getBuiltinModule('node:dns/promises').lookup(h, { all: true, verbatim: true }));
    try {
      addresses = await beforeDeadline(resolve(host), deadline);
    } catch (error) {
      if (error instanceof TimeoutError) throw timedOut();
      throw refuse(`the host ${host} could not be resolved`);
    }
    if (!addresses.length) throw refuse(`the host ${host} could not be resolved`);
  }
  if (!options.allowPrivate) {
    for (const { address } of addresses) {
      const why = (options.policy ?? refusalOf)(address);
      if (why) {
        const reason = `the host resolves to a non-public address (${address} ${why})`;
        throw invalidFields({ url: reason }, `The PDF url was refused: ${reason}. A sandbox fetches from loopback and private hosts only when started with ${howToSet('allowPrivateUrls', true)}.`);
      }
    }
  }
  return addresses[0];
}

function request(url: URL, pinned: { address: string; family: number }, options: FetchOptions, deadline: number): Promise<IncomingMessage> {
  // The connection goes to the address checked above, never to a second resolution of the name.
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    // With `all`, the caller wants a list of addresses; @types/node types only the one-address callback.
    if ((lookupOptions as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const req = https().request({
      protocol: 'https:',
      hostname: host,
      port: url.port || 443,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { accept: 'application/pdf', 'user-agent': 'billing-sandbox-pdf-fetch' },
      servername: isIP(host) ? undefined : host,
      lookup,
      // An extra CA is added to, not substituted for, the usual roots.
      ca: options.ca ? [...process.getBuiltinModule('node:tls').rootCertificates, options.ca] : undefined,
      agent: false,
    }, resolve);
    const timer = setTimeout(() => req.destroy(new TimeoutError()), Math.max(0, deadline - Date.now()));
    req.on('response', (res) => res.on('close', () => clearTimeout(timer)));
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error instanceof TimeoutError ? timedOut() : refuse(`the link could not be fetched (${(error as NodeJS.ErrnoException).code ?? error.message})`));
    });
    req.end();
  });
}

class TimeoutError extends Error {}

/** One time-out answer for every step of the fetch: name resolution, connection and download. */
const timedOut = () => refuse(`the fetch timed out after ${PDF_FETCH_TIMEOUT_MS / 1000} s`);

/**
 * The work's result, or a TimeoutError once the deadline passes. A system lookup cannot be cancelled,
 * so a late answer is ignored; a slow resolver must not stretch the whole fetch past its time-out.
 */
function beforeDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TimeoutError()), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

function readCapped(response: IncomingMessage, maxBytes: number, deadline: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      response.destroy();
      reject(timedOut());
    }, Math.max(0, deadline - Date.now()));
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        clearTimeout(timer);
        response.destroy();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    response.on('error', (error) => {
      clearTimeout(timer);
      reject(refuse(`the download failed (${error.message})`));
    });
  });
}
