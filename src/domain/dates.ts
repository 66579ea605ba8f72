// Owns calendar dates (YYYY-MM-DD, always UTC) shared by the domain, fixtures, webhooks and OCR: the
// check that a string names a real day, and day arithmetic on account-clock instants. date-fns does the
// arithmetic in the UTC context (@date-fns/utc), so a server in a time zone with daylight saving still
// adds whole UTC days; ajv-formats does the check, the same rule the OpenAPI validator applies to
// `format: date`. Durations on the clock (TTLs, settlement delays) stay plain milliseconds.
// UTCDateMini, not the package root's UTCDate: UTCDate's module makes three Intl.DateTimeFormat at
// load, which starts ICU (about 15 ms and several MB of memory at every start) for formatting the
// sandbox never asks of it. Arithmetic needs only the UTC getters and setters, which the mini class has.
import { UTCDateMini } from '@date-fns/utc/date/mini';
// One module per function: the package root imports every date-fns function (seconds of start time),
// and formatISO rather than format, which loads the locale machinery (half a second more).
import { addDays as addDaysIn } from 'date-fns/addDays';
import { endOfDay } from 'date-fns/endOfDay';
import { formatISO } from 'date-fns/formatISO';
import { parseISO } from 'date-fns/parseISO';
import { startOfDay } from 'date-fns/startOfDay';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { DAY_MS, MINUTE_MS } from '../clock/durations.js';

type Instant = number | Date;

/** date-fns's `in` context: values read and written as UTC (what @date-fns/utc's own `utc` does, with the mini class). */
const utc = (value: Instant | string) => new UTCDateMini(+new Date(value));

/** True for YYYY-MM-DD naming a day that exists (2024-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  return DATE_FORMAT.validate(value);
}

/** True for an ISO 8601 date or date-time (offset optional): ajv-formats' `date` and `iso-date-time`. */
export function isDateOrDateTime(value: string): boolean {
  return DATE_FORMAT.validate(value) || DATE_TIME_FORMAT.validate(value);
}

type FormatCheck = { validate: (value: string) => boolean };
const DATE_FORMAT = fullFormats.date as FormatCheck;
const DATE_TIME_FORMAT = fullFormats['iso-date-time'] as FormatCheck;

/** The UTC calendar date of an instant. */
export function calendarDate(at: Instant): string {
  return formatISO(at, { representation: 'date', in: utc });
}

/** 00:00:00.000 UTC of a calendar date, in epoch milliseconds. */
export function startOfCalendarDate(date: string): number {
  return parseISO(date, { in: utc }).getTime();
}

/** 23:59:59.999 UTC of a calendar date, in epoch milliseconds. */
export function endOfCalendarDate(date: string): number {
  return endOfDay(parseISO(date, { in: utc })).getTime();
}

/** The instant `days` whole UTC days after `at`, in epoch milliseconds. */
export function addDays(at: Instant, days: number): number {
  return addDaysIn(at, days, { in: utc }).getTime();
}

/** 00:00 UTC of the day after the one `at` falls in, in epoch milliseconds. */
export function startOfNextDay(at: Instant): number {
  return startOfDay(addDaysIn(at, 1, { in: utc })).getTime();
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
  if (m[4] === undefined) return Date.UTC(year, month - 1, day) + (endOfDay ? DAY_MS - 1 : 0);
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  const offsetHours = Number(m[10] ?? 0);
  const offsetMinutes = Number(m[11] ?? 0);
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const millis = Math.floor(Number(`0.${m[7] ?? '0'}`) * 1000);
  const offset = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * MINUTE_MS;
  return Date.UTC(year, month - 1, day, hour, minute, second, millis) - offset;
}
