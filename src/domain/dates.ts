// Owns calendar-date checks shared by the domain and OCR: YYYY-MM-DD strings naming a real UTC day.

/** True for YYYY-MM-DD naming a day that exists (2024-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}
