// Shared by the tests that walk both OpenAPI documents operation by operation (test/contract.test.ts,
// test/positive-data.test.ts): the operations as the documents list them, and `$ref` resolution
// across the two documents (the control plane's refers to the API's schemas by file).
import { loadDocument } from '../src/http/openapi.js';

// The documents are free-form JSON here: each test reads the parts it checks.
export type Json = Record<string, any>;
export type DocName = 'openapi' | 'control-plane';

export interface Op {
  doc: DocName;
  id: string;
  method: string;
  path: string;
  op: Json;
  params: Json[];
}

/** The node a `$ref` chain ends at (at most 20 hops), following references into the other document. */
export function resolve(doc: DocName, node: any): any {
  let current = node;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops++) {
    const [file, pointer] = (current.$ref as string).split('#');
    const from: DocName = file ? (file.includes('control-plane') ? 'control-plane' : 'openapi') : doc;
    const parts = pointer.replace(/^\//, '').split('/').map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    current = parts.reduce((n: any, k: string) => n?.[k], loadDocument(from).document);
    doc = from;
  }
  return current;
}

/** Every operation of a document with an operationId, its path-level and own parameters resolved. */
export function operationsOf(doc: DocName): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries(loadDocument(doc).document.paths ?? {}) as Array<[string, Json]>) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op?.operationId !== 'string') continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => resolve(doc, p));
      out.push({ doc, id: op.operationId, method, path, op, params });
    }
  }
  return out;
}

/** The security an operation asks for (its own, else the document's), as comparable text. */
export const securityOf = (op: Op) => JSON.stringify(op.op.security ?? loadDocument(op.doc).document.security ?? []);
