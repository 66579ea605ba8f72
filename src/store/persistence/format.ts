// Owns the on-disk format of --data (version 2) and the one function that applies a logged change to
// the in-memory document, used both when a log is replayed at start and by nothing else.
//
// A data file FILE is a snapshot plus log segments beside it:
//   FILE              the snapshot, JSON lines: a header line, then per account one "account" line,
//                     per collection its insertion order in "order" chunks and its objects in "items"
//                     chunks, and a closing "end" line. Written whole to .FILE.<generation>.tmp, fsync'd, renamed.
//   FILE.log.<n>      log segments, n >= the snapshot's `generation`, replayed in order of n. A segment
//                     is a header line then batches; a batch is one or more lines
//                     `[seq, last, ...ops]` (last = 1 on its final line). A batch counts only once its
//                     final line is whole, so a torn tail (kill -9 or a power cut mid-append) is dropped;
//                     a batch whose seq was already applied (a retried append) is skipped.
// Version 1 (one JSON document, the whole store) migrates on start; anything else is refused.
import type { AccountData, StoreData } from '../store.js';
import type { CollectionData } from '../collection.js';
import type { Environment } from '../../config.js';

export const FORMAT = 'billing-sandbox-data';
export const LOG_FORMAT = 'billing-sandbox-log';
export const VERSION = 2;

/** The first line of a snapshot. */
export interface SnapshotHeader {
  format: typeof FORMAT;
  version: number;
  /** Log segments numbered below this are already in the snapshot. */
  generation: number;
  /** Highest batch seq the snapshot holds (a replayed batch at or below it is skipped). */
  seq: number;
  meta: StoreData['meta'];
  partners: StoreData['partners'];
  keys: StoreData['keys'];
}

/** One logged change. Arrays keep the log compact and quick to parse. */
export type Op =
  /** An object inserted at the end of its collection's order. */
  | ['i', account: string, collection: string, item: { id: string }]
  /** An object's new value. */
  | ['u', account: string, collection: string, item: { id: string }]
  /** An object deleted (its id stays in the order as a tombstone). */
  | ['d', account: string, collection: string, id: string]
  /** Leading tombstones cleared: the order now starts at this absolute position. */
  | ['trim', account: string, collection: string, base: number]
  /** Tombstones in the middle compacted: the order is now exactly these ids, from position 0. */
  | ['compact', account: string, collection: string, epoch: number, order: string[]]
  /**
   * A restored collection's order, logged after its objects' inserts when it differs from theirs
   * (tombstones among them): exactly these ids, with the base and epoch the collection had, if any.
   */
  | ['o', account: string, collection: string, order: string[], base?: number | null, epoch?: number | null]
  /** The account's clock and counters (creates the account when it is new). */
  | ['h', account: string, clock: AccountData['clock'], counters: AccountData['counters']]
  /** The account's due work, whole. */
  | ['j', account: string, jobs: AccountData['jobs']]
  /** One job added to the account's due work, after every job due at or before its time (as the scheduler adds it). */
  | ['ja', account: string, job: AccountData['jobs'][number]]
  /** One job removed from the account's due work (run, cancelled, or its scheduling undone). */
  | ['jr', account: string, id: string]
  /** A module state key's whole value. */
  | ['s', account: string, key: string, value: unknown]
  /** A module state key removed. */
  | ['sd', account: string, key: string]
  /** One entry of a module state map set (the map is created when missing). */
  | ['ss', account: string, key: string, entry: string, value: unknown]
  /** One entry of a module state map removed. */
  | ['sx', account: string, key: string, entry: string]
  /** The account back to empty (its clock and counters follow in an 'h'). */
  | ['r', account: string]
  /** Every account, partner and key gone (the globals follow in a 'g'). */
  | ['R']
  /** Seed, signing key, partners and keys, whole (written by earlier versions; replayed still). */
  | ['g', meta: StoreData['meta'], partners: StoreData['partners'], keys: StoreData['keys']]
  /** The seed and signing key. */
  | ['m', meta: StoreData['meta']]
  /** One partner, as it is now; or gone. */
  | ['p', id: string, partner: StoreData['partners'][string]]
  | ['px', id: string]
  /** One API key, as it is now; or gone. */
  | ['k', clientId: string, key: StoreData['keys'][string]]
  | ['kx', clientId: string];

export function emptyAccount(id: string, partnerId: string, environment: Environment): AccountData {
  return { id, partner_id: partnerId, environment, clock: { offset_ms: 0 }, counters: {}, collections: {}, jobs: [], state: {} };
}

/** The account of an id `partner:environment`, created empty when missing. */
export function ensureAccount(data: StoreData, id: string): AccountData {
  let account = data.accounts[id];
  if (!account) {
    const cut = id.lastIndexOf(':');
    account = data.accounts[id] = emptyAccount(id, id.slice(0, cut), id.slice(cut + 1) as Environment);
  }
  return account;
}

function ensureCollection(account: AccountData, name: string): CollectionData<{ id: string }> {
  return (account.collections[name] ??= { items: new Map(), order: [] }) as CollectionData<{ id: string }>;
}

/** Set an own entry: an entry named "__proto__" is data, never the object's prototype. */
function setOwn(map: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(map, name, { value, enumerable: true, writable: true, configurable: true });
}

/** Apply one logged change to the document (replay). Unknown ops are a format error. */
export function applyOp(data: StoreData, op: Op): void {
  switch (op[0]) {
    case 'i': {
      const c = ensureCollection(ensureAccount(data, op[1]), op[2]);
      c.order.push(op[3].id);
      c.items.set(op[3].id, op[3]);
      return;
    }
    case 'u':
      ensureCollection(ensureAccount(data, op[1]), op[2]).items.set(op[3].id, op[3]);
      return;
    case 'd':
      ensureCollection(ensureAccount(data, op[1]), op[2]).items.delete(op[3]);
      return;
    case 'trim': {
      const c = ensureCollection(ensureAccount(data, op[1]), op[2]);
      c.order.splice(0, op[3] - (c.base ?? 0));
      c.base = op[3];
      return;
    }
    case 'compact': {
      const c = ensureCollection(ensureAccount(data, op[1]), op[2]);
      c.order = op[4];
      c.base = 0;
      c.epoch = op[3];
      return;
    }
    case 'o': {
      const c = ensureCollection(ensureAccount(data, op[1]), op[2]);
      c.order = op[3];
      if (typeof op[4] === 'number') c.base = op[4];
      if (typeof op[5] === 'number') c.epoch = op[5];
      return;
    }
    case 'h': {
      const account = ensureAccount(data, op[1]);
      account.clock = op[2];
      account.counters = op[3];
      return;
    }
    case 'j':
      ensureAccount(data, op[1]).jobs = op[2];
      return;
    case 'ja': {
      const jobs = ensureAccount(data, op[1]).jobs;
      let at = jobs.length;
      while (at > 0 && jobs[at - 1].at > op[2].at) at -= 1;
      jobs.splice(at, 0, op[2]);
      return;
    }
    case 'jr': {
      const jobs = ensureAccount(data, op[1]).jobs;
      const at = jobs.findIndex((job) => job.id === op[2]);
      if (at >= 0) jobs.splice(at, 1);
      return;
    }
    case 's':
      ensureAccount(data, op[1]).state[op[2]] = op[3];
      return;
    case 'sd':
      delete ensureAccount(data, op[1]).state[op[2]];
      return;
    case 'ss': {
      const state = ensureAccount(data, op[1]).state;
      const map = (state[op[2]] ??= {}) as Record<string, unknown>;
      setOwn(map, op[3], op[4]);
      return;
    }
    case 'sx': {
      const map = ensureAccount(data, op[1]).state[op[2]] as Record<string, unknown> | undefined;
      if (map) delete map[op[3]];
      return;
    }
    case 'r': {
      const old = data.accounts[op[1]];
      if (old) data.accounts[op[1]] = emptyAccount(old.id, old.partner_id, old.environment);
      return;
    }
    case 'R':
      data.accounts = {};
      data.partners = {};
      data.keys = {};
      return;
    case 'g':
      data.meta = op[1];
      data.partners = op[2];
      data.keys = op[3];
      return;
    case 'm':
      data.meta = op[1];
      return;
    case 'p':
      setOwn(data.partners, op[1], op[2]);
      return;
    case 'px':
      delete data.partners[op[1]];
      return;
    case 'k':
      setOwn(data.keys, op[1], op[2]);
      return;
    case 'kx':
      delete data.keys[op[1]];
      return;
    default:
      throw new Error(`unknown change ${JSON.stringify((op as unknown[])[0])}`);
  }
}
