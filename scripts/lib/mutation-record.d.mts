// Types of scripts/lib/mutation-record.mjs for the tests that import it.
export interface UndetectedMutant { function: string; line: number; mutator: string; status: string; original: string; replacement: string }
export interface MutationRow { path: string; run: string; blob: string; mutants: number; detected: number; survived: number; not_covered: number; undetected: UndetectedMutant[] }
export interface MutationRecord { about: string; files: MutationRow[] }
export interface PageEntry { path: string; function: string; original: string; replacement: string; line: number }
export const RECORD_PATH: string;
export const PAGE_PATH: string;
export function blobId(content: string | Buffer): string;
export function editText(text: string): string;
export function keyOf(entry: { path: string; function: string; original: string; replacement: string }): string;
export function readRecord(path?: string): MutationRecord;
export function formatRecord(record: MutationRecord): string;
export function writeRecord(record: MutationRecord, path?: string): void;
export function renderTable(record: MutationRecord): string;
export function pageEntries(text: string): PageEntry[];
