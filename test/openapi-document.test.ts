// The parsed OpenAPI documents are shared, not copied: the response checker, the route lists and the
// served /openapi.json read them as they are (openapi-backend gets a copy of its own, dereferenced in
// place). This checks that nothing writes to them: every operation of both documents is called (so
// every validator is compiled, some requests valid and some not), and the documents are then byte for
// byte what their files hold.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { OpenAPIBackend } from 'openapi-backend';
import { BODY_CHECKED_BY_HANDLER, buildDocuments, builtCopy, builtRequestsCopy, createBackend, dereferenceInPlace, documentOperations, forRequests, loadDocument, OPENAPI_DIR } from '../src/http/openapi.js';
import { setup } from './helpers.js';

const asParsed = (name: 'openapi' | 'control-plane') => JSON.stringify(loadDocument(name).document);

describe('the shared OpenAPI documents', () => {
  it('are not changed by answering every operation of both documents', async () => {
    const before = { openapi: asParsed('openapi'), control: asParsed('control-plane') };
    // The API document as its file holds it (the control plane's file references the API's schemas, which
    // loading bundles in, so it is compared with itself before and after).
    expect(before.openapi).toBe(JSON.stringify(parseYaml(readFileSync(`${OPENAPI_DIR}openapi.yaml`, 'utf8'))));
    const sb = await setup({ seed: 'documents' });
    const token = await sb.token();
    const fill = (path: string) => path.replace(/\{[^}]+\}/g, 'x_1');
    let called = 0;
    for (const [name, prefix] of [['openapi', ''], ['control-plane', '/_sandbox']] as const) {
      for (const op of documentOperations(name)) {
        // Streams stay open: their validators are compiled by the stream tests, not here.
        if (op.operationId === 'sandboxStream') continue;
        const call = sb.http[op.method as 'get' | 'post' | 'patch' | 'put' | 'delete'](`${prefix}${fill(op.path)}?limit=abc`).set('Authorization', `Bearer ${token}`);
        const res = await (op.method === 'get' || op.method === 'delete' ? call : call.send({ name: 5, amount: 'x' }));
        expect(res.status).toBeGreaterThanOrEqual(200);
        called += 1;
      }
    }
    expect(called).toBeGreaterThan(100);
    expect(asParsed('openapi')).toBe(before.openapi);
    expect(asParsed('control-plane')).toBe(before.control);
  });

  it("is dereferenced in place into the graph openapi-backend's own init makes of a copy", async () => {
    for (const name of ['openapi', 'control-plane'] as const) {
      const theirs = await new OpenAPIBackend({ definition: loadDocument(name).document, quick: true }).init();
      const ours = dereferenceInPlace(structuredClone(loadDocument(name).document));
      expect(ours).toEqual(theirs.definition);
      // Every schema that names another by reference holds that node instead (each document has some).
      const raw = loadDocument(name).document.components?.schemas ?? {};
      const referring = Object.keys(raw).filter((key) => JSON.stringify(raw[key]).includes('"$ref"'));
      expect(referring.length).toBeGreaterThan(0);
      for (const key of referring) expect(JSON.stringify(ours.components!.schemas![key])).not.toContain('"$ref"');
      // The copy for requests the build stores: the document less its answers, with where its
      // references are; dereferenced through those sites, the graph openapi-backend makes of it.
      const built = buildDocuments()[name];
      const storedText = JSON.stringify(forRequests(built));
      // What a start reads back from dist/openapi/<name>.requests.json: only with its references' sites.
      const stored = builtRequestsCopy(storedText, readFileSync(`${OPENAPI_DIR}${name}.yaml`, 'utf8'))!;
      expect(stored).toBeDefined();
      expect(builtRequestsCopy(JSON.stringify(built), readFileSync(`${OPENAPI_DIR}${name}.yaml`, 'utf8'))).toBeUndefined();
      const operations = documentOperations(name);
      const expected = structuredClone(built.document);
      for (const { path, method } of operations) {
        const operation = (expected.paths![path] as Record<string, { responses?: unknown; requestBody?: { content: Record<string, { schema?: unknown }> } } & Record<string, unknown>>)[method];
        delete operation.responses;
        // A body its handler checks itself (after the door) is left to it: no schema for the router.
        if (operation[BODY_CHECKED_BY_HANDLER] === true) for (const media of Object.values(operation.requestBody!.content)) delete media.schema;
      }
      delete expected.components!.responses;
      // The answers of requests without an operation are answers too.
      delete (expected as { 'x-unrouted-responses'?: unknown })['x-unrouted-responses'];
      expect(stored.document).toEqual(expected);
      expect(stored.sha256).toBe(built.sha256);
      expect(stored.references.length).toBeGreaterThan(100);
      const theirsForRequests = await new OpenAPIBackend({ definition: structuredClone(expected), quick: true }).init();
      expect(dereferenceInPlace(stored.document, stored.references)).toEqual(theirsForRequests.definition);
      // The backend the routers use holds that graph, and has every operation of the document.
      const backend = createBackend(name);
      expect(backend.definition).toEqual(theirsForRequests.definition);
      // Made once per process: every sandbox of a test suite shares it, as it shared openapi-backend's.
      expect(createBackend(name).definition).toBe(backend.definition);
      expect(backend.getOperations().map((o) => o.operationId).sort()).toEqual(operations.map((o) => o.operationId).sort());
    }
    const withSchemas = (schemas: Record<string, unknown>) => ({ openapi: '3.1.1', info: { title: 't', version: '1' }, paths: {}, components: { schemas } }) as never;
    expect(() => dereferenceInPlace(withSchemas({ A: { $ref: '#/components/schemas/B' } }))).toThrow('#/components/schemas/B names nothing in the document');
    expect(() => dereferenceInPlace(withSchemas({ A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } }))).toThrow('the references loop');
    // A chain of references ends at the node it finally names.
    const chained = dereferenceInPlace(withSchemas({ A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/C' }, C: { type: 'string' } })) as unknown as { components: { schemas: Record<string, unknown> } };
    expect(chained.components.schemas.A).toBe(chained.components.schemas.C);
  });

  it("the build's stored copy is what a start without it works out: the same documents, bundled the same way", () => {
    const built = buildDocuments();
    for (const name of ['openapi', 'control-plane'] as const) {
      // Stored as JSON (dist/openapi/<name>.json) and read back at start.
      const stored = JSON.parse(JSON.stringify(built[name])) as typeof built[typeof name];
      expect(stored.document).toEqual(loadDocument(name).document);
      expect(stored.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    // Only the control plane's file references the other document's schemas.
    expect([built.openapi.bundled, built['control-plane'].bundled]).toEqual([false, true]);
    expect(JSON.stringify(built['control-plane'].document)).not.toContain('.yaml#');
  });

  it("a start uses the build's copy only when it was made from the YAML beside it, bundled", () => {
    const yaml = readFileSync(`${OPENAPI_DIR}control-plane.yaml`, 'utf8');
    const stored = JSON.stringify(buildDocuments()['control-plane']);
    expect(builtCopy(stored, yaml)?.document).toEqual(loadDocument('control-plane').document);
    // The YAML edited since the build: parsed again.
    expect(builtCopy(stored, `${yaml}\n# edited\n`)).toBeUndefined();
    // A copy from a build before bundling was stored (no flag), a damaged one, none at all.
    const { bundled: _left, ...older } = JSON.parse(stored) as Record<string, unknown>;
    expect(builtCopy(JSON.stringify(older), yaml)).toBeUndefined();
    expect(builtCopy(stored.slice(0, 100), yaml)).toBeUndefined();
    expect(builtCopy(undefined, yaml)).toBeUndefined();
  });
});
