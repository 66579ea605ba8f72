// Owns the scenario document: its JSON Schema (scenario.schema.json), reading JSON or YAML through the
// door every stored value passes (src/http/storable.ts: size, depth, cycles, JSON values), and the
// checks a schema cannot express (known operationIds, topic rules acting on deliveries only, success
// statuses an operation documents), and the content hash that names a --scenario document.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ApiError, invalidFields, describeFields } from '../errors.js';
import { canonicalJson } from '../canonical-json.js';
import { documentOperations, validationErrors } from '../http/openapi.js';
import { unforceable } from './replies.js';
import { LIMITS } from '../limits.js';
import { settingNames } from '../settings.js';
import { checkStorable, readYaml, sizeText, type DoorRules } from '../http/storable.js';
import type { DeliveryFault } from '../faults.js';
import { EVOLUTION_DRILLS, type EvolutionDrill } from './evolve.js';

export interface RuleMatch {
  /** An operationId, or a list of them. */
  operation?: string | string[];
  method?: string;
  path?: string;
  header?: Record<string, string>;
  /** A topic, '*' (every topic) or a list of topics: the rule acts on webhook delivery attempts. */
  topic?: string | string[];
}

export interface RespondAction {
  status: number;
  code?: string;
  message?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** The fault a delivery attempt takes: of the shapes webhook delivery honours (src/faults.ts), the ones sending nothing. */
export type FailDelivery = Exclude<DeliveryFault, { drill: unknown }>;

export interface ScenarioRule {
  match: RuleMatch;
  nth?: number;
  from?: number;
  times?: number;
  probability?: number;
  respond?: RespondAction;
  delay_ms?: number;
  drop?: 'reset' | 'empty';
  fail_delivery?: FailDelivery;
  /** After the event is delivered, send it `count` more times before the next event (counts deliveries). */
  duplicate_delivery?: { count: number };
  /** Send the attempt; whatever the receiver answers, count it as a time-out (counts attempts). */
  timeout_after_delivery?: true;
  /** Send the attempt with a wrong bearer; whatever the receiver answers, count it as failed (counts attempts). */
  wrong_secret?: true;
  /** Evolution drills (src/scenarios/evolve.ts): the answer (or the delivery, with match.topic) as a later release could send it. */
  unknown_fields?: true;
  new_enum_values?: true;
  reordered_fields?: true;
}

/** The actions that act on webhook deliveries: a rule with one of them needs match.topic, and a topic rule needs one. */
export const DELIVERY_ACTIONS = ['fail_delivery', 'duplicate_delivery', 'timeout_after_delivery', 'wrong_secret'] as const;

/** The delivery action a rule carries, if any. */
export function deliveryAction(rule: ScenarioRule): (typeof DELIVERY_ACTIONS)[number] | undefined {
  return DELIVERY_ACTIONS.find((action) => rule[action] !== undefined);
}

/** The evolution drill a rule carries, if any: it acts on answers of the operations it matches, or on deliveries of its topics. */
export function evolutionAction(rule: ScenarioRule): EvolutionDrill | undefined {
  return EVOLUTION_DRILLS.find((drill) => rule[drill] !== undefined);
}

/** The operations a match names: none (any operation), one, or a list. */
export function matchOperations(match: RuleMatch): string[] {
  return match.operation === undefined ? [] : Array.isArray(match.operation) ? match.operation : [match.operation];
}

export interface ScenarioDocument {
  name: string;
  description?: string;
  seed?: string | number;
  rules: ScenarioRule[];
}

/** Where the shipped documents live: `scenarios/` at the package root (beside src/ and dist/). */
export const SCENARIOS_DIR = fileURLToPath(new URL('../../scenarios/', import.meta.url));

/** The schema file sits beside this module in src/; the compiled module in dist/ reads it from src/. */
function schemaPath(): string {
  const beside = fileURLToPath(new URL('./scenario.schema.json', import.meta.url));
  return existsSync(beside) ? beside : fileURLToPath(new URL('../../src/scenarios/scenario.schema.json', import.meta.url));
}

let schemaJson: { properties: { rules: { maxItems: number } } } | undefined;
/** The scenario JSON Schema, read once. */
function schema(): { properties: { rules: { maxItems: number } } } {
  schemaJson ??= JSON.parse(readFileSync(schemaPath(), 'utf8')) as { properties: { rules: { maxItems: number } } };
  return schemaJson;
}

let compiled: ValidateFunction | undefined;
function validator(): ValidateFunction {
  if (!compiled) {
    // verbose: errors carry their schema, so a refused header is named with the schema's reason.
    const ajv = new Ajv2020({ allErrors: true, strict: false, verbose: true });
    compiled = ajv.compile(schema());
  }
  return compiled;
}

/** The schema's maxItems of `rules`. */
function maxRules(): number {
  return schema().properties.rules.maxItems;
}

let operationIds: Set<string> | undefined;
function knownOperations(): Set<string> {
  operationIds ??= new Set(documentOperations().map((o) => o.operationId));
  return operationIds;
}

/**
 * The response headers a scenario cannot set (`respond.headers`, any case): they frame the message or
 * belong to one connection, and the server sets them itself. Setting Trailer gave an empty reply,
 * Transfer-Encoding two framings at once. The rule itself is scenario.schema.json's (and the
 * control-plane document's) `propertyNames.not` pattern; test/storable.test.ts holds both to this list.
 */
export const FRAMING_HEADERS = [
  'Connection', 'Content-Encoding', 'Content-Length', 'Keep-Alive', 'Proxy-Authenticate', 'Proxy-Authorization',
  'Proxy-Connection', 'TE', 'Trailer', 'Transfer-Encoding', 'Upgrade',
] as const;

const ACTIONS = `respond, delay_ms or drop (requests), ${DELIVERY_ACTIONS.slice(0, -1).join(', ')} or ${DELIVERY_ACTIONS.at(-1)} (webhook deliveries), or ${EVOLUTION_DRILLS.slice(0, -1).join(', ')} or ${EVOLUTION_DRILLS.at(-1)} (answers, or deliveries with match.topic)`;
const TOPIC = 'must be a webhook topic, "*" (every topic) or a non-empty list of distinct topics';
const OPERATION = 'must be an operationId (1 to 255 characters) or a non-empty list of distinct operationIds';
const HEADER_NAME = "is not a valid header name: an RFC 7230 token (letters, digits and !#$%&'*+-.^_`|~)";
const HEADER_VALUE = 'must be visible ASCII, spaces and tabs (no CR, LF or other control characters)';
const REDIRECT = 'must not be a redirect (3xx): a scenario answers 2xx, 4xx or 5xx';

/**
 * Ajv's errors read as one clear message per field: the "exactly one action" rule on the rule itself,
 * a topic's three accepted shapes as one message, a bad header name on the header it names.
 */
function readable(errors: ErrorObject[]): ErrorObject[] {
  // A topic's (or operation's) branches report at its own path or below (the enum through a $ref): the anyOf speaks for them.
  const isTopic = (e: ErrorObject) => e.keyword === 'anyOf' && e.instancePath.endsWith('/match/topic');
  const isOperation = (e: ErrorObject) => e.keyword === 'anyOf' && e.instancePath.endsWith('/match/operation');
  const alternatives = errors.filter((e) => isTopic(e) || isOperation(e)).map((e) => e.instancePath);
  const underAlternatives = (e: ErrorObject) => !isTopic(e) && !isOperation(e) && alternatives.some((p) => e.instancePath === p || e.instancePath.startsWith(`${p}/`));
  return errors
    .filter((e) => !e.schemaPath.includes('/oneOf/') && !underAlternatives(e) && e.keyword !== 'propertyNames')
    .map((e) => {
      if (e.keyword === 'oneOf') return { ...e, message: `must have exactly one action: ${ACTIONS}` };
      if (isTopic(e)) return { ...e, message: TOPIC };
      if (isOperation(e)) return { ...e, message: OPERATION };
      if (e.keyword === 'not' && e.instancePath.endsWith('/respond/status')) return { ...e, message: REDIRECT };
      // A `not` says what it refuses in its description (a framing header, a header no request carries).
      const described = e.keyword === 'not' ? (e.schema as { description?: unknown } | undefined)?.description : undefined;
      const reason = typeof described === 'string' ? described : undefined;
      // A bad name is named as the header itself (validationErrors adds the name).
      if (e.propertyName !== undefined) return { ...e, message: reason ?? HEADER_NAME };
      if (reason) return { ...e, message: reason };
      if (e.keyword === 'pattern' && /\/respond\/headers\//.test(e.instancePath)) return { ...e, message: HEADER_VALUE };
      return e;
    });
}

function fail(fields: Record<string, string>, message = 'The scenario document is invalid.'): never {
  throw invalidFields(fields, message);
}

/** What the door allows a scenario document (src/http/storable.ts). */
const DOCUMENT_RULES: DoorRules = { what: 'The scenario document', depth: LIMITS.valueDepth, bytes: LIMITS.scenarioBytes, values: LIMITS.bodyValues };

/**
 * Parse (when text) and check a document; a bad one is a 400 naming the offending field. The door
 * first (size, depth, cycles, JSON values: a YAML text before and after it is parsed, a JSON body
 * after), so the schema, the store and every answer only ever meet a value they can read and write.
 */
export function parseScenario(input: unknown): ScenarioDocument {
  let value = input;
  if (typeof input === 'string') value = readYaml(input, DOCUMENT_RULES);
  else checkStorable(input, DOCUMENT_RULES);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail({ body: 'must be a scenario document (an object with name and rules)' });
  // Past its maxItems, a list of rules is refused before the schema sees it: Ajv gathers the errors of
  // each rule (a schema of its own) by copying the list so far, and 20,000 bad rules took seconds.
  const rules = (value as { rules?: unknown }).rules;
  if (Array.isArray(rules) && rules.length > maxRules()) fail({ rules: `must NOT have more than ${maxRules()} items` });
  const validate = validator();
  if (!validate(value)) {
    const fields = validationErrors(readable(validate.errors ?? []));
    fail(fields, `The scenario document is invalid: ${describeFields(fields)}.`);
  }
  const doc = value as ScenarioDocument;
  const problems: Record<string, string> = {};
  doc.rules.forEach((rule, i) => {
    const at = `rules[${i}]`;
    const { match } = rule;
    const operations = matchOperations(match);
    const unknown = operations.findIndex((operation) => !knownOperations().has(operation));
    if (unknown >= 0) {
      const field = Array.isArray(match.operation) ? `${at}.match.operation[${unknown}]` : `${at}.match.operation`;
      problems[field] = `is not an operationId of the API (for example listInvoices or submitBill)`;
    }
    if (match.topic !== undefined) {
      if (match.operation !== undefined || match.method !== undefined || match.path !== undefined || match.header !== undefined) {
        problems[`${at}.match.topic`] = 'cannot be combined with operation, method, path or header: a topic rule acts on webhook deliveries';
      } else if (!deliveryAction(rule) && !evolutionAction(rule)) {
        problems[`${at}.match.topic`] = `a topic rule acts on webhook deliveries: its action must be ${[...DELIVERY_ACTIONS, ...EVOLUTION_DRILLS].join(', ')}`;
      }
    } else {
      const action = deliveryAction(rule);
      if (action) problems[`${at}.${action}`] = 'acts on webhook deliveries: the rule needs match.topic';
    }
    if (rule.nth !== undefined && rule.from !== undefined) problems[`${at}.from`] = 'cannot be combined with nth';
    // Without a body, only a status the operation documents (a success one needs its example): refuse
    // it now, rather than on every matching request (rules without an operation are checked then).
    const respond = rule.respond;
    const why = respond && respond.body === undefined && unknown < 0
      ? operations.map((operation) => unforceable(operation, respond.status)).find((reason) => reason !== undefined) : undefined;
    if (why) problems[`${at}.respond.status`] = `${why}: use one of those, or give a respond.body`;
  });
  if (Object.keys(problems).length) {
    fail(problems, `The scenario document is invalid: ${describeFields(problems)}.`);
  }
  return doc;
}

/**
 * A document's content hash: what names a --scenario document, never its path, so a repo clone, an
 * npx install and the Docker image give the same id, hence the same seeded draws, for the same seed.
 */
export function contentHash(document: ScenarioDocument): string {
  // Canonical JSON (object keys sorted), so the same document hashes the same from JSON or YAML.
  return createHash('sha256').update(canonicalJson(document) ?? '').digest('hex');
}

/**
 * Read `--scenario NAME|FILE`: an existing file path, else a shipped name resolving to
 * scenarios/NAME.json, .yaml or .yml. Any problem is an Error whose message says why.
 */
export function readScenarioArgument(arg: string, cwd = process.cwd()): { source: string; document: ScenarioDocument } {
  const asFile = isAbsolute(arg) ? arg : resolve(cwd, arg);
  const candidates = [asFile, ...['.json', '.yaml', '.yml'].map((ext) => `${SCENARIOS_DIR}${arg}${ext}`)];
  const found = /[\\/]/.test(arg) || /\.(json|ya?ml)$/i.test(arg) ? [asFile].find(existsSync) : candidates.find((c) => existsSync(c));
  if (!found) {
    throw new Error(`${settingNames('scenarios')} ${arg}: no such file, and no shipped scenario of that name (scenarios/${arg}.json or .yaml)`);
  }
  const size = statSync(found).size;
  if (size > LIMITS.scenarioBytes) throw new Error(`${settingNames('scenarios')} ${arg} (${found}) is ${size} bytes, more than ${sizeText(LIMITS.scenarioBytes)}`);
  try {
    return { source: found, document: parseScenario(readFileSync(found, 'utf8')) };
  } catch (error) {
    if (error instanceof ApiError) {
      const fields = describeFields(error.validationErrors);
      throw new Error(`${settingNames('scenarios')} ${arg} (${found}) is not a valid scenario document: ${fields}`);
    }
    throw new Error(`${settingNames('scenarios')} ${arg} (${found}): ${(error as Error).message}`);
  }
}
