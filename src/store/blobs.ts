// Owns stored documents (invoice PDFs, bill uploads): their bytes live on disk, never in memory, one
// directory per account; the account's state keeps each document's size (so the per-account cap and
// a reset need no directory scan). With --data the directory is `<data file>.blobs/`; without it a
// temporary directory, made on the first upload and removed when the sandbox closes or the process exits.
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, unlink } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, Errors } from '../errors.js';
import { LIMITS } from '../limits.js';
import { storageError, type Account, type Store } from './store.js';
import { defineStateMap, defineStateValue } from './module-state.js';

/** Kept in the account's state: the sum of its documents' sizes (`sizes`: where an earlier version kept each size, in one value). */
interface BlobIndex {
  bytes: number;
  sizes?: Record<string, number>;
}

/**
 * Room claimed for one document before the request changes anything: write its bytes (an await, no
 * unit of work), then keep it in the unit of work that files it, or cancel it.
 */
export interface BlobReservation {
  /** Write the bytes to disk; 409 account_replaced when a reset replaced the account meanwhile. */
  write(id: string, bytes: Buffer): Promise<void>;
  /** Count the written document in the account's index (inside the unit of work that files it): the claim is spent. */
  keep(id: string, size: number): void;
  cancel(): void;
}

/** The total the cap is checked against, of the account's documents. */
const blobIndex = defineStateValue<BlobIndex>('blobs', () => ({ bytes: 0 }), {
  type: 'object', required: ['bytes'],
  properties: { bytes: { type: 'integer', minimum: 0 }, sizes: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } } },
});

/** Each stored document's size by id: a map, so filing a document writes its entry, never every size. */
const blobSizes = defineStateMap<number>('blob_sizes', { type: 'integer', minimum: 0 });

/** Set one document's size (undefined: gone), keeping the total; undone entry by entry with the unit of work. */
function setSize(account: Account, id: string, size: number | undefined): void {
  const sizes = blobSizes(account);
  const had = sizes.get(id);
  if (had === size) return;
  if (size === undefined) sizes.delete(id);
  else sizes.set(id, size);
  const delta = (size ?? 0) - (had ?? 0);
  blobIndex.update(account, (idx) => { idx.bytes += delta; }, (idx) => { idx.bytes -= delta; });
}

/** At start: the sizes an earlier version kept in one value move to the map, entry by entry. */
export function takeUpLegacyBlobSizes(accounts: Iterable<Account>): void {
  for (const account of accounts) {
    const legacy = blobIndex.read(account).sizes;
    if (!legacy) continue;
    account.transaction(() => {
      for (const [id, size] of Object.entries(legacy)) blobSizes(account).set(id, size);
      blobIndex.update(account, (idx) => { delete idx.sizes; });
    });
  }
}
const TRASH = '.trash';
const TEMP_PREFIX = 'billing-sandbox-blobs-';

/** Temporary directories of this process, removed at exit even when close() was never called (tests). */
const temporary = new Set<string>();
let exitHook = false;

function removeTemporaryAtExit(dir: string): void {
  temporary.add(dir);
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const path of temporary) rmSync(path, { recursive: true, force: true });
  });
}

/** Temporary blob directories left by sandboxes that were killed (their pid is gone): removed once, at the first upload. */
function sweepAbandoned(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const match = new RegExp(`^${TEMP_PREFIX}(\\d+)-`).exec(name);
    if (!match || Number(match[1]) === process.pid) continue;
    try {
      process.kill(Number(match[1]), 0);
    } catch (error) {
      // ESRCH: no such process. EPERM means it exists (another user's): leave it alone.
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  }
}

export class BlobStore {
  private root: string | undefined;
  /** Bytes claimed by uploads under way, per account (not yet in the account's index). */
  private readonly pending = new Map<string, number>();
  private trashed = 0;

  /**
   * @param dir the directory of a --data file's documents; absent: a temporary directory.
   * @param capBytes the documents one account may keep (LIMITS.blobBytesPerAccount).
   */
  constructor(private readonly store: Store, private readonly dir?: string, readonly capBytes: number = LIMITS.blobBytesPerAccount) {
    this.root = dir;
    if (dir) rmSync(join(dir, TRASH), { recursive: true, force: true });
    // A reset frees the documents with their objects. The account's index went with its state.
    store.events.on('accountReset', (account: Account) => this.discard(accountDir(account)));
    store.events.on('storeReset', () => {
      if (!this.root) return;
      let names: string[] = [];
      try {
        names = readdirSync(this.root).filter((name) => name !== TRASH);
      } catch {
        return;
      }
      for (const name of names) this.discard(name);
    });
  }

  static forDataFile(store: Store, dataFile?: string): BlobStore {
    return new BlobStore(store, dataFile ? `${dataFile}.blobs` : undefined);
  }

  /** Where the bytes are (undefined until the first upload of a sandbox without --data). */
  get directory(): string | undefined {
    return this.root;
  }

  /** Bytes of documents the account keeps (uploads under way included). */
  usage(account: Account): number {
    return blobIndex.read(account).bytes + (this.pending.get(account.id) ?? 0);
  }

  /**
   * Claim room for a document of `size` bytes, before the request changes anything: 422 limit_reached
   * when the account's documents would pass the cap. Replaced and reset documents give their room back.
   */
  reserve(account: Account, size: number, field = 'content'): BlobReservation {
    const used = this.usage(account);
    if (used + size > this.capBytes) {
      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
      throw new ApiError(Errors.limitReached, {
        message: `The account keeps ${mb(used)} of documents and may keep at most ${this.capBytes / 1024 / 1024} MB; this ${mb(size)} document does not fit. Documents replaced by a new upload or removed by POST /_sandbox/reset free their room.`,
        validation_errors: { [field]: `would pass the limit of ${this.capBytes / 1024 / 1024} MB of documents per account` },
      });
    }
    this.pending.set(account.id, (this.pending.get(account.id) ?? 0) + size);
    let open = true;
    const release = () => {
      if (!open) return;
      open = false;
      const left = (this.pending.get(account.id) ?? 0) - size;
      if (left > 0) this.pending.set(account.id, left);
      else this.pending.delete(account.id);
    };
    return {
      write: (id, bytes) => this.writeFile(account, id, bytes),
      keep: (id, size) => {
        setSize(account, id, size);
        // The claim is spent once the filing unit commits; rolled back, it stays until cancel().
        account.afterCommit(release);
      },
      cancel: release,
    };
  }

  async get(account: Account, id: string): Promise<Buffer | undefined> {
    if (!this.root) return undefined;
    try {
      return await readFile(join(this.root, accountDir(account), safe(id)));
    } catch {
      // Data files written before documents had one directory per account keep them flat.
      if (!this.dir) return undefined;
      return readFile(join(this.dir, safe(id))).catch(() => undefined);
    }
  }

  /** The document is no longer referenced (a newer upload replaced it): its room is given back, in the unit of work that replaced it. */
  forget(account: Account, id: string): void {
    if (blobSizes(account).has(id)) setSize(account, id, undefined);
  }

  /** Remove a document's file once the change that dropped it is on disk, so a crash before that still finds it. */
  async removeWhenDurable(account: Account, id: string): Promise<void> {
    if (!this.root) return;
    await this.store.durable().catch(() => undefined);
    // Rolled back meanwhile (the data file could not be written): the document is referenced again.
    if (blobSizes(this.store.account(account.partnerId, account.environment)).has(id)) return;
    await unlink(join(this.root, accountDir(account), safe(id))).catch(() => undefined);
  }

  /**
   * File a stored document: run `file` (a unit of work that keeps the document and points an object
   * at it); if it throws, the file is removed (nothing points at it) and the error rethrown.
   */
  async fileOrRelease<T>(account: Account, id: string, file: () => T): Promise<T> {
    try {
      return file();
    } catch (error) {
      if (this.root) await unlink(join(this.root, accountDir(account), safe(id))).catch(() => undefined);
      throw error;
    }
  }

  /** Remove the temporary directory (a --data directory stays). Safe to call twice. */
  async close(): Promise<void> {
    if (this.root && !this.dir) {
      await rm(this.root, { recursive: true, force: true });
      temporary.delete(this.root);
    }
  }

  private ensureRoot(): string {
    if (!this.root) {
      sweepAbandoned();
      this.root = mkdtempSync(join(tmpdir(), `${TEMP_PREFIX}${process.pid}-`));
      removeTemporaryAtExit(this.root);
    }
    return this.root;
  }

  private async writeFile(account: Account, id: string, bytes: Buffer): Promise<void> {
    const folder = join(this.ensureRoot(), accountDir(account));
    const target = join(folder, safe(id));
    const temp = `${target}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await mkdir(folder, { recursive: true });
      // Written whole and flushed to the disk before it takes its name: a crash leaves the old file or the new one.
      const handle = await open(temp, 'w');
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      // A reset moved the account's directory away meanwhile: the upload raced it, and is refused as such.
      account.assertCurrent();
      // Otherwise the disk refused the bytes (full, read-only, a path in the way): the upload files
      // nothing and gives its room back, and the client is told to retry, as for the data file.
      throw documentWriteError(error);
    }
    // Written, but for an account a reset replaced meanwhile: its directory is the old one's.
    if (account.retired) {
      await unlink(target).catch(() => undefined);
      account.assertCurrent();
    }
  }

  /** Move an account's directory aside at once (new uploads start clean), then delete it in the background. */
  private discard(name: string): void {
    if (!this.root) return;
    const trash = join(this.root, TRASH);
    const moved = join(trash, `${name}-${process.pid}-${(this.trashed += 1)}`);
    try {
      mkdirSync(trash, { recursive: true });
      renameSync(join(this.root, name), moved);
    } catch {
      return; // nothing stored for it
    }
    void rm(moved, { recursive: true, force: true }).catch(() => undefined);
  }
}


/** The directory of an account's documents: readable when the ids are plain, else a digest. */
/** 503 storage_unavailable (as for the data file) for a document the disk would not take, naming the system's code (ENOSPC...). */
function documentWriteError(error: unknown): ApiError {
  const code = (error as NodeJS.ErrnoException).code ?? 'an error';
  return storageError(`The document could not be written to disk (${code}), so nothing was changed. Retry after the Retry-After seconds.`);
}

function accountDir(account: Account): string {
  const plain = `${account.partnerId}.${account.environment}`;
  return /^[A-Za-z0-9_-]+\.[a-z]+$/.test(plain) ? plain : `acct-${createHash('sha256').update(account.id).digest('hex').slice(0, 24)}`;
}

function safe(id: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`unsafe blob id ${id}`);
  return id;
}
