// Owns the scenario document: its JSON Schema (scenario.schema.json), parsing JSON or YAML, and the
// checks a schema cannot express (known operationIds, topic rules acting on deliveries only).
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ApiError, invalidFields, describeFields } from '../http/errors.js';
import { documentOperations, validationErrors } from '../http/openapi.js';
import type { DeliveryFault } from '../faults.js';

export interface RuleMatch {
  operation?: string;
  method?: string;
  path?: string;
  header?: Record<string, string>;
  topic?: string;
}

export interface RespondAction {
  status: number;
  code?: string;
  message?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** The fault a delivery attempt takes: the same shape webhook delivery honours (src/faults.ts). */
export type FailDelivery = DeliveryFault;

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

const ACTIONS = 'respond, delay_ms, drop or fail_delivery';

/** Ajv errors of the "exactly one action" rule read as one clear message on the rule itself. */
function readable(errors: ErrorObject[]): ErrorObject[] {
  return errors
    .filter((e) => !e.schemaPath.includes('/oneOf/'))
    .map((e) => (e.keyword === 'oneOf' ? { ...e, message: `must have exactly one action: ${ACTIONS}` } : e));
}

function fail(fields: Record<string, string>, message = 'The scenario document is invalid.'): never {
  throw invalidFields(fields, message);
}

/** Parse (when text) and check a document; a bad one is a 400 naming the offending field. */
export function parseScenario(input: unknown): ScenarioDocument {
  let value = input;
  if (typeof input === 'string') {
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
      } else if (!rule.fail_delivery) {
        problems[`${at}.match.topic`] = 'a topic rule acts on webhook deliveries: its action must be fail_delivery';
      }
    } else if (rule.fail_delivery) {
      problems[`${at}.fail_delivery`] = 'acts on webhook deliveries: the rule needs match.topic';
    }
    if (rule.nth !== undefined && rule.from !== undefined) problems[`${at}.from`] = 'cannot be combined with nth';
  });
  if (Object.keys(problems).length) {
    fail(problems, `The scenario document is invalid: ${describeFields(problems)}.`);
  }
  return doc;
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
