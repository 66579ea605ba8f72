// Owns calendar-date checks shared by the domain and OCR: YYYY-MM-DD strings naming a real UTC day.

/** True for YYYY-MM-DD naming a day that exists (2024-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

// ISO 8601 extended forms: a date, or a date-time with or without seconds, fraction and offset.
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

/**
 * Milliseconds since the epoch of an ISO 8601 date or date-time, undefined when it names no real
 * instant (2026-02-30, 25:00). A date-time without an offset is UTC (the spec's reading, and never
 * the process's time zone); a bare date is its first millisecond, or its last with `endOfDay`.
 */
export function parseIsoInstant(value: string, endOfDay = false): number | undefined {
  const m = ISO_INSTANT.exec(value);
  if (!m || !isCalendarDate(`${m[1]}-${m[2]}-${m[3]}`)) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (m[4] === undefined) return Date.UTC(year, month - 1, day) + (endOfDay ? 86_400_000 - 1 : 0);
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  const offsetHours = Number(m[10] ?? 0);
  const offsetMinutes = Number(m[11] ?? 0);
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const millis = Math.floor(Number(`0.${m[7] ?? '0'}`) * 1000);
  const offset = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return Date.UTC(year, month - 1, day, hour, minute, second, millis) - offset;
}
