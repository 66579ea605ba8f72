// Owns the reading of pagination query parameters (limit, after, before) for list handlers.
import type { PageQuery } from '../store/collection.js';

/** The answer of a list whose filters can match nothing. */
export const EMPTY_PAGE = { data: [], start_cursor: null, end_cursor: null, has_next_page: false, has_previous_page: false };

export function pageParams<T>(query: { limit?: number; after?: string; before?: string } | undefined): PageQuery<T> {
  return { limit: query?.limit, after: query?.after || undefined, before: query?.before || undefined };
}

/** A created_at window filter from RFC 3339 (or already parsed, in ms) bounds, inclusive; undefined when none is given. */
export function timeWindow(start: string | number | undefined, end: string | number | undefined): ((iso: string) => boolean) | undefined {
  if (start === undefined && end === undefined) return undefined;
  // No empty string reaches here: every window parameter's schema refuses it (format date-time or a pattern).
  const bound = (value: string | number | undefined, none: number) => (value === undefined ? none : typeof value === 'number' ? value : Date.parse(value));
  const from = bound(start, -Infinity);
  const to = bound(end, Infinity);
  return (iso) => {
    const t = Date.parse(iso);
    return t >= from && t <= to;
  };
}
