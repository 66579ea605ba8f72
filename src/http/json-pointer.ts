// Owns the one way into an OpenAPI document by reference: a local JSON pointer (`#/components/...`,
// RFC 6901 escapes) and a chain of `$ref`s followed to the node it ends at. Used by the response
// checker, the scenario replies and the parity suite's shape checks.

type Node = Record<string, unknown>;

/** The node a local JSON pointer names, or undefined. */
export function atPointer(document: unknown, pointer: string): unknown {
  if (!pointer.startsWith('#')) throw new Error(`only local $refs are supported, got ${pointer}`);
  const path = pointer.replace(/^#\/?/, '');
  if (!path) return document;
  let target: unknown = document;
  for (const part of path.split('/')) target = (target as Node | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return target;
}

/** Follow `node`'s `$ref` (and the one it lands on, and so on) to a node that is not a reference. */
export function followRefs(document: unknown, node: unknown, maxHops = 20): unknown {
  let current = node;
  for (let hops = 0; hops < maxHops; hops++) {
    const ref = (current as Node | undefined)?.$ref;
    if (typeof ref !== 'string') return current;
    current = atPointer(document, ref);
  }
  throw new Error(`$ref chain longer than ${maxHops}`);
}
