// Owns the door every value stored from a request passes before anything else reads it: request
// bodies (JSON and YAML, every operation of both documents), scenario documents (control plane and
// --scenario files) and fixture files. It checks nesting depth, cycles, size as JSON and that the
// value is JSON at all (no Infinity, NaN, dates, binary or other non-plain objects), without
// recursion, so a value nested 100,000 deep is a 400 and never a stack overflow in a later recursive
// reader (Ajv, structuredClone, JSON.stringify, the journal, the data file). YAML text is parsed here
// too, after its nesting is counted on the text (the YAML parser itself recurses per level).
// Keys are data: a body's "__proto__", "constructor" or "toString" stays an own field (JSON.parse
// and the YAML parser both define it so); schemas with closed objects refuse them by name.
import { isCollection, parseDocument, visit } from 'yaml';
import { withArticle } from '../article.js';
import { ApiError, Errors, invalidFields } from '../errors.js';
import { LIMITS } from '../limits.js';

export type Segment = string | number;

/** What may be stored of one value, and how the value is called in messages. */
export interface DoorRules {
  /** The value in messages: "The request body", "The scenario document". */
  what: string;
  /** Levels of objects and arrays (the root's own is the first). */
  depth: number;
  /** Its size as compact JSON, in bytes, YAML aliases counted each time they are used; Infinity: not counted. */
  bytes: number;
  /** Its values (each scalar, object and array, as often as it is used); Infinity: not counted. */
  values: number;
}

/** Why a value cannot be stored, and where in it. */
export interface Refusal {
  path: Segment[];
  why: string;
  status: 400 | 413;
}

/** Segments of the path named in validation_errors: enough for `rules[0].respond.body` or `customers[2].line_items[0]`. */
const NAMED_SEGMENTS = 4;
/** A key in a named path is cut after this many characters (keys are free text in free-form values). */
const NAMED_KEY_CHARS = 64;

/** The field a path names, as validation_errors names fields (`rules[0].respond.body`), cut to its first segments. */
export function fieldName(path: readonly Segment[]): string {
  let name = '';
  for (const segment of path.slice(0, NAMED_SEGMENTS)) {
    if (typeof segment === 'number') name += `[${segment}]`;
    else {
      const key = segment.length > NAMED_KEY_CHARS ? `${segment.slice(0, NAMED_KEY_CHARS)}…` : segment;
      name += name ? `.${key}` : key;
    }
  }
  return name || 'body';
}

const MB = 1024 * 1024;
/** A byte count as people read limits: "1 MB", "15 MB", "512 KB". */
export function sizeText(bytes: number): string {
  return bytes >= MB && bytes % MB === 0 ? `${bytes / MB} MB` : bytes >= 1024 && bytes % 1024 === 0 ? `${bytes / 1024} KB` : `${bytes} bytes`;
}

/**
 * Characters JSON escapes in a string: quote and backslash (`\"`, 2 bytes), the C0 controls (2 or 6),
 * and a lone surrogate (`\udxxx`, 6 bytes, where UTF-8 would count the 3 of a replacement character).
 */
const ESCAPED = /["\\\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const SHORT_ESCAPES = new Set(['"', '\\', '\b', '\f', '\n', '\r', '\t']);

/** A string's size in JSON, exactly: its UTF-8 bytes, the two quotes and what escapes add. */
function stringBytes(text: string): number {
  let bytes = Buffer.byteLength(text, 'utf8') + 2;
  ESCAPED.lastIndex = 0;
  for (let match = ESCAPED.exec(text); match; match = ESCAPED.exec(text)) {
    const char = match[0];
    bytes += SHORT_ESCAPES.has(char) ? 1 : char.charCodeAt(0) < 0x20 ? 5 : 3;
  }
  return bytes;
}

/** Why a scalar is not JSON, or undefined when it is. */
function scalarProblem(value: unknown): string | undefined {
  if (value === null) return undefined;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `is ${String(value)}, which JSON cannot hold: use a finite number or a string`;
    case 'undefined':
      return 'has no value (undefined), which JSON cannot hold';
    default:
      return `is ${withArticle(typeof value)}, which JSON cannot hold`;
  }
}

function scalarBytes(value: unknown): number {
  if (typeof value === 'string') return stringBytes(value);
  if (value === null || value === true) return 4;
  if (value === false) return 5;
  // A finite number (scalarProblem refused the rest): JSON writes it as String() does.
  return typeof value === 'number' ? String(value).length : 0;
}

/** Why an object is not a plain JSON object or array (a date, a Set, a Buffer...), or undefined. */
function objectProblem(value: object): string | undefined {
  if (Array.isArray(value)) return undefined;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype === Object.prototype || prototype === null) return undefined;
  const kind = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return `is ${typeof kind === 'string' && kind ? withArticle(kind) : 'an object of another kind'}, not a JSON object or array`;
}

/**
 * The first reason `root` cannot be stored, or undefined when it can: a level past `rules.depth`, a
 * value that contains itself (a cyclic YAML alias), a value that is not JSON, or the running size
 * as JSON past `rules.bytes` or count of values past `rules.values` (counted in document order, so
 * the path named is where the count went past the limit). One walk with its own stack: nothing recurses, whatever the depth; a value shared
 * by aliases is walked (and counted) at each use, but the walk stops at the first problem, so an
 * alias bomb costs at most the byte limit.
 */
export function findUnstorable(root: unknown, rules: DoorRules): Refusal | undefined {
  const counting = Number.isFinite(rules.bytes);
  let bytes = 0;
  /** Segments from the root to the value being looked at. */
  const path: Segment[] = [];
  /** The objects and arrays around it, outermost first, each with its keys (undefined: an array) and the index of its next child. */
  const open: object[] = [];
  const keys: Array<string[] | undefined> = [];
  const next: number[] = [];
  const onPath = new Set<object>();
  const refuse = (why: string, status: 400 | 413 = 400): Refusal => ({ path: path.slice(), why, status });
  const tooLarge = () => refuse(`takes ${rules.what.toLowerCase()} past ${sizeText(rules.bytes)} as JSON (a YAML alias counts each time it is used)`, 413);
  let values = 0;
  let value: unknown = root;
  for (;;) {
    if (++values > rules.values) return refuse(`takes ${rules.what.toLowerCase()} past ${rules.values} values (each string, number, object or array counts)`, 413);
    if (value !== null && typeof value === 'object') {
      const problem = objectProblem(value);
      if (problem) return refuse(problem);
      if (onPath.has(value)) return refuse('contains itself (a cyclic YAML alias): a value that never ends cannot be stored');
      if (open.length >= rules.depth) return refuse(`nests deeper than ${rules.depth} levels of objects and arrays`);
      onPath.add(value);
      open.push(value);
      keys.push(Array.isArray(value) ? undefined : Object.keys(value));
      next.push(0);
      if (counting) bytes += 2;
    } else {
      const problem = scalarProblem(value);
      if (problem) return refuse(problem);
      if (counting) bytes += scalarBytes(value);
    }
    if (bytes > rules.bytes) return tooLarge();
    // The next value: the next child of the innermost open container, closing those that are done.
    for (;;) {
      const top = open.length - 1;
      if (top < 0) return undefined;
      const container = open[top];
      const names = keys[top];
      const index = next[top];
      if (index < (names ? names.length : (container as unknown[]).length)) {
        next[top] = index + 1;
        path.length = top;
        if (names) {
          const key = names[index];
          path.push(key);
          value = (container as Record<string, unknown>)[key];
          // A key whose value JSON would drop (undefined) is refused above, so every key is counted.
          if (counting) bytes += stringBytes(key) + 1 + (index > 0 ? 1 : 0);
        } else {
          path.push(index);
          value = (container as unknown[])[index];
          if (counting && index > 0) bytes += 1;
        }
        break;
      }
      onPath.delete(container);
      open.pop();
      keys.pop();
      next.pop();
      path.length = top;
    }
  }
}

/** The HttpError for a refusal: 400 naming the field, or 413 naming it when the size is the reason. */
export function refusalError(refusal: Refusal, what: string): ApiError {
  const field = fieldName(refusal.path);
  const message = `${what} cannot be stored: ${field} ${refusal.why}.`;
  if (refusal.status === 413) return new ApiError(Errors.payloadTooLarge, { message, validation_errors: { [field]: refusal.why } });
  return invalidFields({ [field]: refusal.why }, message);
}

/** Throw the door's HttpError when `value` cannot be stored under `rules`. */
export function checkStorable(value: unknown, rules: DoorRules): void {
  const refusal = findUnstorable(value, rules);
  if (refusal) throw refusalError(refusal, rules.what);
}

/**
 * How deeply a YAML (or JSON) text nests, counted without parsing: open brackets, block indentation
 * levels and sequence dashes. Quotes are not honoured (a bracket inside a string counts too), so the
 * count never falls short of the real depth; it stops once past `limit`.
 */
export function textNestingDepth(text: string, limit: number): number {
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

/**
 * A YAML (or JSON) text read into a value the door accepts, or a 400/413 naming `body` (or the field):
 * its size, its nesting counted on the text before the parser (which recurses per level) sees it,
 * then the parse with YAML 1.2's core schema only (no !!binary, !!set or !!timestamp: their values
 * are not JSON), at most LIMITS.yamlAliases alias uses, and any parser warning (an unknown tag, a
 * key that is a collection) refused rather than guessed at; then the value through the door, which
 * refuses a cyclic alias and counts a shared one at each use.
 */
export function readYaml(text: string, rules: DoorRules): unknown {
  const textBytes = Buffer.byteLength(text, 'utf8');
  if (textBytes > rules.bytes) {
    throw new ApiError(Errors.payloadTooLarge, { message: `${rules.what} is larger than ${sizeText(rules.bytes)}.`, validation_errors: { body: `is ${textBytes} bytes, more than ${sizeText(rules.bytes)}` } });
  }
  if (textNestingDepth(text, rules.depth) > rules.depth) {
    throw invalidFields({ body: `nests deeper than ${rules.depth} levels (counted on brackets, indentation and sequence dashes)` }, `${rules.what} nests deeper than ${rules.depth} levels.`);
  }
  const bad = (why: string) => invalidFields({ body: `is not valid YAML or JSON: ${why.split('\n')[0]}` }, `${rules.what} is not valid YAML or JSON.`);
  let value: unknown;
  try {
    // logLevel 'error': the library writes no process warning of its own for a client's text.
    const document = parseDocument(text, { resolveKnownTags: false, prettyErrors: false, logLevel: 'error' });
    const problem = document.errors[0] ?? document.warnings[0];
    if (problem) throw bad(problem.message);
    // A key that is a list or a map would be turned into a string ("[ a, b ]") by the library.
    visit(document, {
      Pair(_, pair) {
        if (isCollection(pair.key)) throw bad('a key is a list or a map; keys must be strings or other scalars');
      },
    });
    value = document.toJS({ maxAliasCount: LIMITS.yamlAliases });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The yaml library's wording of its maxAliasCount ("...indicates a resource exhaustion attack").
    if (/alias count/i.test((error as Error).message)) {
      throw invalidFields({ body: `resolves YAML aliases more than ${LIMITS.yamlAliases} times (an alias of a value that holds aliases counts for each of them)` }, `${rules.what} uses too many YAML aliases.`);
    }
    throw bad((error as Error).message);
  }
  checkStorable(value, rules);
  return value;
}

/** The door's rules for a request body: its nesting and its count of values (its size is the body parser's limit). */
const BODY_RULES: DoorRules = { what: 'The request body', depth: LIMITS.valueDepth, bytes: Infinity, values: LIMITS.bodyValues };

/**
 * Fewer bytes than a body needs to nest past the limit (an open and a close bracket per level): such
 * a body skips the walk, so the common small request pays nothing here. Only an uncompressed body's
 * Content-Length counts: 100,000 brackets gzip to a few hundred bytes.
 */
const SHALLOW_BODY_BYTES = 2 * (LIMITS.valueDepth + 1);

/**
 * The door for a parsed request body, before anything else reads it (validation, handlers, the
 * journal): a JSON value is walked for its depth; a text (YAML) body has its nesting counted on the
 * text (the router reads a JSON text sent as YAML). Throws the 400 naming the field.
 */
export function checkBody(body: unknown, headers: { 'content-length'?: string; 'content-encoding'?: string }): void {
  if (body === null || body === undefined) return;
  const length = headers['content-length'];
  const encoding = headers['content-encoding'];
  if (length !== undefined && (encoding === undefined || encoding.toLowerCase() === 'identity') && Number(length) < SHALLOW_BODY_BYTES) return;
  if (typeof body === 'object') return checkStorable(body, BODY_RULES);
  if (typeof body === 'string' && textNestingDepth(body, LIMITS.valueDepth) > LIMITS.valueDepth) {
    throw invalidFields({ body: `nests deeper than ${LIMITS.valueDepth} levels (counted on brackets, indentation and sequence dashes)` }, `The request body nests deeper than ${LIMITS.valueDepth} levels.`);
  }
}
