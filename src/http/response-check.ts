// Owns the strict check of answers against an OpenAPI document, used when validateResponses is on
// (the tests). Each documented response schema is inlined and every object in it closed
// (unevaluatedProperties: false). An answer with a field the document does not list then fails,
// just as one that is missing a required field does. openapi-backend's own response validation
// accepts extra fields, so it cannot catch a stored field leaking into an answer.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { addFormats } from './ajv-formats.js';
import type { ErrorObject } from 'ajv';
import type { Document } from 'openapi-backend';
import { atPointer } from './json-pointer.js';

type Schema = Record<string, unknown>;

/**
 * The name check() takes for the answer of a request that names no operation (a path the document
 * does not list: 404; one it lists without the method: 405), held to the document's root extension
 * `x-unrouted-responses` (OpenAPI attaches responses to operations only).
 */
export const UNROUTED = '(no operation)';

export interface ResponseProblem {
  /** Ajv's errors, or one made-up error when the status is not documented. */
  errors: ErrorObject[];
}

export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction | null>();
  private readonly operations = new Map<string, Schema>();

  constructor(private readonly document: Document) {
    addFormats(this.ajv);
    for (const item of Object.values(document.paths ?? {})) {
      for (const op of Object.values(item as Record<string, Schema>)) {
        if (typeof op?.operationId === 'string') this.operations.set(op.operationId, op);
      }
    }
    const unrouted = (document as unknown as Record<string, unknown>)['x-unrouted-responses'];
    if (unrouted && typeof unrouted === 'object') this.operations.set(UNROUTED, { responses: unrouted });
  }

  /**
   * Null when the answer is what the document says; the problems otherwise. Forced answers
   * (Prefer: code=NNN, scenario rules) are held to the same rule: only documented statuses.
   */
  check(operationId: string, status: number, body: unknown): ResponseProblem | null {
    const key = `${operationId} ${status}`;
    let validate = this.validators.get(key);
    if (validate === undefined) {
      const schema = this.responseSchema(operationId, status);
      validate = schema === undefined ? null : this.ajv.compile(schema);
      this.validators.set(key, validate);
    }
    if (validate === null) {
      return { errors: [{ instancePath: '', schemaPath: '#/responses', keyword: 'status', params: { status }, message: `status ${status} is not documented for ${operationId}` }] };
    }
    return validate(body) ? null : { errors: validate.errors ?? [] };
  }

  /** Check a value against a closed component schema (a webhook delivery body, for instance). */
  checkComponent(name: string, value: unknown): ResponseProblem | null {
    const validate = this.component(name);
    return validate(value) ? null : { errors: validate.errors ?? [] };
  }

  private readonly components = new Map<string, ValidateFunction>();

  private component(name: string): ValidateFunction {
    let validate = this.components.get(name);
    if (!validate) {
      validate = this.ajv.compile(this.closed({ $ref: `#/components/schemas/${name}` }, false, []));
      this.components.set(name, validate);
    }
    return validate;
  }

  /** The closed schema of the operation's answer with this status; {} for a documented answer without a body schema. */
  private responseSchema(operationId: string, status: number): Schema | undefined {
    const responses = (this.operations.get(operationId)?.responses ?? {}) as Record<string, Schema>;
    const declared = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!declared) return undefined;
    const response = this.resolve(declared);
    const content = (response.content ?? {}) as Record<string, { schema?: Schema }>;
    const schema = content['application/json']?.schema;
    return schema ? this.closed(schema, false, []) : {};
  }

  private resolve(node: Schema): Schema {
    let current = node;
    for (let hops = 0; typeof current.$ref === 'string'; hops += 1) {
      if (hops > 20) throw new Error(`$ref chain too long at ${String(node.$ref)}`);
      current = this.pointer(current.$ref);
    }
    return current;
  }

  private pointer(ref: string): Schema {
    const target = atPointer(this.document, ref);
    if (!target || typeof target !== 'object') throw new Error(`unresolvable $ref ${ref}`);
    return target as Schema;
  }

  /**
   * A copy of the schema with its $refs inlined and every object closed, except allOf branches:
   * a branch sees only its own properties, so it is the allOf node itself that is closed.
   */
  private closed(node: unknown, inBranch: boolean, refs: string[]): Schema {
    if (!node || typeof node !== 'object') return node as Schema;
    const { $ref, ...rest } = node as Schema;
    if (typeof $ref === 'string') {
      // A schema that contains itself is left open below its first repetition.
      if (refs.includes($ref)) return {};
      return { ...this.closed(this.pointer($ref), inBranch, [...refs, $ref]), ...rest };
    }
    const out: Schema = { ...rest };
    const sub = (value: unknown, branch = false) => this.closed(value, branch, refs);
    if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties as Schema).map(([k, v]) => [k, sub(v)]));
    if (out.items && typeof out.items === 'object') out.items = sub(out.items);
    if (out.additionalProperties && typeof out.additionalProperties === 'object') out.additionalProperties = sub(out.additionalProperties);
    for (const key of ['oneOf', 'anyOf'] as const) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((s) => sub(s));
    if (Array.isArray(out.allOf)) out.allOf = (out.allOf as unknown[]).map((s) => sub(s, true));
    // A bare `type: object` (no properties) is a free-form map and stays open.
    const declaresFields = out.properties !== undefined || out.allOf !== undefined;
    if (!inBranch && declaresFields && out.additionalProperties === undefined && out.unevaluatedProperties === undefined) {
      out.unevaluatedProperties = false;
    }
    return out;
  }
}

const checkers = new WeakMap<Document, ResponseChecker>();

/** One checker per document per process: tests build many apps, and each schema compiles once. */
export function responseCheckerFor(document: Document): ResponseChecker {
  let checker = checkers.get(document);
  if (!checker) {
    checker = new ResponseChecker(document);
    checkers.set(document, checker);
  }
  return checker;
}
