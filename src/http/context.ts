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

export function linkOrigin(deps: Deps, req: Request): string {
  if (deps.config.publicUrl) return deps.config.publicUrl.replace(/\/+$/, '');
  return `${req.protocol}://${req.get('host') ?? `${deps.config.host}:${deps.config.port}`}`;
}
