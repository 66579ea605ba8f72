// PDF upload rules 1-7 and signed PDF links: the address table the fetcher refuses, a real HTTPS
// fetch from a local server (self-signed certificate made with openssl), size caps, redirects,
// time-outs, last write wins, and the rendered PDF behind an expiring signed link.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFParse } from 'pdf-parse';
import { PDF_FETCH_SERVICE, type FetchOptions } from '../src/pdf/fetch.js';
import { refusalOf } from '../src/pdf/address-policy.js';
import { setup, type Api, type TestSandbox } from './helpers.js';
import { customer, invoice, syncedInvoice } from './receivables-helpers.js';

const pdf = (text: string) => Buffer.from(`%PDF-1.4\n% ${text}\n%%EOF\n`);
const MB = 1024 * 1024;

let dir: string;
let server: Server;
let base: string;
let ca: Buffer;
const hasOpenssl = (() => { try { execFileSync('openssl', ['version']); return true; } catch { return false; } })();

beforeAll(async () => {
  if (!hasOpenssl) return;
  dir = mkdtempSync(join(tmpdir(), 'pdf-test-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,DNS:pdf.test,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  ca = readFileSync(join(dir, 'cert.pem'));
  server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca }, (req, res) => {
    const path = req.url ?? '/';
    if (path === '/ok.pdf') return void res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf('from url'));
    if (path === '/second.pdf') return void res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf('second upload'));
    if (path === '/redirect') return void res.writeHead(302, { location: '/ok.pdf' }).end();
    if (path === '/redirect-http') return void res.writeHead(301, { location: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ok.pdf` }).end();
    if (path === '/redirect-private') return void res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data' }).end();
    // A hop to wherever the query says (the SSRF table's redirect forms), after one harmless hop.
    if (path.startsWith('/hop?')) return void res.writeHead(302, { location: `/to?${path.slice(5)}` }).end();
    if (path.startsWith('/to?')) return void res.writeHead(307, { location: decodeURIComponent(new URLSearchParams(path.slice(4)).get('url') ?? '') }).end();
    if (path.startsWith('/loop')) return void res.writeHead(302, { location: `/loop${path.length}` }).end();
    if (path === '/html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not a pdf</html>');
    if (path === '/slow') return; // never answers
    if (path === '/big-declared') return void res.writeHead(200, { 'content-length': String(11 * MB) }).end();
    if (path === '/big-streamed') {
      // Chunked, no content-length: the cap must apply while streaming.
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.write(pdf('big'));
      const chunk = Buffer.alloc(MB, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 12) {
          sent += 1;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => undefined);
      return pump();
    }
    res.writeHead(404).end('missing');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let sb: TestSandbox;
let api: Api;
let token: string;
let cus: string;

async function start(config: { allowPrivateUrls?: boolean } = {}, fetchOptions: Partial<FetchOptions> = {}) {
  sb = await setup(config);
  if (ca) sb.deps.services.set(PDF_FETCH_SERVICE, { ca, ...fetchOptions });
  token = await sb.token();
  api = sb.as(token);
  cus = await customer(api);
}

async function text(bytes: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

/** Follow a pdf-link: the signed URL's path and query against the app. */
async function download(url: string) {
  const u = new URL(url);
  return sb.http.get(`${u.pathname}${u.search}`).buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });
}

describe('the address rule', () => {
  beforeEach(() => start());

  // Every form here must be refused before any connection is made.
  const REFUSED: Array<[string, string]> = [
    ['loopback', 'https://127.0.0.1/a.pdf'],
    ['loopback elsewhere in 127/8', 'https://127.9.8.7/a.pdf'],
    ['decimal IPv4', 'https://2130706433/a.pdf'],
    ['hex IPv4', 'https://0x7f000001/a.pdf'],
    ['octal IPv4', 'https://017700000001/a.pdf'],
    ['dotted octal IPv4', 'https://0177.0.0.1/a.pdf'],
    ['short IPv4', 'https://127.1/a.pdf'],
    ['private 10/8', 'https://10.0.0.1/a.pdf'],
    ['private 172.16/12', 'https://172.16.5.4/a.pdf'],
    ['private 192.168/16', 'https://192.168.1.1/a.pdf'],
    ['link-local (cloud metadata)', 'https://169.254.169.254/latest'],
    ['shared CGNAT 100.64/10', 'https://100.64.0.1/a.pdf'],
    ['unspecified', 'https://0.0.0.0/a.pdf'],
    ['unspecified as 0', 'https://0/a.pdf'],
    ['multicast', 'https://224.0.0.1/a.pdf'],
    ['broadcast', 'https://255.255.255.255/a.pdf'],
    ['reserved documentation range', 'https://192.0.2.10/a.pdf'],
    ['benchmarking range', 'https://198.18.0.1/a.pdf'],
    ['IPv6 loopback', 'https://[::1]/a.pdf'],
    ['IPv6 unspecified', 'https://[::]/a.pdf'],
    ['IPv6 link-local', 'https://[fe80::1]/a.pdf'],
    ['IPv6 unique-local', 'https://[fd12:3456::1]/a.pdf'],
    ['IPv6 multicast', 'https://[ff02::1]/a.pdf'],
    ['IPv4-mapped IPv6', 'https://[::ffff:127.0.0.1]/a.pdf'],
    ['IPv4-mapped IPv6 in hex', 'https://[::ffff:a00:1]/a.pdf'],
    ['IPv4-compatible IPv6', 'https://[::127.0.0.1]/a.pdf'],
    ['NAT64', 'https://[64:ff9b::7f00:1]/a.pdf'],
    ['6to4', 'https://[2002:7f00:1::1]/a.pdf'],
    ['Teredo', 'https://[2001:0:4136:e378::1]/a.pdf'],
    ['a name resolving to loopback', 'https://localhost/a.pdf'],
    ['loopback with a trailing dot', 'https://127.0.0.1./a.pdf'],
    ['loopback with zero-padded octets', 'https://127.000.000.001/a.pdf'],
    ['loopback with one octal octet', 'https://127.0.0.01/a.pdf'],
    ['hex first octet', 'https://0x7f.0.0.1/a.pdf'],
    ['hex and short', 'https://0x7f.1/a.pdf'],
    ['decimal with a trailing dot', 'https://2130706433./a.pdf'],
    ['dotted octal private 192.168', 'https://0300.0250.0.1/a.pdf'],
    ['decimal private 192.168', 'https://3232235777/a.pdf'],
    ['hex private 192.168', 'https://0xc0a80101/a.pdf'],
    ['end of private 172.16/12', 'https://172.31.255.255/a.pdf'],
    ['end of CGNAT 100.64/10', 'https://100.127.255.254/a.pdf'],
    ['this network 0/8', 'https://0.1.2.3/a.pdf'],
    ['link-local start', 'https://169.254.0.1/a.pdf'],
    ['reserved 240/4', 'https://240.0.0.1/a.pdf'],
    ['IETF protocol assignments 192.0.0/24', 'https://192.0.0.1/a.pdf'],
    ['6to4 relay anycast', 'https://192.88.99.1/a.pdf'],
    ['documentation 198.51.100/24', 'https://198.51.100.1/a.pdf'],
    ['documentation 203.0.113/24', 'https://203.0.113.1/a.pdf'],
    ['multicast SSDP', 'https://239.255.255.250/a.pdf'],
    ['userinfo before a private address', 'https://user:pass@10.0.0.1/a.pdf'],
    ['a public-looking name as userinfo', 'https://files.example@127.0.0.1/a.pdf'],
    ['IPv4-mapped written in full', 'https://[0:0:0:0:0:ffff:127.0.0.1]/a.pdf'],
    ['IPv4-mapped metadata address', 'https://[::ffff:169.254.169.254]/a.pdf'],
    ['IPv4-translated (SIIT)', 'https://[::ffff:0:127.0.0.1]/a.pdf'],
    ['IPv6 loopback zero-padded', 'https://[0000::1]/a.pdf'],
    ['NAT64 of the metadata address', 'https://[64:ff9b::a9fe:a9fe]/a.pdf'],
    ['NAT64 with a dotted tail', 'https://[64:ff9b::10.0.0.1]/a.pdf'],
    ['local-use NAT64 64:ff9b:1::/48', 'https://[64:ff9b:1::a00:1]/a.pdf'],
    ['IPv6 site-local (deprecated)', 'https://[fec0::1]/a.pdf'],
    ['IPv6 discard prefix', 'https://[100::1]/a.pdf'],
    ['IPv6 documentation', 'https://[2001:db8::1]/a.pdf'],
    ['IPv6 ORCHID', 'https://[2001:10::1]/a.pdf'],
    ['IPv6 site multicast', 'https://[ff05::1:3]/a.pdf'],
  ];

  it.each(REFUSED)('refuses %s (%s) with 400 and keeps no PDF', async (_what, url) => {
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
    expect(res.body.validation_errors.url).toMatch(/non-public address|numeric form/);
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
  });

  it('accepts public unicast addresses in the rule itself', () => {
    expect(refusalOf('93.184.216.34')).toBeNull();
    expect(refusalOf('2606:4700:4700::1111')).toBeNull();
  });

  it.each([
    ['plain http', 'http://files.example/a.pdf', 'HTTPS'],
    ['ftp', 'ftp://files.example/a.pdf', 'HTTPS'],
    ['a relative link', '/a.pdf', 'url'],
  ])('refuses %s with 400', async (_what, url, words) => {
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain(words);
  });

  it('times out a resolver that never answers within the fetch deadline, with the fetch time-out error (time-out shortened)', async () => {
    let asked = 0;
    sb.deps.services.set(PDF_FETCH_SERVICE, { timeoutMs: 50, resolve: () => { asked += 1; return new Promise(() => undefined); } });
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url: 'https://slow-dns.partner.test/a.pdf' });
    expect(asked).toBe(1);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.url).toBe('the fetch timed out after 10 s');
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
  });

  // Names that resolve (through a stubbed resolver: no real lookup) to addresses that are not public.
  const RESOLVES_TO: Record<string, string[]> = {
    'internal.partner.test': ['10.0.0.5'],
    'metadata.partner.test': ['169.254.169.254'],
    'loopback6.partner.test': ['::1'],
    'mapped.partner.test': ['::ffff:10.0.0.1'],
    'nat64.partner.test': ['64:ff9b::a9fe:a9fe'],
    'ula.partner.test': ['fd00::1'],
    'cgnat.partner.test': ['100.64.1.1'],
    'zero.partner.test': ['0.0.0.0'],
    'zoned.partner.test': ['fe80::1%eth0'],
    'trailing.partner.test.': ['192.168.0.9'],
    'files.example': ['127.0.0.1'],
  };
  const stubResolver = async (host: string) => (RESOLVES_TO[host] ?? ['93.184.216.34']).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it.each([
    ['a name resolving to a private address', 'https://internal.partner.test/a.pdf', '10.0.0.5'],
    ['a name resolving to the metadata address', 'https://metadata.partner.test/a.pdf', '169.254.169.254'],
    ['a name resolving to IPv6 loopback', 'https://loopback6.partner.test/a.pdf', '::1'],
    ['a name resolving to an IPv4-mapped private address', 'https://mapped.partner.test/a.pdf', '::ffff:10.0.0.1'],
    ['a name resolving to NAT64 of the metadata address', 'https://nat64.partner.test/a.pdf', '64:ff9b::a9fe:a9fe'],
    ['a name resolving to a unique-local address', 'https://ula.partner.test/a.pdf', 'fd00::1'],
    ['a name resolving to CGNAT', 'https://cgnat.partner.test/a.pdf', '100.64.1.1'],
    ['a name resolving to 0.0.0.0', 'https://zero.partner.test/a.pdf', '0.0.0.0'],
    ['a name resolving to a zoned link-local address', 'https://zoned.partner.test/a.pdf', 'fe80::1%eth0'],
    ['a name with a trailing dot resolving to a private address', 'https://trailing.partner.test./a.pdf', '192.168.0.9'],
    ['userinfo that looks like an address before a name resolving to loopback', 'https://127.0.0.1:443@files.example/a.pdf', '127.0.0.1'],
  ])('refuses %s (%s, resolver stubbed)', async (_what, url, address) => {
    const asked: string[] = [];
    sb.deps.services.set(PDF_FETCH_SERVICE, { resolve: (host: string) => { asked.push(host); return stubResolver(host); } });
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url });
    expect(asked).toHaveLength(1);
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.url).toContain(`non-public address (${address} `);
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
  });

  it.each([
    ['an IPv6 zone id (link-local)', 'https://[fe80::1%25eth0]/a.pdf'],
    ['an IPv6 zone id on loopback', 'https://[::1%25lo]/a.pdf'],
    ['a host that is only a dot', 'https://./a.pdf'],
  ])('refuses %s (%s) as not a valid HTTPS link, before any lookup', async (_what, url) => {
    const asked: string[] = [];
    sb.deps.services.set(PDF_FETCH_SERVICE, { resolve: (host: string) => { asked.push(host); return stubResolver(host); } });
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty('url');
    expect(asked.filter((h) => h !== '.')).toEqual([]);
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
  });

  it('refuses a name whose resolution includes a private address (resolver stubbed)', async () => {
    sb.deps.services.set(PDF_FETCH_SERVICE, { resolve: async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.1.2.3', family: 4 }] });
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url: 'https://files.partner.test/a.pdf' });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.url).toContain('10.1.2.3');
  });
});

const withServer = hasOpenssl ? describe : describe.skip;
if (!hasOpenssl) console.warn('openssl is absent: the local HTTPS fetch tests are skipped');

withServer('fetching from a local HTTPS server (--allow-private-urls)', () => {
  beforeEach(() => start({ allowPrivateUrls: true }));

  it('fetches once, stores its own copy, and the signed link serves it; a failed upload keeps it; last write wins', async () => {
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url: `${base}/ok.pdf` });
    expect(res.status).toBe(200);
    expect(res.body.path).toMatch(new RegExp(`^pdfs/${inv.id}/pdf_[0-9a-f]+\\.pdf$`));
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(true);
    const link = (await api.get(`/invoices/${inv.id}/pdf-link`)).body.url;
    const served = await download(link);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('application/pdf');
    expect(served.body.toString()).toContain('from url');

    for (const bad of [{ url: `${base}/html` }, { url: `${base}/missing` }, { content: Buffer.from('nope').toString('base64') }]) {
      expect((await api.post(`/invoices/${inv.id}/pdf`, bad)).status).toBe(400);
    }
    expect((await download(link)).body.toString()).toContain('from url');

    expect((await api.post(`/invoices/${inv.id}/pdf`, { url: `${base}/second.pdf` })).status).toBe(200);
    expect((await download(link)).body.toString()).toContain('second upload');
    expect((await api.post(`/invoices/${inv.id}/pdf`, { content: pdf('third').toString('base64') })).status).toBe(200);
    expect((await download(link)).body.toString()).toContain('third');
  });

  it('pins the checked address: a name that exists nowhere is reached at the address it was resolved to, with TLS checked for that name', async () => {
    sb.deps.services.set(PDF_FETCH_SERVICE, { ca, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const inv = await syncedInvoice(sb, token, cus);
    const port = (server.address() as AddressInfo).port;
    const pinned = await api.post(`/invoices/${inv.id}/pdf`, { url: `https://pdf.test:${port}/ok.pdf` });
    // The body comes with the status, so a failure says why the fetch was refused.
    expect({ status: pinned.status, errors: pinned.body.validation_errors }).toEqual({ status: 200, errors: undefined });
    const wrongName = await api.post(`/invoices/${inv.id}/pdf`, { url: `https://not-in-cert.test:${port}/ok.pdf` });
    expect(wrongName.status).toBe(400);
    expect(wrongName.body.validation_errors.url).toContain('could not be fetched');
  });

  it.each([
    ['a redirect to HTTPS', '/redirect', 200, null],
    ['a redirect to plain http', '/redirect-http', 400, 'non-HTTPS'],
    ['a redirect loop', '/loop', 400, 'more than 5 redirects'],
    ['a non-2xx answer', '/missing', 400, 'HTTP 404'],
    ['a response that is not a PDF', '/html', 400, 'not a PDF'],
    ['a declared body over 10 MB', '/big-declared', 413, 'larger than 10 MB'],
    ['a streamed body over 10 MB', '/big-streamed', 413, 'larger than 10 MB'],
  ])('answers %s with %s', async (_what, path, code, words) => {
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url: `${base}${path}` });
    expect(res.status).toBe(code);
    if (words) expect(JSON.stringify(res.body)).toContain(words);
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(code === 200);
  });

  it('checks every redirect hop again: a public-only rule refuses a hop to a metadata address', async () => {
    sb.deps.services.set(PDF_FETCH_SERVICE, { ca, policy: (a: string) => (a === '127.0.0.1' ? null : refusalOf(a)) });
    sb.deps.config.allowPrivateUrls = false;
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url: `${base}/redirect-private` });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.url).toContain('169.254.169.254');
  });

  // Each hop is resolved and checked again: the first hop (the local server) is allowed, the next is not.
  it.each([
    ['to loopback on another port', 'https://127.0.0.2:8443/a.pdf', '127.0.0.2'],
    ['to IPv6 loopback', 'https://[::1]/a.pdf', '::1'],
    ['to a private address', 'https://10.0.0.1/a.pdf', '10.0.0.1'],
    ['to an IPv4-mapped metadata address', 'https://[::ffff:169.254.169.254]/latest', '::ffff:a9fe:a9fe'],
    ['to NAT64 of a private address', 'https://[64:ff9b::a00:1]/a.pdf', '64:ff9b::a00:1'],
    ['to a name resolving to a private address', 'https://internal.partner.test/a.pdf', '10.0.0.5'],
  ])('refuses a redirect hop %s', async (_what, target, address) => {
    sb.deps.services.set(PDF_FETCH_SERVICE, {
      ca,
      resolve: async (host: string) => [{ address: host === 'internal.partner.test' ? '10.0.0.5' : '93.184.216.34', family: 4 }],
      policy: (a: string) => (a === '127.0.0.1' ? null : refusalOf(a)),
    });
    sb.deps.config.allowPrivateUrls = false;
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url: `${base}/hop?url=${encodeURIComponent(target)}` });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.url).toContain(`non-public address (${address} `);
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
  });

  it('refuses a redirect hop to a numeric form of loopback before any connection', async () => {
    sb.deps.services.set(PDF_FETCH_SERVICE, { ca, policy: (a: string) => (a === '127.0.0.1' ? null : refusalOf(a)) });
    sb.deps.config.allowPrivateUrls = false;
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url: `${base}/hop?url=${encodeURIComponent('https://0x7f000002/a.pdf')}` });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.url).toMatch(/non-public address \(127\.0\.0\.2 |numeric form/);
  });

  it('times out a server that never answers (time-out shortened for the test)', async () => {
    sb.deps.services.set(PDF_FETCH_SERVICE, { ca, timeoutMs: 300 });
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { url: `${base}/slow` });
    expect(res.status).toBe(400);
    expect(res.body.validation_errors.url).toContain('timed out');
  });
});

describe('upload rules and signed links', () => {
  beforeEach(() => start());

  it.each([
    ['neither content nor url', {}, 400],
    ['both content and url', { content: pdf('x').toString('base64'), url: 'https://files.example/a.pdf' }, 400],
    ['content that is not base64', { content: '%%%not-base64%%%' }, 400],
    ['base64 of something that is not a PDF', { content: Buffer.from('hello world').toString('base64') }, 400],
    ['an unknown field', { content: pdf('x').toString('base64'), name: 'a.pdf' }, 400],
  ])('refuses %s', async (_what, body, code) => {
    const inv = await syncedInvoice(sb, token, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, body);
    expect(res.status).toBe(code);
    expect(Object.keys(res.body.validation_errors).length).toBeGreaterThan(0);
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
  });

  it('refuses a PDF of more than 10 MB decoded with 413, and accepts exactly 10 MB', async () => {
    const inv = await syncedInvoice(sb, token, cus);
    const big = Buffer.concat([pdf('big'), Buffer.alloc(10 * MB, 0x20)]);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { content: big.toString('base64') });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
    const exact = Buffer.concat([pdf('exact'), Buffer.alloc(10 * MB - pdf('exact').length, 0x20)]);
    const ok = await api.post(`/invoices/${inv.id}/pdf`, { content: exact.toString("base64") });
    expect([ok.status, ok.body.code]).toEqual([200, undefined]);
  });

  it('answers 422 unsupported_invoice for an invoice created with POST /invoices, and 404 for an unknown one', async () => {
    const inv = await invoice(api, cus);
    const res = await api.post(`/invoices/${inv.id}/pdf`, { content: pdf('x').toString('base64') });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('unsupported_invoice');
    expect((await api.get(`/invoices/${inv.id}`)).body.pdf_uploaded).toBe(false);
    expect((await api.post('/invoices/inv_nope/pdf', { content: pdf('x').toString('base64') })).status).toBe(404);
  });

  it('serves a rendered PDF of the invoice when none was uploaded, behind a link that expires and resists tampering', async () => {
    const inv = await invoice(api, cus, { due_date: '2026-03-31', line_items: [{ description: 'Design sprint', quantity: 3, amount: 1250 }] });
    const link = (await api.get(`/invoices/${inv.id}/pdf-link`)).body.url;
    const res = await download(link);
    expect(res.status).toBe(200);
    const content = await text(res.body);
    for (const words of [inv.invoice_number, 'Acme Corp', 'Design sprint', '$1250.00', '$3750.00', '2026-03-31']) expect(content).toContain(words);

    const tampered = link.replace(`${inv.id}.pdf`, 'inv_other.pdf');
    expect((await download(tampered)).status).toBe(403);
    expect((await download(link.replace(/sig=[^&]+/, 'sig=abc'))).status).toBe(403);
    expect((await download(link.replace(/exp=(\d+)/, (_m: string, e: string) => `exp=${Number(e) + 9999}`))).status).toBe(403);
    await sb.advance(3601);
    expect((await download(link)).status).toBe(403);
  });
});
