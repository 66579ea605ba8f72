// Types of scripts/bench/stats.mjs, for the TypeScript tests that import it.
export function median(values: readonly number[]): number;
export function percentile(values: readonly number[], q: number): number;
export function inRoundOrder<T>(list: readonly T[], round: number): readonly T[];
export function paired(a: readonly number[], b: readonly number[]): { value: number; rounds: number[]; ofMedians: number };
export function sliceOrder<T>(rows: readonly T[], slices: number): T[];
export interface CountedRun { seconds: number; answered: number; bad: number; cpu: number; latencies: readonly number[] }
export function combined(runs: readonly CountedRun[]): { rps: number; p99: number; cpuUs: number; answered: number; bad: number };
