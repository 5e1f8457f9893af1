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

/**
 * `value` as JSON with object keys sorted (`undefined` members are left out, as `JSON.stringify` does).
 * Written out directly rather than through a `JSON.stringify` replacer that copies every object
 * sorted: the operator compares and hashes statuses and specs with it on every pass, and the copies
 * were most of that cost. The text is the replacer's to the byte, including its key order: a copy
 * made by `Object.fromEntries` lists integer-like keys first, ascending (the engine's own property
 * order), then the others sorted; hashes already stored (cluster spec hashes) depend on it.
 */
export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  return write(value, options.omitNullMembers === true) as string;
}

/** JSON text of `v`, or undefined where `JSON.stringify` leaves the member out (undefined, functions, symbols). */
function write(v: unknown, omitNull: boolean): string | undefined {
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON(): unknown }).toJSON();
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      break;
    case 'bigint':
      return JSON.stringify(v); // throws, as JSON.stringify does
    default:
      return undefined;
  }
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i > 0 ? ',' : '') + (write(v[i], omitNull) ?? 'null');
    return `${out}]`;
  }
  const o = v as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const k of sortedKeys(o)) {
    const m = o[k];
    if (omitNull && m === null) continue;
    const text = write(m, omitNull);
    if (text === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${text}`;
    first = false;
  }
  return `${out}}`;
}

/** Keys of `o` in the order of an object built from its entries sorted by key: array indices ascending, then the rest sorted. */
function sortedKeys(o: Record<string, unknown>): string[] {
  const keys = Object.keys(o).sort();
  const indices = keys.filter(isArrayIndex);
  if (indices.length === 0) return keys;
  return [...indices.sort((a, b) => Number(a) - Number(b)), ...keys.filter((k) => !isArrayIndex(k))];
}

/** True for a key JavaScript orders as an integer (an array index: 0 … 2^32 − 2, written canonically). */
function isArrayIndex(k: string): boolean {
  return /^(0|[1-9][0-9]*)$/.test(k) && Number(k) < 4294967295;
}
