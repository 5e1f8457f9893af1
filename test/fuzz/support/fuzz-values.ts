/**
 * The value generators the fuzzers' shapes are built from: junk of every JSON type, and valid
 * values near their edges with an invalid one now and then.
 */
import fc from 'fast-check';
import { INT32_MAX } from '../../../lib/spec/read';

/** Values of every JSON type and the numbers validators trip on (NaN and ±Infinity never reach them from JSON, but do from code). */
export const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -0, -1, 1.5, 1e300, -1e300, INT32_MAX, INT32_MAX + 1, Number.MAX_SAFE_INTEGER, 2 ** 63, NaN, Infinity, -Infinity),
  fc.constantFrom('', ' ', '0', '-1', '10%', '100%', 'NaN', 'true', '1e2', '\u0000', '５', '{}', '[]', 'a:b', '%', '%%', '\ud800'),
  fc.string({ maxLength: 16 }),
  fc.integer(),
  fc.double(),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null)), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null)), { maxKeys: 3 }),
  fc.constant(undefined),
);

/** Usually `valid`, now and then junk of any type (rare enough that about one manifest in five is valid). */
export function mostly<T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: valid, weight: 40 }, { arbitrary: junk, weight: 1 });
}

/** One of `valid` usually, one of `invalid` now and then. */
export function pick<T>(valid: readonly T[], invalid: readonly T[]): fc.Arbitrary<T> {
  if (invalid.length === 0) return fc.constantFrom(...valid);
  return fc.oneof({ arbitrary: fc.constantFrom(...valid), weight: 40 }, { arbitrary: fc.constantFrom(...invalid), weight: 1 });
}

/** Absent (undefined) about a third of the time. */
export function maybe<T>(value: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.option(value, { nil: undefined, freq: 3 });
}

/** An integer in min..max, often at its edges, now and then just beyond them. */
export function edgyInt(min: number, max: number): fc.Arbitrary<number> {
  return fc.oneof({ arbitrary: fc.integer({ min, max }), weight: 30 }, { arbitrary: fc.constantFrom(min, max), weight: 9 }, { arbitrary: fc.constantFrom(min - 1, max + 1), weight: 1 });
}

/** A DNS label: of 2–16 characters mostly, the edges (1 and 47) now and then, a malformed or too long one rarely. */
export const dnsLabel = fc.oneof(
  { arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,14}[a-z0-9]$/), weight: 36 },
  { arbitrary: fc.constantFrom('a', 'llm', 'a'.repeat(47)), weight: 4 },
  { arbitrary: fc.constantFrom('a'.repeat(48), 'a'.repeat(64), 'Upper', '-a', 'a-', '1a', 'a.b', 'a_b', ''), weight: 1 },
);
