// Owns the crash-safe write of the JSON data file, as a lowdb adapter: the document is serialised at
// once (so a write holds exactly the changes made before it began), written to a temporary file,
// fsync'd, renamed over the data file, and the directory fsync'd, so the file on disk is always a
// whole document: the previous one or the new one, also after kill -9 or a power cut.
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';

export class DurableJSONFile<T> implements Adapter<T> {
  private readonly temp: string;

  constructor(private readonly file: string) {
    this.temp = join(dirname(file), `.${basename(file)}.tmp`);
  }

  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    return JSON.parse(text) as T;
  }

  /** Serialises synchronously, before the first await: later changes belong to the next write. */
  write(data: T): Promise<void> {
    return this.writeText(JSON.stringify(data));
  }

  private async writeText(text: string): Promise<void> {
    const handle = await open(this.temp, 'w');
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(this.temp).catch(() => undefined);
      throw error;
    }
    await handle.close();
    await rename(this.temp, this.file);
    await syncDirectory(dirname(this.file));
  }
}

/** Make the rename itself durable. Some systems cannot open a directory for fsync: the rename is then as durable as they allow. */
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
