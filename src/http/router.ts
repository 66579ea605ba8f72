// Owns the path from an express request to a handler through openapi-backend: route by operationId,
// authenticate, validate, run the handler, answer HttpError on any failure, and (when configured)
// check the answer against the document. Used by the partner API and the control plane alike.
import type { NextFunction, Request, Response } from 'express';
import type { Context, OpenAPIBackend, Operation } from 'openapi-backend';
import type { Environment } from '../config.js';
import type { Deps } from '../deps.js';
import type { Account } from '../store/store.js';
import { ApiError, Errors } from './errors.js';
import { linkOrigin, type Handler, type HandlerContext, type Principal, type Reply } from './context.js';
import { validationErrors } from './openapi.js';
import type { ResponseChecker } from './response-check.js';

/** What a request carries through openapi-backend to the security handlers and the handler. */
export interface RequestState {
  environment: Environment;
  req: Request;
  res: Response;
  principal?: Principal;
  account?: Account;
}

export type SecurityHandler = (c: Context, state: RequestState) => Promise<Principal | true>;

/** A service name: work every request waits for first (fixtures reloading after a full reset). */
export const PENDING_WORK = 'pendingWork';

/** Something that may answer before the handler runs (forced responses, scenario rules). */
export type Interceptor = (ctx: HandlerContext, operation: Operation) => Promise<Reply | undefined> | Reply | undefined;

export interface OperationRouterOptions {
  deps: Deps;
  backend: OpenAPIBackend;
  handlers: Record<string, Handler>;
  security: Record<string, SecurityHandler>;
  /** Principal for operations that declare no security (or optional security). */
  anonymous: (state: RequestState) => Principal;
  interceptors: Interceptor[];
  /** Set when answers are checked against the document (validateResponses, in tests). */
  responseChecker?: ResponseChecker;
}

export class OperationRouter {
  constructor(private readonly options: OperationRouterOptions) {
    const { backend, handlers, security } = options;
    for (const [name, check] of Object.entries(security)) {
      backend.registerSecurityHandler(name, async (c: Context, state: RequestState) => {
        const principal = await check(c, state);
        if (principal !== true) {
          state.principal = principal;
          state.account = options.deps.store.account(principal.partner_id, principal.environment);
          state.res.locals.account = state.account;
        }
        return true;
      });
    }
    backend.register({
      notFound: () => { throw new ApiError(Errors.routeNotFound); },
      methodNotAllowed: () => { throw new ApiError(Errors.routeNotFound); },
      unauthorizedHandler: (c: Context) => { throw firstSecurityError(c); },
      validationFail: (c: Context) => {
        throw new ApiError(Errors.validation, { validation_errors: validationErrors(c.validation.errors) });
      },
      // Through the interceptors too, so Prefer: code=NNN and scenario rules also answer for operations not built yet.
      notImplemented: (c: Context, state: RequestState) => this.run(() => {
        throw new ApiError(Errors.notImplemented, { message: `${c.operation.operationId} is not implemented by the sandbox yet.` });
      }, c, state),
    });
    for (const [operationId, handler] of Object.entries(handlers)) {
      backend.register(operationId, (c: Context, state: RequestState) => this.run(handler, c, state));
    }
  }

  backendFor(): OpenAPIBackend {
    return this.options.backend;
  }

  /** Operations of the document that have no handler (they answer 501). */
  unimplemented(): string[] {
    return this.options.backend.getOperations()
      .map((o) => o.operationId as string)
      .filter((id) => !this.options.handlers[id]);
  }

  operationFor(method: string, path: string): Operation | undefined {
    return this.options.backend.matchOperation({ method, path, headers: {} }) || undefined;
  }

  /** Express middleware for requests whose `path` (prefix stripped) belongs to this document. */
  async handle(req: Request, res: Response, environment: Environment, path: string): Promise<void> {
    const { deps, backend } = this.options;
    const pending = deps.services.get(PENDING_WORK) as Promise<unknown> | undefined;
    if (pending) await pending;
    const state: RequestState = { environment, req, res };
    const operation = this.operationFor(req.method, path);
    res.locals.operationId = operation?.operationId ?? null;
    res.locals.environment = environment;
    let reply: Reply;
    try {
      reply = await backend.handleRequest(
        { method: req.method, path, query: req.query as Record<string, string>, headers: req.headers as Record<string, string>, body: req.body },
        state,
      );
    } catch (error) {
      reply = errorReply(error, deps, req);
    }
    // A body written by a scenario author (respond.body) is sent as written, unchecked.
    const checker = this.options.responseChecker;
    if (checker && operation?.operationId && reply.body !== undefined && !res.locals.uncheckedReply) {
      reply = checkedAgainstDocument(checker, operation.operationId, reply);
    }
    send(res, reply);
  }

  private async run(handler: Handler, c: Context, state: RequestState): Promise<Reply> {
    const principal = state.principal ?? this.options.anonymous(state);
    const account = state.account ?? this.options.deps.store.account(principal.partner_id, principal.environment);
    state.res.locals.account = account;
    const ctx: HandlerContext = {
      deps: this.options.deps,
      account,
      principal,
      operationId: c.operation.operationId as string,
      params: c.request.params,
      query: c.request.query,
      body: c.request.requestBody,
      headers: c.request.headers,
      req: state.req,
      res: state.res,
      origin: linkOrigin(this.options.deps, state.req),
    };
    for (const intercept of this.options.interceptors) {
      const early = await intercept(ctx, c.operation);
      if (early) return early;
    }
    return handler(ctx);
  }
}

function firstSecurityError(c: Context): ApiError {
  for (const result of Object.values(c.security ?? {})) {
    const error = (result as { error?: unknown } | undefined)?.error;
    if (error instanceof ApiError) return error;
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

export function send(res: Response, reply: Reply): void {
  // A scenario's drop action already cut the connection: nothing is sent.
  if (res.headersSent || res.locals.dropped) return;
  res.locals.responseBody = reply.body;
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (reply.body === undefined) res.status(reply.status).end();
  else res.status(reply.status).json(reply.body);
}

/** Wrap an async express middleware so a rejection reaches the error handler. */
export function asyncMiddleware(fn: (req: Request, res: Response, next: NextFunction) => Promise<void>) {
  return (req: Request, res: Response, next: NextFunction) => void fn(req, res, next).catch(next);
}
