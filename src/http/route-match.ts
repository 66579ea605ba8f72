// Owns routing a request to one operation of an OpenAPI document: a matcher compiled once from the
// operations openapi-backend lists (its public getOperations()), then one match per request. The
// rules are the ones openapi-backend applies: a path without parameters first, then templates by the
// length of their literal text (longest first), each `{name}` matching one non-empty segment; no path
// is 404 and a path without the method is 405 (allowedMethods() then names the methods it takes, as
// Prism's router does). Path parameters are decoded (decodeURIComponent).
import type { Operation } from 'openapi-backend';

export interface RouteMatch {
  operation: Operation;
  /** Path parameters, decoded. */
  params: Record<string, string>;
}

/**
 * The one path helper: a document's path template (`/bills/{id}/submit`) as a pattern, each `{name}`
 * one non-empty segment (captured in order of `names`), the literal text matched as it is.
 * `trailingSlash`: also match the path with one `/` at its end.
 */
export function compilePathTemplate(template: string, { trailingSlash = false } = {}): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = template.split(/\{([^}]+)\}/).map((part, i) => {
    if (i % 2 === 1) {
      names.push(part);
      return '([^/]+)';
    }
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('');
  return { pattern: new RegExp(`^${source}${trailingSlash ? '/?' : ''}$`), names };
}

interface Template {
  /** The document's path template. */
  source: string;
  pattern: RegExp;
  names: string[];
  byMethod: Map<string, Operation>;
  literalLength: number;
}

/** "/customers/x" -> "customers"; "/" -> "". */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return end < 0 ? path.slice(1) : path.slice(1, end);
}

const NO_PARAMS: Record<string, string> = Object.freeze({});

export class RouteMatcher {
  /** path -> method (lower case) -> operation, for paths without parameters. */
  private readonly exact = new Map<string, Map<string, Operation>>();
  private readonly templates: Template[] = [];
  /**
   * The templates a path may match, by its first segment: a template whose first segment is literal
   * is only tried for paths starting with it (each request tries a handful of patterns, not all).
   */
  private readonly byFirstSegment = new Map<string, Template[]>();
  /** Templates whose first segment is a parameter: tried for every path. */
  private readonly anyFirstSegment: Template[] = [];

  constructor(operations: Operation[]) {
    const byTemplate = new Map<string, Template>();
    for (const operation of operations) {
      const method = operation.method.toLowerCase();
      if (!operation.path.includes('{')) {
        let methods = this.exact.get(operation.path);
        if (!methods) this.exact.set(operation.path, (methods = new Map<string, Operation>()));
        methods.set(method, operation);
      }
      let template = byTemplate.get(operation.path);
      if (!template) {
        const { pattern, names } = compilePathTemplate(operation.path);
        template = { source: operation.path, pattern, names, byMethod: new Map(), literalLength: operation.path.replace(/\{.*?\}/g, '').length };
        byTemplate.set(operation.path, template);
        this.templates.push(template);
      }
      template.byMethod.set(method, operation);
    }
    // Array.prototype.sort is stable: templates of equal literal length keep the document's order.
    this.templates.sort((a, b) => b.literalLength - a.literalLength);
    for (const template of this.templates) {
      const first = firstSegment(template.source);
      if (first.includes('{')) this.anyFirstSegment.push(template);
    }
    for (const template of this.templates) {
      const first = firstSegment(template.source);
      if (first.includes('{')) continue;
      let list = this.byFirstSegment.get(first);
      if (!list) {
        // Kept in the global order (literal length, then the document's), merged with the parameter-first ones.
        list = this.templates.filter((t) => t === template || firstSegment(t.source) === first || this.anyFirstSegment.includes(t));
        this.byFirstSegment.set(first, list);
      }
    }
  }

  /** The operation for `method` (any case) and `path` (the document's path, no query), or 404/405. */
  match(method: string, path: string): RouteMatch | 404 | 405 {
    const lower = method.toLowerCase();
    const exact = this.exact.get(path)?.get(lower);
    if (exact) return { operation: exact, params: NO_PARAMS };
    let pathMatched = false;
    for (const template of this.byFirstSegment.get(firstSegment(path)) ?? this.anyFirstSegment) {
      const found = template.pattern.exec(path);
      if (!found) continue;
      pathMatched = true;
      const operation = template.byMethod.get(lower);
      if (!operation) continue;
      if (!template.names.length) return { operation, params: NO_PARAMS };
      const params: Record<string, string> = {};
      for (let i = 0; i < template.names.length; i++) params[template.names[i]] = decodeURIComponent(found[i + 1]);
      return { operation, params };
    }
    return pathMatched ? 405 : 404;
  }

  /**
   * The methods the document lists for `path`, upper case in a fixed order: the `Allow` header of a
   * 405. Only asked after match() answered 405, so the common request never pays for it.
   */
  allowedMethods(path: string): string[] {
    const methods = new Set<string>(this.exact.get(path)?.keys() ?? []);
    for (const template of this.byFirstSegment.get(firstSegment(path)) ?? this.anyFirstSegment) {
      if (template.pattern.test(path)) for (const method of template.byMethod.keys()) methods.add(method);
    }
    return METHOD_ORDER.filter((m) => methods.has(m)).map((m) => m.toUpperCase());
  }
}

/** The order of the `Allow` header (the document's methods: OpenAPI's eight). */
const METHOD_ORDER = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'];
