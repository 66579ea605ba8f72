// Owns writing a data file (format in ./format.ts) as a lowdb adapter: read() loads the snapshot and
// replays the log; write() appends what changed since the last write (the Journal's batch) to the
// current log segment and fsyncs it, so a write costs the size of the change, not of the store; once
// the log outgrows the snapshot, a compaction writes a new snapshot in the background, a slice at a
// time, while writes go on into a new segment.
//
// Why a compaction can run while writes go on: it copies, in one synchronous step, everything that is
// small or ordered (globals, each account's clock, counters, jobs and state, each collection's order),
// and from then on appends go to a new segment. It then serialises objects lazily from the live
// collections, so an object may be saved with a later value than at the copy; replaying the new
// segment on top sets every object changed since to its logged value, in order, so the result is the
// same. Crash safety: the snapshot is written to .FILE.<generation>.tmp, fsync'd and renamed (the directory
// fsync'd); segments below its generation are removed only after that, and ignored if left.
//
// A failed append (a full disk, an I/O error) leaves no trace: the segment is cut back to its last whole
// batch (or removed, when the append made it), and the batch is tried once more, intact, in a new
// segment. When that fails too, the store rolls memory back to what the file holds (reload()) and
// probes the file (probe()) until it can be written again.
import { close, fdatasync, fstat, ftruncate, open as openFd, writeFile as writeFd } from 'node:fs';
import { link, open, readdir, rename, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';
import type { StoreData } from '../store.js';
import { itemText, type ColdTexts } from '../cold-item.js';
import { FORMAT, LOG_FORMAT, VERSION, type SnapshotHeader } from './format.js';
import { Journal, rawOf } from './journal.js';
import { listSegments, readDataFile, segmentPath } from './read.js';

export interface LogFileOptions {
  /** The log is compacted once it is larger than this and than the snapshot (bytes). */
  compactMinBytes?: number;
  /** A background compaction failed (the log keeps growing; the next one retries). */
  onCompactError?: (error: unknown) => void;
}

/** 64 MB; config.ts reads SANDBOX_COMPACT_MIN_BYTES (the crash test's) into the compactMinBytes option. */
const DEFAULT_COMPACT_MIN_BYTES = 64 * 1024 * 1024;
/** A snapshot is written in pieces of about this many bytes, letting requests run in between. */
const SNAPSHOT_CHUNK_BYTES = 256 * 1024;
const ORDER_IDS_PER_LINE = 10_000;
const MAX_SEGMENTS_AT_START = 64;
const ITEMS_PER_LINE = 500;
/** Free room a probe needs before writes resume after a failed one (bytes). */
const PROBE_BYTES = 64 * 1024;

interface Capture {
  generation: number;
  header: string;
  accounts: Array<{
    line: string;
    id: string;
    collections: Array<{ name: string; base: number; epoch: number; order: string[]; items: ReadonlyMap<string, unknown>; cold: ColdTexts | undefined }>;
  }>;
}

export class LogFile implements Adapter<StoreData> {
  readonly journal = new Journal();
  /** Number of the segment appends go to, and its open handle (opened on the first append). */
  private generation = 1;
  // A plain descriptor, not a FileHandle: a sandbox that is never closed (in a test) must not leave
  // a handle for the garbage collector to close with a warning.
  private handle: { n: number; fd: number } | undefined;
  /** A batch whose append failed: written again, first, by the next append (its seq skips a repeat). */
  private unconfirmed = '';
  private snapshotBytes = 0;
  /** Bytes of each log segment the snapshot does not hold yet. */
  private segmentBytes = new Map<number, number>();
  private needsSnapshot = true;
  private compactRequested = false;
  private compaction: Promise<void> | undefined;
  private closing = false;
  /** How the data was found at start, for the log line and tests. */
  loadedFrom: { version: 1 | 2; segments: number; torn: number } | null = null;

  constructor(private readonly file: string, private readonly options: LogFileOptions = {}) {}

  /** Where the snapshot of a generation is written before its rename (one per snapshot: two may overlap). */
  private temp(generation: number): string {
    return join(dirname(this.file), `.${basename(this.file)}.${generation}.tmp`);
  }

  /** Generation of the newest snapshot begun: an older one still being written is not renamed. */
  private newestSnapshot = 0;

  async read(): Promise<StoreData | null> {
    // Snapshots a crash interrupted before their rename.
    const prefix = `.${basename(this.file)}.`;
    for (const name of await readdir(dirname(this.file)).catch(() => [] as string[])) {
      if (name.startsWith(prefix) && name.endsWith('.tmp')) await unlink(join(dirname(this.file), name)).catch(() => undefined);
    }
    const loaded = await readDataFile(this.file);
    if (!loaded) return null;
    this.loadedFrom = { version: loaded.version, segments: loaded.segments.length, torn: loaded.torn };
    this.journal.seq = loaded.seq;
    this.snapshotBytes = loaded.snapshotBytes;
    if (loaded.logBytes) this.segmentBytes.set(loaded.segments.at(-1) ?? loaded.generation, loaded.logBytes);
    // Appends go to a new segment (an old one may end in a torn batch), numbered above every segment
    // present, so that the next snapshot's generation is above them all and they are removed with it.
    this.generation = Math.max(loaded.generation, ((await listSegments(this.file)).at(-1) ?? 0) + 1);
    if (loaded.version === 1) {
      // Keep the old document beside the new one (a hard link: no copy); the first write converts it.
      await link(this.file, `${this.file}.v1`).catch(() => undefined);
    } else {
      // Many segments (many restarts) are folded too, so a start never reads hundreds of files.
      this.needsSnapshot = this.logBytes > this.compactThreshold() || loaded.segments.length > MAX_SEGMENTS_AT_START;
    }
    return loaded.data;
  }

  private get logBytes(): number {
    let sum = 0;
    for (const bytes of this.segmentBytes.values()) sum += bytes;
    return sum;
  }

  private grow(n: number, bytes: number): void {
    this.segmentBytes.set(n, (this.segmentBytes.get(n) ?? 0) + bytes);
  }

  private compactThreshold(): number {
    return Math.max(this.options.compactMinBytes ?? DEFAULT_COMPACT_MIN_BYTES, this.snapshotBytes);
  }

  /** Bytes of the snapshot and of the log after it (for tests and the benchmark). */
  get sizes(): { snapshot: number; log: number; generation: number } {
    return { snapshot: this.snapshotBytes, log: this.logBytes, generation: this.generation };
  }

  /** The next write writes a new snapshot (awaited) instead of appending. */
  requestCompaction(): void {
    this.compactRequested = true;
  }

  /** Resolves when no compaction is under way. */
  async idle(): Promise<void> {
    while (this.compaction) await this.compaction;
  }

  /**
   * Append what changed since the last write; the batch is taken before the first await, so a write
   * holds exactly the changes made before it began. The first write after start (a fresh or migrated
   * file, or a log grown past its snapshot) writes a whole snapshot instead, and so does one after
   * requestCompaction().
   */
  write(data: StoreData): Promise<void> {
    if (this.needsSnapshot || this.compactRequested) return this.snapshotNow(data);
    const text = this.unconfirmed + this.journal.drain(data);
    // The first write after start opens the new segment even when empty, so an unwritable place stops the start.
    if (!text && this.handle) return Promise.resolve();
    this.unconfirmed = text;
    const segment = this.generation;
    // Past the threshold, the state is copied in this same synchronous step (so it holds this batch)
    // and later appends go to a new segment; this batch still goes to the current one.
    let capture = !this.compaction && this.logBytes + text.length > this.compactThreshold() ? this.rotate(data) : undefined;
    const appended = this.append(text, segment).catch((error: unknown) => {
      // Once more, the same text, into a new segment. A copy made for a compaction goes: it holds this
      // batch, and the segment the batch now lands in is the one its snapshot would fold in.
      if (capture) this.newestSnapshot = 0;
      capture = undefined;
      return this.append(text, this.generation).catch((again: unknown) => {
        this.unconfirmed = '';
        throw again ?? error;
      });
    });
    return appended.then(() => {
      this.unconfirmed = '';
      if (capture) {
        this.compaction = this.writeSnapshot(capture, true)
          .catch((error: unknown) => {
            if (!this.closing && error !== SUPERSEDED) this.options.onCompactError?.(error);
          })
          .finally(() => {
            this.compaction = undefined;
          });
      }
    });
  }

  /**
   * Forget everything not in the file and read it again (after a failed write, see Store.fail): the
   * data as the file holds it, and appends go on in a new segment. A compaction under way is dropped:
   * it copied values that are rolled back.
   */
  async reload(): Promise<StoreData | null> {
    this.newestSnapshot = 0;
    await this.idle();
    if (this.handle) {
      const old = this.handle;
      this.handle = undefined;
      await closeFd(old.fd).catch(() => undefined);
    }
    this.journal.clear();
    this.unconfirmed = '';
    const loaded = await readDataFile(this.file);
    this.journal.seq = loaded?.seq ?? 0;
    this.snapshotBytes = loaded?.snapshotBytes ?? 0;
    this.segmentBytes.clear();
    if (loaded?.logBytes) this.segmentBytes.set(loaded.segments.at(-1) ?? loaded.generation, loaded.logBytes);
    this.generation = Math.max(this.generation, loaded?.generation ?? 0, ((await listSegments(this.file)).at(-1) ?? 0) + 1);
    return loaded?.data ?? null;
  }

  /**
   * Whether the file can be written again: room for a probe of PROBE_BYTES (written, synced and
   * removed beside the file), then the next segment made and synced, to take the next append. Throws,
   * leaving no file behind, when either fails.
   */
  async probe(): Promise<void> {
    const path = join(dirname(this.file), `.${basename(this.file)}.probe`);
    try {
      const handle = await open(path, 'w');
      try {
        await handle.writeFile(Buffer.alloc(PROBE_BYTES));
        await handle.sync();
      } finally {
        await handle.close();
      }
    } finally {
      await unlink(path).catch(() => undefined);
    }
    if (!this.handle) await this.append('', this.generation);
  }

  private async snapshotNow(data: StoreData): Promise<void> {
    this.needsSnapshot = false;
    this.compactRequested = false;
    // Copied now, before any await (a background compaction under way is superseded by this one).
    // Everything noted so far, and any refused batch, is in the copy.
    this.journal.clear();
    this.unconfirmed = '';
    const capture = this.rotate(data);
    try {
      await this.writeSnapshot(capture, false);
    } catch (error) {
      this.needsSnapshot = true;
      throw error;
    }
  }

  /** Copy what the snapshot needs now and move later appends to a new segment. */
  private rotate(data: StoreData): Capture {
    this.generation += 1;
    this.newestSnapshot = this.generation;
    const header: SnapshotHeader = {
      format: FORMAT, version: VERSION, generation: this.generation, seq: this.journal.seq,
      meta: data.meta, partners: data.partners, keys: data.keys,
    };
    return {
      generation: this.generation,
      header: JSON.stringify(header),
      accounts: Object.values(data.accounts).map((account) => ({
        id: account.id,
        line: JSON.stringify({ t: 'account', v: { ...account, collections: {}, jobs: rawOf(account.jobs), state: account.state } }),
        collections: Object.entries(account.collections).map(([name, c]) => ({
          name, base: c.base ?? 0, epoch: c.epoch ?? 0, order: c.order.slice(), items: c.items, cold: c.cold,
        })),
      })),
    };
  }

  /**
   * Append a batch to segment n and fsync it. A failed append cuts the segment back to its last whole
   * batch (or removes it, when this append made it) and closes it for good: the next append goes to
   * a new segment.
   */
  private async append(text: string, n: number): Promise<void> {
    if (this.handle && this.handle.n !== n) {
      const old = this.handle;
      this.handle = undefined;
      await closeFd(old.fd).catch(() => undefined);
    }
    let fd = this.handle?.fd;
    let made = false;
    let before = this.segmentBytes.get(n) ?? 0;
    const path = segmentPath(this.file, n);
    try {
      if (fd === undefined) {
        // A new segment is made here ('wx'); one that exists already (never expected) is appended to.
        try {
          fd = await openFdAsync(path, 'wx');
          made = true;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
          fd = await openFdAsync(path, 'a');
          before = (await fstatAsync(fd)).size;
        }
        this.handle = { n, fd };
        const header = made ? `${JSON.stringify({ format: LOG_FORMAT, version: VERSION, generation: n })}\n` : '';
        await writeFdAsync(fd, header + text);
        await fdatasyncAsync(fd);
        await syncDirectory(dirname(this.file));
        this.grow(n, header.length);
      } else {
        await writeFdAsync(fd, text);
        await fdatasyncAsync(fd);
      }
      this.grow(n, text.length);
    } catch (error) {
      // Never append after a possibly torn write: the batch is written again, into a new segment.
      if (fd !== undefined) {
        if (!made) await ftruncateAsync(fd, before).then(() => fdatasyncAsync(fd as number)).catch(() => undefined);
        await closeFd(fd).catch(() => undefined);
      }
      if (made || fd === undefined) {
        await unlink(path).catch(() => undefined);
        this.segmentBytes.delete(n);
      }
      if (this.handle?.fd === fd) this.handle = undefined;
      if (n === this.generation) this.generation += 1;
      throw error;
    }
  }

  /** Write the snapshot a slice at a time, rename it over the file, then drop the segments it holds. */
  private async writeSnapshot(capture: Capture, abortable: boolean): Promise<void> {
    const temp = this.temp(capture.generation);
    const handle = await open(temp, 'w');
    let bytes = 0;
    let lines = 0;
    let buffer = '';
    const put = async (line: string) => {
      buffer += `${line}\n`;
      lines += 1;
      if (buffer.length >= SNAPSHOT_CHUNK_BYTES) {
        if (abortable && this.closing) throw new Error('closing');
        // A newer snapshot was begun, or memory was read again from the file (reload): this copy is moot.
        if (abortable && capture.generation !== this.newestSnapshot) throw SUPERSEDED;
        await handle.write(buffer);
        bytes += buffer.length;
        buffer = '';
      }
    };
    try {
      await put(capture.header);
      for (const account of capture.accounts) {
        await put(account.line);
        for (const c of account.collections) {
          await put(JSON.stringify({ t: 'collection', a: account.id, c: c.name, ...(c.base ? { base: c.base } : {}), ...(c.epoch ? { epoch: c.epoch } : {}) }));
          for (let i = 0; i < c.order.length; i += ORDER_IDS_PER_LINE) await put(JSON.stringify({ t: 'order', v: c.order.slice(i, i + ORDER_IDS_PER_LINE) }));
          // What JSON.stringify({ t: 'items', v: chunk }) writes, with an object not read since the
          // last start written as the text it was loaded from (never parsed to be written again).
          let chunk: string[] = [];
          const itemsLine = () => `{"t":"items","v":[${chunk.join(',')}]}`;
          for (const id of c.order) {
            // The live object (possibly changed since the copy: the new segment replays every change).
            const item = c.items.get(id);
            if (item === undefined) continue;
            chunk.push(itemText(item, c.cold));
            if (chunk.length === ITEMS_PER_LINE) {
              await put(itemsLine());
              chunk = [];
            }
          }
          if (chunk.length) await put(itemsLine());
        }
      }
      buffer += `${JSON.stringify({ t: 'end', lines: lines + 1 })}\n`;
      await handle.write(buffer);
      bytes += buffer.length;
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await handle.close();
    if (capture.generation !== this.newestSnapshot) {
      await unlink(temp).catch(() => undefined);
      throw SUPERSEDED;
    }
    await rename(temp, this.file);
    await syncDirectory(dirname(this.file));
    this.snapshotBytes = bytes;
    // The log is now the segments from the snapshot's generation on (appends made meanwhile included).
    for (const n of [...this.segmentBytes.keys()]) if (n < capture.generation) this.segmentBytes.delete(n);
    for (const n of await listSegments(this.file)) {
      if (n < capture.generation) await unlink(segmentPath(this.file, n)).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.idle();
    if (this.handle) await closeFd(this.handle.fd).catch(() => undefined);
    this.handle = undefined;
  }
}

/** Thrown by a background snapshot that a newer one overtook (not an error to report). */
const SUPERSEDED = new Error('a newer snapshot was begun');

const openFdAsync = promisify(openFd);
const fstatAsync = promisify(fstat);
const ftruncateAsync = promisify(ftruncate);
/** Writes the whole string (it loops over partial writes) at the end: the descriptor is in append mode. */
const writeFdAsync = promisify(writeFd) as (fd: number, text: string) => Promise<void>;
const fdatasyncAsync = promisify(fdatasync);
const closeFd = promisify(close);

/** Make a rename or a new file durable. Some systems cannot open a directory for fsync: then it is as durable as they allow. */
async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // EISDIR/EPERM/EINVAL on platforms without directory fsync.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
