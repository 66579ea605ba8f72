// Types of what the fuzzers know of the OpenAPI documents, for the tests that share it
// (test/positive-data.test.ts names ids by kind the way the fuzz does).

/** The kind of object a path parameter names, from the segment before it (or its own name). */
export function pathParamKind(template: string, name: string): string;

/** The kind a body or query field names (null: not an id). */
export function fieldKind(field: string, operationId: string): string | null;
