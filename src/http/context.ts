// Owns the shapes a handler sees: the request context (account, principal, validated input) and
// the reply it returns. Handlers are plain functions from context to reply, typed from the
// operations the two OpenAPI documents generate (npm run gen): an operation's handler sees its own
// path parameters, query and body.
import type { Request, Response } from 'express';
import type { Environment } from '../config.js';
import type { Deps } from '../deps.js';
import type { operations as ApiOperations } from '../generated/api.js';
import type { operations as ControlOperations } from '../generated/control-plane.js';
import type { Account } from '../store/store.js';

export interface Principal {
  kind: 'access' | 'checkout' | 'default';
  partner_id: string;
  environment: Environment;
  client_id: string | null;
  scope: string;
  /** Checkout tokens only: the one customer and invoice they may see. */
  customer_id?: string;
  invoice_id?: string;
}

/** An operation of the partner API or of the control plane (no operationId is in both documents). */
export type ApiOperationId = keyof ApiOperations;
export type ControlOperationId = keyof ControlOperations;
type Operations = ApiOperations & ControlOperations;
export type OperationId = keyof Operations;

/** Nothing declared: an empty record, so reading an undeclared parameter is a type error. */
type Declared<T> = [NonNullable<T>] extends [never] ? Record<never, never> : NonNullable<T>;
/** The body of whichever media type the operation takes; `undefined` too when the body is optional. */
type BodyOf<R> = [NonNullable<R>] extends [never]
  ? undefined
  : NonNullable<R> extends { content: infer C }
    ? C[keyof C] | (undefined extends R ? undefined : never)
    : unknown;

/** What every handler and interceptor sees, whatever the operation: the input as the router read it. */
export interface RequestContext {
  deps: Deps;
  account: Account;
  principal: Principal;
  operationId: string;
  /** Path parameters, query and body, validated against the operation's schemas. */
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  req: Request;
  res: Response;
  /** Origin used in absolute links: --public-url, else the request's own. */
  origin: string;
}

/** The context of one operation: its path parameters, query and body as the document declares them. */
export interface HandlerContext<K extends OperationId> extends Omit<RequestContext, 'operationId' | 'params' | 'query' | 'body'> {
  operationId: K;
  params: Declared<Operations[K]['parameters']['path']>;
  query: Declared<Operations[K]['parameters']['query']>;
  body: BodyOf<Operations[K]['requestBody']>;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler<K extends OperationId> = (ctx: HandlerContext<K>) => Reply | Promise<Reply>;

/** A feature's partner API handlers by operationId, each typed from its own operation. */
export type ApiHandlers = { [K in ApiOperationId]?: Handler<K> };
/** A feature's control-plane handlers by operationId. */
export type ControlHandlers = { [K in ControlOperationId]?: Handler<K> };

/**
 * What the router calls: a handler of some operation, given that operation's validated input.
 * `handlerFor` is the one place the router's loosely typed context meets an operation's own types.
 */
export type AnyHandler = (ctx: RequestContext) => Reply | Promise<Reply>;

export function handlerFor(handlers: ApiHandlers | ControlHandlers, operationId: string): AnyHandler | undefined {
  const handler: unknown = (handlers as Record<string, unknown>)[operationId];
  // The router validated params, query and body against this very operation's schemas (the ones
  // the handler's types are generated from) before calling it, so its context has the handler's shape.
  return typeof handler === 'function' ? (handler as AnyHandler) : undefined;
}

export function ok(body: unknown): Reply {
  return { status: 200, body };
}

export function created(body: unknown): Reply {
  return { status: 201, body };
}

/** A host a URL can carry: a name or IPv4 address, or a bracketed IPv6 address, and an optional port. */
const URL_HOST = /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/**
 * The origin of the links the sandbox hands out (hosted pages, signed files): --public-url, else the
 * request's own (behind a proxy, the X-Forwarded-Proto and Host it passes on). A scheme other than
 * http or https, or a Host no URL can carry, falls back to http and the server's own address: a
 * link must always be a URL (the fuzzer found `X-Forwarded-Proto: *` answering `*://...`).
 */
export function linkOrigin(deps: Deps, req: Request): string {
  if (deps.config.publicUrl) return deps.config.publicUrl.replace(/\/+$/, '');
  const protocol = req.protocol === 'https' ? 'https' : 'http';
  const host = req.get('host');
  if (host && URL_HOST.test(host)) return `${protocol}://${host}`;
  const own = deps.config.host.includes(':') ? `[${deps.config.host}]` : deps.config.host;
  return `${protocol}://${own}:${deps.config.port}`;
}
