/**
 * Shared checks and arbitraries of the validator property tests (properties-*.test.ts): the
 * well-formed-finding check, random values of every type, optional fields and the integer-range oracle.
 */
import fc from 'fast-check';
import { Problem, ValidationResult } from '../../../lib/spec';

export const RUNS = 2000;

/** A finding is located at `metadata.…` or `spec.…` (or `spec` itself when the spec is missing) and explained. */
export function expectWellFormed(result: ValidationResult): void {
  expect(Array.isArray(result.errors)).toBe(true);
  expect(Array.isArray(result.warnings)).toBe(true);
  const check = (p: Problem, severity: string) => {
    expect(typeof p.path).toBe('string');
    // `apiVersion`: an RBG release that does not serve it, or deprecates it.
    expect(p.path === 'spec' || p.path === 'apiVersion' || /^(metadata|spec)\.\S/.test(p.path)).toBe(true);
    expect(typeof p.message).toBe('string');
    expect(p.message.trim().length).toBeGreaterThan(0);
    expect(p.severity).toBe(severity);
  };
  result.errors.forEach((p) => check(p, 'error'));
  result.warnings.forEach((p) => check(p, 'warning'));
}

/** Values of every JSON type and then some (NaN, ±Infinity, -0, undefined, nested objects). */
export const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -300, max: 300 }),
  fc.double(),
  fc.string({ maxLength: 12 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 3 }),
  fc.constantFrom('10%', '100', '', 'istio', '1e2', ' 5 ', 'NaN'),
);

/** An optional field: absent (undefined) or one of `values`. */
export function optional<T>(values: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.option(values, { nil: undefined, freq: 5 });
}

/** `v` is an integer from `min` to `max`. */
export function intIn(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}
