// Types of scripts/lib/mutation-files.mjs for the tests that import it.
export interface MutationFileEntry { name: string; mutate: string; tests: string[] }
export const MUTATION_FILES: MutationFileEntry[];
export function filesOf(pattern: string, root?: string): string[];
export function entryOf(path: string, root?: string): MutationFileEntry | undefined;
