// Owns the parity suite's check of answers against openapi/openapi.yaml: which operation a request
// was (method and path against the document's templates) and whether its answer matches the
// documented response schema, validated with Ajv (JSON Schema 2020-12). Objects stay open: the
// spec's versioning rule lets the real service add fields, so an unknown field never fails here.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { addFormats } from '../http/ajv-formats.js';
import { documentOperations, loadDocument } from '../http/openapi.js';
import { atPointer } from '../http/json-pointer.js';
import { compilePathTemplate } from '../http/route-match.js';

const DOC_ID = 'openapi.yaml';

type Node = Record<string, unknown>;

export interface MatchedOperation {
  operationId: string;
  template: string;
  params: Record<string, string>;
}

interface Route {
  operationId: string;
  method: string;
  template: string;
  pattern: RegExp;
  names: string[];
}

/** A copy of the document with every object left open (`additionalProperties: false` and `unevaluatedProperties: false` dropped). */
function opened(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(opened);
  if (!node || typeof node !== 'object') return node;
  const out: Node = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'additionalProperties' || key === 'unevaluatedProperties') && value === false) continue;
    out[key] = opened(value);
  }
  return out;
}

const escapePointer = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');

export class ShapeChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true, validateSchema: false });
  private readonly document: Node;
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction | null | undefined>();

  constructor() {
    addFormats(this.ajv);
    this.document = opened(loadDocument('openapi').document) as Node;
    this.ajv.addSchema(this.document, DOC_ID);
    this.routes = documentOperations('openapi')
      .map(({ operationId, method, path }) => ({ operationId, method: method.toUpperCase(), template: path, ...compilePathTemplate(path, { trailingSlash: true }) }))
      // A path of fixed words wins over one with a parameter in the same place (/bills/bulk-submit, not /bills/{id}).
      .sort((a, b) => a.names.length - b.names.length);
  }

  /** The documented operation of a request, with its path parameters. */
  match(method: string, pathWithQuery: string): MatchedOperation | undefined {
    const path = pathWithQuery.split('?')[0];
    for (const route of this.routes) {
      if (route.method !== method.toUpperCase()) continue;
      const found = route.pattern.exec(path);
      if (!found) continue;
      const params = Object.fromEntries(route.names.map((name, i) => [name, decodeURIComponent(found[i + 1])]));
      return { operationId: route.operationId, template: route.template, params };
    }
    return undefined;
  }

  /** Null when the answer matches the document; readable problems otherwise. */
  check(operationId: string, status: number, body: unknown, text: string): string[] | null {
    const validate = this.validator(operationId, status);
    if (validate === undefined) return [`status ${status} is not documented for ${operationId}`];
    if (validate === null) return null;
    if (body === undefined) return [text ? 'the body is not JSON' : 'the body is empty where the document describes one'];
    if (validate(body)) return null;
    return (validate.errors ?? []).slice(0, 5).map((e) => this.describe(e));
  }

  /**
   * The values the document allows at `path` of the answer (operation and status), where the schema
   * there is an enumeration (`enum` or `const`, through $refs and every branch of allOf, oneOf and
   * anyOf); undefined where it is not one or the path is not documented. `diff` compares such values.
   */
  enumAt(operationId: string, status: number, path: ReadonlyArray<string | number>): unknown[] | undefined {
    const pointer = this.responsePointer(operationId, status);
    if (pointer === undefined) return undefined;
    const schema = ((this.resolve(pointer).node.content as Node | undefined)?.['application/json'] as Node | undefined)?.schema;
    const found = this.enumIn(schema, path, 0);
    return found?.length ? found : undefined;
  }

  private enumIn(node: unknown, path: ReadonlyArray<string | number>, depth: number): unknown[] | undefined {
    if (!node || typeof node !== 'object' || depth > 64) return undefined;
    const schema = node as Node;
    if (typeof schema.$ref === 'string') return this.enumIn(this.resolve(schema.$ref).node, path, depth + 1);
    const values: unknown[] = [];
    let found = false;
    for (const key of ['allOf', 'oneOf', 'anyOf']) {
      if (!Array.isArray(schema[key])) continue;
      for (const branch of schema[key] as unknown[]) {
        const inBranch = this.enumIn(branch, path, depth + 1);
        if (inBranch) {
          found = true;
          for (const value of inBranch) if (!values.includes(value)) values.push(value);
        }
      }
    }
    if (path.length === 0) {
      const own = Array.isArray(schema.enum) ? schema.enum as unknown[] : schema.const !== undefined ? [schema.const] : undefined;
      if (own) return [...new Set([...own, ...values])];
      return found ? values : undefined;
    }
    const [head, ...rest] = path;
    const next = typeof head === 'number'
      ? schema.items
      : (schema.properties && Object.hasOwn(schema.properties, head) ? (schema.properties as Node)[head]
        : schema.additionalProperties && typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    const below = next === undefined ? undefined : this.enumIn(next, rest, depth + 1);
    if (below) for (const value of below) if (!values.includes(value)) values.push(value);
    return below || found ? values : undefined;
  }

  /** undefined: status not documented; null: documented without a JSON body. */
  private validator(operationId: string, status: number): ValidateFunction | null | undefined {
    const key = `${operationId} ${status}`;
    let validate = this.validators.get(key);
    if (validate === undefined && !this.validators.has(key)) {
      const pointer = this.responsePointer(operationId, status);
      if (pointer !== undefined) {
        const response = this.resolve(pointer);
        const schema = ((response.node.content as Node | undefined)?.['application/json'] as Node | undefined)?.schema;
        validate = schema === undefined ? null : this.ajv.compile({ $ref: `${DOC_ID}${response.pointer}/content/application~1json/schema` });
      }
      this.validators.set(key, validate);
    }
    return validate;
  }

  private responsePointer(operationId: string, status: number): string | undefined {
    const op = documentOperations('openapi').find((o) => o.operationId === operationId);
    if (!op) return undefined;
    const responses = (op.operation.responses ?? {}) as Node;
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!key) return undefined;
    return `#/paths/${escapePointer(op.path)}/${op.method}/responses/${escapePointer(key)}`;
  }

  /** Follow $refs from a JSON pointer into the document; the node and the pointer it was found at. */
  private resolve(pointer: string): { node: Node; pointer: string } {
    let current = pointer;
    for (let hops = 0; hops < 20; hops++) {
      const node = this.at(current);
      if (typeof node.$ref !== 'string') return { node, pointer: current };
      current = node.$ref;
    }
    throw new Error(`$ref chain too long at ${pointer}`);
  }

  private at(pointer: string): Node {
    const target = atPointer(this.document, pointer);
    if (!target || typeof target !== 'object') throw new Error(`unresolvable pointer ${pointer}`);
    return target as Node;
  }

  /** One Ajv error as a sentence; a missing field the document calls a sandbox addition says so. */
  private describe(error: ErrorObject): string {
    const where = error.instancePath || '(body)';
    if (error.keyword === 'required') {
      const field = String((error.params as { missingProperty?: string }).missingProperty);
      let property = (error.parentSchema?.properties as Node | undefined)?.[field] as Node | undefined;
      if (typeof property?.$ref === 'string') property = this.resolve(property.$ref).node;
      const addition = typeof property?.description === 'string' && /sandbox addition/i.test(property.description);
      return `${where} lacks the field ${field}${addition ? ' (a sandbox addition, see its description in openapi.yaml)' : ''}`;
    }
    if (error.keyword === 'enum') return `${where} ${error.message}: ${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)}, got ${JSON.stringify(error.data)}`;
    return `${where} ${error.message}`;
  }
}
