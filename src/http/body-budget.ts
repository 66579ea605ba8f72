// Owns the server's budget of request bodies being received at once (LIMITS.bodyBytesInFlight).
// Every body holds the bytes its headers declare from the moment its headers are read until it is
// parsed or refused: many large bodies arriving together, slowly or not, then meet a 503 at the
// door instead of growing the heap until the process dies. One per server (createApp), so servers
// in one process do not share it; tests read its count through the service registry.
import { LIMITS } from '../limits.js';

export const BODY_BUDGET_SERVICE = 'bodyBudget';

export class BodyBudget {
  private held = 0;

  constructor(private readonly capBytes: number = LIMITS.bodyBytesInFlight) {}

  /** The bytes bodies hold now. */
  get bytes(): number {
    return this.held;
  }

  /**
   * What a body with these headers holds: its declared length, or the JSON limit (the most any body
   * is read to) when it is chunked or declares more (it is refused with 413 once read that far).
   */
  static lengthOf(contentLength: string | undefined): number {
    if (contentLength === undefined) return LIMITS.jsonBodyBytes;
    const declared = Number(contentLength);
    return Number.isFinite(declared) && declared > 0 ? Math.min(declared, LIMITS.jsonBodyBytes) : 0;
  }

  /** Holds `bytes` and answers a release to call once (later calls do nothing), or undefined when they do not fit. */
  hold(bytes: number): (() => void) | undefined {
    if (this.held + bytes > this.capBytes) return undefined;
    this.held += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= bytes;
    };
  }
}
