// Owns the per-key rate limit: at most N requests in any one-second window of real time
// (a sliding log per key), answering 429 with Retry-After in whole seconds. A key idle for a whole
// window has nothing left to count: its bucket is dropped, so the buckets do not grow with keys seen.
import type { RealNow } from '../clock/clock.js';
import { LIMITS } from '../limits.js';
import { ApiError, Errors } from '../errors.js';
import { howToSet } from '../settings.js';

const WINDOW_MS = LIMITS.rateLimitWindowMs;

/**
 * The 429's message: the limit, and how to switch it off. The default is the real service's 5 per
 * second, which a test suite's first burst of requests meets at once: the answer says what to change.
 */
export function rateLimitMessage(limit: number): string {
  return `${Errors.rateLimited.message.replace('{limit}', String(limit))} The real service allows 5; a sandbox for tests can switch the limit off with ${howToSet('rateLimit', 0)} (a partner created with its own rate_limit keeps that one).`;
}

export class RateLimiter {
  private readonly windows = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(private readonly realNow: RealNow) {}

  /** Buckets held (keys seen within the last window, plus at most one window of idle ones). */
  get size(): number {
    return this.windows.size;
  }

  /** Count one request for `key`; throws 429 when `limit` requests were already made this second. */
  take(key: string, limit: number): void {
    if (limit <= 0) return;
    const now = this.realNow();
    this.sweep(now);
    let stamps = this.windows.get(key);
    if (!stamps) {
      stamps = [];
      this.windows.set(key, stamps);
    }
    while (stamps.length && stamps[0] <= now - WINDOW_MS) stamps.shift();
    if (stamps.length >= limit) {
      const retryAfter = Math.max(1, Math.ceil((stamps[0] + WINDOW_MS - now) / 1000));
      throw new ApiError(Errors.rateLimited, {
        message: rateLimitMessage(limit),
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
    stamps.push(now);
  }

  /** At most once per window: drop the buckets whose last request left the window (O(buckets), amortised O(1)). */
  private sweep(now: number): void {
    if (now - this.lastSweep < WINDOW_MS) return;
    this.lastSweep = now;
    for (const [key, stamps] of this.windows) {
      if (!stamps.length || stamps[stamps.length - 1] <= now - WINDOW_MS) this.windows.delete(key);
    }
  }

  reset(): void {
    this.windows.clear();
  }
}
