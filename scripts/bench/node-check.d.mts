// Types of scripts/bench/node-check.mjs, for the TypeScript tests that import it.
export function nodeCheck(version: string, engines: string): { warning: string; note: string };
