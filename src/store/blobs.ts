// Owns stored documents (invoice PDFs, bill uploads): bytes kept outside the JSON document so the
// data file stays small. In memory by default; with --data, files in `<data file>.blobs/`.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface BlobMeta {
  id: string;
  mime_type: string;
  filename: string;
  size: number;
}

export class BlobStore {
  private readonly memory = new Map<string, Buffer>();

  constructor(private readonly dir?: string) {}

  static forDataFile(dataFile?: string): BlobStore {
    return new BlobStore(dataFile ? `${dataFile}.blobs` : undefined);
  }

  /** Store bytes under an id (ids come from Account.newId, so they are unique per account). */
  async put(id: string, bytes: Buffer): Promise<void> {
    if (!this.dir) {
      this.memory.set(id, bytes);
      return;
    }
    await mkdir(this.dir, { recursive: true });
    const target = join(this.dir, safe(id));
    await writeFile(`${target}.tmp`, bytes);
    await rename(`${target}.tmp`, target);
  }

  async get(id: string): Promise<Buffer | undefined> {
    if (!this.dir) return this.memory.get(id);
    try {
      return await readFile(join(this.dir, safe(id)));
    } catch {
      return undefined;
    }
  }

  clear(): void {
    this.memory.clear();
  }
}

function safe(id: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(id)) throw new Error(`unsafe blob id ${id}`);
  return id;
}
