// Part of `npm run build` (after tsc): writes dist/openapi/<name>.json, each OpenAPI document parsed
// from its YAML and bundled (the other document's schemas it references copied in), with the SHA-256
// of that YAML: buildDocuments in src/http/openapi.ts, which a start without this copy runs too.
// loadDocument reads the JSON when the hash still matches the YAML beside it: parsing JSON is about
// 50 times faster than parsing YAML, and the bundling's walk of every node is done here once rather
// than at every start. Any other case (an edited YAML, running from src/) parses and bundles the
// YAML, which stays the one source. Beside each, dist/openapi/<name>.requests.json: the copy
// openapi-backend gets (forRequests: no answers, and where each $ref is), the only one a start reads.
import { mkdirSync, writeFileSync } from 'node:fs';
import { buildDocuments, forRequests } from '../dist/http/openapi.js';

mkdirSync('dist/openapi', { recursive: true });
for (const [name, built] of Object.entries(buildDocuments())) {
  writeFileSync(`dist/openapi/${name}.json`, JSON.stringify(built));
  // What openapi-backend reads at every start: the document less its answers, with where its
  // references are (forRequests), so a start parses a smaller copy and walks nothing.
  writeFileSync(`dist/openapi/${name}.requests.json`, JSON.stringify(forRequests(built)));
}
