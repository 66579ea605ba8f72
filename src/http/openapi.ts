// Owns the OpenAPI documents: loading them, building openapi-backend instances with a JSON Schema
// 2020-12 validator (the documents are OpenAPI 3.1.1), and turning Ajv errors into validation_errors.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import { OpenAPIBackend, type Document, type Operation, type Request } from 'openapi-backend';
import { parse as parseYaml } from 'yaml';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const OPENAPI_DIR = fileURLToPath(new URL('../../openapi/', import.meta.url));

export interface LoadedDocument {
  yamlText: string;
  document: Document;
}

const cache = new Map<string, LoadedDocument>();

/** The parsed document (parsed once per process; callers must not mutate it). */
export function loadDocument(name: 'openapi' | 'control-plane'): LoadedDocument {
  let loaded = cache.get(name);
  if (!loaded) {
    const yamlText = readFileSync(`${OPENAPI_DIR}${name}.yaml`, 'utf8');
    loaded = { yamlText, document: parseYaml(yamlText) as Document };
    cache.set(name, loaded);
  }
  return loaded;
}

export interface DocumentOperation {
  operationId: string;
  path: string;
  method: string;
  operation: Record<string, unknown>;
}

const operationLists = new Map<string, DocumentOperation[]>();

/** Every operation of a document with its path template, walked once per process. */
export function documentOperations(name: 'openapi' | 'control-plane' = 'openapi'): DocumentOperation[] {
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

export function createBackend(document: Document): OpenAPIBackend {
  const api = new OpenAPIBackend({
    definition: structuredClone(document),
    quick: true,
    strict: true,
    coerceTypes: true,
    ignoreTrailingSlashes: true,
    customizeAjv: (_original, ajvOpts) => {
      const ajv = new Ajv2020({ ...ajvOpts, strict: false, allErrors: true, coerceTypes: ajvOpts.coerceTypes });
      addFormats(ajv);
      return ajv as never;
    },
  });
  // In quick mode with a document object, init() does its work synchronously.
  void api.init();
  if (!api.initialized) throw new Error('openapi-backend did not initialise synchronously');
  precompileRoutes(api);
  return api;
}

type RouterInternals = {
  getOperations(): Operation[];
  matchOperation(req: Request, strict?: boolean): Operation | undefined;
  normalizeRequest(req: Request): Request;
  normalizePath(path: string): string;
  isUnderApiRoot(path: string): boolean;
};

/**
 * openapi-backend's router flattens the whole document and compiles a regular expression per
 * operation on every match (twice per request here). The document never changes at run time, so
 * the operations and their patterns are computed once; the matching rules stay the library's:
 * an exact path first, then templates by literal length, 404 for no path and 405 for no method.
 */
function precompileRoutes(api: OpenAPIBackend): void {
  const router = api.router as unknown as RouterInternals;
  const operations = router.getOperations();
  router.getOperations = () => operations;
  const templates = operations
    .map((operation) => ({
      operation,
      pattern: new RegExp(`^${operation.path.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`),
      literalLength: operation.path.replace(/\{.*?\}/g, '').length,
    }))
    .sort((a, b) => b.literalLength - a.literalLength);
  const fallback = router.matchOperation.bind(router);
  router.matchOperation = (req: Request, strict?: boolean) => {
    const normalized = router.normalizeRequest(req);
    if (!router.isUnderApiRoot(normalized.path)) return fallback(req, strict);
    const path = router.normalizePath(normalized.path);
    const exact = operations.find((o) => o.path === path && o.method === normalized.method);
    if (exact) return exact;
    const matches = templates.filter((t) => t.pattern.test(path));
    const found = matches.find((t) => t.operation.method === normalized.method)?.operation;
    if (!found && strict) throw Error(matches.length ? '405-methodNotAllowed: this method is not registered for the route' : '404-notFound: no route matches request');
    return found;
  };
}

const LOCATIONS = new Set(['requestBody', 'query', 'path', 'header', 'cookie']);

/** Ajv errors as {field: message}, fields named as the caller wrote them (line_items[0].amount). */
export function validationErrors(errors: ErrorObject[] | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const error of errors ?? []) {
    const segments = error.instancePath.split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (segments.length && LOCATIONS.has(segments[0])) segments.shift();
    let message = error.message ?? 'is invalid';
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
    } else if (error.keyword === 'enum') {
      message = `must be one of: ${((error.params as { allowedValues?: unknown[] }).allowedValues ?? []).join(', ')}`;
    } else if (error.keyword === 'parse') {
      segments.push('body');
      message = 'is not valid JSON';
    }
    const field = segments.reduce((name, s) => (/^\d+$/.test(s) ? `${name}[${s}]` : name ? `${name}.${s}` : s), '') || 'body';
    out[field] ??= message;
  }
  return out;
}
