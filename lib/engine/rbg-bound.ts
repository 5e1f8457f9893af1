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

/**
 * The smallest largest skew, percent, that any rollout of these roles can keep when replicas
 * become updated one at a time (as they do: each workload updates its own replicas, in an order no
 * coordinator controls within a round). Each role goes from 0 to `replicas − partition` updated
 * replicas; the skew of a state is the largest minus the smallest `updated / replicas`
 * (`progressSkewPercent`). A maxSkew below it cannot hold, whatever the rounds (`exceedsSkew`).
 *
 * Exact for two roles (up to 10 000 steps of the smaller one, a lower bound past that), a lower
 * bound for more (every pair must keep it: the largest pairwise value).
 * For a pair (a, b) a monotone path of single-replica steps keeps a skew ≤ B exactly when every step
 * of role b, from v to v + 1 updated, can be taken at some updated u of role a with both
 * |u/a − v/b| and |u/a − (v+1)/b| ≤ B (between two such steps, role a's own steps stay within B),
 * and the end state is within B; the best u is next to the midpoint a·(2v+1)/(2b).
 */
export function smallestAchievableSkewPercent(roles: readonly { readonly replicas: number; readonly partition: number }[]): number {
  const coordinated = roles.filter((r) => r.replicas > 0).map((r) => ({ desired: r.replicas, target: r.replicas - Math.min(Math.max(r.partition, 0), r.replicas) }));
  let bound = 0;
  for (let i = 0; i < coordinated.length; i++) {
    for (let j = i + 1; j < coordinated.length; j++) bound = Math.max(bound, pairBound(coordinated[i], coordinated[j]));
  }
  return bound * 100;
}

/** Most steps of the smaller role searched exactly; beyond them the pair's bound is the closed-form floor below. */
const EXACT_STEPS = 10_000;

/**
 * The exact smallest largest skew (a fraction) of two roles; rows over the role with fewer steps.
 * Past `EXACT_STEPS` steps it is a lower bound instead: a step of role b from v to v + 1 is never
 * within less than 1/(2·b) of both fractions, and the end state is where it is (with so many
 * replicas that floor is below 0.005%, so only maxSkew 0% can meet it).
 */
function pairBound(x: { desired: number; target: number }, y: { desired: number; target: number }): number {
  const [a, b] = x.target >= y.target ? [x, y] : [y, x];
  let bound = Math.abs(a.target / a.desired - b.target / b.desired);
  if (b.target > EXACT_STEPS) return Math.max(bound, 1 / (2 * b.desired));
  for (let v = 0; v < b.target; v++) {
    const mid = (a.desired * (2 * v + 1)) / (2 * b.desired);
    let best = Infinity;
    for (const u of [Math.floor(mid), Math.ceil(mid)]) {
      const at = Math.min(a.target, Math.max(0, u));
      best = Math.min(best, Math.max(Math.abs(at / a.desired - v / b.desired), Math.abs(at / a.desired - (v + 1) / b.desired)));
    }
    bound = Math.max(bound, best);
  }
  return bound;
}

/** Whether a skew (percent, from float64 progress fractions) exceeds `maxSkewPercent`, past the float noise of `k/n × 100`. */
export function exceedsSkew(skewPercent: number, maxSkewPercent: number): boolean {
  return skewPercent > maxSkewPercent + 1e-9;
}
