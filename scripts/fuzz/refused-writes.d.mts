// Types of the refused-writes property (scripts/fuzz/refused-writes.mjs) for its Jest test.
export interface RefusedWritesReport {
  /** Every write operation of both documents. */
  operations: string[];
  /** Per operation, the refused requests whose store was compared. */
  checked: Record<string, number>;
  /** Every answer's status, refused or not. */
  statuses: Record<string, number>;
  loggedErrors: string[];
}

export function checkRefusedWrites(options: { sandbox: Record<string, unknown>; seed: number; runs: number }): Promise<RefusedWritesReport>;
