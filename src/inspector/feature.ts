// Owns the web inspector: the page at /_sandbox/ui (HTML, script and style shipped in the package's
// inspector/ folder, read once when first asked for) and the control-plane reads it is built on:
// the accounts with their object counts, a page of objects of one kind (searchable, on the API's own
// indexed collections), one object with its history and allowed next moves, the account's events,
// and resuming a paused delivery queue. The page picks an account with `X-Sandbox-Account` (see
// resolveControlPrincipal); everything else it does goes through the existing control plane.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Express, Request, Response } from 'express';
import type { Deps } from '../deps.js';
import type { Feature } from '../feature.js';
import { DEFAULT_PARTNER_ID } from '../auth/partners.js';
import { fromLoopback, type ControlPrincipal } from '../control/handlers.js';
import { allowedEvents } from '../domain/machine.js';
import { ApiError, Errors } from '../errors.js';
import { eventLog, type EventRecord } from '../events/events.js';
import { linkOrigin, ok, type Handler } from '../http/context.js';
import { INSPECTOR_PATH } from '../http/landing.js';
import { pageParams } from '../http/pagination.js';
import { accountId, type Account } from '../store/store.js';
import { webhookQueue } from '../webhooks/queue.js';
import { OBJECT_KINDS, objectKind, type ObjectKind } from './kinds.js';

const ENVIRONMENTS = ['production', 'demo'] as const;

/** The stored events of one entity the detail view shows, newest first. */
const ENTITY_EVENTS = 50;

function eventView(event: EventRecord) {
  return { id: event.id, idempotency_key: event.idempotency_key, topic: event.topic, entity_id: event.entity_id, timestamp: event.timestamp, data: event.data };
}

/** Object counts of an account, without opening one that was never used (a read writes nothing). */
function counts(deps: Deps, partnerId: string, environment: (typeof ENVIRONMENTS)[number]): Record<string, number> {
  const opened = Object.hasOwn(deps.store.data.accounts, accountId(partnerId, environment));
  const account = opened ? deps.store.account(partnerId, environment) : undefined;
  return Object.fromEntries(OBJECT_KINDS.map((k) => [k.name, account ? visibleCount(k, account) : 0]));
}

/**
 * How many objects of a kind the list shows. A kind with hidden objects (the CLI's forwarder
 * subscriptions) is counted by walking it: only webhook subscriptions have any, at most 50 active
 * and 100 deleted per account (src/limits.ts), so the walk is bounded.
 */
function visibleCount(kind: ObjectKind<{ id: string }>, account: Account): number {
  const collection = kind.collection(account);
  if (!kind.hidden) return collection.size;
  let count = 0;
  for (const item of collection.newest()) if (!kind.hidden(item)) count += 1;
  return count;
}

/** The partners a caller may inspect: every one with the admin token or from a loopback caller without one configured, else its own. */
function visiblePartners(deps: Deps, req: Request, principal: ControlPrincipal): string[] {
  const all = Object.keys(deps.store.data.partners);
  if (principal.kind === 'access') return [principal.partner_id];
  if (principal.admin || (!deps.config.adminToken && fromLoopback(req))) return all;
  return all.filter((id) => id === DEFAULT_PARTNER_ID);
}

const listAccounts: Handler<'sandboxListAccounts'> = ({ deps, req, principal }) => {
  const partners = visiblePartners(deps, req, principal as ControlPrincipal);
  const data = partners.flatMap((partnerId) => {
    const partner = deps.store.data.partners[partnerId];
    return ENVIRONMENTS.map((environment) => ({
      account: `${partnerId}:${environment}`,
      partner_id: partnerId,
      partner_name: partner.name,
      environment,
      counts: counts(deps, partnerId, environment),
    }));
  });
  return ok({ data });
};

function requireKind(name: string): ObjectKind<{ id: string }> {
  const kind = objectKind(name);
  // The schema's enum refuses other names first; this keeps a stray call from reaching a collection.
  if (!kind) throw new ApiError(Errors.notFound, { message: `No kind of object named ${name}.` });
  return kind;
}

const listObjects: Handler<'sandboxListObjects'> = ({ deps, account, params, query, req }) => {
  const kind = requireKind(params.kind);
  const needle = typeof query.q === 'string' ? query.q.trim().toLowerCase() : '';
  const status: string | undefined = query.status;
  const matches = (item: Record<string, unknown>) =>
    (!needle || item.id === needle || String(item.id).toLowerCase().includes(needle)
      || kind.searchFields.some((f) => typeof item[f] === 'string' && item[f].toLowerCase().includes(needle)));
  const page = kind.collection(account).page({
    ...pageParams(query),
    where: status && kind.statusIndexed ? { field: 'status', value: status } : undefined,
    filter: (item) => !kind.hidden?.(item) && (!status || kind.status(item) === status) && matches(item),
  });
  const ctx = { deps, account, origin: linkOrigin(deps, req) };
  return ok({ ...page, data: page.data.map((item) => ({ id: item.id, status: kind.status(item), object: kind.view(ctx, item) })) });
};

const getObject: Handler<'sandboxGetObject'> = ({ deps, account, params, req }) => {
  const kind = requireKind(params.kind);
  const item = kind.collection(account).get(params.id);
  if (!item || kind.hidden?.(item)) throw new ApiError(Errors.notFound, { message: `No ${kind.label} with id ${params.id}.` });
  const status = kind.status(item);
  const machine = kind.machine;
  const moves = machine && status !== null
    ? allowedEvents(machine, status).map((event) => ({ event, to: machine.table[status][event]!, by: machine.internal?.includes(event) ? 'sandbox' : 'partner' }))
    : null;
  const events = eventLog(account).page({ limit: ENTITY_EVENTS, where: { field: 'entity_id', value: item.id } }).data.map(eventView);
  return ok({
    kind: kind.name,
    id: item.id,
    status,
    object: kind.view({ deps, account, origin: linkOrigin(deps, req) }, item),
    status_history: kind.history ? kind.history(item) : null,
    next_moves: moves,
    events,
  });
};

const listEvents: Handler<'sandboxListEvents'> = ({ account, query }) => {
  const where = query.entity_id ? { field: 'entity_id', value: query.entity_id }
    : query.topic ? { field: 'topic', value: query.topic as string } : undefined;
  const page = eventLog(account).page({
    ...pageParams(query),
    where,
    filter: query.entity_id && query.topic ? (e) => e.topic === query.topic : undefined,
  });
  return ok({ ...page, data: page.data.map(eventView) });
};

const INSPECTOR_DIR = fileURLToPath(new URL('../../inspector/', import.meta.url));

const ASSETS: Record<string, { file: string; type: string }> = {
  '': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};
const loaded = new Map<string, Buffer>();

/** The page and its two assets: public (the page asks for the admin token itself), no script but our own. */
function servePage(req: Request, res: Response): void {
  const asset = ASSETS[req.path.slice(INSPECTOR_PATH.length)];
  if (!asset) {
    res.status(404).json({ code: 'not_found', message: 'No such file of the inspector.', validation_errors: null });
    return;
  }
  let bytes = loaded.get(asset.file);
  if (!bytes) loaded.set(asset.file, (bytes = readFileSync(`${INSPECTOR_DIR}${asset.file}`)));
  res.status(200)
    .type(asset.type)
    .setHeader('Cache-Control', 'no-store')
    .setHeader('X-Content-Type-Options', 'nosniff')
    .setHeader('Referrer-Policy', 'no-referrer')
    .setHeader('Content-Security-Policy', "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    .send(bytes);
}

/** Registered before the control plane's admin check: the page itself holds nothing but code. */
export function inspectorPageRoutes(app: Express): void {
  app.get([INSPECTOR_PATH, `${INSPECTOR_PATH}/`, `${INSPECTOR_PATH}/app.js`, `${INSPECTOR_PATH}/app.css`], servePage);
}

export const inspectorFeature: Feature = {
  name: 'inspector',
  control: {
    sandboxListAccounts: listAccounts,
    sandboxListObjects: listObjects,
    sandboxGetObject: getObject,
    sandboxListEvents: listEvents,
    sandboxRetryWebhooks: ({ deps, account }) => ok({ success: true, resumed: webhookQueue(deps).resume(account) }),
  },
  pages: [{ path: INSPECTOR_PATH, title: 'Web inspector', description: 'every account\'s objects, events and deliveries live, the journal, the clock and scenarios' }],
};
