/**
 * Ray Serve's capacity rounding (`get_capacity_adjusted_num_replicas` in
 * `ray/serve/_private/utils.py`), reproduced exactly for the values rayshift sends.
 */

/**
 * Replicas Serve targets for `numReplicas` at `targetCapacity` percent: unchanged for null or 100,
 * 0 for capacity 0 or 0 replicas, otherwise `max(1, ROUND_HALF_UP(n × tc / 100))`
 * (3 at 50 → 2, 3 at 20 → 1, 4 at 10 → 1). Applies to `num_replicas` and to the autoscaling
 * `min_replicas`, `max_replicas` and `initial_replicas`.
 */
export function capacityAdjustedReplicas(numReplicas: number, targetCapacity: number | null | undefined): number {
  if (!Number.isInteger(numReplicas) || numReplicas < 0) {
    throw new RangeError(`numReplicas must be a non-negative integer; got ${numReplicas}`);
  }
  if (targetCapacity === null || targetCapacity === undefined || targetCapacity === 100) return numReplicas;
  if (!Number.isFinite(targetCapacity) || targetCapacity < 0 || targetCapacity > 100) {
    throw new RangeError(`targetCapacity must be between 0 and 100 or null; got ${targetCapacity}`);
  }
  if (targetCapacity === 0 || numReplicas === 0) return 0;
  // Python multiplies the two numbers as floats and rounds the exact decimal value of that
  // product / 100 half up. `x` is the same IEEE product; `100 * r + 50` is an exact integer, so
  // the comparisons below decide the half-up rounding without float error.
  const x = numReplicas * targetCapacity;
  let r = Math.floor(x / 100);
  if (100 * r > x) r -= 1;
  if (100 * (r + 1) <= x) r += 1;
  if (x >= 100 * r + 50) r += 1;
  return Math.max(1, r);
}
