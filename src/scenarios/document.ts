// Owns the scenario document: its JSON Schema (scenario.schema.json), parsing JSON or YAML, and the
// checks a schema cannot express (known operationIds, topic rules acting on deliveries only, success
// statuses an operation documents), and the content hash that names a --scenario document.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ApiError, invalidFields, describeFields } from '../errors.js';
import { canonicalJson } from '../canonical-json.js';
import { documentOperations, validationErrors } from '../http/openapi.js';
import { unforceable } from './replies.js';
import { LIMITS } from '../limits.js';
import type { DeliveryFault } from '../faults.js';

export interface RuleMatch {
  operation?: string;
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
}

/** The actions that act on webhook deliveries: a rule with one of them needs match.topic, and a topic rule needs one. */
export const DELIVERY_ACTIONS = ['fail_delivery', 'duplicate_delivery', 'timeout_after_delivery', 'wrong_secret'] as const;

/** The delivery action a rule carries, if any. */
export function deliveryAction(rule: ScenarioRule): (typeof DELIVERY_ACTIONS)[number] | undefined {
  return DELIVERY_ACTIONS.find((action) => rule[action] !== undefined);
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

let compiled: ValidateFunction | undefined;
function validator(): ValidateFunction {
  if (!compiled) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    compiled = ajv.compile(JSON.parse(readFileSync(schemaPath(), 'utf8')));
  }
  return compiled;
}

let operationIds: Set<string> | undefined;
function knownOperations(): Set<string> {
  operationIds ??= new Set(documentOperations().map((o) => o.operationId));
  return operationIds;
}

const ACTIONS = `respond, delay_ms or drop (requests), or ${DELIVERY_ACTIONS.slice(0, -1).join(', ')} or ${DELIVERY_ACTIONS.at(-1)} (webhook deliveries)`;
const TOPIC = 'must be a webhook topic, "*" (every topic) or a non-empty list of distinct topics';
const HEADER_NAME = "is not a valid header name: an RFC 7230 token (letters, digits and !#$%&'*+-.^_`|~)";
const HEADER_VALUE = 'must be visible ASCII, spaces and tabs (no CR, LF or other control characters)';
const REDIRECT = 'must not be a redirect (3xx): a scenario answers 2xx, 4xx or 5xx';

/**
 * Ajv's errors read as one clear message per field: the "exactly one action" rule on the rule itself,
 * a topic's three accepted shapes as one message, a bad header name on the header it names.
 */
function readable(errors: ErrorObject[]): ErrorObject[] {
  // A topic's branches report at its own path or below (the enum through a $ref): the anyOf speaks for them.
  const isTopic = (e: ErrorObject) => e.keyword === 'anyOf' && e.instancePath.endsWith('/match/topic');
  const topics = errors.filter(isTopic).map((e) => e.instancePath);
  const underTopic = (e: ErrorObject) => !isTopic(e) && topics.some((p) => e.instancePath === p || e.instancePath.startsWith(`${p}/`));
  return errors
    .filter((e) => !e.schemaPath.includes('/oneOf/') && !underTopic(e) && e.keyword !== 'propertyNames')
    .map((e) => {
      if (e.keyword === 'oneOf') return { ...e, message: `must have exactly one action: ${ACTIONS}` };
      if (isTopic(e)) return { ...e, message: TOPIC };
      if (e.keyword === 'not' && e.instancePath.endsWith('/respond/status')) return { ...e, message: REDIRECT };
      if (e.propertyName !== undefined) return { ...e, instancePath: `${e.instancePath}/${e.propertyName.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: HEADER_NAME };
      if (e.keyword === 'pattern' && /\/respond\/headers\//.test(e.instancePath)) return { ...e, message: HEADER_VALUE };
      return e;
    });
}

function fail(fields: Record<string, string>, message = 'The scenario document is invalid.'): never {
  throw invalidFields(fields, message);
}

/**
 * How deeply a YAML (or JSON) text nests, counted without parsing: open brackets, block indentation
 * levels and sequence dashes. Quotes are not honoured (a bracket inside a string counts too), so the
 * count never falls short of the real depth; it stops once past `limit`.
 */
export function yamlNestingDepth(text: string, limit: number): number {
  let deepest = 0;
  let brackets = 0;
  const indents: number[] = [];
  for (const line of text.split('\n')) {
    const indent = line.length - line.trimStart().length;
    const content = line.slice(indent);
    if (content && !content.startsWith('#') && brackets === 0) {
      while (indents.length && indents[indents.length - 1] >= indent) indents.pop();
      indents.push(indent);
    }
    let dashes = 0;
    while (content.startsWith('- ', dashes * 2)) dashes += 1;
    for (const char of content) {
      if (char === '{' || char === '[') brackets += 1;
      else if ((char === '}' || char === ']') && brackets > 0) brackets -= 1;
      deepest = Math.max(deepest, indents.length + dashes + brackets);
    }
    deepest = Math.max(deepest, indents.length + dashes + brackets);
    if (deepest > limit) return deepest;
  }
  return deepest;
}

/** Parse (when text) and check a document; a bad one is a 400 naming the offending field. */
export function parseScenario(input: unknown): ScenarioDocument {
  let value = input;
  if (typeof input === 'string') {
    // The YAML parser recurses once per level: a document nested thousands deep ran it out of stack
    // inside V8's regular-expression compiler, which ends the process (found by the fuzzer).
    if (yamlNestingDepth(input, LIMITS.scenarioDepth) > LIMITS.scenarioDepth) {
      fail({ body: `nests deeper than ${LIMITS.scenarioDepth} levels` });
    }
    try {
      value = parseYaml(input);
    } catch (error) {
      fail({ body: `is not valid YAML or JSON: ${(error as Error).message.split('\n')[0]}` });
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail({ body: 'must be a scenario document (an object with name and rules)' });
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
    if (match.operation !== undefined && !knownOperations().has(match.operation)) {
      problems[`${at}.match.operation`] = `is not an operationId of the API (for example listInvoices or submitBill)`;
    }
    if (match.topic !== undefined) {
      if (match.operation !== undefined || match.method !== undefined || match.path !== undefined || match.header !== undefined) {
        problems[`${at}.match.topic`] = 'cannot be combined with operation, method, path or header: a topic rule acts on webhook deliveries';
      } else if (!deliveryAction(rule)) {
        problems[`${at}.match.topic`] = `a topic rule acts on webhook deliveries: its action must be ${DELIVERY_ACTIONS.join(', ')}`;
      }
    } else {
      const action = deliveryAction(rule);
      if (action) problems[`${at}.${action}`] = 'acts on webhook deliveries: the rule needs match.topic';
    }
    if (rule.nth !== undefined && rule.from !== undefined) problems[`${at}.from`] = 'cannot be combined with nth';
    // Without a body, only a status the operation documents (a success one needs its example): refuse
    // it now, rather than on every matching request (rules without an operation are checked then).
    const respond = rule.respond;
    const why = respond && respond.body === undefined && match.operation !== undefined && knownOperations().has(match.operation)
      ? unforceable(match.operation, respond.status) : undefined;
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
    throw new Error(`--scenario ${arg}: no such file, and no shipped scenario of that name (scenarios/${arg}.json or .yaml)`);
  }
  try {
    return { source: found, document: parseScenario(readFileSync(found, 'utf8')) };
  } catch (error) {
    if (error instanceof ApiError) {
      const fields = describeFields(error.validationErrors);
      throw new Error(`--scenario ${arg} (${found}) is not a valid scenario document: ${fields}`);
    }
    throw new Error(`--scenario ${arg} (${found}): ${(error as Error).message}`);
  }
}
