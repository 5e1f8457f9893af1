/**
 * JSON text that depends on a value, not on how it was written: object keys sorted at every level.
 * Synthesized strings use it so that the same props give the same bytes whatever order a user (or a
 * jsii language binding, which passes struct fields in its own order) wrote the keys in; hashes and
 * comparisons of objects read back from the API server (which sorts keys itself) use it too.
 */

/** Options of `canonicalJson`. */
export interface CanonicalJsonOptions {
  /** Leave out object members whose value is `null`, so an explicit null and an absent key are the same text. @default false */
  readonly omitNullMembers?: boolean;
}

/** `value` as JSON with object keys sorted (`undefined` members are left out, as `JSON.stringify` does). */
export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const members = Object.entries(v as Record<string, unknown>).filter(([, m]) => !(options.omitNullMembers && m === null));
    return Object.fromEntries(members.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  });
}
