// Types of scripts/fuzz/refused-writes.mjs for its Jest test (test/refused-writes.property.test.ts).
// The pieces the property test drives itself (re-exported by refused-writes.mjs from the fuzz modules).
import type { Arbitrary } from 'fast-check';
import type { StoreData } from '../../src/store/store.js';

export const WRITE_METHODS: ReadonlySet<string>;

/** One generated case: which environment, which ids and values (picks, jsfSeed), and one mutation. */
export interface RefusalCase {
  env: 'production' | 'demo';
  v1: boolean;
  jsfSeed: number;
  picks: number[];
  mutation: { kind: string } & Record<string, unknown>;
}
export const refusalCase: Arbitrary<RefusalCase>;

/** An operation of one of the documents (operations.mjs). */
export interface FuzzOperation {
  doc: 'api' | 'control';
  id: string;
  method: string;
  template: string;
  auth: string;
}
export function operationsOf(document: unknown, doc: 'api' | 'control'): FuzzOperation[];

/** A request as the fuzzer builds it (cases.mjs): sent as it is, raw path and raw body. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The world account the request acts on: 'A:production' or 'A:demo'. */
  accountName: string;
  forced: boolean;
}

/** An answer (client.mjs): status -1 when Node would not send the request, 0 when no answer came. */
export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json?: unknown;
  error?: string;
}

export interface FuzzClient {
  send(request: Omit<FuzzRequest, 'accountName' | 'forced'>): Promise<FuzzResponse>;
  origin: string;
  close(): void;
}
export function createClient(origin: string, options?: { timeoutMs?: number }): FuzzClient;

export interface WorldAccount {
  env: 'production' | 'demo';
  token: string;
  ids: Record<string, unknown>;
  partner: string;
}
export interface World {
  partners: Record<string, string>;
  keys: Record<string, unknown>;
  accounts: Record<string, WorldAccount>;
}
export function buildWorld(client: FuzzClient, options: { credentials: unknown }): Promise<World>;
export function renewTokens(world: World): Promise<void>;
export function caller(client: FuzzClient): {
  call(method: string, path: string, options?: { token?: string; body?: unknown; headers?: Record<string, string>; form?: Record<string, string> }): Promise<FuzzResponse>;
};
export function buildRequest(op: FuzzOperation, kase: RefusalCase, world: World): FuzzRequest;

/** What the property reads of the running sandbox. */
export interface FuzzDeps {
  store: { data: StoreData };
  scheduler: { idle(): Promise<void> };
  config: { credentials: unknown };
}
export function startFuzzSandbox(sandbox: Record<string, unknown>): Promise<{
  running: { url: string; deps: FuzzDeps; app: unknown; close(): Promise<void> };
  loggedErrors: string[];
  time: { now: number };
  /** Lifts the network guard (a function of its own: called unbound). */
  unguard: () => void;
}>;
export function routedOperation(app: unknown, method: string, path: string): string | null;
/** Which parts of two JSON values differ, as `path: before -> after` lines (at most six). */
export function storeDiff(before: unknown, after: unknown): string[];
