// Owns the one rule every resource view follows (docs/gaps-and-choices.md, "Foundation"): a field the
// document lists is always present, and null when it was never set, so typed clients see one stable
// shape. Views that list their fields one by one from records typed `T | null` follow it by
// construction; views built from a list of field names use `withNulls`.

/** The listed fields of `source`, in that order, each null when missing (also in a record from an older data file). */
export function withNulls<K extends string>(source: object, keys: readonly K[]): Record<K, unknown> {
  const out = {} as Record<K, unknown>;
  for (const key of keys) out[key] = (source as Record<string, unknown>)[key] ?? null;
  return out;
}
