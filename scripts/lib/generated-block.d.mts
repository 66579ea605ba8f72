// Types of scripts/lib/generated-block.mjs, for the tests that import it.
export function readBlock(text: string, name: string): string | undefined;
export function replaceBlock(text: string, name: string, body: string): string;
export function writeBlock(path: string, name: string, body: string): void;
