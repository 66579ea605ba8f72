// Owns the per-key rate limit: at most N requests in any one-second window of real time
// (a sliding log per key), answering 429 with Retry-After in whole seconds.
import type { RealNow } from '../clock/clock.js';
import { ApiError, Errors } from './errors.js';

const WINDOW_MS = 1000;

export class RateLimiter {
  private readonly windows = new Map<string, number[]>();

  constructor(private readonly realNow: RealNow) {}

  /** Count one request for `key`; throws 429 when `limit` requests were already made this second. */
  take(key: string, limit: number): void {
    if (limit <= 0) return;
    const now = this.realNow();
    let stamps = this.windows.get(key);
    if (!stamps) {
      stamps = [];
      this.windows.set(key, stamps);
    }
    while (stamps.length && stamps[0] <= now - WINDOW_MS) stamps.shift();
    if (stamps.length >= limit) {
      const retryAfter = Math.max(1, Math.ceil((stamps[0] + WINDOW_MS - now) / 1000));
      throw new ApiError(Errors.rateLimited, {
        message: Errors.rateLimited.message.replace('{limit}', String(limit)),
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
    stamps.push(now);
  }

  reset(): void {
    this.windows.clear();
  }
}
