// Owns how the sandbox loads node:http and node:https: through require, not as ES module imports,
// and node:https only when first used.
// Node builds an ES module's view of a built-in module by reading every one of its exports, and
// node:http's WebSocket, CloseEvent and MessageEvent exports are getters that load undici (the engine
// of fetch). An `import ... from 'node:http'` therefore cost the command line about 40 ms and 10 MB
// of memory at every start, for code only an outgoing fetch needs (measured on Node 22.23: 49 ms and
// 13.5 MB as an import, 7 ms and 3 MB through require). Type-only imports of these modules are free.
import { createRequire } from 'node:module';

const requireBuiltin = createRequire(import.meta.url);

export const http = requireBuiltin('node:http') as typeof import('node:http');
let httpsModule: typeof import('node:https') | undefined;
/**
 * node:https, loaded on first use: it loads node:tls, which only an HTTPS webhook endpoint or a PDF
 * fetched from a url needs (about 5 ms of every start otherwise).
 */
export function https(): typeof import('node:https') {
  return (httpsModule ??= requireBuiltin('node:https') as typeof import('node:https'));
}
