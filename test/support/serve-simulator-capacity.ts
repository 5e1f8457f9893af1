/**
 * Ray's capacity rounding for the TEST-ONLY Serve simulator (serve-simulator.ts): how a
 * `target_capacity` scales a deployment's replica count. It is the simulator's own rendering of
 * Ray's Python, deliberately not of rayshift's `lib/runtime/serve/capacity.ts` (the two must be able
 * to disagree; test/runtime/serve-capacity-ray.test.ts holds both to Ray's table), so nothing here
 * imports from lib/.
 */

/**
 * Ray's `get_capacity_adjusted_num_replicas` (ray/serve/_private/utils.py). Python multiplies
 * `n * tc` as floats, turns that product into an exact `Decimal`, divides by 100 and rounds half
 * up. Here the product is taken apart into its exact binary fraction `m / 2^k`, and half-up rounding
 * of `m / (100 · 2^k)` is `floor((2m + 100 · 2^k) / (200 · 2^k))` in BigInt; at least 1 unless the
 * capacity or the count is 0.
 */
export function simulatedCapacityAdjusted(n: number, tc: number | null): number {
  if (tc === null || tc === 100) return n;
  if (tc === 0 || n === 0) return 0;
  const { m, k } = exactBinaryFraction(n * tc);
  const scale = 1n << k;
  // BigInt division truncates, which is floor for these non-negative operands.
  const rounded = (2n * m + 100n * scale) / (200n * scale);
  return Math.max(1, Number(rounded));
}

/** A finite non-negative double as the exact fraction `m / 2^k` (doubling a double is exact). */
function exactBinaryFraction(x: number): { m: bigint; k: bigint } {
  let v = x;
  let k = 0n;
  while (!Number.isInteger(v)) {
    v *= 2;
    k += 1n;
  }
  return { m: BigInt(v), k };
}
