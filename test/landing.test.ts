// Opening the sandbox in a browser: GET / is a small self-contained HTML page with the base URLs, the
// default credentials, working links to both OpenAPI documents and the docs pages; the control-plane
// document is served at /_sandbox/openapi.yaml and .json, public like /openapi.json. Also in headless
// Chromium (skipped with a message when /usr/bin/chromium is absent; CI installs it).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { parse as parseYaml } from 'yaml';
import { DOC_PAGES, INSPECTOR_PATH, landingPage } from '../src/http/landing.js';
import { setup, type TestSandbox } from './helpers.js';

const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);

describe('GET /', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await setup();
  });

  it('is an HTML page with the base URLs, the default credentials and the documents, loading nothing from elsewhere', async () => {
    const res = await sb.http.get('/').set('Host', 'sandbox.test:4010').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'/);
    const html = res.text;
    for (const base of ['http://sandbox.test:4010</code>', 'http://sandbox.test:4010/v1', 'http://sandbox.test:4010/demo</code>', 'http://sandbox.test:4010/demo/v1',
      'http://sandbox.test:4010/checkout', 'http://sandbox.test:4010/demo/checkout', 'http://sandbox.test:4010/_sandbox</code>']) {
      expect([base, html.includes(base)]).toEqual([base, true]);
    }
    for (const credential of ['sandbox_client_id', 'sandbox_client_secret', 'sandbox_demo_client_id', 'sandbox_demo_client_secret']) {
      expect(html).toContain(`<code>${credential}</code>`);
    }
    for (const page of DOC_PAGES) expect(html).toContain(`docs/${page.file}`);
    // Every link is on this origin; no script, image, stylesheet or font is fetched.
    expect(hrefs(html).sort()).toEqual(['/_sandbox/health', '/_sandbox/openapi.json', '/_sandbox/openapi.yaml', '/_sandbox/ui', '/openapi.json', '/openapi.yaml']);
    expect(html).not.toMatch(/<script|<img|<link|src=|@import|url\(/i);
    // The inspector feature offers its page: linked first among the pages.
    expect(html).toContain(`Web inspector: <a href="${INSPECTOR_PATH}">`);
    expect(html).not.toContain('it will live at');
  });

  it('links only what answers: every link on the page is followed', async () => {
    const html = (await sb.http.get('/').expect(200)).text;
    for (const href of hrefs(html)) {
      const res = await sb.http.get(href);
      expect([href, res.status]).toEqual([href, 200]);
    }
  });

  it('serves the control-plane document bundled (no file references) as YAML and JSON, the same document', async () => {
    const file = parseYaml(readFileSync(new URL('../openapi/control-plane.yaml', import.meta.url), 'utf8'));
    const yaml = await sb.http.get('/_sandbox/openapi.yaml').expect(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    const served = parseYaml(yaml.text);
    // A generator fetching the document over HTTP cannot follow './openapi.yaml#/...' references.
    expect(yaml.text).not.toMatch(/\$ref:\s*['"]?\.\//);
    expect(Object.keys(served.paths)).toEqual(Object.keys(file.paths));
    const json = await sb.http.get('/_sandbox/openapi.json').expect(200);
    expect(json.body).toEqual(served);
    expect(json.body.paths['/_sandbox/reset']).toBeDefined();
    const api = await sb.http.get('/openapi.json').expect(200);
    expect(api.body.info.title).not.toBe(json.body.info.title);
  });
});

describe('GET / with an admin token, a public URL and secrets of ones own', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await setup({
      adminToken: 'adm-landing',
      publicUrl: 'https://billing.example.test/',
      credentials: {
        production: { client_id: 'acme_id', client_secret: 'acme-secret-1' },
        demo: { client_id: 'sandbox_demo_client_id', client_secret: 'sandbox_demo_client_secret' },
      },
    });
  });

  it('builds the base URLs from --public-url and does not show a secret somebody set', async () => {
    const html = (await sb.http.get('/').expect(200)).text;
    expect(html).toContain('<code>https://billing.example.test/demo</code>');
    expect(html).toContain('<code>acme_id</code>');
    expect(html).not.toContain('acme-secret-1');
    expect(html).toContain('set by SANDBOX_CLIENT_SECRET; not shown');
    expect(html).toContain('<code>sandbox_demo_client_secret</code>');
    expect(html).toContain('(needs the admin token)');
    expect(html).not.toContain('adm-landing');
  });

  it('keeps the documents public while the rest of the control plane needs the token', async () => {
    await sb.http.get('/_sandbox/openapi.json').expect(200);
    await sb.http.get('/_sandbox/openapi.yaml').expect(200);
    await sb.http.get('/openapi.json').expect(200);
    const refused = await sb.http.get('/_sandbox/health').expect(401);
    expect(refused.body.code).toBe('unauthorized');
    await sb.http.get('/_sandbox/health').set('X-Sandbox-Admin-Token', 'adm-landing').expect(200);
  });
});

describe('the inspector link', () => {
  it('appears once a feature offers the page at /_sandbox/ui', async () => {
    const sb = await setup();
    const html = landingPage(sb.deps, 'http://127.0.0.1:4010', [
      { path: INSPECTOR_PATH, title: 'Web inspector', description: 'requests, webhooks and the clock of an account' },
    ]);
    expect(hrefs(html)).toContain(INSPECTOR_PATH);
    expect(html).not.toContain('it will live at');
  });
});

const CHROMIUM = '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser) console.warn(`landing page browser test skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);

(haveBrowser ? describe : describe.skip)('GET / in headless Chromium', () => {
  let sb: TestSandbox;
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    sb = await setup();
    server = sb.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    if (server) await new Promise((resolve) => server.close(resolve));
  });

  it('renders the page, makes no request elsewhere, and its control-plane link opens the document', async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      page.on('request', (r) => requested.push(r.url()));
      const violations: string[] = [];
      page.on('console', (m) => { if (m.type() === 'error') violations.push(m.text()); });
      await page.goto(`${origin}/`);
      await expect(page.locator('h1').textContent()).resolves.toMatch(/^billing-sandbox/);
      await expect(page.locator('#base-urls').textContent()).resolves.toContain(`${origin}/demo`);
      await expect(page.locator('#credentials').textContent()).resolves.toContain('sandbox_client_secret');
      expect(requested).toEqual([`${origin}/`]);
      expect(violations).toEqual([]);
      await page.click('a[href="/_sandbox/openapi.json"]');
      await page.waitForURL(`${origin}/_sandbox/openapi.json`);
      expect(JSON.parse((await page.locator('body').textContent()) ?? '').paths['/_sandbox/reset']).toBeDefined();
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe('the docs pages the landing page names', () => {
  it('are the README Documentation table, in its order, and exist', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('## Documentation'));
    const linked = [...table.matchAll(/\]\(docs\/([a-z-]+\.md)\)/g)].map((m) => m[1]);
    expect(DOC_PAGES.map((p) => p.file)).toEqual(linked);
    for (const page of DOC_PAGES) expect([page.file, existsSync(new URL(`../docs/${page.file}`, import.meta.url))]).toEqual([page.file, true]);
  });
});
