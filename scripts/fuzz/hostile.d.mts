// Types of scripts/fuzz/hostile.mjs and hostile-values.mjs for the Jest tests (the modules are plain
// ESM so `npm run fuzz` runs them on the built sandbox without a TypeScript loader).
import type { Arbitrary } from 'fast-check';

export interface HostileReport {
  ok: boolean;
  summary: string;
  /** The write operations that take a document, each sent `runs` hostile ones. */
  operations: string[];
  perOperation: Record<string, { refused: number; stored: number; statuses: Record<string, number> }>;
  totals: { refused: number; stored: number };
  /** Stored documents read back before and after the restart. */
  probes: number;
  failures: string[];
  loggedErrors: string[];
  seconds: number;
}

export interface HostileOptions {
  /** startSandbox, responseCheckerFor and loadDocument, from the sources or the build. */
  sandbox: Record<string, unknown>;
  seed?: number;
  runs?: number;
  log?: (line: string) => void;
}

/** Runs of the scenario document (the one free-form field) per run of the others. */
export const FREE_FORM_FACTOR: number;
export function runHostile(options: HostileOptions): Promise<HostileReport>;
export const hostileCase: Arbitrary<Record<string, unknown>>;
