// Owns the hostile documents of the door (src/http/storable.ts): fast-check arbitraries for values
// and texts a client may send to be stored (nested far past the limit, cyclic YAML aliases, alias
// bombs, huge strings, prototype-named keys, numerals JSON or YAML read oddly, values JSON cannot
// hold), and how one is written into a request body, as JSON text (spliced in, so a value 100,000
// deep never goes through a recursive writer) or as a YAML document. Used by the fuzzer's mutations
// (cases.mjs), the hostile-document phase (hostile.mjs) and the tests of the door.
import fc from 'fast-check';
import { Document, parse as parseYaml } from 'yaml';

/**
 * Field names that are properties of Object.prototype, Array.prototype or Function.prototype (read
 * from the runtime, so the class is covered, not a list), `__proto__` and `prototype`, and made-up
 * names in their style.
 */
export const PROTOTYPE_NAMES = [...new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  ...Object.getOwnPropertyNames(Array.prototype),
  ...Object.getOwnPropertyNames(Function.prototype).filter((name) => !['caller', 'arguments'].includes(name)),
  '__proto__', 'prototype',
])];
export const prototypeKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 10 }).map((s) => `__${s}__`) },
);

/**
 * Texts a query or path integer could be read from by Number() but are not decimal numerals: other
 * bases, exponents, signs, spaces, fractions, separators, Infinity and NaN.
 */
export const oddNumeral = fc.oneof(
  fc.tuple(fc.nat({ max: 600 }), fc.constantFrom(16, 2, 8), fc.boolean()).map(([n, base, upper]) => {
    const prefix = { 16: '0x', 2: '0b', 8: '0o' }[base];
    return `${upper ? prefix.toUpperCase() : prefix}${n.toString(base)}`;
  }),
  fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 2 }), fc.constantFrom('e', 'E', 'e+')).map(([m, e, mark]) => `${m}${mark}${e}`),
  fc.tuple(fc.integer({ min: 1, max: 500 }), fc.constantFrom(' {}', '{} ', '\t{}', '+{}', '{}.0', '{}.5', '0{}.', '.{}', '{}_0', '1_{}', '{},0', '--{}', '{}n')).map(([n, form]) => form.replace('{}', String(n))),
  fc.constantFrom('Infinity', '-Infinity', 'NaN', '1e309', '0x', '-', '+', '.', ' '),
);

/** A text that ends where a deep value of this shape does: `depth` levels of objects or arrays around a 1. */
export function deepText(depth, object) {
  return object ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

/**
 * A hostile value for a JSON document, as JSON text (never built as a value: JSON.stringify recurses):
 * nested up to and past the limit, up to 100,000 levels, a string of up to 2 million characters (ASCII, accented,
 * astral, a NUL or a quote: their JSON sizes differ), an object with prototype-named keys, a number JSON
 * reads as Infinity or oddly.
 */
export const hostileJson = fc.oneof(
  // Up to the limit too (64 in all, a scenario's respond.body starting 4 levels down): those are stored.
  fc.record({ kind: fc.constant('deep'), depth: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 65, max: 200 }), fc.integer({ min: 200, max: 100_000 })), object: fc.boolean() }),
  fc.record({ kind: fc.constant('huge'), chars: fc.integer({ min: 100_000, max: 2_000_000 }), unit: fc.constantFrom('x', 'é', '𝔘', '\u0000', '"') }),
  // Added to the object they land on (merge), or in its place.
  fc.record({ kind: fc.constant('keys'), entries: fc.array(fc.tuple(prototypeKey, fc.jsonValue({ maxDepth: 2 })), { minLength: 1, maxLength: 5 }), nested: fc.boolean(), merge: fc.boolean() }),
  fc.record({ kind: fc.constant('numeral'), text: fc.constantFrom('1e400', '-1e400', '1e309', '-0', '1E2', '0.1e1', '123456789012345678901234567890', '5e-324', '1e-400') }),
);

/**
 * The JSON text of a hostile value; `replaced` is the value it lands in place of (prototype-named keys
 * that merge are added to it when it is an object, after its own fields).
 */
export function hostileJsonText(value, replaced) {
  switch (value.kind) {
    case 'deep': return deepText(value.depth, value.object);
    case 'huge': return JSON.stringify(value.unit.repeat(Math.ceil(value.chars / value.unit.length)));
    case 'keys': {
      const entries = value.entries.map(([key, item]) => `${JSON.stringify(key)}:${JSON.stringify(item)}`);
      if (value.merge && replaced && typeof replaced === 'object' && !Array.isArray(replaced)) {
        return `{${[...Object.entries(replaced).map(([key, item]) => `${JSON.stringify(key)}:${JSON.stringify(item)}`), ...entries].join(',')}}`;
      }
      const object = `{${entries.join(',')}}`;
      return value.nested ? `{"outer":${object},"list":[${object}]}` : object;
    }
    case 'numeral': return value.text;
    default: throw new Error(`no JSON text for ${value.kind}`);
  }
}

/** A short description of a hostile value for reports. */
export function describeHostile(value) {
  switch (value.kind) {
    case 'deep': return `${value.object ? 'objects' : 'arrays'} ${value.depth} deep`;
    case 'huge': return `a string of ${value.chars} × ${JSON.stringify(value.unit)}`;
    case 'keys': return `keys ${value.entries.map(([key]) => JSON.stringify(key)).join(', ')}${value.merge ? ' (added)' : value.nested ? ' (nested)' : ''}`;
    case 'numeral': return `the numeral ${value.text}`;
    case 'cyclic': return `a cyclic alias (spot ${value.spot}, ancestor ${value.ancestor})`;
    case 'bomb': return `an alias bomb (${value.levels} levels of ${value.fan}, leaves of ${value.leaf} characters)`;
    case 'yamlScalar': return `the YAML scalar ${JSON.stringify(value.text)}`;
    default: return value.kind;
  }
}

/**
 * A hostile YAML-only value: an alias to one of its own ancestors (cyclic), levels of anchored lists
 * each holding `fan` aliases of the one before (an alias bomb: fan^levels leaves), or a scalar YAML
 * reads as something JSON cannot hold (.inf, .nan, a tag of YAML 1.1, an unknown tag) or as an odd
 * numeral (0x1F is 31 in YAML 1.2's core schema: stored as 31).
 */
export const hostileYaml = fc.oneof(
  fc.record({ kind: fc.constant('cyclic'), spot: fc.nat(), ancestor: fc.nat() }),
  fc.record({ kind: fc.constant('bomb'), fan: fc.integer({ min: 2, max: 12 }), levels: fc.integer({ min: 1, max: 9 }), leaf: fc.integer({ min: 1, max: 2_000 }) }),
  fc.record({
    kind: fc.constant('yamlScalar'),
    text: fc.oneof(
      fc.constantFrom('.inf', '-.inf', '.nan', '.NaN', '!!binary aGVsbG8=', '!!set {a, b}', '!!omap [a: 1]', '!!timestamp 2001-12-14', '!!js/undefined ~', '!custom x', '!!float 1e400', '1e400'),
      oddNumeral.map((text) => text.trim() || '0x'),
    ),
  }),
);

/** JSON pointers (key paths) of every value inside a plain value, the root first. */
export function spotsOf(value, path = [], out = []) {
  out.push(path);
  if (Array.isArray(value)) value.forEach((item, i) => spotsOf(item, [...path, i], out));
  else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) spotsOf(item, [...path, key], out);
  return out;
}

const HOLE = '\u0000hostile\u0000';

/** The value at `path` of `value` (undefined when there is none). */
export function valueAt(value, path) {
  let node = value;
  for (const key of path) node = node?.[key];
  return node;
}

/** `base` as JSON text with the value at `path` (the root: []) replaced by `text`, spliced in. */
export function jsonWithText(base, path, text) {
  if (!path.length) return text;
  const copy = structuredClone(base);
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key];
  Object.defineProperty(parent, path[path.length - 1], { value: HOLE, enumerable: true, writable: true, configurable: true });
  const written = JSON.stringify(copy);
  return written.replace(JSON.stringify(HOLE), () => text);
}

/** An alias bomb as a YAML flow value: anchored lists, each of `fan` aliases of the one before. */
function bombYaml({ fan, levels, leaf }) {
  const lines = [`{l0: &l0 [${Array(fan).fill(JSON.stringify('x'.repeat(leaf))).join(', ')}]`];
  for (let level = 1; level <= levels; level++) lines.push(`, l${level}: &l${level} [${Array(fan).fill(`*l${level - 1}`).join(', ')}]`);
  return `${lines.join('')}}`;
}

/**
 * `base` (a plain value) as a YAML document with a hostile YAML value in it: at `path` for a bomb or
 * a scalar; for a cyclic alias, the value at one of the document's spots (picked by `spot`) becomes
 * an alias of one of its ancestors (picked by `ancestor`). Answers the text.
 */
export function yamlWith(base, path, value) {
  const doc = new Document(structuredClone(base));
  if (value.kind === 'cyclic') {
    // The loop closes inside the value at `path` (the whole document when `path` is the root).
    const spots = spotsOf(base).filter((p) => p.length > path.length && path.every((key, i) => p[i] === key));
    if (!spots.length) spots.push(...spotsOf(base).filter((p) => p.length > 0));
    // A scalar document has nowhere to loop: the document becomes a list that holds itself.
    if (!spots.length) return '&loop [*loop]\n';
    const spot = spots[value.spot % spots.length];
    const ancestorPath = spot.slice(0, value.ancestor % spot.length);
    const ancestor = ancestorPath.length ? doc.getIn(ancestorPath, true) : doc.contents;
    ancestor.anchor = 'loop';
    doc.setIn(spot, doc.createAlias(ancestor, 'loop'));
    return String(doc);
  }
  const hole = 'HOSTILE_VALUE_HOLE';
  if (path.length) doc.setIn(path, hole);
  else return value.kind === 'bomb' ? bombYaml(value) : value.text;
  const text = String(doc);
  return text.replace(hole, () => (value.kind === 'bomb' ? bombYaml(value) : value.text));
}

/** What the server should have stored of a YAML text it accepted, read the way its door reads YAML. */
export function yamlValue(text) {
  return parseYaml(text, { resolveKnownTags: false, logLevel: 'silent' });
}
