// Owns the lengths of time in milliseconds that the code adds to instants, in one place (calendar
// arithmetic, such as a month or a due date's day, lives in src/domain/dates.ts).
export const SECOND_MS = 1_000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
