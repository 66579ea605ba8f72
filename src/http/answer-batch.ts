// Owns when an API answer is written to its connection. The answers the event loop finishes while
// it works through the requests that were ready together are written together, once that batch is
// done (the loop's check phase: one setImmediate a batch), instead of one at a time between the
// requests. An answer alone in its turn is written in the same turn, so a lone request waits for
// nothing; under load an answer waits at most for the other requests of its batch.
//
// Why: on loopback each write wakes the reader it is for. Written one by one, some 50 us apart,
// every answer found the client asleep again and paid its wake-up in the sandbox's own kernel time:
// about half the CPU of a GET /customers/{id} (a CPU profile: node's writev was 22.6 of 46.6 us a GET).
// Written back to back, the first wakes the client and the others find it running: on a 2-core
// machine the main thread's CPU went from about 50 to 35 us a GET and from 113 to 80 us a POST.
//
// The batch holds its answers' text until it ends, so it has a budget (LIMITS.answerBatchBytes): many
// large answers finished in one turn (300 journal pages of 4 MB, say) would otherwise all be alive
// at once, gigabytes of heap no collection can free, before the first is written. An answer that
// would pass the budget is written at once, with the batch so far; large answers gain nothing from
// waiting (their client is woken by the first of many packets anyway).
import type { ServerResponse } from 'node:http';
import { LIMITS } from '../limits.js';

/** The answers waiting for the end of their batch, as pairs: the response, then its body text. */
let waiting: Array<ServerResponse | string | undefined> = [];
/** The length of the texts waiting. */
let waitingBytes = 0;

/** End `res` with `text` (undefined: no body) once the requests ready with it are handled. */
export function endInBatch(res: ServerResponse, text: string | undefined): void {
  const bytes = text === undefined ? 0 : text.length;
  if (waitingBytes + bytes > LIMITS.answerBatchBytes) {
    endBatch();
    return end(res, text);
  }
  waiting.push(res, text);
  waitingBytes += bytes;
  if (waiting.length === 2) setImmediate(endBatch);
}

/** The text the current batch holds (tests read it). */
export function batchedBytes(): number {
  return waitingBytes;
}

function endBatch(): void {
  const batch = waiting;
  waiting = [];
  waitingBytes = 0;
  for (let i = 0; i < batch.length; i += 2) end(batch[i] as ServerResponse, batch[i + 1] as string | undefined);
}

function end(res: ServerResponse, text: string | undefined): void {
  try {
    res.end(text);
  } catch (error) {
    // One broken answer must not keep the others of its batch from being sent.
    res.destroy(error as Error);
  }
}
