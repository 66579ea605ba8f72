// Owns what a person sees opening the sandbox in a browser: GET / answers a small self-contained HTML
// page (base URLs, default credentials, the OpenAPI documents, the docs pages, and pages features
// offer such as the web inspector); and the documents themselves at /openapi.* and /_sandbox/openapi.*.
// Neither is part of the API documents: they describe the API, they are not operations of it.
import type { Express, Request, Response } from 'express';
import { defaultConfig, VERSION } from '../config.js';
import type { Deps } from '../deps.js';
import type { Feature, PageLink } from '../feature.js';
import { linkOrigin } from './context.js';
import { loadDocument } from './openapi.js';

/** Where the web inspector lives once a feature offers it (the landing page links it only then). */
export const INSPECTOR_PATH = '/_sandbox/ui';

/** The reference pages (docs/*.md in the repository), as the README's Documentation table lists them. */
export const DOC_PAGES: ReadonlyArray<{ file: string; title: string; covers: string }> = [
  { file: 'first-test.md', title: 'Your first test', covers: 'customer, card, invoice, clock, invoice_paid: in-process and against a container' },
  { file: 'running.md', title: 'Running it from your project', covers: 'npx, Jest/Vitest, the typed test client, the data file, logs' },
  { file: 'containers.md', title: 'Containers', covers: 'Docker, podman, Testcontainers for Node' },
  { file: 'ci-services.md', title: 'CI services and Compose', covers: 'GitHub Actions and GitLab CI services, Docker Compose, how CI checks the recipes' },
  { file: 'other-languages.md', title: 'Other languages', covers: 'the image from Java (JUnit 5 and Testcontainers), Python (pytest), Go (testcontainers-go)' },
  { file: 'command-line.md', title: 'Command line', covers: 'the server flags; clock, trigger, listen --forward-to, requests --follow, reset, scenario, snapshot' },
  { file: 'inspector.md', title: 'Web inspector', covers: '/_sandbox/ui: every account\'s objects, events, deliveries and journal, live; the clock, scenarios and snapshots' },
  { file: 'api-coverage.md', title: 'API coverage', covers: 'every operation, its rules and the sandbox\'s behaviour' },
  { file: 'control-plane.md', title: 'Control plane', covers: '/_sandbox: reset, partners and keys, clock, simulations, snapshots' },
  { file: 'clock.md', title: 'The clock', covers: 'the per-account virtual clock and what falls due' },
  { file: 'webhooks.md', title: 'Webhooks', covers: 'the 18 topics and their data, ordered delivery, retries, a receiver for your tests, duplicate and wrong-secret drills' },
  { file: 'scenarios.md', title: 'Scenarios', covers: 'forced responses, scenario documents, the request journal, fixtures' },
  { file: 'evolution-drills.md', title: 'Evolution drills', covers: 'unknown fields, new statuses and reordered fields in answers and deliveries, to prove a client tolerant in CI' },
  { file: 'snapshots.md', title: 'Account snapshots', covers: 'save an account once, restore it before each test; export, import, load one at start (--fixtures or startSandbox({ fixtures }))' },
  { file: 'test-values.md', title: 'Test values', covers: 'magic inputs that make money paths fail' },
  { file: 'parity.md', title: 'Parity', covers: 'the black-box suite you can run against the real demo environment too' },
  { file: 'gaps-and-choices.md', title: 'Gaps and choices', covers: 'every decision made where the spec is silent' },
  { file: 'limits.md', title: 'Limits and retention', covers: 'every cap and retention, and what going past it answers' },
  { file: 'reliability.md', title: 'Reliability', covers: 'fuzzing, isolation, kill -9, webhook chaos, soak and slow clients, with current figures' },
  { file: 'performance.md', title: 'Performance', covers: 'what npm run bench measures, the latest figures, the goals' },
  { file: 'contributing.md', title: 'Contributing', covers: 'the tests, how the pieces are built, mutation testing and its scores' },
  { file: 'equivalent-mutants.md', title: 'Equivalent mutants', covers: 'the surviving mutants judged to change nothing observable' },
];

const esc = (value: string | number | boolean | null | undefined) => String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The served documents. Public even with --admin-token, like /openapi.json: they describe what
 * anyone may call and hold no data. Registered before the control-plane router, which would
 * otherwise ask for the admin token and answer them as unknown operations.
 */
export function documentRoutes(app: Express): void {
  // Each document is parsed when first served (loadDocument keeps it), not by every start.
  for (const [prefix, name] of [['', 'openapi'], ['/_sandbox', 'control-plane']] as const) {
    app.get(`${prefix}/openapi.yaml`, (_req, res) => void res.type('application/yaml').send(loadDocument(name).yamlText));
    app.get(`${prefix}/openapi.json`, (_req, res) => void res.json(loadDocument(name).document));
  }
}

/** GET / for a person with a browser. Registered before the API router (which answers / with 404). */
export function landingRoute(app: Express, deps: Deps, features: readonly Feature[]): void {
  const pages = features.flatMap((f) => f.pages ?? []);
  app.get('/', (req: Request, res: Response) => {
    res
      .status(200)
      .type('html')
      .setHeader('Cache-Control', 'no-store')
      // Nothing loads from anywhere: no scripts, images or fonts; only the inline style below.
      .setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")
      .send(landingPage(deps, linkOrigin(deps, req), pages));
  });
}

/**
 * A client secret is shown only while it is the documented default: one set through
 * SANDBOX_CLIENT_SECRET (or the programmatic `credentials`) is somebody's choice to keep to themselves.
 */
function shownSecret(actual: string, builtIn: string, variable: string): string {
  return actual === builtIn ? `<code>${esc(actual)}</code>` : `<em>set by ${esc(variable)}; not shown</em>`;
}

export function landingPage(deps: Deps, origin: string, pages: readonly PageLink[]): string {
  const { production, demo } = deps.config.credentials;
  const builtIn = defaultConfig({}).credentials;
  const url = (path: string) => `${origin}${path}`;
  const link = (path: string, text = path) => `<a href="${esc(path)}">${esc(text)}</a>`;
  const inspector = pages.find((p) => p.path === INSPECTOR_PATH);
  const otherPages = pages.filter((p) => p !== inspector);
  const row = (...cells: string[]) => `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>billing-sandbox ${esc(VERSION)}</title><style>
body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1b1f24;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:1.8rem}
table{width:100%;border-collapse:collapse}td,th{padding:.35rem .4rem;border-bottom:1px solid #e2e4e8;text-align:left;vertical-align:top}
th{font-weight:600;background:#f6f7f9}code,pre{font-family:ui-monospace,monospace;font-size:.9em}
code{background:#f1f2f4;padding:.05rem .3rem;border-radius:.25rem}pre{background:#f6f7f9;padding:.7rem;overflow-x:auto;border-radius:.3rem}
.muted{color:#5b6470}a{color:#0b57d0}
</style></head><body>
<h1>billing-sandbox <span class="muted">${esc(VERSION)}</span></h1>
<p class="muted">A stateful sandbox of the partner billing, payments and payables API. Point your integration tests here.</p>

<h2>Base URLs</h2>
<table id="base-urls"><tr><th>what</th><th>base URL</th></tr>
${row('production API', `<code>${esc(url(''))}</code> (also <code>${esc(url('/v1'))}</code>)`)}
${row('demo API', `<code>${esc(url('/demo'))}</code> (also <code>${esc(url('/demo/v1'))}</code>)`)}
${row('embeddable checkout (checkout token)', `<code>${esc(url('/checkout'))}</code> and <code>${esc(url('/demo/checkout'))}</code>`)}
${row('control plane (reset, clock, scenarios, journal)', `<code>${esc(url('/_sandbox'))}</code>${deps.config.adminToken ? ' (needs the admin token)' : ''}`)}
</table>

<h2>Default credentials</h2>
<table id="credentials"><tr><th>environment</th><th>client_id</th><th>client_secret</th></tr>
${row('production', `<code>${esc(production.client_id)}</code>`, shownSecret(production.client_secret, builtIn.production.client_secret, 'SANDBOX_CLIENT_SECRET'))}
${row('demo (under <code>/demo</code>)', `<code>${esc(demo.client_id)}</code>`, shownSecret(demo.client_secret, builtIn.demo.client_secret, 'SANDBOX_DEMO_CLIENT_SECRET'))}
</table>
<p>A token: <code>POST ${esc(url('/oauth/token'))}</code> with HTTP Basic <code>client_id:client_secret</code> and the form body <code>grant_type=client_credentials</code>; then <code>Authorization: Bearer &lt;access_token&gt;</code>.</p>

<h2>OpenAPI documents</h2>
<table id="documents"><tr><th>document</th><th>YAML</th><th>JSON</th></tr>
${row('the partner API', link('/openapi.yaml'), link('/openapi.json'))}
${row('the control plane', link('/_sandbox/openapi.yaml'), link('/_sandbox/openapi.json'))}
</table>

<h2>Pages</h2>
<ul id="pages">
<li>Web inspector: ${inspector ? `${link(inspector.path)} <span class="muted">${esc(inspector.description)}</span>` : `<span class="muted">not part of this version (it will live at <code>${esc(INSPECTOR_PATH)}</code>)</span>`}</li>
${otherPages.map((p) => `<li>${esc(p.title)}: ${link(p.path)} <span class="muted">${esc(p.description)}</span></li>`).join('\n')}
<li>Health: ${link('/_sandbox/health')}</li>
</ul>

<h2>Documentation</h2>
<p>The reference lives beside the README, in the <code>docs/</code> folder of the repository:</p>
<table id="docs"><tr><th>page</th><th>covers</th></tr>
${DOC_PAGES.map((d) => row(`${esc(d.title)}<br><code>docs/${esc(d.file)}</code>`, esc(d.covers))).join('\n')}
</table>
</body></html>
`;
}
