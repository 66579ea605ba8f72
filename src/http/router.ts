// Owns the path from a request to a handler: one match against a matcher compiled once from the
// document, authenticate, validate with the operation's Ajv validators (openapi-backend's, compiled
// once per operation from the document: the document stays the one source of validation), run the
// handler, answer HttpError on any failure, and (when configured) check the answer against the
// document. Used by the partner API and the control plane alike. openapi-backend's own per-request
// pipeline (handleRequest) is not used: it parsed and normalised each request three times.
import type { NextFunction, Request, Response } from 'express';
import { parse as parseQuery } from 'node:querystring';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Context, OpenAPIBackend, Operation } from 'openapi-backend';
import type { Environment } from '../config.js';
import type { Deps } from '../deps.js';
import type { Account } from '../store/store.js';
import { ApiError, Errors } from '../errors.js';
import { handlerFor, linkOrigin, type AnyHandler, type ApiHandlers, type ControlHandlers, type Principal, type Reply, type RequestContext } from './context.js';
import { validationErrors } from './openapi.js';
import { UNROUTED, type ResponseChecker } from './response-check.js';
import { RouteMatcher } from './route-match.js';
import { exchange } from './exchange.js';
import { endInBatch } from './answer-batch.js';
import { DRILL_HEADER, drillAnswer, drillHeader, type DrillSet } from '../scenarios/evolve.js';

/** What a request carries through openapi-backend to the security handlers and the handler. */
export interface RequestState {
  environment: Environment;
  req: Request;
  res: Response;
  principal?: Principal;
  account?: Account;
}

/** A security scheme's check: the principal (or true: passed, no principal), synchronously when it can; throws or rejects to refuse. */
export type SecurityHandler = (c: Context, state: RequestState) => Principal | true | Promise<Principal | true>;

/** Something that may answer before the handler runs (forced responses, scenario rules). */
export type Interceptor = (ctx: RequestContext, operation: Operation) => Promise<Reply | undefined> | Reply | undefined;

export interface OperationRouterOptions {
  deps: Deps;
  backend: OpenAPIBackend;
  handlers: ApiHandlers | ControlHandlers;
  security: Record<string, SecurityHandler>;
  /** Principal for operations that declare no security (or optional security). */
  anonymous: (state: RequestState) => Principal;
  interceptors: Interceptor[];
  /** Set when answers are checked against the document (validateResponses, in tests). */
  responseChecker?: ResponseChecker;
}

/** The fields of a declared parameter (OpenAPI 3.1) that decide how its query value is read. */
interface DeclaredParameter {
  name: string;
  in: string;
  explode?: boolean;
  style?: string;
  content?: Record<string, unknown>;
  schema?: { type?: unknown };
}

/** What one operation needs per request, worked out from the document on its first request. */
interface OperationPlan {
  operation: Operation;
  /** openapi-backend's Ajv validators for the operation (compiled once, through its public API). */
  validators: ValidateFunction[];
  /** Declared query parameters that need more than a string: JSON content, explode: false, arrays. */
  queryParams: Map<string, { json: boolean; explodeFalse: boolean; style?: string; array: boolean }>;
  /** Declared query and path parameters of type integer or number: their text must be a decimal numeral (see numeralProblem). */
  numerals: Array<{ in: 'query' | 'path'; name: string; integer: boolean }>;
  /** The request body's only media type is JSON: a body that is not JSON is a parse error. */
  onlyJson: boolean;
  /** The security requirements (alternatives) and every scheme they name, once each. */
  security: Array<Record<string, string[]>>;
  schemes: string[];
  handler: AnyHandler | undefined;
}

type SecurityResult = { error?: unknown; ok: boolean };
const PASSED: SecurityResult = Object.freeze({ ok: true });
const REFUSED: SecurityResult = Object.freeze({ ok: false });

export class OperationRouter {
  private readonly matcher: RouteMatcher;
  private readonly plans = new Map<Operation, OperationPlan>();

  constructor(private readonly options: OperationRouterOptions) {
    this.matcher = new RouteMatcher(options.backend.getOperations());
  }

  backendFor(): OpenAPIBackend {
    return this.options.backend;
  }

  /** Operations of the document that have no handler (they answer 501). */
  unimplemented(): string[] {
    return this.options.backend.getOperations()
      .map((o) => o.operationId as string)
      .filter((id) => !handlerFor(this.options.handlers, id));
  }

  operationFor(method: string, path: string): Operation | undefined {
    const found = this.matcher.match(method, path);
    return typeof found === 'number' ? undefined : found.operation;
  }

  /**
   * Answer a request whose `path` (prefix stripped) belongs to this document: one route match,
   * security, validation with the operation's precompiled validators, interceptors, the handler, and
   * (when configured) the check of the answer against the document. Every failure is an HttpError.
   */
  handle(req: Request, res: Response, environment: Environment, path: string): void | Promise<void> {
    const { deps } = this.options;
    // A full reset's steps (fixtures loading again), or memory read again from the data file after a
    // failed write, finish before any request is answered.
    const gate = deps.store.gate;
    if (gate) return gate.then(() => this.handle(req, res, environment, path));
    const found = this.matcher.match(req.method, path);
    const operation = typeof found === 'number' ? undefined : found.operation;
    const state = exchange(res);
    state.operationId = operation?.operationId ?? null;
    state.environment = environment;
    // Synchronous from here to the answer when every step is (a known token, no scenario delay, a
    // synchronous handler): the common request makes no promise and waits for no microtask.
    let reply: Reply | Promise<Reply>;
    try {
      if (typeof found === 'number') throw found === 405 ? this.methodNotAllowed(req.method, path) : new ApiError(Errors.routeNotFound);
      reply = this.answer(this.plan(found.operation), found.params, { environment, req, res });
    } catch (error) {
      reply = errorReply(error, deps, req);
    }
    if (reply instanceof Promise) {
      return reply.then((done) => this.reply(res, operation, done), (error: unknown) => this.reply(res, operation, errorReply(error, deps, req)));
    }
    this.reply(res, operation, reply);
  }

  /** 405 for a path the document lists without this method, naming (and sending in Allow) the methods it has. */
  private methodNotAllowed(method: string, path: string): ApiError {
    const allowed = this.matcher.allowedMethods(path).join(', ');
    return new ApiError(Errors.methodNotAllowed, {
      message: `${method.toUpperCase()} is not a method of ${path}: it takes ${allowed}.`,
      validation_errors: { method: `must be one of ${allowed}` },
      headers: { Allow: allowed },
    });
  }

  /** Send the answer, checked against the document first when the router checks answers. */
  private reply(res: Response, operation: Operation | undefined, reply: Reply): void {
    // A body written by a scenario author (respond.body) is sent as written, unchecked.
    const checker = this.options.responseChecker;
    // An answer without an operation (404, 405) is held to the document's x-unrouted-responses.
    if (checker && reply.body !== undefined && !exchange(res).uncheckedReply) {
      reply = checkedAgainstDocument(checker, operation?.operationId ?? UNROUTED, reply);
    }
    send(res, reply);
  }

  private plan(operation: Operation): OperationPlan {
    let plan = this.plans.get(operation);
    if (plan) return plan;
    const parameters = (operation.parameters ?? []) as Array<DeclaredParameter | { $ref: string }>;
    const queryParams: OperationPlan['queryParams'] = new Map();
    const numerals: OperationPlan['numerals'] = [];
    for (const p of parameters) {
      if ('$ref' in p) continue;
      const type = p.schema?.type;
      if ((p.in === 'query' || p.in === 'path') && (type === 'integer' || type === 'number')) numerals.push({ in: p.in, name: p.name, integer: type === 'integer' });
      if (p.in !== 'query') continue;
      const json = Boolean(p.content?.['application/json']);
      const array = p.schema?.type === 'array';
      if (json || p.explode === false || array) queryParams.set(p.name, { json, explodeFalse: p.explode === false, style: p.style, array });
    }
    const content = (operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content ?? {};
    const media = Object.keys(content);
    const security = (operation.security ?? []) as Array<Record<string, string[]>>;
    plan = {
      operation,
      validators: this.options.backend.validator.getRequestValidatorsForOperation(operation.operationId as string) ?? [],
      queryParams,
      numerals,
      onlyJson: media.length === 1 && media[0] === 'application/json',
      security,
      schemes: [...new Set(security.flatMap((requirement) => Object.keys(requirement)))],
      handler: handlerFor(this.options.handlers, operation.operationId as string),
    };
    this.plans.set(operation, plan);
    return plan;
  }

  /** Security first (as the document's order of checks: 401/403 before 400), every scheme once, in order. */
  private answer(plan: OperationPlan, params: Record<string, string>, state: RequestState): Reply | Promise<Reply> {
    if (!plan.security.length) return this.run(plan, this.validated(plan, params, state.req), state);
    const results: SecurityResult[] = [];
    for (const name of plan.schemes) {
      const result = this.runScheme(name, plan.operation, state);
      // A check that answers a promise (a token not verified before): the rest waits for it, in order.
      if (result instanceof Promise) return this.answerAfter(plan, params, state, results, result);
      results.push(result);
    }
    return this.authorized(plan, params, state, results);
  }

  private async answerAfter(plan: OperationPlan, params: Record<string, string>, state: RequestState, results: SecurityResult[], pending: Promise<SecurityResult>): Promise<Reply> {
    results.push(await pending);
    for (const name of plan.schemes.slice(results.length)) results.push(await this.runScheme(name, plan.operation, state));
    return this.authorized(plan, params, state, results);
  }

  /** Past security when one requirement's schemes all passed (`results` follow plan.schemes); then validation and the handler. */
  private authorized(plan: OperationPlan, params: Record<string, string>, state: RequestState, results: SecurityResult[]): Reply | Promise<Reply> {
    const passed = (name: string) => results[plan.schemes.indexOf(name)]?.ok;
    if (!plan.security.some((requirement) => Object.keys(requirement).every(passed))) throw firstSecurityError(results);
    return this.run(plan, this.validated(plan, params, state.req), state);
  }

  /** One scheme's check; a promise only when the check answers one (a token not verified before). */
  private runScheme(name: string, operation: Operation, state: RequestState): SecurityResult | Promise<SecurityResult> {
    const check = this.options.security[name];
    if (!check) return REFUSED;
    const admit = (principal: Principal | true): SecurityResult => {
      if (principal !== true) {
        state.principal = principal;
        state.account = this.options.deps.store.account(principal.partner_id, principal.environment);
        exchange(state.res).account = state.account;
      }
      return PASSED;
    };
    try {
      const principal = check({ operation } as Context, state);
      return principal instanceof Promise ? principal.then(admit, (error: unknown) => ({ ok: false, error })) : admit(principal);
    } catch (error) {
      return { ok: false, error };
    }
  }

  /**
   * The request's parameters and body checked against the operation's schemas, as openapi-backend
   * reads them (query arrays, explode: false, JSON query content, a string body that is JSON), with
   * query and path values coerced to their schema types. A 400 naming every bad field otherwise.
   */
  private validated(plan: OperationPlan, params: Record<string, string>, req: Request): { params: Record<string, string>; query: Record<string, unknown>; headers: Record<string, unknown>; body: unknown } {
    const url = req.url;
    const mark = url.indexOf('?');
    const query = (mark < 0 ? {} : parseQuery(url.slice(mark + 1))) as Record<string, unknown>;
    const errors: ErrorObject[] = [];
    if (plan.queryParams.size) {
      for (const [name, spec] of plan.queryParams) {
        const raw = query[name];
        if (!raw) continue;
        if (spec.json) {
          if (typeof raw === 'string') {
            try {
              const parsed: unknown = JSON.parse(raw);
              query[name] = parsed;
            } catch (error) {
              errors.push(parseError(`/query/${name}`, `#/parameters/${name}`, error));
            }
          }
        } else if (spec.explodeFalse && !(Array.isArray(raw) && raw.length > 1)) {
          const value: unknown = Array.isArray(raw) ? raw[0] : raw;
          if (typeof value === 'string') {
            let decoded = value.replace(/%2C/g, ',');
            if (spec.style === 'spaceDelimited') decoded = decoded.replace(/ /g, ',').replace(/%20/g, ',');
            if (spec.style === 'pipeDelimited') decoded = decoded.replace(/\|/g, ',').replace(/%7C/g, ',');
            query[name] = decoded.split(',');
          }
        }
        if (spec.array && typeof query[name] === 'string') query[name] = [query[name]];
      }
    }
    // Ajv's coercion reads a numeral as JavaScript's Number() does: `0x10` as 16, `1e2` as 100, ` 10`
    // as 10. Only decimal digits reach it; anything else is refused naming the parameter.
    for (const numeral of plan.numerals) {
      const raw = numeral.in === 'query' ? query[numeral.name] : params[numeral.name];
      const why = typeof raw === 'string' ? numeralProblem(raw, numeral.integer) : undefined;
      if (why) errors.push({ keyword: 'numeral', instancePath: `/${numeral.in}/${numeral.name}`, schemaPath: `#/parameters/${numeral.name}`, params: {}, message: why });
    }
    // Not copied: the documents' header parameters are strings, which coercion leaves as they are.
    const headers = req.headers as Record<string, unknown>;
    let body: unknown = req.body;
    // express's parsers give an object (JSON, a form) or a string (a YAML or text body).
    if (typeof body === 'string' && body) {
      try {
        body = JSON.parse(body);
      } catch {
        // reported below when the operation takes only JSON
      }
    }
    if (typeof req.body !== 'object' && req.body !== undefined && plan.onlyJson) {
      try {
        JSON.parse(String(req.body));
      } catch (error) {
        errors.push(parseError('', '#/requestBody', error));
      }
    }
    const parameters: Record<string, unknown> = { path: { ...params }, query, header: headers, cookie: {} };
    const contentType = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (typeof body === 'object' || contentType === 'application/json') parameters.requestBody = body;
    for (const validate of plan.validators) {
      // A loop, not push(...): a body of 200,000 bad items gave more arguments than a call may take (a 500).
      if (!validate(parameters) && validate.errors) for (const error of validate.errors) errors.push(error);
    }
    if (errors.length) throw new ApiError(Errors.validation, { validation_errors: validationErrors(errors) });
    return { params, query: parameters.query as Record<string, unknown>, headers, body };
  }

  private run(plan: OperationPlan, input: ReturnType<OperationRouter['validated']>, state: RequestState): Reply | Promise<Reply> {
    const principal = state.principal ?? this.options.anonymous(state);
    const account = state.account ?? this.options.deps.store.account(principal.partner_id, principal.environment);
    exchange(state.res).account = account;
    const operationId = plan.operation.operationId as string;
    const ctx: RequestContext = {
      deps: this.options.deps,
      account,
      principal,
      operationId,
      params: input.params,
      query: input.query,
      body: input.body,
      headers: input.headers as RequestContext['headers'],
      req: state.req,
      res: state.res,
      // Worked out only by the handlers that write links (it reads the Host header through express).
      get origin() {
        return linkOrigin(this.deps, this.req);
      },
    };
    return this.intercepted(plan, ctx, 0);
  }

  /** The interceptors from `from` on (the first that answers wins), then the handler. */
  private intercepted(plan: OperationPlan, ctx: RequestContext, from: number): Reply | Promise<Reply> {
    const { interceptors } = this.options;
    for (let at = from; at < interceptors.length; at++) {
      const answered = interceptors[at](ctx, plan.operation);
      if (answered instanceof Promise) return answered.then((early) => early ?? this.intercepted(plan, ctx, at + 1));
      if (answered) return answered;
    }
    // Through the interceptors first, so Prefer: code=NNN and scenario rules also answer for operations not built yet.
    const handler = plan.handler;
    if (!handler) throw new ApiError(Errors.notImplemented, { message: `${ctx.operationId} is not implemented by the sandbox yet.` });
    // One unit of work per request: a handler that throws leaves the account as it found it.
    return ctx.account.transaction(() => handler(ctx));
  }
}

/** A decimal integer: digits and an optional minus; no plus sign, space, other base, exponent or separator. */
const DECIMAL_INTEGER = /^-?[0-9]+$/;
/** A decimal number: an integer, optionally with a fraction. */
const DECIMAL_NUMBER = /^-?[0-9]+(?:\.[0-9]+)?$/;

/**
 * Why a query or path value is not the decimal numeral its integer or number parameter takes, or
 * undefined when it is one (an empty value is left to the schema, which refuses it as not a number).
 */
export function numeralProblem(text: string, integer: boolean): string | undefined {
  if (text === '' || (integer ? DECIMAL_INTEGER : DECIMAL_NUMBER).test(text)) return undefined;
  return integer
    ? 'must be an integer in decimal digits (for example 25): no sign +, spaces, 0x, 0b, exponent, separator or fraction'
    : 'must be a number in decimal digits (for example 2.5): no sign +, spaces, 0x, 0b, exponent or separator';
}

/** A value that is not JSON where the document expects JSON, reported like a schema error. */
function parseError(instancePath: string, schemaPath: string, error: unknown): ErrorObject {
  return { keyword: 'parse', instancePath, schemaPath, params: {}, message: (error as Error).message };
}

function firstSecurityError(results: SecurityResult[]): ApiError {
  for (const result of results) {
    if (result.error instanceof ApiError) return result.error;
  }
  return new ApiError(Errors.unauthorized);
}

export function errorReply(error: unknown, deps: Deps, req: Request): Reply {
  if (error instanceof ApiError) return { status: error.status, body: error.body, headers: error.headers };
  deps.log.error({ err: error, method: req.method, path: req.path }, 'unexpected error');
  return { status: 500, body: new ApiError(Errors.internal).body };
}

function checkedAgainstDocument(checker: ResponseChecker, operationId: string, reply: Reply): Reply {
  const problem = checker.check(operationId, reply.status, reply.body);
  if (!problem) return reply;
  const error = new ApiError(Errors.responseInvalid, {
    message: `The ${reply.status} answer of ${operationId} does not match the OpenAPI document.`,
    validation_errors: validationErrors(problem.errors),
  });
  return { status: error.status, body: error.body };
}

/** The answer as the drills reshape it, marked with Sandbox-Drill; a body that is not a JSON object or list is sent as it is. */
function drilledReply(drills: DrillSet, operationId: string, reply: Reply): Reply {
  const headers = { ...reply.headers, [DRILL_HEADER]: drillHeader(drills) };
  if (!reply.body || typeof reply.body !== 'object' || Buffer.isBuffer(reply.body)) return { ...reply, headers };
  return { ...reply, body: drillAnswer(drills, operationId, reply.status, reply.body), headers };
}

export function send(res: Response, reply: Reply): void {
  // A scenario's drop action already cut the connection: nothing is sent.
  const state = exchange(res);
  if (res.headersSent || state.dropped || state.answered) return;
  state.answered = true;
  // Evolution drills reshape the answer here, after the router's response check: the sandbox's own
  // answer is still held to the document, what a drill adds on purpose is not. One property read
  // when no drill fired (only a scenario rule of the request's account sets it).
  if (state.drills && state.operationId) reply = drilledReply(state.drills, state.operationId, reply);
  // Kept for the journal until the response closes (a client that does not read holds it that long).
  if (state.journaled) state.responseBody = reply.body;
  let typed = false;
  if (reply.headers) {
    for (const name of Object.keys(reply.headers)) {
      res.setHeader(name, reply.headers[name]);
      if (name.toLowerCase() === 'content-type') typed = true;
    }
  }
  res.statusCode = reply.status;
  if (reply.body === undefined) return endInBatch(res, undefined);
  // A content type chosen by the reply (a scenario's headers) gets express's charset handling.
  if (typed) return void res.json(reply.body);
  // Serialised once, sent as is: no ETag (no answer of the API is cacheable), no second pass.
  const text = JSON.stringify(reply.body);
  // The journal keeps this text (redacted when read) rather than a copy of the body.
  if (state.journaled) state.responseText = text;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  endInBatch(res, res.req.method === 'HEAD' ? undefined : text);
}

/** Wrap an async express middleware so a rejection reaches the error handler. */
export function asyncMiddleware(fn: (req: Request, res: Response, next: NextFunction) => Promise<void>) {
  return (req: Request, res: Response, next: NextFunction) => void fn(req, res, next).catch(next);
}
