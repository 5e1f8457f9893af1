/**
 * RBG's skew bound (`calculateCoordinationUpdatedReplicasBound` in sgl-project/rbg
 * `internal/controller/workloads/rolebasedgroup_controller.go`), reproduced exactly: int64 math
 * (exact here for values below 2^53), float64 division and Go `math.Round`.
 */

/** Go's `math.Round`: to the nearest integer, halves away from zero (JS `Math.round` sends −2.5 to −2). */
export function goRound(x: number): number {
  return (x < 0 ? -Math.round(-x) : Math.round(x)) + 0;
}

/**
 * Bounds `[lower, upper]` on the updated replicas `x` of a role with `requestDesired` replicas so
 * that `|refUpdated/refDesired − x/requestDesired| ≤ maxSkewPercent/100`:
 * `lower = round(max(100ad − sbd, 0) / 100b)`, `upper = round((100ad + sbd) / 100b)`; `b = 0` gives `[0, 0]`.
 */
export function coordinationUpdatedReplicasBound(
  maxSkewPercent: number,
  refUpdated: number,
  refDesired: number,
  requestDesired: number,
): readonly [lower: number, upper: number] {
  if (refDesired === 0) return [0, 0];
  const a = refUpdated;
  const b = refDesired;
  const d = requestDesired;
  const s = maxSkewPercent;
  return [goRound(Math.max(100 * a * d - s * b * d, 0) / (100 * b)), goRound(Math.max(s * b * d + 100 * a * d, 0) / (100 * b))];
}
