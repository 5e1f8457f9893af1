/**
 * Type guards for reading untrusted input (YAML documents from the CLI, random option sets in
 * property tests) without throwing: validators use them instead of casts.
 */

/** A JSON object (not null, not an array). */
export type JsonObject = { [key: string]: unknown };

/** True for a plain JSON object. */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object at `value`, or an empty object when it is anything else. */
export function asObject(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

/** The array at `value`, or an empty array when it is anything else. */
export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** True for a finite integer number. */
export function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

/** Largest value of Kubernetes' int32 fields (replicas, seconds). */
export const INT32_MAX = 2_147_483_647;
