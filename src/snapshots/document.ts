// Owns the snapshot document: what an account's data becomes when saved (capture), the account data a
// snapshot gives back for a restore (materialise), its export with every secret redacted, and the
// checks an imported document passes before anything is kept (checkDocument).
//
// One JSON layout serves all three: a small envelope (format, name, where it came from, counts), then
// the account's clock, counters, due jobs, module state and collections, each collection's objects in
// insertion order (with the order itself, base and epoch when tombstones or a trim make them differ
// from the objects'). A saved snapshot keeps it as UTF-8 bytes (a Buffer: outside the JavaScript heap).
//
// Left out of every snapshot, by design: stored documents (uploaded PDFs and bill files: their bytes
// live on disk, and a restore gives the account none), the CLI's stream forwarders (subscriptions that
// live as long as a stream), and the account's token generation (a restore changes data, not who may
// call: tokens valid before it stay valid). The request journal is not account data and is not kept.
import type { Environment } from '../config.js';
import { checkStorable, type DoorRules } from '../http/storable.js';
import { ApiError, Errors } from '../errors.js';
import { isSecretField } from '../journal/redact.js';
import { LIMITS } from '../limits.js';
import { TEST_ACCOUNT_FAILURES } from '../domain/vendor-payments/records.js';
import type { CollectionData } from '../store/collection.js';
import { isDefinedCollection, itemText } from '../store/cold-item.js';
import { isDeclaredState, stateProblems } from '../store/module-state.js';
import { parseScenario } from '../scenarios/document.js';
import type { Account, AccountData, JobData } from '../store/store.js';
import { subscriptions, type Subscription } from '../webhooks/subscriptions.js';

export const SNAPSHOT_FORMAT = 'billing-sandbox-snapshot';
export const SNAPSHOT_VERSION = 1;

/** A snapshot's name: what a partner types in a URL, a file name and a command line alike. */
export const SNAPSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const SNAPSHOT_NAME_RULE = 'must be 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit';

/** Module state a snapshot leaves out (see the file's header). */
const LEFT_OUT_STATE = new Set(['blobs', 'blob_sizes', 'stream_forwarders', 'tokens']);
/** Module state the target account keeps through a restore. */
const KEPT_STATE = ['tokens'];

/** What a list shows of a snapshot, without reading its content. */
export interface SnapshotSummary {
  name: string;
  /** The account it was saved from (`partner_id:environment`), as the document says. */
  account: string;
  environment: Environment;
  created_at: string;
  /** Stored objects of each collection (events and webhook history included). */
  counts: Record<string, number>;
  /** Size of the saved document, in bytes. */
  bytes: number;
  /** True when it was imported from an export: its secrets were redacted then, and a restore carries the masks. */
  redacted: boolean;
}

export interface SavedSnapshot {
  partner_id: string;
  summary: SnapshotSummary;
  /** The whole document, as JSON in UTF-8. */
  body: Buffer;
}

export interface SnapshotCollection {
  items: Array<{ id: string }>;
  /** Present when it differs from the items' ids: tombstones of hard-deleted objects among them. */
  order?: string[];
  base?: number;
  epoch?: number;
}

export interface SnapshotDocument {
  format: typeof SNAPSHOT_FORMAT;
  version: number;
  name: string;
  account: string;
  environment: Environment;
  created_at: string;
  redacted: boolean;
  counts: Record<string, number>;
  clock: { offset_ms: number };
  counters: Record<string, number>;
  jobs: JobData[];
  state: Record<string, unknown>;
  collections: Record<string, SnapshotCollection>;
}

/** 413 for a snapshot larger than one may be. */
function tooLarge(bytes: number | string): ApiError {
  return new ApiError(Errors.payloadTooLarge, {
    message: `The snapshot would be ${typeof bytes === 'number' ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : bytes}; one snapshot may be at most ${LIMITS.snapshotBytes / 1024 / 1024} MB. Remove some history or scenarios first, or save a smaller account.`,
  });
}

/** A subscription made for a CLI stream (see src/stream/forwarders.ts): not part of a snapshot. */
function isForwarder(item: unknown): boolean {
  return typeof item === 'object' && item !== null && Boolean((item as Subscription).forwarder);
}

/** JSON of an envelope field list, in a fixed order (the export and the saved document share it). */
function envelope(fields: Omit<SnapshotDocument, 'clock' | 'counters' | 'jobs' | 'state' | 'collections'>): string {
  const { format, version, name, account, environment, created_at, redacted, counts } = fields;
  return JSON.stringify({ format, version, name, account, environment, created_at, redacted, counts }).slice(0, -1);
}

/**
 * The account's data as a snapshot document, read in one synchronous step (nothing else runs
 * meanwhile, so it is the account as it stands between two units of work). Objects a data file left
 * as text (cold) are copied as that text, never parsed. 413 when it would be larger than one may be.
 */
export function capture(account: Account, name: string, createdAt: string): SavedSnapshot {
  const data = account.data;
  const counts: Record<string, number> = {};
  const collections: string[] = [];
  let chars = 0;
  const forwarders = subscriptions(account).name;
  if (forwarders !== subscriptionsName) throw new Error(`webhook subscriptions are stored as ${forwarders}`);
  for (const [collection, c] of Object.entries(data.collections)) {
    const texts: string[] = [];
    let gaps = false;
    for (const id of c.order) {
      const item = c.items.get(id);
      if (item === undefined || (collection === forwarders && isForwarder(item))) {
        gaps = true;
        continue;
      }
      const text = itemText(item, c.cold);
      chars += text.length + 1;
      // Characters are at most bytes: past the cap in characters is past it in bytes, before the copy is made.
      if (chars > LIMITS.snapshotBytes) throw tooLarge(`more than ${LIMITS.snapshotBytes / 1024 / 1024} MB`);
      texts.push(text);
    }
    counts[collection] = texts.length;
    let head = '';
    if (c.base !== undefined) head += `"base":${c.base},`;
    if (c.epoch !== undefined) head += `"epoch":${c.epoch},`;
    if (gaps) head += `"order":${JSON.stringify(c.order)},`;
    collections.push(`${JSON.stringify(collection)}:{${head}"items":[${texts.join(',')}]}`);
  }
  const state: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data.state)) if (!LEFT_OUT_STATE.has(key)) state[key] = value;
  const environment = account.environment;
  const summary: Omit<SnapshotSummary, 'bytes'> = { name, account: account.id, environment, created_at: createdAt, counts, redacted: false };
  const text = `${envelope({ format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, ...summary })},"clock":{"offset_ms":${data.clock.offset_ms}},"counters":${JSON.stringify(data.counters)},"jobs":${JSON.stringify(data.jobs)},"state":${JSON.stringify(state)},"collections":{${collections.join(',')}}}`;
  const body = Buffer.from(text);
  if (body.length > LIMITS.snapshotBytes) throw tooLarge(body.length);
  return { partner_id: account.partnerId, summary: { ...summary, bytes: body.length }, body };
}

/**
 * The account data a snapshot gives `target` (its id, partner and environment; every object keeps its
 * id), made of fresh objects: nothing of it is shared with the snapshot or another account. The
 * target's token generation stays as it is.
 */
export function materialise(body: Buffer, target: Account): AccountData {
  const doc = JSON.parse(body.toString('utf8')) as SnapshotDocument;
  const collections: Record<string, CollectionData<unknown>> = {};
  for (const [name, c] of Object.entries(doc.collections)) {
    const items = new Map<string, { id: string }>();
    for (const item of c.items) items.set(item.id, item);
    const data: CollectionData<{ id: string }> = { items, order: c.order ?? c.items.map((item) => item.id) };
    if (c.base !== undefined) data.base = c.base;
    if (c.epoch !== undefined) data.epoch = c.epoch;
    collections[name] = data;
  }
  const state = doc.state;
  const before = target.data.state;
  for (const key of KEPT_STATE) if (Object.hasOwn(before, key)) state[key] = structuredClone(before[key]);
  return {
    id: target.id,
    partner_id: target.partnerId,
    environment: target.environment,
    clock: { offset_ms: doc.clock.offset_ms },
    counters: doc.counters,
    collections,
    jobs: doc.jobs,
    state,
  };
}

/** An account number a document lists as a test value (docs/test-values.md): public, kept by an export. */
const TEST_VALUES = new Set(Object.keys(TEST_ACCOUNT_FAILURES));

/**
 * A secret's value as an export writes it: `redacted`, and its last four characters when it has at
 * least eight (what the API shows of it anyway: `secret_last_4_digits`, `account_mask`).
 */
export function redactedValue(value: string): string {
  if (TEST_VALUES.has(value)) return value;
  return value.length >= 8 ? `redacted-${value.slice(-4)}` : 'redacted';
}

/**
 * The document as an export gives it: every string under a field named like a secret (webhook
 * secret_key, bank account_number, tokens, passwords; the request journal's rule) replaced by a mask,
 * and `redacted: true`. A restore of the saved snapshot is exact; an import of its export restores
 * everything but those secrets.
 */
export function exportDocument(saved: SavedSnapshot): SnapshotDocument {
  const doc = JSON.parse(saved.body.toString('utf8'), (key, value: unknown) => {
    if (typeof value === 'string' && value !== '' && isSecretField(key)) return redactedValue(value);
    return value;
  }) as SnapshotDocument;
  doc.redacted = true;
  return doc;
}

/** Problems found in a document, by field path; a few at most (the first ones found). */
class Problems {
  readonly fields: Record<string, string> = {};
  private count = 0;

  constructor(private readonly prefix: string) {}

  add(path: string, message: string): void {
    if (this.count >= 20) return;
    this.count += 1;
    const field = path ? `${this.prefix}${path}` : this.prefix.replace(/\.$/, '') || 'body';
    this.fields[field] ??= message;
  }

  get any(): boolean {
    return this.count > 0;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const CLOCK_RANGE_MS = Date.parse(LIMITS.clockLatest);

/** The stored name of the webhook subscriptions collection. */
const subscriptionsName = 'webhook_subscriptions';

function checkCollection(name: string, value: unknown, problems: Problems): void {
  const at = `collections.${name}`;
  if (!/^[a-z_]+$/.test(name) || !isDefinedCollection(name)) return problems.add(at, 'is not a collection this sandbox keeps');
  if (!isObject(value)) return problems.add(at, 'must be an object with items');
  for (const key of Object.keys(value)) if (!['items', 'order', 'base', 'epoch'].includes(key)) problems.add(`${at}.${key}`, 'is not a field of a snapshot collection');
  for (const field of ['base', 'epoch'] as const) if (value[field] !== undefined && !isCount(value[field])) problems.add(`${at}.${field}`, 'must be a non-negative integer');
  const items = value.items;
  if (!Array.isArray(items)) return problems.add(`${at}.items`, 'must be an array of objects');
  const ids = new Set<string>();
  for (let i = 0; i < items.length; i++) {
    const item: unknown = items[i];
    if (!isObject(item) || typeof item.id !== 'string' || !item.id) {
      problems.add(`${at}.items[${i}].id`, 'must be a non-empty string (each item is an object with an id)');
      continue;
    }
    if (ids.has(item.id)) problems.add(`${at}.items[${i}].id`, `repeats the id ${item.id}`);
    ids.add(item.id);
    // A CLI stream's subscription lives as long as its stream: a snapshot never carries one.
    if (name === subscriptionsName && isForwarder(item)) problems.add(`${at}.items[${i}].forwarder`, 'marks a command-line stream\'s subscription, which a snapshot never carries');
  }
  if (value.order === undefined) return;
  const order = value.order;
  if (!Array.isArray(order) || !order.every((id) => typeof id === 'string')) return problems.add(`${at}.order`, 'must be an array of ids');
  // The order lists every item, in the items' order, with tombstones (ids of no item) among them.
  const seen = new Set<string>();
  let next = 0;
  for (const id of order) {
    if (seen.has(id)) return problems.add(`${at}.order`, `repeats the id ${id}`);
    seen.add(id);
    if (!ids.has(id)) continue;
    if ((items[next] as { id: string }).id !== id) return problems.add(`${at}.order`, 'must list the items in the same order as items');
    next += 1;
  }
  if (next !== items.length) problems.add(`${at}.order`, 'must list every item\'s id');
}

/** Each scenario document an import brings passes the checks of POST /_sandbox/scenarios. */
function checkScenarios(value: unknown, problems: Problems): void {
  if (!Array.isArray(value)) return;
  value.forEach((scenario: unknown, i) => {
    if (!isObject(scenario)) return;
    try {
      parseScenario(scenario.document);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      for (const [field, message] of Object.entries(error.validationErrors)) problems.add(`state.scenarios[${i}].document${field === 'body' ? '' : `.${field}`}`, message);
    }
  });
}

function checkJobs(value: unknown, problems: Problems): void {
  if (!Array.isArray(value)) return problems.add('jobs', 'must be an array');
  let previous = -Infinity;
  value.forEach((job: unknown, i) => {
    if (!isObject(job)) return problems.add(`jobs[${i}]`, 'must be an object with id, at, kind and payload');
    if (typeof job.id !== 'string' || !job.id) problems.add(`jobs[${i}].id`, 'must be a non-empty string');
    if (typeof job.kind !== 'string' || !job.kind) problems.add(`jobs[${i}].kind`, 'must be a non-empty string');
    if (!isObject(job.payload)) problems.add(`jobs[${i}].payload`, 'must be an object');
    if (typeof job.at !== 'number' || !Number.isFinite(job.at) || Math.abs(job.at) > CLOCK_RANGE_MS) problems.add(`jobs[${i}].at`, 'must be a time in milliseconds');
    else if (job.at < previous) problems.add(`jobs[${i}].at`, 'must not be earlier than the job before it (jobs are kept in time order)');
    else previous = job.at;
  });
}

/**
 * An imported document, checked before anything is kept: the envelope, the clock, counters and jobs,
 * module state against the schemas its modules declare, each collection's items and order, and a
 * bound on nesting (JSON.stringify must be able to write it again). Objects are kept as the document
 * holds them: an object edited into a shape the sandbox never writes may make reads of it fail.
 * Answers 400 naming the fields (prefixed by `prefix`); first, the door every stored value goes
 * through (src/http/storable.ts: nesting, cycles, size, values JSON cannot hold), 400 or 413 naming where.
 */
/** What the door allows an imported snapshot document. */
const SNAPSHOT_RULES: DoorRules = { what: 'The snapshot document', depth: LIMITS.snapshotDepth, bytes: LIMITS.snapshotBytes, values: Infinity };

export function checkDocument(value: unknown, prefix = 'document.'): SnapshotDocument {
  const problems = new Problems(prefix);
  const fail = () => new ApiError(Errors.validation, { message: 'The snapshot document is invalid; nothing was changed.', validation_errors: problems.fields });
  if (!isObject(value)) {
    problems.add('', 'must be a snapshot document (an object)');
    throw fail();
  }
  checkStorable(value, SNAPSHOT_RULES);
  if (value.format !== SNAPSHOT_FORMAT) problems.add('format', `must be ${SNAPSHOT_FORMAT}`);
  if (value.version !== SNAPSHOT_VERSION) problems.add('version', `must be ${SNAPSHOT_VERSION} (this sandbox reads version ${SNAPSHOT_VERSION})`);
  if (typeof value.name !== 'string' || !SNAPSHOT_NAME.test(value.name)) problems.add('name', SNAPSHOT_NAME_RULE);
  if (value.environment !== 'production' && value.environment !== 'demo') problems.add('environment', 'must be production or demo');
  if (typeof value.account !== 'string' || !/^[A-Za-z0-9_-]{1,64}:(production|demo)$/.test(value.account)) problems.add('account', 'must be partner_id:environment');
  if (value.created_at !== undefined && (typeof value.created_at !== 'string' || Number.isNaN(Date.parse(value.created_at)))) problems.add('created_at', 'must be an RFC 3339 time');
  const clock = value.clock;
  if (!isObject(clock) || typeof clock.offset_ms !== 'number' || !Number.isFinite(clock.offset_ms) || Math.abs(clock.offset_ms) > CLOCK_RANGE_MS) {
    problems.add('clock.offset_ms', 'must be a number of milliseconds');
  }
  if (!isObject(value.counters)) problems.add('counters', 'must be an object of non-negative integers');
  else for (const [key, count] of Object.entries(value.counters)) if (!isCount(count)) problems.add(`counters.${key}`, 'must be a non-negative integer');
  checkJobs(value.jobs, problems);
  if (!isObject(value.state)) problems.add('state', 'must be an object');
  else {
    for (const key of Object.keys(value.state)) {
      if (LEFT_OUT_STATE.has(key)) problems.add(`state.${key}`, 'is not carried by a snapshot');
      else if (!isDeclaredState(key)) problems.add(`state.${key}`, 'is not module state this sandbox keeps');
    }
    for (const [key, path, message] of stateProblems(value.state)) problems.add(`state.${key}${path.replaceAll('/', '.')}`, message);
    checkScenarios(value.state.scenarios, problems);
  }
  if (!isObject(value.collections)) problems.add('collections', 'must be an object of collections');
  else for (const [name, c] of Object.entries(value.collections)) checkCollection(name, c, problems);
  if (problems.any) throw fail();
  const doc = value as unknown as SnapshotDocument;
  checkIdCounter(doc, problems);
  if (problems.any) throw fail();
  return doc;
}

/** Ids the sandbox makes (`prefix_` and 20 hex digits of a digest of the seed, account and counter). */
const MADE_ID = /^[a-z]+_[0-9a-f]{20}$/;

/**
 * New ids continue from `counters.ids`, and every id the sandbox made for the document's objects and
 * jobs took one step of it: a counter below their number was edited down, and a create after the
 * restore could meet an id the document holds. (A counter edited to a value above that number but
 * below the highest step used is not found here.)
 */
function checkIdCounter(doc: SnapshotDocument, problems: Problems): void {
  let made = 0;
  for (const c of Object.values(doc.collections)) {
    for (const id of c.order ?? c.items.map((item) => item.id)) if (MADE_ID.test(id)) made += 1;
  }
  for (const job of doc.jobs) if (MADE_ID.test(job.id)) made += 1;
  const counter = doc.counters.ids ?? 0;
  if (counter < made) problems.add('counters.ids', `must be at least ${made}, the ids the document's objects and jobs hold: new ids continue from it`);
}

/**
 * A checked document kept as a snapshot named `name` of the partner: written again in the saved
 * layout (counts made from its items, created now). 413 when larger than one snapshot may be.
 */
export function fromDocument(doc: SnapshotDocument, partnerId: string, name: string, createdAt: string): SavedSnapshot {
  const counts: Record<string, number> = {};
  const collections: string[] = [];
  for (const [collection, c] of Object.entries(doc.collections)) {
    counts[collection] = c.items.length;
    const { items, order, base, epoch } = c;
    collections.push(`${JSON.stringify(collection)}:${JSON.stringify({ base, epoch, order, items })}`);
  }
  const summary: Omit<SnapshotSummary, 'bytes'> = { name, account: doc.account, environment: doc.environment, created_at: createdAt, counts, redacted: doc.redacted === true };
  const text = `${envelope({ format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, ...summary })},"clock":{"offset_ms":${doc.clock.offset_ms}},"counters":${JSON.stringify(doc.counters)},"jobs":${JSON.stringify(doc.jobs)},"state":${JSON.stringify(doc.state)},"collections":{${collections.join(',')}}}`;
  const body = Buffer.from(text);
  if (body.length > LIMITS.snapshotBytes) throw tooLarge(body.length);
  return { partner_id: partnerId, summary: { ...summary, bytes: body.length }, body };
}
