/** JSON helpers of the raw overlays: RFC 7386 merge patch, and the residue of a value outside a typed shape. */
import { JsonObject, isObject } from '../../spec/read';

/** Applies an RFC 7386 JSON merge patch: objects merge recursively, `null` removes a key, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/**
 * The typed part of an object: `true` for a field that a typed message carries whole, a nested
 * shape for a field whose own fields (for a list, its items' fields) are typed one by one.
 */
export type TypedShape = { readonly [key: string]: true | TypedShape };

/** What of `value` a typed message with `shape` cannot carry (undefined when nothing; a typed list leaves none). */
export function residue(value: unknown, shape: TypedShape): JsonObject | undefined {
  if (!isObject(value)) return undefined;
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    const typed = shape[key];
    if (typed === undefined) out[key] = structuredClone(v);
    else if (typed !== true) {
      const rest = residue(v, typed);
      if (rest) out[key] = rest;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
