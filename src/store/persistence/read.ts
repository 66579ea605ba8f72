// Owns reading a data file at start: the snapshot (or a version 1 document, to migrate), then the log
// segments after it, replayed batch by batch; and refusing, with the reason, a file of another format.
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { StoreData } from '../store.js';
import type { CollectionData } from '../collection.js';
import { storeColdLine } from '../cold-item.js';
import { applyOp, FORMAT, LOG_FORMAT, VERSION, type Op, type SnapshotHeader } from './format.js';

export interface Loaded {
  data: StoreData;
  /** The snapshot's format: 1 (a whole document, to migrate) or 2. */
  version: 1 | 2;
  generation: number;
  /** Highest batch seq applied. */
  seq: number;
  snapshotBytes: number;
  /** Log segments found (numbers), and their bytes in all. */
  segments: number[];
  logBytes: number;
  /** Batches dropped because their last line was torn (a crash mid-append: never acknowledged). */
  torn: number;
}

/** Log segment file names of FILE: FILE.log.<n>. */
export function segmentPath(file: string, n: number): string {
  return `${file}.log.${n}`;
}

export async function listSegments(file: string): Promise<number[]> {
  const prefix = `${basename(file)}.log.`;
  let names: string[];
  try {
    names = await readdir(dirname(file));
  } catch {
    return [];
  }
  return names
    .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
    .map((name) => Number(name.slice(prefix.length)))
    .sort((a, b) => a - b);
}

/**
 * The lines of a file as bytes, each in memory of its own (the caller decodes them). Bytes, so that
 * a snapshot's "items" line is kept as it was read (cold objects, ../cold-item.ts): turning each
 * decoded line back into UTF-8 cost some 1.5 s of a 1M start.
 */
async function* byteLines(path: string): AsyncIterable<Buffer> {
  let pending: Buffer[] = [];
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline >= 0; newline = chunk.indexOf(0x0a, start)) {
      pending.push(chunk.subarray(start, newline));
      yield Buffer.concat(pending);
      pending = [];
      start = newline + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length) yield Buffer.concat(pending);
}

/** The data file's contents, or null when it does not exist or is empty (a fresh start). */
export async function readDataFile(file: string): Promise<Loaded | null> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      if ((await listSegments(file)).length) throw new Error(`log segments ${basename(file)}.log.* exist but the data file itself is missing; move them away to start fresh`);
      return null;
    }
    throw error;
  }
  if (size === 0) return null;
  const snapshot = await readSnapshot(file);
  const loaded: Loaded = { ...snapshot, snapshotBytes: size, segments: [], logBytes: 0, torn: 0 };
  if (snapshot.version === 1) return loaded;
  for (const n of await listSegments(file)) {
    if (n < snapshot.generation) continue; // already in the snapshot (a compaction stopped before removing it)
    loaded.segments.push(n);
    const path = segmentPath(file, n);
    loaded.logBytes += (await stat(path)).size;
    await replaySegment(path, loaded);
  }
  return loaded;
}

async function readSnapshot(file: string): Promise<Omit<Loaded, 'snapshotBytes' | 'segments' | 'logBytes' | 'torn'>> {
  let header: SnapshotHeader | undefined;
  let data: StoreData | undefined;
  let collection: CollectionData<{ id: string }> | undefined;
  let collectionName = '';
  let lineNo = 0;
  let ended = false;
  for await (const bytes of byteLines(file)) {
    const line = bytes.toString('utf8');
    lineNo += 1;
    if (lineNo === 1) {
      let first: unknown;
      try {
        first = JSON.parse(line);
      } catch {
        // Not one JSON value per line: a version 1 document written with indentation, or no JSON.
        return fromVersion1(file, JSON.parse(await readFile(file, 'utf8')) as unknown);
      }
      if (!first || typeof first !== 'object' || (first as { format?: unknown }).format !== FORMAT) return fromVersion1(file, first);
      header = first as SnapshotHeader;
      if (header.version !== VERSION) {
        throw new Error(`the data file ${file} has format version ${JSON.stringify(header.version)}; this sandbox reads version ${VERSION} (and migrates version 1); move the file away to start fresh`);
      }
      data = { version: 1, meta: header.meta, partners: header.partners, keys: header.keys, accounts: {} };
      continue;
    }
    if (ended) throw new Error(`the data file ${file} has lines after its end (line ${lineNo})`);
    const entry = parseLine(line, file, lineNo) as { t: string; [k: string]: unknown };
    const accounts = (data as StoreData).accounts;
    switch (entry.t) {
      case 'account': {
        const account = entry.v as StoreData['accounts'][string];
        accounts[account.id] = account;
        break;
      }
      case 'collection':
        collection = { items: new Map(), order: [] };
        collectionName = entry.c as string;
        if (entry.base) collection.base = entry.base as number;
        if (entry.epoch) collection.epoch = entry.epoch as number;
        accounts[entry.a as string].collections[entry.c as string] = collection;
        break;
      case 'order':
        for (const id of entry.v as string[]) collection!.order.push(id);
        break;
      case 'items': {
        // Kept as their text until first read (see ../cold-item.ts); the parsed objects are dropped.
        const parsed = entry.v as Array<{ id: string }>;
        if (!storeColdLine(collection!, collectionName, bytes, parsed)) for (const item of parsed) collection!.items.set(item.id, item);
        break;
      }
      case 'end':
        if (entry.lines !== lineNo) throw new Error(`the data file ${file} is incomplete (${lineNo} lines, its end says ${String(entry.lines)})`);
        ended = true;
        break;
      default:
        throw new Error(`the data file ${file} has an unknown line kind ${JSON.stringify(entry.t)} (line ${lineNo})`);
    }
  }
  if (!header || !data) throw new Error(`the data file ${file} is empty`);
  if (!ended) throw new Error(`the data file ${file} is incomplete (no end line after ${lineNo} lines)`);
  return { data, version: 2, generation: header.generation, seq: header.seq };
}

function fromVersion1(file: string, document: unknown): Omit<Loaded, 'snapshotBytes' | 'segments' | 'logBytes' | 'torn'> {
  const version = document && typeof document === 'object' ? (document as { version?: unknown }).version : undefined;
  if (version !== 1) {
    throw new Error(`the data file ${file} is a whole document of format version ${JSON.stringify(version ?? null)}; this sandbox reads version ${VERSION} and migrates version 1 documents; move the file away to start fresh`);
  }
  const data = document as StoreData;
  // Version 1 stored each collection's objects as one object keyed by id; in memory they are a Map.
  for (const account of Object.values(data.accounts ?? {})) {
    for (const collection of Object.values(account.collections ?? {})) {
      collection.items = new Map(Object.entries((collection.items ?? {}) as unknown as Record<string, { id: string }>));
    }
  }
  return { data, version: 1, generation: 1, seq: 0 };
}

function parseLine(line: string, file: string, lineNo: number): unknown {
  try {
    return JSON.parse(line);
  } catch (error) {
    throw new Error(`the data file ${file} is damaged at line ${lineNo}: ${(error as Error).message}`);
  }
}

/** Apply a segment's whole batches; a torn batch at its end is dropped, a damaged line before that is an error. */
async function replaySegment(path: string, loaded: Loaded): Promise<void> {
  let lineNo = 0;
  let pending: Op[] = [];
  let pendingSeq = -1;
  let bad: string | undefined;
  for await (const bytes of byteLines(path)) {
    const line = bytes.toString('utf8');
    lineNo += 1;
    if (bad) throw new Error(`the log segment ${path} is damaged at line ${lineNo - 1} (${bad}) and has whole lines after it`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      bad = (error as Error).message; // a torn tail, if nothing follows
      continue;
    }
    if (lineNo === 1) {
      const header = parsed as { format?: unknown; version?: unknown };
      if (header?.format !== LOG_FORMAT || header.version !== VERSION) throw new Error(`the log segment ${path} is not a version ${VERSION} log (${line.slice(0, 80)})`);
      continue;
    }
    if (!Array.isArray(parsed) || typeof parsed[0] !== 'number') throw new Error(`the log segment ${path} has a line that is not a batch (line ${lineNo})`);
    const [seq, last, ...ops] = parsed as [number, number, ...Op[]];
    if (seq !== pendingSeq) pending = []; // a batch whose last line never came (a failed append): dropped
    pendingSeq = seq;
    pending.push(...ops);
    if (!last) continue;
    if (seq > loaded.seq) {
      for (const op of pending) applyOp(loaded.data, op);
      loaded.seq = seq;
    }
    pending = [];
    pendingSeq = -1;
  }
  if (bad || pending.length) loaded.torn += 1;
}
