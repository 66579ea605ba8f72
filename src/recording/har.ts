// Owns the recording file of `billing-sandbox record` and `diff`: HAR 1.2 (the format browsers and
// proxies export, so other tools open it), written one entry per line as each exchange ends, so the
// file never waits in memory and a recorder killed mid-run leaves every finished exchange readable;
// and reading one back (also a HAR another tool wrote), bounded in size.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { VERSION } from '../config.js';
import { LIMITS } from '../limits.js';

export interface HarPair {
  name: string;
  value: string;
}

export interface HarRequest {
  method: string;
  /** Absolute, as sent to the target (secret query values masked). */
  url: string;
  httpVersion: string;
  cookies: HarPair[];
  headers: HarPair[];
  queryString: HarPair[];
  postData?: { mimeType: string; text: string; comment?: string };
  headersSize: number;
  bodySize: number;
}

export interface HarResponse {
  /** 0 when the target gave no answer (see `_error`). */
  status: number;
  statusText: string;
  httpVersion: string;
  cookies: HarPair[];
  headers: HarPair[];
  content: { size: number; mimeType: string; text?: string; encoding?: 'base64'; comment?: string };
  redirectURL: string;
  headersSize: number;
  bodySize: number;
  /** Why there is no answer (the target could not be reached, the connection broke). */
  _error?: string;
}

export interface HarEntry {
  startedDateTime: string;
  /** Milliseconds from the request's start to the answer's end. */
  time: number;
  request: HarRequest;
  response: HarResponse;
  cache: Record<string, never>;
  timings: { blocked: number; dns: number; connect: number; send: number; wait: number; receive: number; ssl: number };
  /** Set when a body was larger than LIMITS.recordBodyBytes: its text is not kept (and the exchange cannot be replayed). */
  _cut?: { request?: boolean; response?: boolean };
  comment?: string;
}

export interface HarLog {
  version: string;
  creator: { name: string; version: string };
  comment?: string;
  /** The base URL `record` forwarded to: entry URLs start with it, and `diff` replays the rest. */
  _target?: string;
  entries: HarEntry[];
}

/** Masked values read `***#n`: the same secret has the same n throughout one file (see mask.ts). */
export const MASK_NOTE = 'Credentials, tokens and fields named like secrets are masked as ***#n (the same n is the same value throughout the file).';

/**
 * Appends entries to a HAR file as they come: the head when opened, one line per entry, and the end
 * when finished. Synchronous writes keep the lines whole and in order without a queue.
 */
export class HarWriter {
  private fd: number | undefined;
  count = 0;

  constructor(readonly file: string, target: string, overwrite = false) {
    // 'wx': an existing recording is never overwritten by accident.
    this.fd = openSync(file, overwrite ? 'w' : 'wx');
    const head: Omit<HarLog, 'entries'> = {
      version: '1.2',
      creator: { name: 'billing-sandbox record', version: VERSION },
      comment: MASK_NOTE,
      _target: target,
    };
    writeSync(this.fd, `${JSON.stringify({ log: head }).slice(0, -2)},"entries":[\n`);
  }

  get finished(): boolean {
    return this.fd === undefined;
  }

  add(entry: HarEntry): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, `${this.count ? ',\n' : ''}${JSON.stringify(entry)}`);
    this.count += 1;
  }

  /** Write the end of the file; later entries are dropped. Safe to call twice. */
  finish(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    writeSync(fd, `${this.count ? '\n' : ''}]}}\n`);
    closeSync(fd);
  }
}

/** A recording that cannot be read: a usage error of `diff` (exit 2). */
export class RecordingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordingError';
  }
}

/** The text of a file of at most `max` bytes. */
function readBounded(file: string, max: number): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    throw new RecordingError(`cannot read the recording ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const size = fstatSync(fd).size;
    if (size > max) throw new RecordingError(`the recording ${file} is ${size} bytes, more than the ${max} bytes diff reads (LIMITS.recordingFileBytes): record shorter sessions`);
    const buffer = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.toString('utf8', 0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * A recording as written by HarWriter but never finished (the recorder was killed): its head and
 * every whole entry line, the torn last line dropped. Undefined when the text is not of that form.
 */
function readUnfinished(text: string): { log: HarLog; dropped: number } | undefined {
  const lines = text.split('\n');
  const head = lines[0];
  if (!head.endsWith('"entries":[')) return undefined;
  let log: HarLog;
  try {
    log = (JSON.parse(`${head}]}}`) as { log: HarLog }).log;
  } catch {
    return undefined;
  }
  let dropped = 0;
  for (const line of lines.slice(1)) {
    const body = line.replace(/^,/, '').replace(/,$/, '');
    if (!body || body === ']}}') continue;
    try {
      log.entries.push(JSON.parse(body) as HarEntry);
    } catch {
      dropped += 1;
    }
  }
  return { log, dropped };
}

function isEntry(value: unknown): value is HarEntry {
  const entry = value as HarEntry;
  return Boolean(entry && typeof entry === 'object' && entry.request && typeof entry.request.method === 'string' && typeof entry.request.url === 'string'
    && entry.response && typeof entry.response.status === 'number');
}

/** Read a HAR file: ours (finished or not) or another tool's. Refuses what is not a HAR with entries. */
export function readRecording(file: string, max: number = LIMITS.recordingFileBytes, maxEntries: number = LIMITS.recordExchanges): { log: HarLog; notes: string[] } {
  const text = readBounded(file, max);
  const notes: string[] = [];
  let log: HarLog | undefined;
  try {
    log = (JSON.parse(text) as { log?: HarLog }).log;
  } catch {
    const unfinished = readUnfinished(text);
    if (!unfinished) throw new RecordingError(`the recording ${file} is not a HAR file (not JSON)`);
    log = unfinished.log;
    notes.push(`the recording was not finished (the recorder stopped without Ctrl-C): ${log.entries.length} whole exchange(s) read${unfinished.dropped ? `, ${unfinished.dropped} torn one(s) left out` : ''}`);
  }
  if (!log || typeof log !== 'object' || !Array.isArray(log.entries)) throw new RecordingError(`the recording ${file} is not a HAR file (no log.entries)`);
  if (log.entries.length > maxEntries) throw new RecordingError(`the recording ${file} holds ${log.entries.length} exchanges, more than the ${maxEntries} diff replays (LIMITS.recordExchanges): record shorter sessions`);
  const bad = log.entries.findIndex((entry) => !isEntry(entry));
  if (bad >= 0) throw new RecordingError(`the recording ${file} has an entry (log.entries[${bad}]) without a request method and url and a response status`);
  return { log, notes };
}
