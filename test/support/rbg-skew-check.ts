/**
 * RBG's own check of coordinated rolling rounds, as its unit test computes it
 * (`Test_CalculateNextRollingTarget_WithNormalCases` in sgl-project/rbg
 * `internal/controller/workloads/rolebasedgroup_controller_test.go`, identical in v0.7.0 and
 * v0.8.0-alpha.5): float64 ratios, `math.Ceil`, no epsilon. JavaScript numbers are IEEE float64
 * and every operation below is a single rounded division, subtraction or product, so each result
 * is bit-for-bit Go's. Shared by the unit, parity and integration tests; never used by `lib/`, and
 * written from RBG's source alone: it imports nothing of rayshift, so the engine it checks is not
 * its own oracle.
 */
/** What the check reads of a role. */
export interface RbgCheckedRole {
  readonly name: string;
  readonly desired: number;
  readonly updatedReplicas: number;
}

/** `GetSkewAllowedBias`: the largest `ceil(10000.0 / replicas)` over the roles, in basis points. */
export function rbgSkewAllowedBias(roles: readonly Pick<RbgCheckedRole, 'desired'>[]): number {
  let bias = 0;
  for (const r of roles) bias = Math.max(bias, Math.ceil(10000.0 / r.desired));
  return bias;
}

/** `GetCurrentSkew`: `ceil(10000.0 · (fastUpdated/fastDesired − slowUpdated/slowDesired))`, basis points. */
export function rbgCurrentSkew(fastUpdated: number, slowUpdated: number, fastDesired: number, slowDesired: number): number {
  const fastRatio = fastUpdated / fastDesired;
  const slowRatio = slowUpdated / slowDesired;
  return Math.ceil(10000.0 * (fastRatio - slowRatio));
}

/**
 * `utils.ParseIntStrAsNonZero(intstr.FromString("<s>%"), 10000)`: maxSkew in basis points,
 * `ceil(s · 10000 / 100)` and at least 1 (so "0%" allows 1 basis point).
 */
export function rbgMaxSkewBasisPoints(maxSkewPercent: number): number {
  return Math.max(1, Math.ceil((maxSkewPercent * 10000) / 100));
}

/** The check's verdict on one state, with the numbers it compared (for failure messages). */
export interface RbgSkewVerdict {
  readonly ok: boolean;
  /** `GetCurrentSkew` of the fastest and slowest role, basis points. */
  readonly skew: number;
  /** `skewAllowedBias + maxSkew`, basis points. */
  readonly allowed: number;
}

/**
 * `getFastestAndSlowestRole`: the roles sorted by `updated / desired` ascending, ratios within 1e-6
 * counting as equal with the larger role first; the last is the fastest, the first the slowest.
 * Undefined for fewer than two roles (upstream returns two empty names). Upstream leaves the order
 * of equal ratio and size to Go's map iteration; the name decides here, which cannot change the
 * skew by more than the 1e-6 the tie allows.
 */
export function rbgFastestAndSlowest(roles: readonly RbgCheckedRole[]): { fastest: RbgCheckedRole; slowest: RbgCheckedRole } | undefined {
  if (roles.length <= 1) return undefined;
  const ratio = (r: RbgCheckedRole) => r.updatedReplicas / r.desired;
  const sorted = [...roles].sort((a, b) => {
    if (Math.abs(ratio(a) - ratio(b)) > 1e-6) return ratio(a) - ratio(b);
    return b.desired - a.desired || a.name.localeCompare(b.name);
  });
  return { fastest: sorted[sorted.length - 1], slowest: sorted[0] };
}

/**
 * `CheckSkewSatisfied` on the fastest and slowest role as `getFastestAndSlowestRole` picks them
 * (`rbgFastestAndSlowest`). The bias is computed over `biasRoles` (the test's `desiredReplicas`
 * map: every role of the case), `roles` by default.
 */
export function rbgSkewCheck(maxSkewPercent: number, roles: readonly RbgCheckedRole[], biasRoles: readonly Pick<RbgCheckedRole, 'desired'>[] = roles): RbgSkewVerdict {
  const allowed = rbgSkewAllowedBias(biasRoles) + rbgMaxSkewBasisPoints(maxSkewPercent);
  const pair = rbgFastestAndSlowest(roles);
  if (pair === undefined) return { ok: true, skew: 0, allowed };
  const skew = rbgCurrentSkew(pair.fastest.updatedReplicas, pair.slowest.updatedReplicas, pair.fastest.desired, pair.slowest.desired);
  return { ok: skew <= allowed, skew, allowed };
}
