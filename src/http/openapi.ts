// Owns the OpenAPI documents: loading them, building openapi-backend instances with a JSON Schema
// 2020-12 validator (the documents are OpenAPI 3.1.1), and turning Ajv errors into validation_errors.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { addFormats } from './ajv-formats.js';
import type { ErrorObject, Options as AjvOpts, ValidateFunction } from 'ajv';
import { OpenAPIBackend, OpenAPIRouter, OpenAPIValidator, type Document, type Operation, type Options, type ValidationContext } from 'openapi-backend';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

export const OPENAPI_DIR = fileURLToPath(new URL('../../openapi/', import.meta.url));

export interface LoadedDocument {
  yamlText: string;
  document: Document;
}

const cache = new Map<string, LoadedDocument>();

/**
 * The parsed document (parsed once per process; callers must not mutate it). A document that
 * references the other one (control-plane.yaml names the API's create schemas it validates
 * accounting-sync items against) is bundled: each referenced schema, and the schemas it names in
 * turn, is copied into its components under the same name, so openapi-backend, the response
 * checker and anyone reading `yamlText` get one self-contained document. The build stores each
 * document parsed and bundled (scripts/cache-documents.mjs), so a start reads JSON and walks nothing.
 */
export function loadDocument(name: DocumentName): LoadedDocument {
  let loaded = cache.get(name);
  if (!loaded) {
    const text = documentYaml(name);
    const { document, bundled } = builtCopy(builtText(name), text) ?? fromYaml(text, (other) => loadDocument(other).document);
    // Written out (or read again) only when asked for (serving it): start-up neither pays for it nor
    // keeps the text in memory.
    let yamlText: string | undefined;
    loaded = {
      document,
      get yamlText() {
        yamlText ??= bundled ? stringifyYaml(document, { lineWidth: 0 }) : documentYaml(name);
        return yamlText;
      },
    };
    cache.set(name, loaded);
  }
  return loaded;
}

export type DocumentName = 'openapi' | 'control-plane';

/** What the build stores for a document (scripts/cache-documents.mjs): parsed and bundled, with the hash of its YAML. */
export interface BuiltDocument {
  sha256: string;
  /** Whether bundling copied in schemas of the other document (its YAML text then differs from the file). */
  bundled: boolean;
  document: Document;
}

/** The copy for requests (forRequests), with where its `$ref`s are and what each names (referenceSites). */
export interface RequestsCopy extends BuiltDocument {
  references: ReferenceSites;
}

function documentYaml(name: DocumentName): string {
  return readFileSync(`${OPENAPI_DIR}${name}.yaml`, 'utf8');
}

const sha256Of = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A document from its YAML text: parsed and bundled (`documentOf` gives the other document), with the text's hash. */
function fromYaml(text: string, documentOf: (name: DocumentName) => Document): BuiltDocument {
  const document = parseYaml(text) as Document;
  return { sha256: sha256Of(text), bundled: bundleExternalRefs(document, documentOf), document };
}

/**
 * Both documents parsed from their YAML and bundled, each with the hash of its text: what the build
 * stores (scripts/cache-documents.mjs) and a start without that copy works out (loadDocument).
 * Always from the YAML, never through loadDocument: a stored copy's hash covers the YAML, not the
 * bundling code, so only a build that bundles again carries a change to that code.
 */
export function buildDocuments(): Record<DocumentName, BuiltDocument> {
  const built = new Map<DocumentName, BuiltDocument>();
  const build = (name: DocumentName): BuiltDocument => {
    let entry = built.get(name);
    if (!entry) {
      // The other document is bundled first when this one adopts its schemas, as loadDocument does.
      entry = fromYaml(documentYaml(name), (other) => build(other).document);
      built.set(name, entry);
    }
    return entry;
  };
  return { openapi: build('openapi'), 'control-plane': build('control-plane') };
}

/**
 * The build's stored copy of a document (dist/openapi/<name>.json, and its copy for requests
 * <name>.requests.json), as text; undefined without a build.
 */
function builtText(name: DocumentName, copy: '' | '.requests' = ''): string | undefined {
  try {
    return readFileSync(new URL(`../openapi/${name}${copy}.json`, import.meta.url), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The build's copy (its JSON text) when it was made from exactly this YAML text; undefined when
 * there is none, it is damaged, the YAML changed since, or it comes from a build before `bundled` was
 * stored (it was not bundled).
 */
export function builtCopy(json: string | undefined, yamlText: string): BuiltDocument | undefined {
  if (json === undefined) return undefined;
  let copy: Partial<BuiltDocument>;
  try {
    copy = JSON.parse(json) as Partial<BuiltDocument>;
  } catch {
    return undefined;
  }
  if (typeof copy.bundled !== 'boolean' || !copy.document || typeof copy.document !== 'object') return undefined;
  return copy.sha256 === sha256Of(yamlText) ? (copy as BuiltDocument) : undefined;
}

/** The build's copy for requests, on the terms of builtCopy, when it also lists its references' sites. */
export function builtRequestsCopy(json: string | undefined, yamlText: string): RequestsCopy | undefined {
  const copy = builtCopy(json, yamlText) as Partial<RequestsCopy> | undefined;
  return Array.isArray(copy?.references) ? (copy as RequestsCopy) : undefined;
}

/**
 * Inline `./other.yaml#/components/schemas/X` refs as local ones (in place); true when any was found.
 * `documentOf` gives the other document of this project (openapi.yaml or control-plane.yaml) parsed;
 * any other file is read and parsed here.
 */
function bundleExternalRefs(document: Document, documentOf: (name: DocumentName) => Document): boolean {
  const schemas = ((document.components ??= {}).schemas ??= {}) as Record<string, unknown>;
  const others = new Map<string, Record<string, unknown>>();
  let found = false;
  const adopt = (file: string, schemaName: string): void => {
    let other = others.get(file);
    if (!other) {
      // The other document of this project is already parsed (and cached): never parse it twice.
      const known = /^(openapi|control-plane)\.yaml$/.exec(file)?.[1] as DocumentName | undefined;
      other = (known ? documentOf(known) : parseYaml(readFileSync(`${OPENAPI_DIR}${file}`, 'utf8'))) as Record<string, unknown>;
      others.set(file, other);
    }
    const source = (other.components as { schemas?: Record<string, unknown> } | undefined)?.schemas?.[schemaName];
    if (source === undefined) throw new Error(`${file} has no components.schemas.${schemaName}`);
    const existing = schemas[schemaName];
    if (existing !== undefined) {
      if (JSON.stringify(existing) !== JSON.stringify(source)) throw new Error(`components.schemas.${schemaName} differs from the one in ${file}`);
      return;
    }
    const copy = structuredClone(source);
    schemas[schemaName] = copy;
    // Its own local refs name schemas of the other document: adopt those too.
    walk(copy, (ref) => {
      const local = /^#\/components\/schemas\/(.+)$/.exec(ref);
      if (local) adopt(file, local[1]);
      return ref;
    });
  };
  walk(document, (ref) => {
    const external = /^\.\/([\w.-]+\.yaml)#\/components\/schemas\/(.+)$/.exec(ref);
    if (!external) return ref;
    found = true;
    adopt(external[1], external[2]);
    return `#/components/schemas/${external[2]}`;
  });
  return found;
}

/** Visit every $ref of a JSON value, replacing it with what `visit` answers. */
function walk(node: unknown, visit: (ref: string) => string): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach((item) => walk(item, visit));
  const record = node as Record<string, unknown>;
  if (typeof record.$ref === 'string') record.$ref = visit(record.$ref);
  for (const [key, value] of Object.entries(record)) if (key !== '$ref') walk(value, visit);
}

export interface DocumentOperation {
  operationId: string;
  path: string;
  method: string;
  operation: Record<string, unknown>;
}

const operationLists = new Map<string, DocumentOperation[]>();

/** Every operation of a document with its path template, walked once per process. */
export function documentOperations(name: DocumentName = 'openapi'): DocumentOperation[] {
  let list = operationLists.get(name);
  if (!list) {
    list = [];
    const paths = (loadDocument(name).document.paths ?? {}) as Record<string, Record<string, unknown>>;
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        const operationId = (op as { operationId?: unknown } | null)?.operationId;
        if (typeof operationId === 'string') list.push({ operationId, path, method, operation: op as Record<string, unknown> });
      }
    }
    operationLists.set(name, list);
  }
  return list;
}

/** Each `$ref` of a document: the path of the object that holds it, and the path of the node it finally names. */
export type ReferenceSites = Array<[site: string[], target: string[]]>;

/**
 * Where a parsed document's `$ref`s are (local ones, as every document here has once bundled), each
 * with the node it names, a chain of references followed to its end. Worked out by the build and
 * stored with the document, so a start only puts each node in its place (dereferenceInPlace).
 */
export function referenceSites(document: Document): ReferenceSites {
  const at = (path: string[]): unknown => path.reduce<unknown>((node, segment) => (node as Record<string, unknown> | undefined)?.[segment], document);
  const target = (ref: string): string[] => {
    const seen = new Set<string>();
    let path: string[];
    for (let next: unknown = ref; typeof next === 'string'; next = (at(path) as { $ref?: unknown }).$ref) {
      if (!next.startsWith('#/')) throw new Error(`${next}: only references inside the document are resolved`);
      if (seen.has(next)) throw new Error(`${ref}: the references loop`);
      seen.add(next);
      path = next.slice(2).split('/').map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
      const node = at(path);
      if (typeof node !== 'object' || node === null) throw new Error(`${next} names nothing in the document`);
    }
    return path!;
  };
  const sites: ReferenceSites = [];
  const visit = (node: unknown, path: string[]): void => {
    if (typeof node !== 'object' || node === null) return;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      sites.push([path, target(ref)]);
      return;
    }
    for (const key of Object.keys(node)) visit((node as Record<string, unknown>)[key], [...path, key]);
  };
  visit(document, []);
  return sites;
}

/**
 * Every `$ref` replaced by the node it names, in place: the graph openapi-backend's dereferenceSync
 * makes, without its deep copy of the whole document first. `document` must be the caller's own,
 * as parsed (no reference replaced yet); `sites` are its referenceSites.
 */
export function dereferenceInPlace(document: Document, sites: ReferenceSites = referenceSites(document)): Document {
  const at = (path: string[], length = path.length): Record<string, unknown> => {
    let node = document as unknown as Record<string, unknown>;
    for (let i = 0; i < length; i++) node = node[path[i]] as Record<string, unknown>;
    return node;
  };
  // No path goes through a reference (a reference's node has no children to name), so replacing one
  // never moves another's site or target.
  for (const [site, target] of sites) at(site, site.length - 1)[site[site.length - 1]] = at(target);
  return document;
}

/** Where a backend's validator takes its Ajvs from: one per validation context and coercion. */
type AjvPool = (ajvOpts: AjvOpts, context: ValidationContext) => Ajv2020;

/**
 * The check openapi-backend's request validators make of an operation that declares no parameters
 * and no request body: no query parameter at all (its parameters schema gives `query` no properties
 * and additionalProperties: false; path is empty, headers and cookies are open, a body is not looked
 * at), with the error Ajv reports, one per parameter. Written out, so such an operation (the health
 * check a CI script polls at start among them) answers without a compiled validator: a start's first
 * compile also builds its Ajv, some 20 ms of the first answer. test/router-no-input.test.ts holds it to
 * the answers of openapi-backend's own compiled validators.
 */
function noInputCheck(): ValidateFunction {
  const check = (data: { query?: Record<string, unknown> }): boolean => {
    const errors: ErrorObject[] = Object.keys(data.query ?? {}).map((name) => ({
      instancePath: '/query', schemaPath: '#/properties/query/additionalProperties', keyword: 'additionalProperties', params: { additionalProperty: name }, message: 'must NOT have additional properties',
    }));
    validate.errors = errors.length ? errors : null;
    return !errors.length;
  };
  // Called as a compiled validator is (data in, true or `errors`); it has no schema to show.
  const validate = check as unknown as ValidateFunction;
  return validate;
}

/**
 * openapi-backend's validator with its Ajvs from a pool, and no compiled validator for an operation
 * that takes no input (noInputCheck). Its own getAjv builds a draft-07 Ajv with its formats before it
 * hands it to customizeAjv, which never uses it: two thrown-away Ajvs at every operation's first
 * request (a few ms each, the first answer after start among them).
 */
class PooledAjvValidator extends OpenAPIValidator {
  constructor(opts: ConstructorParameters<typeof OpenAPIValidator>[0], private readonly pool: AjvPool) {
    // Compiled on first use, so nothing asks for an Ajv before the pool is set.
    super({ ...opts, lazyCompileValidators: true });
  }

  override getAjv(context: ValidationContext, opts: AjvOpts = {}): Ajv2020 {
    return this.pool({ ...this.ajvOpts, ...opts }, context);
  }

  override buildRequestValidatorsForOperation(operation: Operation): ValidateFunction[] | null {
    if (operation?.operationId && !operation.parameters?.length && !operation.requestBody) return [noInputCheck()];
    return super.buildRequestValidatorsForOperation(operation);
  }
}

/**
 * openapi-backend in quick mode over a document already dereferenced (requestsDefinition): the same
 * router and validator its init() makes, without its deep copy and walk of the document. Quick mode
 * never validates the document itself, and no handlers are registered through openapi-backend (the
 * routers of src/http/router.ts call their own), so that is all its init() does here.
 */
class OwnDocumentBackend extends OpenAPIBackend {
  constructor(definition: Document, options: Omit<Options, 'definition' | 'customizeAjv'>, private readonly pool: AjvPool) {
    // customizeAjv stays the path of record for any other caller of openapi-backend's getAjv.
    super({ ...options, definition, customizeAjv: (_original, ajvOpts, context) => pool(ajvOpts, context) });
  }

  override init(): Promise<this> {
    this.definition = this.inputDocument as Document;
    this.router = new OpenAPIRouter({ definition: this.definition, apiRoot: this.apiRoot, ignoreTrailingSlashes: this.ignoreTrailingSlashes });
    this.validator = new PooledAjvValidator({
      definition: this.definition,
      ajvOpts: this.ajvOpts,
      customizeAjv: this.customizeAjv,
      router: this.router,
      coerceTypes: this.coerceTypes,
    }, this.pool);
    this.initialized = true;
    return Promise.resolve(this);
  }
}

/**
 * What routing and validating requests read of a document, a copy of its own: the document less
 * every operation's `responses` and the components only answers use (about a third of the API
 * document, which a start then neither parses nor keeps) and the root's x-unrouted-responses, with
 * its references' sites. The build
 * stores it (scripts/cache-documents.mjs) beside the document; the answers are checked against the
 * whole document (the response checker, scenario replies), never through openapi-backend.
 */
export function forRequests(built: BuiltDocument): RequestsCopy {
  const { responses: _responses, examples: _examples, ...components } = built.document.components ?? {};
  const paths = Object.fromEntries(Object.entries(built.document.paths ?? {}).map(([path, item]) => [
    path,
    Object.fromEntries(Object.entries(item ?? {}).map(([key, value]) => {
      if (!METHODS.has(key) || typeof value !== 'object' || value === null) return [key, value];
      const { responses: _answers, ...operation } = value as Record<string, unknown>;
      return [key, operation[BODY_CHECKED_BY_HANDLER] === true ? withoutBodySchemas(operation) : operation];
    })),
  ]));
  // The answers of requests without an operation (x-unrouted-responses) are answers too: left out.
  const { 'x-unrouted-responses': _unrouted, ...root } = built.document as Document & { 'x-unrouted-responses'?: unknown };
  const document = structuredClone({ ...root, paths, components }) as Document;
  return { sha256: built.sha256, bundled: built.bundled, document, references: referenceSites(document) };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * An operation whose handler checks the body itself against the same schema (a scenario document:
 * JSON or YAML, after the door of src/http/storable.ts, with messages worded for a person). The
 * router leaves that body to it: its schema stays in the document for clients, and out of the copy
 * the router validates with, so a body is checked once, after the door (twenty thousand bad rules
 * reach no schema at all).
 */
export const BODY_CHECKED_BY_HANDLER = 'x-body-checked-by-handler';

function withoutBodySchemas(operation: Record<string, unknown>): Record<string, unknown> {
  const body = operation.requestBody as { content?: Record<string, Record<string, unknown>> } | undefined;
  if (!body?.content) return operation;
  const content = Object.fromEntries(Object.entries(body.content).map(([type, media]) => {
    const { schema: _schema, ...rest } = media;
    return [type, rest];
  }));
  return { ...operation, requestBody: { ...body, content } };
}

/** A document's copy for requests as the build stored it (or made from its YAML), the caller's own. */
function requestsCopy(name: DocumentName): RequestsCopy {
  const text = documentYaml(name);
  return builtRequestsCopy(builtText(name, '.requests'), text) ?? forRequests(fromYaml(text, (other) => loadDocument(other).document));
}

const definitions = new Map<DocumentName, Document>();

/**
 * A document's copy for requests, dereferenced: made once per process and shared by every backend
 * (every sandbox of a test suite), as openapi-backend's own dereference shared its result. Nothing
 * writes to it: openapi-backend reads it, and compiles its schemas into Ajv validators.
 */
function requestsDefinition(name: DocumentName): Document {
  let definition = definitions.get(name);
  if (!definition) {
    const built = requestsCopy(name);
    definition = dereferenceInPlace(built.document, built.references);
    definitions.set(name, definition);
  }
  return definition;
}

export function createBackend(name: DocumentName): OpenAPIBackend {
  // openapi-backend asks for an Ajv per operation and kind of validator; one per kind (and options)
  // compiles them all. Making an Ajv 2020 (its meta-schemas and formats) cost some 5 ms of every
  // operation's first request, the first answer after start among them. The documents' schemas have
  // no $id, so validators compiled side by side in one Ajv never meet.
  const ajvs = new Map<string, Ajv2020>();
  const ajvFor: AjvPool = (ajvOpts, context) => {
    const key = `${context}:${String(ajvOpts.coerceTypes)}`;
    const known = ajvs.get(key);
    if (known) return known;
    // multipleOfPrecision: amounts are multipleOf 0.01, and 19.99 / 0.01 is 1998.9999999999998 in
    // binary floating point; a tolerance of 1e-6 cents matches the domain's own isCents. verbose
    // gives errors their schema, so a `not` can name its fields with its own description.
    // validateSchema: false: the schemas are the documents' own, linted in CI (redocly, spectral) and
    // compiled by the tests; checking each against the 2020-12 meta-schema compiled that meta-schema
    // on the first request of every start (a tenth of the start-up's time). meta: false: with no
    // schema checked against them, and none of the documents' schemas naming one, the 2020-12
    // meta-schemas are never read, and adding them cost some 4 ms of every Ajv made at a first request
    // (the keywords are Ajv 2020's either way).
    const ajv = new Ajv2020({ ...ajvOpts, strict: false, allErrors: true, verbose: true, multipleOfPrecision: 6, coerceTypes: ajvOpts.coerceTypes, validateSchema: false, meta: false });
    addFormats(ajv);
    ajvs.set(key, ajv);
    return ajv;
  };
  const api = new OwnDocumentBackend(requestsDefinition(name), {
    quick: true,
    strict: true,
    coerceTypes: true,
    // GET /bills/ is not GET /bills: a trailing slash names an empty path parameter, answered 404.
    ignoreTrailingSlashes: false,
  }, ajvFor);
  void api.init();
  return api;
}

const LOCATIONS = new Set(['requestBody', 'query', 'path', 'header', 'cookie']);
/** Keywords that only wrap the errors of their branches: reported alone only when nothing more precise is. */
const WRAPPERS = new Set(['if', 'anyOf', 'oneOf', 'allOf', 'propertyNames']);

const BRANCH = /\/(?:oneOf|anyOf)\/(\d+)(?=\/)/g;

/** Each (instance path, wrapper schema path, branch) a branch error lies in: the instance path may be any ancestor of the error's. */
function branchesOf(e: ErrorObject, wrapperAt: (instancePath: string, schemaPath: string) => boolean): string[] {
  const out: string[] = [];
  for (const m of e.schemaPath.matchAll(BRANCH)) {
    const wrapper = e.schemaPath.slice(0, m.index + m[0].length - m[1].length - 1);
    for (let path = e.instancePath; ; path = path.slice(0, Math.max(0, path.lastIndexOf('/')))) {
      if (wrapperAt(path, wrapper)) out.push(`${path}\0${wrapper}\0${m[1]}`);
      if (!path) break;
    }
  }
  return out;
}

/**
 * A failed oneOf/anyOf speaks of the branches the caller chose: when some branch has every field it
 * requires, the errors of the branches missing one are dropped ({content: 'bad'} against "content or
 * url" names content, not "url is required"). With no branch whole, all stay (both named as required).
 * Linear in the errors (a list of bad items has a wrapper each).
 */
function withoutUnchosenBranches(all: ErrorObject[]): ErrorObject[] {
  const wrappers = new Map<string, number>();
  for (const e of all) {
    if ((e.keyword === 'oneOf' || e.keyword === 'anyOf') && Array.isArray(e.schema)) wrappers.set(`${e.instancePath}\0${e.schemaPath}`, e.schema.length);
  }
  if (!wrappers.size) return all;
  const wrapperAt = (path: string, schemaPath: string) => wrappers.has(`${path}\0${schemaPath}`);
  // Branches missing a field the branch itself requires, at the wrapper's own place.
  const missing = new Map<string, Set<string>>();
  for (const e of all) {
    if (e.keyword !== 'required' || !e.schemaPath.includes('Of/')) continue;
    for (const branch of branchesOf(e, (path, schemaPath) => path === e.instancePath && wrapperAt(path, schemaPath))) {
      const wrapper = branch.slice(0, branch.lastIndexOf('\0'));
      let set = missing.get(wrapper);
      if (!set) missing.set(wrapper, (set = new Set()));
      set.add(branch);
    }
  }
  const dropped = new Set<string>();
  for (const [wrapper, branches] of missing) if (branches.size < (wrappers.get(wrapper) ?? 0)) for (const b of branches) dropped.add(b);
  if (!dropped.size) return all;
  return all.filter((e) => !e.schemaPath.includes('Of/') || !branchesOf(e, wrapperAt).some((b) => dropped.has(b)));
}

/** Ajv errors as {field: message}, fields named as the caller wrote them (line_items[0].amount). */
export function validationErrors(errors: ErrorObject[] | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  // Defined, never assigned: a field named "__proto__" would set the object's prototype, and one named
  // "constructor" or "toString" would find Object.prototype's and never be written (the list was empty).
  const name = (field: string, message: string) => {
    if (!Object.hasOwn(out, field)) Object.defineProperty(out, field, { value: message, enumerable: true, writable: true, configurable: true });
  };
  const all = withoutUnchosenBranches(errors ?? []);
  // A wrapper speaks only where no branch error says more about the same place (or below it): the
  // places precise errors speak of, and every place above them, in one set (a list of 100,000 bad
  // items made 100,000 wrappers, each compared with 100,000 errors: seconds of a blocked process).
  const spokenOf = new Set<string>();
  for (const e of all) {
    if (WRAPPERS.has(e.keyword)) continue;
    for (let path = e.instancePath; !spokenOf.has(path); path = path.slice(0, Math.max(0, path.lastIndexOf('/')))) {
      spokenOf.add(path);
      if (!path) break;
    }
  }
  const covered = (w: ErrorObject) => spokenOf.has(w.instancePath);
  for (const error of all) {
    if (error.keyword === 'if' || (WRAPPERS.has(error.keyword) && covered(error))) continue;
    const segments = error.instancePath.split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (segments.length && LOCATIONS.has(segments[0])) segments.shift();
    let message = error.message ?? 'is invalid';
    const forbidden = error.keyword === 'not' ? (error.schema as { required?: unknown; description?: unknown } | undefined) : undefined;
    if (forbidden && Array.isArray(forbidden.required)) {
      // `not: {required: [a, b]}`: the fields that must not be sent (together), worded by the schema.
      const why = typeof forbidden.description === 'string' ? forbidden.description : `${forbidden.required.join(' and ')} must not be sent together`;
      const at = segments.reduce((name, s) => (/^\d+$/.test(s) ? `${name}[${s}]` : name ? `${name}.${s}` : s), '');
      for (const field of forbidden.required) name(at ? `${at}.${String(field)}` : String(field), why);
      continue;
    }
    // A refused name of an object (propertyNames: a header a scenario cannot set) is named itself, with
    // the reason its schema's `not` gives, if any.
    if (error.propertyName !== undefined) {
      segments.push(error.propertyName);
      const reason = error.keyword === 'not' ? (error.schema as { description?: unknown } | undefined)?.description : undefined;
      if (typeof reason === 'string') message = reason;
    }
    if (error.keyword === 'required') {
      const missing = String((error.params as { missingProperty?: string }).missingProperty);
      if (missing === 'requestBody') {
        segments.push('body');
        message = 'a JSON body is required';
      } else if (!LOCATIONS.has(missing)) {
        segments.push(missing);
        message = 'is required';
      } else continue;
    } else if (error.keyword === 'additionalProperties') {
      segments.push(String((error.params as { additionalProperty?: string }).additionalProperty));
      message = 'is not a known field';
    } else if (error.keyword === 'exclusiveMinimum' || error.keyword === 'minimum' || error.keyword === 'maximum' || error.keyword === 'exclusiveMaximum') {
      const limit = (error.params as { limit?: number }).limit;
      message = { exclusiveMinimum: `must be greater than ${limit}`, minimum: `must be at least ${limit}`, maximum: `must be at most ${limit}`, exclusiveMaximum: `must be less than ${limit}` }[error.keyword];
    } else if (error.keyword === 'multipleOf' && (error.params as { multipleOf?: number }).multipleOf === 0.01) {
      message = 'must have at most two decimal places (amounts are dollars and cents)';
    } else if (error.keyword === 'enum') {
      message = `must be one of: ${((error.params as { allowedValues?: unknown[] }).allowedValues ?? []).join(', ')}`;
    } else if (error.keyword === 'parse') {
      segments.push('body');
      message = 'is not valid JSON';
    }
    const field = segments.reduce((path, s) => (/^\d+$/.test(s) ? `${path}[${s}]` : path ? `${path}.${s}` : s), '') || 'body';
    name(field, message);
  }
  return out;
}
