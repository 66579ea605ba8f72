// Calendar dates are UTC: day arithmetic (date-fns in the UTC context, so a server in a zone with
// daylight saving still adds whole UTC days) and the YYYY-MM-DD check (ajv-formats' `date`).
import { describe, expect, it } from '@jest/globals';
import { addDays, calendarDate, endOfCalendarDate, isCalendarDate, startOfCalendarDate, startOfNextDay } from '../src/domain/dates.js';

describe('calendar dates', () => {
  it('add whole UTC days and find UTC day bounds on the day US daylight saving starts', () => {
    const before = Date.parse('2026-03-08T03:30:00Z');
    expect(calendarDate(before)).toBe('2026-03-08');
    expect(addDays(before, 1) - before).toBe(86_400_000);
    expect(calendarDate(addDays(before, 30))).toBe('2026-04-07');
    expect(startOfNextDay(before)).toBe(Date.parse('2026-03-09T00:00:00Z'));
    expect(startOfCalendarDate('2026-03-08')).toBe(Date.parse('2026-03-08T00:00:00Z'));
    expect(endOfCalendarDate('2026-03-08')).toBe(Date.parse('2026-03-08T23:59:59.999Z'));
  });

  it('accept only YYYY-MM-DD naming a day that exists', () => {
    expect(['2024-02-29', '2026-12-31', '2000-02-29'].map(isCalendarDate)).toEqual([true, true, true]);
    expect(['2023-02-29', '2026-02-30', '1900-02-29', '2026-13-01', '2026-1-01', '2026-01-01T00:00:00Z', ''].map(isCalendarDate))
      .toEqual([false, false, false, false, false, false, false]);
  });
});
