// Owns one account's virtual clock: real time plus an offset that only moves forward.
// Every timestamp the API writes for an account comes from here.

export interface ClockData {
  offset_ms: number;
}

export type RealNow = () => number;

export class AccountClock {
  /** The millisecond iso() last formatted, and its text. */
  private isoMs = Number.NaN;
  private isoText = '';

  /**
   * `beforeMove`: told before the offset changes, with the offset it had (a clock advance is a write:
   * the account checks it may write, keeps the way back for a rollback, and notes it for the data file).
   */
  constructor(private readonly data: ClockData, private readonly realNow: RealNow, private readonly beforeMove: (previousOffsetMs: number) => void = () => undefined) {}

  nowMs(): number {
    return this.realNow() + this.data.offset_ms;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  iso(): string {
    const ms = this.nowMs();
    // A request usually stamps more than one object in the same millisecond (a customer and its
    // event): the text is made once per millisecond rather than once per call.
    if (ms !== this.isoMs) {
      this.isoMs = ms;
      this.isoText = new Date(ms).toISOString();
    }
    return this.isoText;
  }

  /** Today on the account clock, YYYY-MM-DD (UTC). */
  today(): string {
    return this.iso().slice(0, 10);
  }

  get offsetMs(): number {
    return this.data.offset_ms;
  }

  /** Move the clock so that it reads `targetMs` now; never backwards. */
  moveTo(targetMs: number): void {
    this.raiseOffsetTo(this.data.offset_ms + targetMs - this.nowMs());
  }

  /**
   * Raise the offset to `offsetMs` (never lower it): an advance by a number of seconds moves the
   * clock by exactly that much, whatever real time passed while it ran due work.
   */
  raiseOffsetTo(offsetMs: number): void {
    if (offsetMs > this.data.offset_ms) {
      this.beforeMove(this.data.offset_ms);
      this.data.offset_ms = offsetMs;
    }
  }

  /**
   * Read `ms` earlier. Only for replaying a seeded history (fixtures), which then plays forward to
   * where the clock stood; everything else moves the clock forward only.
   */
  rewind(ms: number): void {
    this.beforeMove(this.data.offset_ms);
    this.data.offset_ms -= ms;
  }
}
