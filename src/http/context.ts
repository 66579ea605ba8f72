// Owns the shapes a handler sees: the request context (account, principal, validated input) and
// the reply it returns. Handlers are plain functions from context to reply.
import type { Request, Response } from 'express';
import type { Environment } from '../config.js';
import type { Deps } from '../deps.js';
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

export interface HandlerContext<Body = any, Query = any, Params = any> {
  deps: Deps;
  account: Account;
  principal: Principal;
  operationId: string;
  params: Params;
  query: Query;
  body: Body;
  headers: Record<string, string | string[] | undefined>;
  req: Request;
  res: Response;
  /** Origin used in absolute links: --public-url, else the request's own. */
  origin: string;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (ctx: HandlerContext) => Reply | Promise<Reply>;

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
