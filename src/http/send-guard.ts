// Owns the bound on what the server holds for clients that do not read their answers. Every answer
// passes through its app's response methods (createApp), which ask here before each write and report
// after it; the bytes a connection was answered and has not taken yet (what its socket has not
// flushed, and its pipelined answers still waiting for their turn) are counted per connection and
// summed over the server. A connection is dropped (its socket reset, its bytes let go) when it holds
// more than the per-connection cap, when it has unflushed bytes and takes none of them for the send
// time-out, or, past half the server's cap, when it is among those that went longest without taking
// a byte. A dropped connection's bytes count until its socket has closed (within a turn of the event
// loop), and a write that would take the sum past the server's cap is not made: its connection is
// dropped instead, so the cap holds even for a burst answered within one turn. A client that reads,
// even slowly, keeps its connection; an idle connection with nothing to send is never touched here
// (streams and waiting handlers are idle by design).
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log.js';
import { LIMITS } from '../limits.js';
import { exchange } from './exchange.js';

export interface SendLimits {
  /** A connection with unflushed answer bytes that takes none of them for this long is dropped (ms of real time). */
  sendTimeoutMs: number;
  /** Answer bytes one connection may hold unflushed, its pipelined answers included; beyond, it is dropped. */
  connectionQueuedBytes: number;
  /**
   * The most the server holds for all its connections, dropped ones included until their sockets
   * close. Past half of it the stalest connections are dropped; a write that would pass it is not made.
   */
  totalQueuedBytes: number;
}

/** The server's guard, in the deps' service registry (tests read its counters). */
export const SEND_GUARD_SERVICE = 'sendGuard';

export type DropReason = 'connection' | 'total' | 'timeout';

export interface SendGuardStats {
  limits: SendLimits;
  /** Connections holding unflushed bytes now. */
  connections: number;
  /** Unflushed answer bytes over those connections as last measured, and those of dropped connections not closed yet. */
  queuedBytes: number;
  /** The highest queuedBytes seen once each write's rules had run. */
  peakQueuedBytes: number;
  dropped: Record<DropReason, number>;
}

/** One connection holding unflushed bytes. */
interface Backlog {
  socket: Socket;
  /** Bytes counted in the server's sum for this connection (its last measure). */
  bytes: number;
  /** The socket's bytesTaken at the last look. */
  taken: number;
  /** When the client last took bytes (or the backlog began). */
  progressAt: number;
  /** Pipelined answers written before their turn: node keeps their bytes on the response until the socket is theirs. */
  waiting: Set<ServerResponse>;
}

/**
 * Bytes of this socket the kernel has taken: what node handed to libuv (`_bytesDispatched`) less
 * what libuv still queues (`writeQueueSize`). It grows whenever the client makes room, even in the
 * middle of one large write, where writableLength moves only once a whole write is done; node's own
 * socket time-out reads the same queue for the same reason (lib/net.js, `_onTimeout`).
 */
function bytesTaken(socket: Socket): number {
  const internals = socket as unknown as { _bytesDispatched?: number; _handle?: { writeQueueSize?: number } | null };
  return (internals._bytesDispatched ?? 0) - (internals._handle?.writeQueueSize ?? 0);
}

/**
 * Let go of what a response of a dropped connection holds. Node keeps what it buffered in
 * `outputData` (its size in `outputSize`) until a socket is assigned, which for a dropped
 * connection never happens; the exchange keeps the answer for the journal until the response
 * closes, which records it as cut (status 0, as a scenario's drop), without the answer.
 */
export function letGo(res: ServerResponse): void {
  const buffered = res as unknown as { outputData?: unknown[]; outputSize?: number };
  if (Array.isArray(buffered.outputData)) buffered.outputData.length = 0;
  if (typeof buffered.outputSize === 'number') buffered.outputSize = 0;
  const state = exchange(res);
  state.dropped ??= 'reset';
  state.responseText = undefined;
  state.responseBody = undefined;
}

/** Whether `res` answers on a connection already gone, without its socket yet (a pipelined answer behind a dropped one). */
export function orphaned(res: ServerResponse): boolean {
  return !res.socket && Boolean(res.req?.socket?.destroyed);
}

/** The bytes a write hands over: a string's length (as node counts a socket's backlog) or a buffer's size. */
function sizeOf(chunk: unknown): number {
  if (typeof chunk === 'string') return chunk.length;
  if (ArrayBuffer.isView(chunk)) return chunk.byteLength;
  return 0;
}

export class SendGuard {
  private readonly backlogs = new Map<Socket, Backlog>();
  /** Bytes of the connections kept (their last measures). */
  private held = 0;
  /** Bytes of dropped connections whose sockets have not closed yet: still in memory. */
  private releasing = 0;
  private peak = 0;
  private readonly dropped: Record<DropReason, number> = { connection: 0, total: 0, timeout: 0 };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly limits: SendLimits,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  /**
   * Called before a response hands `chunk` to node: false when it would take the server past its
   * cap, and then its connection has been dropped and nothing is to be written.
   */
  admit(res: ServerResponse, chunk: unknown): boolean {
    // The head node writes with the first chunk counts too: at most what a request's head may be.
    const size = sizeOf(chunk) + (res.headersSent ? 0 : LIMITS.headerBytes);
    if (this.held + this.releasing + size <= this.limits.totalQueuedBytes) return true;
    // The kept connections' last measures may be old: read them again before refusing.
    this.remeasure();
    if (this.held + this.releasing + size <= this.limits.totalQueuedBytes) return true;
    const socket = res.socket ?? res.req?.socket;
    if (!socket || socket.destroyed) return false;
    const backlog = this.backlogs.get(socket) ?? this.track(socket);
    this.drop(backlog, 'total');
    letGo(res);
    return false;
  }

  /** Called after every write of a response (its head, a chunk, its end). */
  wrote(res: ServerResponse): void {
    const assigned = res.socket;
    // The common case, at the cost of a getter: nothing held anywhere, the answer went to the kernel.
    if (assigned && !this.backlogs.size && assigned.writableLength === 0) return;
    const socket = assigned ?? res.req?.socket;
    if (!socket || socket.destroyed) return;
    let backlog = this.backlogs.get(socket);
    if (backlog === undefined) {
      if (assigned && socket.writableLength === 0) return;
      backlog = this.track(socket);
    }
    if (!assigned && !res.writableFinished) backlog.waiting.add(res);
    this.measure(backlog);
    if (backlog.bytes > this.limits.connectionQueuedBytes) this.drop(backlog, 'connection');
    if (this.held > this.limits.totalQueuedBytes / 2) this.makeRoom();
    this.peak = Math.max(this.peak, this.held + this.releasing);
  }

  stats(): SendGuardStats {
    return { limits: this.limits, connections: this.backlogs.size, queuedBytes: this.held + this.releasing, peakQueuedBytes: this.peak, dropped: { ...this.dropped } };
  }

  /** Stop watching (the server is closing): nothing is dropped any more. */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.backlogs.clear();
    this.held = 0;
  }

  private track(socket: Socket): Backlog {
    const backlog: Backlog = { socket, bytes: 0, taken: bytesTaken(socket), progressAt: this.now(), waiting: new Set() };
    this.backlogs.set(socket, backlog);
    this.timer ??= setInterval(() => this.sweep(), Math.min(1000, Math.max(10, this.limits.sendTimeoutMs / 4))).unref();
    return backlog;
  }

  /** Read a connection's bytes again, note whether the client took any, and keep the sum in step. */
  private measure(backlog: Backlog): void {
    const { socket } = backlog;
    if (socket.destroyed) {
      // Gone meanwhile (the client hung up): what it held goes once its socket has closed.
      this.release(backlog);
      return;
    }
    const writable = socket.writableLength;
    const taken = bytesTaken(socket);
    // The kernel took bytes since the last look, or nothing waits on the socket itself (the
    // connection then waits for the server, not for the client).
    if (taken > backlog.taken || writable === 0) backlog.progressAt = this.now();
    backlog.taken = taken;
    let bytes = writable;
    for (const res of backlog.waiting) {
      // An answer whose turn came has moved its bytes to the socket (counted above).
      if (res.socket || res.writableFinished || res.destroyed) backlog.waiting.delete(res);
      else bytes += res.writableLength;
    }
    this.held += bytes - backlog.bytes;
    backlog.bytes = bytes;
  }

  /** Stop counting a connection as kept; its bytes count as releasing until its socket has closed. */
  private release(backlog: Backlog): void {
    if (!this.backlogs.delete(backlog.socket)) return;
    this.held -= backlog.bytes;
    const bytes = backlog.bytes;
    backlog.bytes = 0;
    if (bytes && !backlog.socket.closed) {
      this.releasing += bytes;
      backlog.socket.once('close', () => (this.releasing -= bytes));
    }
    if (!this.backlogs.size) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private drop(backlog: Backlog, reason: DropReason): void {
    const bytes = backlog.bytes;
    this.release(backlog);
    this.dropped[reason] += 1;
    this.log.warn({ reason, queued_bytes: bytes, stalled_ms: this.now() - backlog.progressAt }, 'a client is not reading its answers: connection dropped');
    // A reset, not a close: a close would leave the kernel sending what it holds to a client that
    // does not read, for minutes.
    backlog.socket.resetAndDestroy();
    // The answer on the socket and the pipelined ones still waiting for their turn stay reachable
    // from node's connection state until the socket's close completes: their bytes are let go now.
    const current = (backlog.socket as unknown as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (current) letGo(current);
    for (const res of backlog.waiting) letGo(res);
    backlog.waiting.clear();
  }

  /** Past half the cap: measure every connection again, then drop the stalest until the kept ones fit in that half. */
  private makeRoom(): void {
    this.remeasure();
    const stalest = [...this.backlogs.values()].sort((a, b) => a.progressAt - b.progressAt || b.bytes - a.bytes);
    for (const backlog of stalest) {
      if (this.held <= this.limits.totalQueuedBytes / 2) break;
      this.drop(backlog, 'total');
    }
  }

  /** Measure every kept connection again; those with nothing left are forgotten. */
  private remeasure(): void {
    for (const backlog of [...this.backlogs.values()]) {
      this.measure(backlog);
      if (!backlog.bytes) this.release(backlog);
    }
  }

  /** Every connection with a backlog: done ones are forgotten, stalled ones past the time-out dropped. */
  private sweep(): void {
    const now = this.now();
    for (const backlog of [...this.backlogs.values()]) {
      this.measure(backlog);
      if (!this.backlogs.has(backlog.socket)) continue;
      if (!backlog.bytes) this.release(backlog);
      else if (now - backlog.progressAt >= this.limits.sendTimeoutMs) this.drop(backlog, 'timeout');
    }
  }
}
