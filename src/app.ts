// Owns the assembly of the sandbox: createDeps() builds the injected services, createApp() wires
// them into an express app (never listening: supertest and startSandbox both use it).
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { http } from './node-http.js';
import { defaultConfig, type Environment, type SandboxConfig } from './config.js';
import type { Deps } from './deps.js';
import type { Feature } from './feature.js';
import { Partners } from './auth/partners.js';
import { TokenSigner } from './auth/tokens.js';
import { accessTokenSecurity, checkoutTokenSecurity, clientBasicSecurity } from './auth/security.js';
import { createToken } from './auth/handlers.js';
import { Scheduler } from './clock/scheduler.js';
import type { RealNow } from './clock/clock.js';
import { Events } from './events/events.js';
import { ApiError, Errors } from './errors.js';
import { createBackend, loadDocument } from './http/openapi.js';
import { responseCheckerFor } from './http/response-check.js';
import { RateLimiter } from './http/rate-limit.js';
import { checkoutCors } from './http/cors.js';
import { wellFormedUrl } from './http/url-encoding.js';
import { documentRoutes, landingRoute } from './http/landing.js';
import { durableAnswers } from './http/durable-answers.js';
import { OperationRouter, asyncMiddleware, errorReply, send } from './http/router.js';
import type { ApiHandlers, ControlHandlers, Principal } from './http/context.js';
import { exchange } from './http/exchange.js';
import { accessLog, createLogger, type Logger } from './log.js';
import { Store } from './store/store.js';
import { BlobStore, takeUpLegacyBlobSizes } from './store/blobs.js';
import { controlFeature, resolveControlPrincipal } from './control/handlers.js';
import { inspectorFeature, inspectorPageRoutes } from './inspector/feature.js';
import { customerHandlers } from './domain/customers/handlers.js';
import { payablesFeature } from './domain/bills/payables-feature.js';
import { scenariosFeature } from './scenarios/feature.js';
import { snapshotsFeature } from './snapshots/feature.js';
import { journalFeature } from './journal/feature.js';
import { fixturesFeature, loadStartFixtures } from './fixtures/feature.js';
import { journalMiddleware } from './journal/feature.js';
import { webhooksFeature } from './webhooks/handlers.js';
import { invoicesFeature } from './domain/invoices/feature.js';
import { paymentMethodsFeature } from './domain/payment-methods/feature.js';
import { paymentsFeature } from './domain/payments/feature.js';
import { payoutsFeature } from './domain/payouts/feature.js';
import { checkoutFeature } from './domain/checkout/handlers.js';
import { hostedFeature } from './hosted/pages.js';
import { LIMITS } from './limits.js';
import { letGo, orphaned, SEND_GUARD_SERVICE, SendGuard } from './http/send-guard.js';
import { BODY_BUDGET_SERVICE, BodyBudget } from './http/body-budget.js';
import { plainBodies, plainForm, plainJson, type BodyReader } from './http/json-body.js';
import { checkBody } from './http/storable.js';
import { ServiceRegistry } from './services.js';
import { Activity } from './stream/activity.js';
import { streamFeature } from './stream/feature.js';
import { startLegacyKeys } from './store/idempotency.js';
import { checkStoredState, retireStateKeys } from './store/module-state.js';

/** Every feature of the sandbox, in the order their interceptors run. */
export const FEATURES: Feature[] = [
  scenariosFeature,
  journalFeature,
  fixturesFeature,
  { name: 'oauth', handlers: { createToken } },
  { name: 'customers', handlers: customerHandlers },
  invoicesFeature,
  paymentMethodsFeature,
  paymentsFeature,
  payoutsFeature,
  checkoutFeature,
  hostedFeature,
  payablesFeature,
  webhooksFeature,
  streamFeature,
  inspectorFeature,
  snapshotsFeature,
  controlFeature,
];

export interface DepsOverrides {
  realNow?: RealNow;
  logger?: Logger;
}

export async function createDeps(config: Partial<SandboxConfig> = {}, overrides: DepsOverrides = {}): Promise<Deps> {
  const defaults = defaultConfig();
  const full: SandboxConfig = { ...defaults, ...config, sendLimits: { ...defaults.sendLimits, ...config.sendLimits } };
  const realNow = overrides.realNow ?? Date.now;
  const log = overrides.logger ?? createLogger(full.logLevel);
  const store = await Store.open({ file: full.dataFile, seed: full.seed, realNow, flushDelayMs: full.flushDelayMs, compactMinBytes: full.compactMinBytes, storageRetryMs: full.storageRetryMs });
  // Module state read from a data file must match what its module declares, or the start stops here.
  const problems = checkStoredState(store.allAccounts());
  if (problems.length) {
    await store.close();
    throw new Error(`the data file ${full.dataFile} holds module state this version cannot read (${problems.length}): ${problems.slice(0, 5).join('; ')}`);
  }
  const partners = new Partners(store, () => new Date(realNow()).toISOString());
  partners.ensureDefault(full.credentials);
  const deps: Deps = {
    config: full,
    store,
    blobs: BlobStore.forDataFile(store, full.dataFile),
    scheduler: new Scheduler(store, log),
    events: new Events(),
    activity: new Activity(),
    partners,
    tokens: new TokenSigner(store.data.meta.signing_key, full.tokenTtl),
    rateLimiter: new RateLimiter(realNow),
    log,
    realNow,
    services: new ServiceRegistry(),
  };
  store.events.on('writeFailed', (error) => log.error({ err: error, file: full.dataFile }, 'writing the data file failed: the changes not in it were rolled back, and writes answer 503 storage_unavailable until it can be written again'));
  store.events.on('writeResumed', () => log.warn({ file: full.dataFile }, 'the data file can be written again; writes resume'));
  // A full reset's first steps: the default partner and its keys again, and fresh rate limits
  // (features add theirs when installed, after these: fixtures load into the default partner).
  store.onResetAll(() => partners.ensureDefault(full.credentials));
  store.onResetAll(() => deps.rateLimiter.reset());
  for (const feature of FEATURES) feature.install?.(deps);
  // Data written by earlier versions: legacy idempotency keys start their time, retired state goes.
  startLegacyKeys(store.allAccounts());
  takeUpLegacyBlobSizes(store.allAccounts());
  retireStateKeys(store.allAccounts());
  // --fixtures: made through the domain functions, so every feature must be installed first.
  await loadStartFixtures(deps);
  return deps;
}

const API_PATH = /^(\/demo)?(\/v1)?(\/.*)?$/;

/** A partner API path without its `/demo` and `/v1` prefixes (the path the OpenAPI document names). */
function apiPath(path: string): { demo: boolean; rest: string } {
  const [, demo, , rest] = API_PATH.exec(path) ?? [];
  return { demo: Boolean(demo), rest: rest ?? '/' };
}

/** The token endpoint, in every path form the API answers. */
const isTokenPath = (path: string) => apiPath(path).rest === '/oauth/token';

/** The embeddable checkout surface, in every path form the API answers (not /checkout-auth/init). */
const isCheckoutPath = (path: string) => /^\/checkout(\/|$)/.test(apiPath(path).rest);

export interface SandboxApp extends Express {
  locals: Express['locals'] & { deps: Deps; api: OperationRouter; control: OperationRouter };
}

export function createApp(deps: Deps): SandboxApp {
  const app = express() as SandboxApp;
  app.disable('x-powered-by');
  app.set('trust proxy', true);
  app.set('query parser', 'simple');
  // The bound on answers clients do not read: one guard per app, told of every response's writes.
  const guard = new SendGuard(deps.config.sendLimits, deps.realNow, deps.log);
  deps.services.set(SEND_GUARD_SERVICE, guard);
  const bodyBudget = new BodyBudget();
  deps.services.set(BODY_BUDGET_SERVICE, bodyBudget);
  reportWrites(app.response, guard);
  // One access line per request (pino-http): method, path, status, ms, account, operation; never
  // headers or bodies, so no secret reaches the log.
  const accessLine = accessLog(deps.log);
  app.use(accessLine);

  // The documents and the landing page come first: public, and outside both routers.
  documentRoutes(app);
  landingRoute(app, deps, FEATURES);
  // The inspector's page is code only, so it is served before the control plane's admin check.
  inspectorPageRoutes(app);

  // What every partner API request runs, in this order, before the journal and the router: held
  // answers under --data, CORS on the checkout surface, a URL every decoder can read, then the body
  // (parsed only when there is one).
  const apiSteps: Middleware[] = [
    durableAnswers(deps.store, deps.log),
    checkoutCors(isCheckoutPath),
    wellFormedUrl(deps),
    bodyParsers(
      // Most bodies: plain JSON and forms, read without body-parser's plumbing; the rest go to body-parser.
      plainBodies(plainJson(LIMITS.jsonBodyBytes, (req) => isTokenPath(req.path)), plainForm(LIMITS.formBodyBytes)),
      [
        // Not on the token endpoint: its request is a form, and a JSON body there (even a malformed one)
        // is refused with 415 once the client's credentials are checked, never read.
        express.json({ limit: LIMITS.jsonBodyBytes, type: (req) => !isTokenPath((req as Request).path) && Boolean((req as Request).is(['application/json', 'application/*+json'])) }),
        express.urlencoded({ extended: false, limit: LIMITS.formBodyBytes }),
        express.text({ limit: LIMITS.formBodyBytes, type: ['application/yaml', 'application/x-yaml', 'text/yaml'] }),
      ],
      bodyBudget,
    ),
  ];
  app.use(...apiSteps);

  const api = new OperationRouter({
    deps,
    backend: createBackend('openapi'),
    handlers: FEATURES.reduce<ApiHandlers>((all, f) => ({ ...all, ...f.handlers }), {}),
    security: { oauth2: accessTokenSecurity(deps), checkoutToken: checkoutTokenSecurity(deps), clientBasic: clientBasicSecurity(deps) },
    anonymous: (state) => defaultPrincipal(state.environment),
    interceptors: FEATURES.flatMap((f) => f.interceptors ?? []),
    responseChecker: deps.config.validateResponses ? responseCheckerFor(loadDocument('openapi').document) : undefined,
  });
  const control = new OperationRouter({
    deps,
    backend: createBackend('control-plane'),
    handlers: FEATURES.reduce<ControlHandlers>((all, f) => ({ ...all, ...f.control }), {}),
    security: {},
    anonymous: (state) => {
      // The /_sandbox route below resolves the caller before the control router runs.
      const principal = exchange(state.res).controlPrincipal;
      if (!principal) throw new Error('The control plane was reached without a resolved caller.');
      return principal;
    },
    interceptors: [],
    responseChecker: deps.config.validateResponses ? responseCheckerFor(loadDocument('control-plane').document) : undefined,
  });
  app.locals.deps = deps;
  app.locals.api = api;
  app.locals.control = control;

  app.use('/_sandbox', asyncMiddleware(async (req, res) => {
    let principal: Principal;
    try {
      principal = await resolveControlPrincipal(deps, req);
    } catch (error) {
      return send(res, errorReply(error, deps, req));
    }
    exchange(res).controlPrincipal = principal;
    await control.handle(req, res, principal.environment, req.originalUrl.split('?')[0]);
  }));
  for (const feature of FEATURES) feature.routes?.(app, deps);
  const apiRoute: Middleware = (req, res, next) => {
    const { demo, rest } = apiPath(req.path);
    // A promise only when some step waited (see OperationRouter.handle).
    api.handle(req, res, demo ? 'demo' : 'production', rest)?.catch(next);
  };
  const errorHandler = (error: unknown, req: Request, res: Response, _next: NextFunction) => send(res, bodyErrorReply(error, deps, req));
  app.use(apiRoute);
  app.use(errorHandler);

  // The partner API's own lane: a request for an API path (not /, /_sandbox, /hosted or a served
  // document) skips express's router, which would only walk the routes above to reach the same steps:
  // the access line, apiSteps, the journal, the API router, the error handler. Express's request and
  // response methods stay available (the prototypes are set as express sets them).
  const journal = journalMiddleware(deps);
  const apiLane: Middleware[] = [...apiSteps, journal, apiRoute];
  // app.handle is where express enters its router (express 5's application.js); its types do not declare it.
  const core = app as unknown as { handle(req: Request, res: Response, callback?: NextFunction): void };
  const expressHandle = core.handle.bind(app);
  // Every route is registered by now (the API route and the error handler come last).
  const servedByExpress = expressPaths(app);
  core.handle = (req: Request, res: Response, callback?: NextFunction) => {
    if (callback || servedByExpress(req.url)) return expressHandle(req, res, callback);
    req.res = res;
    res.req = req;
    // A server made with expressMessageClasses(app) made them with these prototypes already; changing
    // an object's prototype per request is one of the costlier steps of a request (an object whose
    // prototype changed after it was made stays slow to read, in node's HTTP code too: setting them
    // per request took a GET from about 60 to about 150 us of CPU).
    if (!app.request.isPrototypeOf(req)) Object.setPrototypeOf(req, app.request);
    if (!app.response.isPrototypeOf(res)) Object.setPrototypeOf(res, app.response);
    res.locals ??= Object.create(null);
    req.originalUrl = req.url;
    req.baseUrl = '';
    req.params = {};
    if (deps.log.level !== 'silent') accessLine(req, res, () => undefined);
    runSteps(apiLane, req, res, (error) => errorHandler(error, req, res, () => undefined));
  };
  return app;
}

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/**
 * The HTTP server for an app, not listening yet: startSandbox listens with it, and the tests hand it to
 * supertest, so both run requests exactly as served (header size limit, time-outs, express's prototypes).
 */
export function createSandboxServer(app: SandboxApp): Server {
  const server = http.createServer(
    {
      maxHeaderSize: LIMITS.headerBytes,
      keepAliveTimeout: LIMITS.keepAliveTimeoutMs,
      headersTimeout: LIMITS.headersTimeoutMs,
      requestTimeout: LIMITS.requestTimeoutMs,
      ...expressMessageClasses(app),
    },
    (req, res) => {
      // A pipelined request whose connection was dropped meanwhile (a client that did not read, see
      // SendGuard): nobody can read its answer, so it is not handled.
      if (!req.socket.destroyed) app(req, res);
    },
  );
  // No idle time-out (node's default, said here): a handler may wait up to two minutes for a
  // scenario's delay, and a live stream is quiet between heartbeats. A client that stops reading
  // is the SendGuard's; one that sends too slowly meets the header and request time-outs above.
  server.timeout = 0;
  return server;
}

/**
 * Request and response classes for node's server (createServer's IncomingMessage and ServerResponse
 * options) whose objects are born with express's methods for `app`, as express would otherwise give
 * them by changing each object's prototype on arrival.
 */
function expressMessageClasses(app: Express): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } {
  class AppRequest extends http.IncomingMessage {}
  class AppResponse<R extends IncomingMessage = IncomingMessage> extends http.ServerResponse<R> {}
  // app.request and app.response inherit from node's own prototypes (express's request.js and response.js).
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  return { IncomingMessage: AppRequest, ServerResponse: AppResponse };
}

/**
 * Report every write of the app's responses to `guard`: write and end are where every byte of an
 * answer starts (the router's JSON, express's send and json, pages, piped files, stream events).
 * Set on app.response, the prototype express gives every response of the app (both lanes, whatever
 * server runs it), rather than on a class of the server's: express's router sets that prototype on
 * each response it handles, so anything set below it would be lost on express's routes.
 */
function reportWrites(responses: object, guard: SendGuard): void {
  type Method = (this: ServerResponse, ...args: unknown[]) => unknown;
  const methods = responses as Record<'write' | 'end', Method>;
  const { write, end } = methods;
  // A write the guard refuses, or one for a pipelined answer finished after its connection was
  // dropped (kept, whole, on a response no socket will ever take), is not made: end() still ends
  // the response and runs its callback.
  methods.write = function (this: ServerResponse, ...args: unknown[]) {
    if (orphaned(this)) {
      letGo(this);
      return false;
    }
    if (!guard.admit(this, args[0])) return false;
    const written = write.apply(this, args);
    guard.wrote(this);
    return written;
  };
  methods.end = function (this: ServerResponse, ...args: unknown[]) {
    if (orphaned(this)) letGo(this);
    if (orphaned(this) || !guard.admit(this, args[0])) return end.call(this, args.find((arg) => typeof arg === 'function'));
    const ended = end.apply(this, args);
    guard.wrote(this);
    return ended;
  };
}

/** What this file reads of a layer of express's router (the router package's lib/layer.js). */
interface RouterLayer {
  /** Middleware used without a path (app.use(fn)): it runs for every request and routes none. */
  slash: boolean;
  /** The path or paths the layer was registered with. */
  rawPath: unknown;
  /** One matcher per path, as express's router runs them: a match object, or false. */
  matchers: Array<(path: string) => unknown>;
}

/**
 * Which request URLs express's own routes answer, read once from the app's router after createApp
 * registered everything: each route (app.get, app.post, ...) and each middleware mounted on a path
 * (app.use('/_sandbox', ...)), matched by express's own matchers, so a route a feature adds on a new
 * path is served by express without another list to keep in step. Pathless middleware (the access
 * line, the shared steps, the journal, the API route) decides nothing and is left out.
 */
function expressPaths(app: Express): (url: string) => boolean {
  const { stack } = (app as unknown as { router: { stack: RouterLayer[] } }).router;
  const layers = stack.filter((layer) => !layer.slash);
  // The first segment of each literal path, lower-cased (express's routing ignores case by default):
  // most API requests are told apart by it alone. A layer whose first segment is a parameter, a
  // pattern or a regular expression sends every request to its matchers.
  const firstSegments = new Set<string>();
  let anyFirst = false;
  for (const layer of layers) {
    for (const path of [layer.rawPath].flat(Infinity)) {
      const first = typeof path === 'string' ? /^\/([^/]*)/.exec(path)?.[1] : undefined;
      if (first === undefined || /[:*{}()[\]\\?+!]/.test(first)) anyFirst = true;
      else firstSegments.add(first.toLowerCase());
    }
  }
  return (url) => {
    let end = url.length;
    const query = url.indexOf('?');
    if (query >= 0) end = query;
    const hash = url.indexOf('#');
    if (hash >= 0 && hash < end) end = hash;
    const path = url.slice(0, end);
    if (!anyFirst) {
      const slash = path.indexOf('/', 1);
      if (!firstSegments.has(path.slice(1, slash < 0 ? undefined : slash).toLowerCase())) return false;
    }
    for (const layer of layers) {
      for (const matcher of layer.matchers) {
        try {
          if (matcher(path)) return true;
        } catch {
          // A parameter express cannot decode: express's router reports it, as it would without the lane.
          return true;
        }
      }
    }
    return false;
  };
}

/** Run middleware in order; an error (passed on or thrown) goes to `fail` and stops the rest. */
function runSteps(steps: Middleware[], req: Request, res: Response, fail: (error: unknown) => void): void {
  let at = 0;
  const next: NextFunction = (error?: unknown) => {
    if (error !== undefined && error !== null && error !== 'route' && error !== 'router') return fail(error);
    const step = steps[at++];
    if (!step) return;
    try {
      step(req, res, next);
    } catch (thrown) {
      fail(thrown);
    }
  };
  next();
}

/**
 * The body parsers, run only when the request has a body (a GET never pays for them): the fast path
 * when it takes the body, else body-parser's parsers in turn; then the door (src/http/storable.ts),
 * before anything else reads the body: a value nested past the limit is a 400 here, never a stack
 * overflow in validation, a handler, the journal or the data file.
 *
 * The server's budget of bodies being received (src/http/body-budget.ts) is kept here, the one place
 * every body passes: a body holds its declared length from its headers until it is parsed or
 * refused (an aborted or timed-out one is refused too).
 */
function bodyParsers(fast: BodyReader, parsers: Middleware[], budget: BodyBudget): Middleware {
  return (req, res, next) => {
    // type-is's hasBody: an empty body with a Content-Length is still a body (JSON's reads as {}).
    const declared = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && declared === undefined) return next();
    const release = budget.hold(BodyBudget.lengthOf(declared));
    if (!release) return next(serverBusy());
    const parsed = (error?: unknown) => {
      release();
      if (error) return next(error);
      try {
        checkBody(req.body, req.headers);
      } catch (refused) {
        return next(refused);
      }
      next();
    };
    if (fast(req, parsed)) return;
    runSteps([...parsers, () => parsed()], req, res, parsed);
  };
}

/** The 503 of a full body budget: the body is left unread, so the connection closes after the answer. */
function serverBusy(): ApiError {
  const size = `${Math.round(LIMITS.bodyBytesInFlight / (1024 * 1024))} MB`;
  return new ApiError(Errors.serverBusy, {
    validation_errors: { body: `arrives while ${size} of other request bodies are being received` },
    headers: { 'Retry-After': '1', Connection: 'close' },
  });
}

export function defaultPrincipal(environment: Environment): Principal {
  return { kind: 'default', partner_id: 'ptn_default', environment, client_id: null, scope: 'read write' };
}

/** Errors raised by the body parsers before routing: malformed JSON, oversized bodies. */
function bodyErrorReply(error: unknown, deps: Deps, req: Request) {
  // The door's refusals (src/http/storable.ts) are HttpErrors already, naming their field.
  if (error instanceof ApiError) return errorReply(error, deps, req);
  const type = (error as { type?: string })?.type;
  if (type === 'entity.parse.failed') {
    return errorReply(new ApiError(Errors.invalidJson, { validation_errors: { body: 'is not valid JSON' } }), deps, req);
  }
  if (type === 'entity.too.large') {
    // Each parser has its own limit (JSON 15 MB, forms and YAML 1 MB): name the one that applied.
    const limit = Number((error as { limit?: number }).limit) || LIMITS.jsonBodyBytes;
    const size = `${Math.round(limit / (1024 * 1024))} MB`;
    return errorReply(new ApiError(Errors.payloadTooLarge, { message: `The request body is larger than ${size}.`, validation_errors: { body: `is larger than ${size}` } }), deps, req);
  }
  const status = (error as { status?: number })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return errorReply(new ApiError(Errors.badRequest, { message: (error as Error).message }), deps, req);
  }
  return errorReply(error, deps, req);
}
