// Owns when an API answer is written to its connection. The answers the event loop finishes while
// it works through the requests that were ready together are written together, once that batch is
// done (the loop's check phase: one setImmediate a batch), instead of one at a time between the
// requests. An answer alone in its turn is written in the same turn, so a lone request waits for
// nothing; under load an answer waits at most for the other requests of its batch.
//
// Why: on loopback each write wakes the reader it is for. Written one by one, some 50 us apart,
// every answer found the client asleep again and paid its wake-up in the sandbox's own kernel time:
// about half the CPU of a GET /customers/{id} (docs/performance.md, "Answers written together").
// Written back to back, the first wakes the client and the others find it running: on a 2-core
// machine the main thread's CPU went from about 50 to 35 us a GET and from 113 to 80 us a POST.
import type { ServerResponse } from 'node:http';

/** The answers waiting for the end of their batch, as pairs: the response, then its body text. */
let waiting: Array<ServerResponse | string | undefined> = [];

/** End `res` with `text` (undefined: no body) once the requests ready with it are handled. */
export function endInBatch(res: ServerResponse, text: string | undefined): void {
  waiting.push(res, text);
  if (waiting.length === 2) setImmediate(endBatch);
}

function endBatch(): void {
  const batch = waiting;
  waiting = [];
  for (let i = 0; i < batch.length; i += 2) {
    const res = batch[i] as ServerResponse;
    try {
      res.end(batch[i + 1] as string | undefined);
    } catch (error) {
      // One broken answer must not keep the others of its batch from being sent.
      res.destroy(error as Error);
    }
  }
}
