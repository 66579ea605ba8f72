// Owns the evolution drills' transform: an answer or a webhook body as a later, backward-compatible
// release of the API could send it (fields the document does not name, a status it does not list,
// the same fields in another order), drawn from a seed and guided by the document's schema of that
// answer. It builds a new value from the one given: what is stored never changes.
import type { Document } from 'openapi-backend';
import { loadDocument } from '../http/openapi.js';
import { atPointer } from '../http/json-pointer.js';
import { createRandom, type Random } from '../random.js';

/** The drills, in the order they shape a value: new statuses first (on the documented fields), then extra fields, then the order. */
export const EVOLUTION_DRILLS = ['new_enum_values', 'unknown_fields', 'reordered_fields'] as const;
export type EvolutionDrill = (typeof EVOLUTION_DRILLS)[number];

/** The response (and delivery) header naming the drills that shaped a body. */
export const DRILL_HEADER = 'Sandbox-Drill';

/** The drills that fired for one answer or delivery, and the seed their draws come from. */
export interface DrillSet {
  names: EvolutionDrill[];
  seed: string;
}

/** The header's value: the drills that fired, in the order of EVOLUTION_DRILLS, comma-separated. */
export function drillHeader(set: DrillSet): string {
  return EVOLUTION_DRILLS.filter((d) => set.names.includes(d)).join(', ');
}

type Schema = Record<string, unknown>;

/** What a list of schemas (a value may meet several: allOf, oneOf and anyOf branches) says about a value. */
interface Flat {
  /** Each named property's schemas. */
  props: Map<string, Schema[]>;
  /** The schemas of an array's items. */
  items: Schema[];
  /** The schemas of a map's values (additionalProperties). */
  values: Schema[];
  /** Some branch names properties, and none takes others: an object a new field is unknown to. */
  closed: boolean;
  /** The strings an enum (or const) of the value lists. */
  enums: Set<string>;
}

/** Field names that read as a status: the fields new_enum_values gives a value the document does not list. */
function statusLike(key: string): boolean {
  return key === 'status' || key.endsWith('_status');
}

/**
 * Fields a later release might add, with a realistic value drawn from the seed. Any name the document
 * uses anywhere is left out when the drill runs (see unnamed()), so an added field is never one a
 * client could know.
 */
const EXTRA_FIELDS: Array<[name: string, value: (r: Random) => unknown]> = [
  ['external_reference', (r) => `ext_${r.hex(12)}`],
  ['risk_score', (r) => Math.round(r.next() * 1000) / 1000],
  ['tax_region', (r) => pick(r, ['US-CA', 'US-NY', 'US-TX', 'US-WA', 'CA-ON'])],
  ['preferred_locale', (r) => pick(r, ['en-US', 'en-CA', 'fr-CA', 'es-US'])],
  ['last_synced_at', (r) => `2026-0${r.int(1, 9)}-1${r.int(0, 9)}T0${r.int(0, 9)}:${r.int(10, 59)}:00.000Z`],
  ['sync_version', (r) => r.int(2, 48)],
  ['is_priority', (r) => r.next() < 0.5],
  ['erp_reference', (r) => `ERP-${r.int(10000, 99999)}`],
  ['workflow_stage', (r) => pick(r, ['intake', 'review', 'settled'])],
  ['custom_fields', (r) => ({ cost_center: `CC-${r.int(100, 999)}`, region: pick(r, ['west', 'east', 'north']) })],
  ['labels', (r) => [pick(r, ['priority', 'recurring', 'migrated']), `q${r.int(1, 4)}`]],
  ['channel', (r) => pick(r, ['portal', 'api', 'mobile'])],
  ['origin_system', (r) => pick(r, ['netsuite', 'quickbooks', 'sage_intacct'])],
  ['approval_chain_id', (r) => `apc_${r.hex(10)}`],
  ['settlement_window_days', (r) => r.int(1, 5)],
  ['compliance_flags', () => []],
  ['deprecation_notice', () => null],
  ['localized_labels', (r) => ({ en: pick(r, ['Standard', 'Priority']), fr: pick(r, ['Standard', 'Prioritaire']) })],
  ['revision', (r) => r.int(1, 12)],
  ['partner_tier', (r) => pick(r, ['gold', 'silver', 'bronze'])],
];

/** Statuses a later release might add, in the two spellings the document uses (UPPER_CASE and lower_case). */
const NEW_STATUSES = {
  upper: ['ON_HOLD', 'DISPUTED', 'PARTIALLY_PAID', 'IN_REVIEW', 'WRITTEN_OFF', 'SUSPENDED', 'PENDING_APPROVAL'],
  lower: ['on_hold', 'under_review', 'partially_settled', 'disputed', 'requires_action', 'in_transit', 'suspended'],
};

function pick<T>(r: Random, list: readonly T[]): T {
  return list[r.int(0, list.length - 1)];
}

/** What the drills know of the document: its names, its enum values, and the schemas it gives answers. */
class DocumentFacts {
  /** Every property name the document uses, anywhere. */
  readonly names = new Set<string>();
  /** Every string any enum or const of the document lists. */
  readonly enumValues = new Set<string>();
  private readonly operations = new Map<string, Schema>();
  private readonly flats = new Map<string, Flat>();
  private readonly ids = new WeakMap<object, number>();
  private nextId = 0;

  constructor(readonly document: Document) {
    const seen = new Set<object>();
    const walk = (node: unknown): void => {
      if (!node || typeof node !== 'object' || seen.has(node)) return;
      seen.add(node);
      if (Array.isArray(node)) return node.forEach(walk);
      const n = node as Schema;
      if (n.properties && typeof n.properties === 'object') for (const name of Object.keys(n.properties)) this.names.add(name);
      if (Array.isArray(n.required)) for (const name of n.required) if (typeof name === 'string') this.names.add(name);
      if (Array.isArray(n.enum)) for (const v of n.enum) if (typeof v === 'string') this.enumValues.add(v);
      if (typeof n.const === 'string') this.enumValues.add(n.const);
      for (const value of Object.values(n)) walk(value);
    };
    walk(document);
    for (const item of Object.values(document.paths ?? {})) {
      for (const op of Object.values(item as Record<string, Schema>)) {
        if (typeof op?.operationId === 'string') this.operations.set(op.operationId, op);
      }
    }
  }

  /** The schema of an operation's JSON answer with this status (as the response checker finds it), if any. */
  responseSchema(operationId: string, status: number): Schema[] {
    const responses = (this.operations.get(operationId)?.responses ?? {}) as Record<string, Schema>;
    const declared = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!declared) return [];
    const response = this.resolve(declared);
    const schema = (response.content as Record<string, { schema?: Schema }> | undefined)?.['application/json']?.schema;
    return schema ? [schema] : [];
  }

  /** A component schema by name (a webhook delivery body: WebhookDelivery_<topic>). */
  component(name: string): Schema[] {
    const schema = (this.document.components?.schemas as Record<string, Schema> | undefined)?.[name];
    return schema ? [schema] : [];
  }

  private resolve(node: Schema): Schema {
    let current = node;
    for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops++) {
      const target = atPointer(this.document, current.$ref);
      if (!target || typeof target !== 'object') return {};
      current = target as Schema;
    }
    return current;
  }

  private idOf(node: object): number {
    let id = this.ids.get(node);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(node, id);
    }
    return id;
  }

  /** What these schemas say of a value, worked out once per list of schemas (a list's items share it). */
  flat(schemas: Schema[]): Flat {
    const key = schemas.map((s) => this.idOf(s)).join(',');
    let flat = this.flats.get(key);
    if (flat) return flat;
    flat = { props: new Map(), items: [], values: [], closed: false, enums: new Set() };
    let declares = false;
    let open = false;
    const seen = new Set<object>();
    const visit = (node: unknown): void => {
      if (!node || typeof node !== 'object' || seen.has(node)) return;
      seen.add(node);
      const s = node as Schema;
      if (typeof s.$ref === 'string') visit(atPointer(this.document, s.$ref));
      for (const branch of ['allOf', 'oneOf', 'anyOf'] as const) if (Array.isArray(s[branch])) (s[branch] as unknown[]).forEach(visit);
      if (s.properties && typeof s.properties === 'object') {
        declares = true;
        for (const [name, sub] of Object.entries(s.properties as Record<string, Schema>)) {
          const list = flat.props.get(name) ?? [];
          list.push(sub);
          flat.props.set(name, list);
        }
      }
      if (s.items && typeof s.items === 'object') flat.items.push(s.items as Schema);
      if (s.additionalProperties === true || (s.additionalProperties && typeof s.additionalProperties === 'object')) open = true;
      if (s.additionalProperties && typeof s.additionalProperties === 'object') flat.values.push(s.additionalProperties as Schema);
      if (Array.isArray(s.enum)) for (const v of s.enum) if (typeof v === 'string') flat.enums.add(v);
      if (typeof s.const === 'string') flat.enums.add(s.const);
    };
    schemas.forEach(visit);
    flat.closed = declares && !open;
    this.flats.set(key, flat);
    return flat;
  }
}

let facts: DocumentFacts | undefined;
function documentFacts(): DocumentFacts {
  facts ??= new DocumentFacts(loadDocument('openapi').document);
  return facts;
}

/** One drilled value's draws, cached by shape (the JSON path with array indexes erased): a list's items agree. */
class Drilling {
  /** Per shape: the names of the fields added, and how many objects of that shape got them so far. */
  private readonly extras = new Map<string, { names: Array<[string, (r: Random) => unknown]>; count: number }>();
  private readonly statuses = new Map<string, string>();
  private readonly ranks = new Map<string, number>();
  readonly unknown: boolean;
  readonly enums: boolean;
  readonly reorder: boolean;

  constructor(private readonly facts: DocumentFacts, private readonly set: DrillSet) {
    this.unknown = set.names.includes('unknown_fields');
    this.enums = set.names.includes('new_enum_values');
    this.reorder = set.names.includes('reordered_fields');
  }

  value(value: unknown, schemas: Schema[], path: string): unknown {
    if (Array.isArray(value)) {
      const items = this.facts.flat(schemas).items;
      return value.map((item) => this.value(item, items, `${path}[]`));
    }
    if (!value || typeof value !== 'object') return value;
    const proto = Object.getPrototypeOf(value) as unknown;
    // A Date or another object with its own JSON form is sent as it serialises: left as it is.
    if (proto !== Object.prototype && proto !== null) return value;
    const flat = this.facts.flat(schemas);
    let entries: Array<[string, unknown]> = [];
    for (const key of Object.keys(value)) {
      const raw = (value as Record<string, unknown>)[key];
      const sub = flat.props.get(key) ?? flat.values;
      let drilled = this.value(raw, sub, `${path}.${key}`);
      if (this.enums && typeof raw === 'string' && statusLike(key)) drilled = this.newStatus(raw, sub, `${path}.${key}`) ?? drilled;
      entries.push([key, drilled]);
    }
    // Only where the document lists the fields: a map (metadata, validation_errors) takes keys of its own.
    const own = entries.length;
    if (this.unknown && flat.closed) entries.push(...this.extraFields(path, value as Record<string, unknown>));
    if (this.reorder && entries.length > 1) entries = this.reordered(path, entries, own);
    // fromEntries defines each key as the object's own, `__proto__` included.
    return Object.fromEntries(entries);
  }

  /** A status the document's enum for this field does not list, when the value is one it lists. */
  private newStatus(value: string, schemas: Schema[], path: string): string | undefined {
    const enums = this.facts.flat(schemas).enums;
    // A one-value enum or const is a discriminator (object: invoice), not a status that can grow.
    if (enums.size < 2 || !enums.has(value)) return undefined;
    let chosen = this.statuses.get(path);
    if (chosen === undefined) {
      const upper = [...enums].every((v) => v === v.toUpperCase());
      // Never a value any enum of the document lists, whatever its field: certainly new to a client.
      const candidates = NEW_STATUSES[upper ? 'upper' : 'lower'].filter((v) => !this.facts.enumValues.has(v) && !enums.has(v));
      const r = createRandom(`${this.set.seed}|new_enum_values|${path}`);
      chosen = candidates.length ? pick(r, candidates) : `${upper ? 'NEW_STATUS_' : 'new_status_'}${r.hex(6)}`;
      this.statuses.set(path, chosen);
    }
    return chosen;
  }

  /**
   * One or two fields the document names nowhere: the same names for every object of this shape (as a
   * release adds a field to every invoice), each object its own value, all drawn from the seed.
   */
  private extraFields(path: string, value: Record<string, unknown>): Array<[string, unknown]> {
    let extras = this.extras.get(path);
    if (!extras) {
      const r = createRandom(`${this.set.seed}|unknown_fields|${path}`);
      const unnamed = EXTRA_FIELDS.filter(([name]) => !this.facts.names.has(name));
      const count = Math.min(unnamed.length, r.next() < 0.5 ? 1 : 2);
      extras = { names: [], count: 0 };
      for (let i = 0; i < count; i++) extras.names.push(unnamed.splice(r.int(0, unnamed.length - 1), 1)[0]);
      this.extras.set(path, extras);
    }
    const r = createRandom(`${this.set.seed}|unknown_fields|${path}|${extras.count++}`);
    return extras.names.filter(([name]) => !Object.hasOwn(value, name)).map(([name, make]) => [name, make(r)]);
  }

  /**
   * The same entries ordered by a draw per field name and shape. The object's own fields (the first
   * `own` entries; added ones follow) never keep their order among themselves when there are two.
   */
  private reordered(path: string, entries: Array<[string, unknown]>, own: number): Array<[string, unknown]> {
    const rank = (key: string): number => {
      const at = `${path}|${key}`;
      let r = this.ranks.get(at);
      if (r === undefined) {
        r = createRandom(`${this.set.seed}|reordered_fields|${at}`).next();
        this.ranks.set(at, r);
      }
      return r;
    };
    const sorted = [...entries].sort((a, b) => rank(a[0]) - rank(b[0]));
    // The draw can leave the object's own fields in their order: then its first two trade places.
    const owned = new Set(entries.slice(0, own).map((e) => e[0]));
    const at = sorted.flatMap((e, i) => (owned.has(e[0]) ? [i] : []));
    if (at.length > 1 && at.every((i, n) => sorted[i][0] === entries[n][0])) [sorted[at[0]], sorted[at[1]]] = [sorted[at[1]], sorted[at[0]]];
    // With one field of its own and fields added, the draw can still give back the whole order.
    else if (sorted.every((e, i) => e[0] === entries[i][0])) sorted.push(sorted.shift()!);
    return sorted;
  }
}

/** An operation's answer as the drills reshape it (a new value; `body` is not touched). */
export function drillAnswer(set: DrillSet, operationId: string, status: number, body: unknown): unknown {
  const f = documentFacts();
  return new Drilling(f, set).value(body, f.responseSchema(operationId, status), '$');
}

/** A webhook delivery body as the drills reshape it (a new value; `body` is not touched). */
export function drillDelivery(set: DrillSet, topic: string, body: unknown): unknown {
  const f = documentFacts();
  return new Drilling(f, set).value(body, f.component(`WebhookDelivery_${topic}`), '$');
}
