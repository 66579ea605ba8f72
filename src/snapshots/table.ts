// Owns the snapshots every partner keeps: in memory (each document as a Buffer, outside the JavaScript
// heap), their caps (a count per partner, bytes each, per partner and per server), and with --data one
// file per snapshot in `<data file>.snapshots/<partner>/`, written (fsync'd, then renamed into place)
// before a save is answered and removed before a delete is: a restart reads them back, and a change
// writes one snapshot's file, never the whole table. A partner's changes run one after another, so a
// delete never overtakes the save before it.
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError, Errors } from '../errors.js';
import { LIMITS } from '../limits.js';
import type { Logger } from '../log.js';
import { storageError } from '../store/store.js';
import type { SavedSnapshot, SnapshotSummary } from './document.js';

const MB = 1024 * 1024;
const FILE_SUFFIX = '.snapshot';

/** The first line of a snapshot's file: whose it is and what a list shows; the document follows on the second. */
interface FileHeader {
  partner_id: string;
  summary: SnapshotSummary;
}

/** A partner's directory: readable when its id is plain, else a digest. */
function partnerDir(partnerId: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(partnerId) ? partnerId : `ptn-${createHash('sha256').update(partnerId).digest('hex').slice(0, 24)}`;
}

/** A snapshot's file: a digest of its name, so that names differing only in case never share a file on a case-blind disk. */
function fileName(name: string): string {
  return `${createHash('sha256').update(name).digest('hex').slice(0, 32)}${FILE_SUFFIX}`;
}

export class SnapshotTable {
  private readonly partners = new Map<string, Map<string, SavedSnapshot>>();
  private bytes = 0;
  /** Per partner, the change under way: the next one starts after it. */
  private readonly turns = new Map<string, Promise<unknown>>();

  /** @param dir where the files go (`<data file>.snapshots`); absent: memory only. */
  constructor(readonly dir: string | undefined, private readonly log: Logger) {}

  /** Bytes of every snapshot kept, for the caps and the figures. */
  get totalBytes(): number {
    return this.bytes;
  }

  /** At start: read every snapshot file back (a file that cannot be read stops the start, naming it). */
  load(): void {
    if (!this.dir) return;
    let partners: string[];
    try {
      partners = readdirSync(this.dir);
    } catch {
      return;
    }
    const found: SavedSnapshot[] = [];
    for (const partner of partners) {
      const folder = join(this.dir, partner);
      let names: string[];
      try {
        names = readdirSync(folder);
      } catch {
        continue;
      }
      for (const name of names) {
        const path = join(folder, name);
        // A write a crash cut before its rename never counted.
        if (name.endsWith('.tmp')) {
          rmSync(path, { force: true });
          continue;
        }
        if (!name.endsWith(FILE_SUFFIX)) continue;
        const bytes = readFileSync(path);
        const newline = bytes.indexOf(0x0a);
        let header: FileHeader;
        try {
          header = JSON.parse(bytes.toString('utf8', 0, newline < 0 ? bytes.length : newline)) as FileHeader;
          if (newline < 0 || typeof header.partner_id !== 'string' || typeof header.summary?.name !== 'string') throw new Error('no header line');
        } catch (error) {
          throw new Error(`the snapshot file ${path} cannot be read (${(error as Error).message}); move it away to start without it`);
        }
        found.push({ partner_id: header.partner_id, summary: header.summary, body: bytes.subarray(newline + 1) });
      }
    }
    // Oldest first, as a list shows them.
    found.sort((a, b) => (a.summary.created_at < b.summary.created_at ? -1 : a.summary.created_at > b.summary.created_at ? 1 : 0));
    for (const saved of found) this.keep(saved);
  }

  private of(partnerId: string): Map<string, SavedSnapshot> {
    let kept = this.partners.get(partnerId);
    if (!kept) this.partners.set(partnerId, (kept = new Map<string, SavedSnapshot>()));
    return kept;
  }

  list(partnerId: string): SnapshotSummary[] {
    return [...(this.partners.get(partnerId)?.values() ?? [])].map((saved) => saved.summary);
  }

  /** The partner's snapshot of that name, or 404 (another partner's is never found). */
  require(partnerId: string, name: string): SavedSnapshot {
    const saved = this.partners.get(partnerId)?.get(name);
    if (!saved) throw new ApiError(Errors.notFound, { message: `No snapshot named ${name}.` });
    return saved;
  }

  /**
   * Keep a snapshot (after any change of the partner under way): 409 when the name is taken and
   * `replace` is not set, 422 past a cap; with --data its file is written first (503 when it cannot be).
   */
  put(saved: SavedSnapshot, replace: boolean): Promise<void> {
    return this.inTurn(saved.partner_id, async () => {
      const { name, bytes } = saved.summary;
      const kept = this.of(saved.partner_id);
      const previous = kept.get(name);
      if (previous && !replace) {
        throw new ApiError(Errors.snapshotExists, {
          message: `A snapshot named ${name} exists already; send replace: true to overwrite it, or choose another name.`,
          validation_errors: { name: 'is the name of a snapshot the partner keeps' },
        });
      }
      const freed = previous?.summary.bytes ?? 0;
      if (!previous && kept.size >= LIMITS.snapshotsPerPartner) {
        throw limit(`The partner keeps ${kept.size} snapshots, the most it may keep; delete one first (DELETE /_sandbox/snapshots/{name}).`, `would be the partner's snapshot number ${kept.size + 1} of at most ${LIMITS.snapshotsPerPartner}`);
      }
      let partnerBytes = 0;
      for (const other of kept.values()) partnerBytes += other.summary.bytes;
      if (partnerBytes - freed + bytes > LIMITS.snapshotBytesPerPartner) {
        throw limit(`The partner's snapshots hold ${(partnerBytes / MB).toFixed(1)} MB; this one (${(bytes / MB).toFixed(1)} MB) would pass the ${LIMITS.snapshotBytesPerPartner / MB} MB a partner may keep. Delete some first.`, `would pass the ${LIMITS.snapshotBytesPerPartner / MB} MB of snapshots a partner may keep`);
      }
      if (this.bytes - freed + bytes > LIMITS.snapshotBytesPerServer) {
        throw limit(`The server's snapshots hold ${(this.bytes / MB).toFixed(1)} MB; this one would pass the ${LIMITS.snapshotBytesPerServer / MB} MB the server keeps.`, `would pass the ${LIMITS.snapshotBytesPerServer / MB} MB of snapshots the server keeps`);
      }
      if (this.dir) await this.writeFile(saved);
      if (previous) this.drop(saved.partner_id, name);
      this.keep(saved);
    });
  }

  /** Remove the partner's snapshot of that name (404 when there is none); with --data its file first. */
  remove(partnerId: string, name: string): Promise<void> {
    return this.inTurn(partnerId, async () => {
      this.require(partnerId, name);
      if (this.dir) {
        try {
          await unlink(join(this.dir, partnerDir(partnerId), fileName(name)));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw this.storageFailed(error, 'removing');
        }
      }
      this.drop(partnerId, name);
    });
  }

  /** Every snapshot gone (a full reset), once the changes under way are done; with --data their files too. */
  async clear(): Promise<void> {
    await Promise.allSettled([...this.turns.values()]);
    this.partners.clear();
    this.bytes = 0;
    if (!this.dir) return;
    for (const name of await readdir(this.dir).catch(() => [] as string[])) await rm(join(this.dir, name), { recursive: true, force: true });
  }

  private keep(saved: SavedSnapshot): void {
    this.of(saved.partner_id).set(saved.summary.name, saved);
    this.bytes += saved.summary.bytes;
  }

  private drop(partnerId: string, name: string): void {
    const kept = this.partners.get(partnerId);
    const saved = kept?.get(name);
    if (!kept || !saved) return;
    kept.delete(name);
    this.bytes -= saved.summary.bytes;
    if (!kept.size) this.partners.delete(partnerId);
  }

  private inTurn<T>(partnerId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(partnerId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.turns.set(partnerId, settled);
    void settled.then(() => {
      if (this.turns.get(partnerId) === settled) this.turns.delete(partnerId);
    });
    return next;
  }

  /** The header line and the document, written whole to a temporary file, fsync'd, then renamed over the old one. */
  private async writeFile(saved: SavedSnapshot): Promise<void> {
    const folder = join(this.dir as string, partnerDir(saved.partner_id));
    const target = join(folder, fileName(saved.summary.name));
    const temp = `${target}.${randomBytes(4).toString('hex')}.tmp`;
    const header: FileHeader = { partner_id: saved.partner_id, summary: saved.summary };
    try {
      await mkdir(folder, { recursive: true });
      const handle = await open(temp, 'w');
      try {
        await handle.writev([Buffer.from(`${JSON.stringify(header)}\n`), saved.body]);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
      syncDirectory(folder);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw this.storageFailed(error, 'writing');
    }
  }

  private storageFailed(error: unknown, doing: string): ApiError {
    this.log.error({ err: error, dir: this.dir }, `${doing} a snapshot file failed; the snapshot table is unchanged`);
    return storageError();
  }
}

/** A rename is durable once its directory is synced (not possible everywhere: then it is left to the system). */
function syncDirectory(folder: string): void {
  try {
    const fd = openSync(folder, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some platforms cannot open a directory for syncing.
  }
}

function limit(message: string, field: string): ApiError {
  return new ApiError(Errors.limitReached, { message, validation_errors: { name: field } });
}
