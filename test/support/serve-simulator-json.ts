/**
 * The JSON values the TEST-ONLY Serve simulator (serve-simulator.ts) stores and answers: request
 * bodies stay plain parsed JSON, as Ray's dashboard keeps them, instead of typed copies.
 */

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** True for a JSON object (not null, not an array). */
export function isObj(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
