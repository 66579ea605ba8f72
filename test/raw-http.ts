// Raw HTTP/1.1 over TCP, for the tests of what a client library hides: pipelined requests, many
// connections written in one turn, a body sent after 100 Continue, bytes node refuses before express.
// Answers are framed by their Content-Length in bytes, so the bytes are kept as read.
import { connect } from 'node:net';

export interface RawConnection {
  write(bytes: string): void;
  /**
   * What the server wrote since the last read, once `until` holds for it (one reader at a time);
   * `closed` tells whether the server has closed the connection. A connection that closes before
   * `until` holds fails the read.
   */
  readUntil(until: (bytes: Buffer, closed: boolean) => boolean): Promise<Buffer>;
  /** Everything the server writes from now until it closes the connection. */
  readToClose(): Promise<Buffer>;
  end(): void;
}

/** A new connection to the server on `port`, once connected. */
export async function rawConnection(port: number): Promise<RawConnection> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let read = Buffer.alloc(0);
  let closed = false;
  let failure: Error | undefined;
  let waiting: { until: (bytes: Buffer, closed: boolean) => boolean; resolve: (bytes: Buffer) => void; reject: (error: Error) => void } | undefined;
  const check = () => {
    if (!waiting) return;
    const { until, resolve, reject } = waiting;
    if (until(read, closed)) {
      waiting = undefined;
      const bytes = read;
      read = Buffer.alloc(0);
      resolve(bytes);
    } else if (closed) {
      waiting = undefined;
      reject(failure ?? new Error(`the server closed the connection after ${JSON.stringify(read.toString('utf8'))}`));
    }
  };
  socket.on('data', (chunk: Buffer) => {
    read = Buffer.concat([read, chunk]);
    check();
  });
  socket.on('end', () => {
    closed = true;
    check();
  });
  socket.on('error', (error) => {
    failure = error;
    closed = true;
    check();
  });
  const readUntil = (until: (bytes: Buffer, closed: boolean) => boolean) => new Promise<Buffer>((resolve, reject) => {
    waiting = { until, resolve, reject };
    check();
  });
  return {
    write: (bytes) => void socket.write(bytes),
    readUntil,
    // A reset after an answer (node's refusals close that way) still gives what was read.
    readToClose: () => readUntil((bytes, isClosed) => isClosed && (bytes.length > 0 || !failure)),
    end: () => void socket.end(),
  };
}

/** Send raw bytes on a new connection and read everything the server answers until it closes it. */
export async function raw(port: number, bytes: string): Promise<string> {
  const connection = await rawConnection(port);
  connection.write(bytes);
  return (await connection.readToClose()).toString('utf8');
}

/** Whether `bytes` hold one whole answer (its head and a body of its Content-Length). */
export function answered(bytes: Buffer): boolean {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return false;
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(bytes.subarray(0, headEnd).toString('latin1'))?.[1] ?? 0);
  return bytes.length >= headEnd + 4 + length;
}

/** The answers in a connection's bytes, in the order they came (each framed by its Content-Length). */
export function answers(bytes: Buffer): Array<{ status: number; body: unknown }> {
  const found: Array<{ status: number; body: unknown }> = [];
  let at = 0;
  while (at < bytes.length) {
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    const head = bytes.subarray(at, headEnd).toString('latin1');
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
    const body = bytes.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
    found.push({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: body ? JSON.parse(body) : undefined });
    at = headEnd + 4 + length;
  }
  return found;
}
