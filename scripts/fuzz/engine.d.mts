// Types of the fuzz engine for the Jest slice (test/fuzz.test.ts); the engine itself is plain ESM
// so `npm run fuzz` runs it on the built sandbox without a TypeScript loader.
import type { HostileReport } from './hostile.mjs';

export const DEFAULT_SEED: number;

export interface OperationStats {
  requests: number;
  statuses: Record<string, number>;
  '5xx': number;
  'non-HttpError': number;
  invalid: number;
  connection: number;
  'state-changed': number;
  unsendable: number;
}

export interface IsolationReport {
  attempts: number;
  leaks: number;
  failures: number;
  targets: number;
  byStatus: Record<string, number>;
  bySurface: Record<string, Record<string, number>>;
  /** Attempts with another account's id in the path, and how many answered 404. */
  pathIds: { attempts: number; notFound: number; asUnknown: number };
  samples: string[];
}

export interface FuzzReport {
  ok: boolean;
  summary: string;
  seed: number;
  totals: OperationStats;
  perOperation: Record<string, OperationStats>;
  samples: Record<string, string[]>;
  crashes: string[];
  loggedErrors: string[];
  isolation: IsolationReport;
  /** Generated requests that carried a hostile document (scripts/fuzz/hostile-values.mjs). */
  hostileRequests: number;
  /** The hostile-document phase (scripts/fuzz/hostile.mjs), when `hostile` runs were asked for. */
  hostile?: HostileReport;
  refusedConnections: Record<string, number>;
  seconds: number;
}

export interface FuzzOptions {
  /** startSandbox, responseCheckerFor and loadDocument, from the sources or the build. */
  sandbox: Record<string, unknown>;
  seed?: number;
  requests?: number;
  isolation?: number;
  /** Hostile documents per write operation that takes one, on a sandbox with a data file; 0: none. */
  hostile?: number;
  epoch?: number;
  log?: (line: string) => void;
}

export function runFuzz(options: FuzzOptions): Promise<FuzzReport>;
