// Owns reading a duration such as `90s`, `15m`, `2h`, `31d` or `1d12h` as seconds: one rule for the
// command line (`clock advance 31d`) and the test client (`control.clock.advance('31d')`).

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** A duration that cannot move a clock forward: the message says what is accepted. */
export class DurationError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

/**
 * `90s`, `15m`, `2h`, `30d`, or a sum of them (`1d12h`) -> seconds (at least 1). A number is taken as
 * seconds already (a positive, finite one). Anything else throws a DurationError naming the input.
 */
export function parseDuration(raw: string | number): number {
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw) || raw <= 0) throw new DurationError(`${raw} seconds does not move the clock forward: give a positive number of seconds`);
    return raw;
  }
  const parts = /^(\d+[smhd])+$/.test(raw) ? raw.match(/\d+[smhd]/g)! : null;
  if (!parts) throw new DurationError(`"${raw}" is not a duration: use a number and a unit, e.g. 90s, 15m, 2h, 30d (or 1d12h)`);
  const seconds = parts.reduce((sum, part) => sum + Number(part.slice(0, -1)) * UNIT_SECONDS[part.slice(-1)], 0);
  if (seconds <= 0) throw new DurationError(`"${raw}" is zero: the clock moves forward by at least 1s`);
  if (!Number.isSafeInteger(seconds)) throw new DurationError(`"${raw}" is too long to count in seconds`);
  return seconds;
}
