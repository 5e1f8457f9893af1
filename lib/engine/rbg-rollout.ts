/**
 * rayshift's coordinated rolling round for the roles of one RoleBasedGroup rule. It keeps RBG's
 * skew semantics — `|updated_a/desired_a − updated_b/desired_b| ≤ maxSkew` up to one replica of
 * granularity, the granularity being one replica of the smallest coordinated role (RBG's unit tests
 * allow `ceil(10000/desired)` basis points for the smallest role) — with deliberate differences:
 *
 * - every role that can advance does so in the same round (RBG advances only the slowest); each
 *   role may go up to `floor(desired_r · (updated_o/desired_o + maxSkew + 1/desired_min))` for every
 *   other role `o`, in exact integer arithmetic, and passes the check RBG's own unit test makes
 *   (float64, no epsilon; see `skewBound`). The bound is taken against the other roles'
 *   *current* updated counts, which only grow, so it holds whatever order the workloads catch up
 *   in, for any number of roles (RBG's `upper + 1` step compares the slowest role with the fastest
 *   only and can exceed its own bound with three roles: 4/5/5 at 10 % goes 0/1/0 → 0/1/2);
 * - the slowest role always advances by at least one replica (the allowance guarantees it);
 * - a role with more unavailable replicas (`desired − ready`) than its `maxUnavailable` is held,
 *   which also holds every other role within the bound of it (the KEP's "decode failing halts prefill");
 * - a round never raises a partition already written (`currentPartition`), so calling it again
 *   before the workloads catch up cannot flap partitions.
 *
 * Upstream's own step (`rbg-upstream.ts`) uses `coordinationUpdatedReplicasBound` and is kept for
 * groups that the upstream controller rolls.
 */
import { checkRbgInput, progressSkewPercent, type RbgRoleState } from './rbg-roles';

/** The round's decision for one role. */
export interface RbgRoleRound {
  readonly name: string;
  /** Replicas that will be on the new revision once the workload applies `partition`. */
  readonly target: number;
  /** Partition to write (replicas kept on the old revision). */
  readonly partition: number;
  /** Held because more than `maxUnavailable` replicas are unavailable. */
  readonly held: boolean;
  /** The role has reached `desired − partition(user)`. */
  readonly complete: boolean;
}

/** One coordinated round. */
export interface RbgRound {
  readonly roles: readonly RbgRoleRound[];
  /** Some role's target exceeds its updated replicas. */
  readonly advanced: boolean;
  /** Every role is complete. */
  readonly complete: boolean;
  /** Skew of the current updated replicas, percent. */
  readonly skewPercent: number;
}

/** Computes the next partitions of a coordinated rule from the roles' current state. */
export function nextRbgRound(maxSkewPercent: number, roles: readonly RbgRoleState[]): RbgRound {
  checkRbgInput(maxSkewPercent, roles);
  const coordinated = roles.filter((r) => r.desired > 0);
  const smallest = Math.min(...coordinated.map((r) => r.desired));
  let advanced = false;
  let complete = true;
  const out = roles.map((r): RbgRoleRound => {
    const userPartition = Math.min(r.partition, r.desired);
    const limit = r.desired - userPartition;
    const held = r.desired - r.readyReplicas > r.maxUnavailable;
    let step = r.updatedReplicas;
    if (!held && r.desired > 0) step = Math.min(limit, Math.max(step, skewBound(maxSkewPercent, r, coordinated, smallest)));
    let partition = Math.max(userPartition, r.desired - step);
    if (r.currentPartition !== undefined) partition = Math.max(userPartition, Math.min(partition, r.currentPartition));
    const target = r.desired - partition;
    if (target > r.updatedReplicas) advanced = true;
    const roleComplete = r.updatedReplicas >= limit;
    if (!roleComplete) complete = false;
    return { name: r.name, target, partition, held, complete: roleComplete };
  });
  return { roles: out, advanced, complete, skewPercent: progressSkewPercent(roles) };
}

/**
 * Largest updated count for `role` against every other coordinated role `o` (desired `d`,
 * updated `u`; `D` is the role's desired, `m` the smallest role's, `s` maxSkew in percent):
 * maxSkew plus one replica of the smallest role, `x/D ≤ u/d + s/100 + 1/m`, i.e.
 * `x = floor((100·u·D·m + s·d·D·m + 100·d·D) / (100·d·m))` in exact integer arithmetic (exact
 * while the products stay below 2^53); its own desired when it is alone.
 *
 * RBG's unit test accepts a state when `ceil(10000·(x/D − u/d)) ≤ B` basis points, computed in
 * float64 without epsilon, `B = max(1, 100·s) + ceil(10000/m)`. When `m` divides 10000 and
 * `s ≥ 1`, the bound above can land exactly on `B`, where that float64 check passes or fails by
 * rounding noise (5/16 − 6/25 computes to 0.07250000000000001: 726 > 725). Exactly there, and
 * only there, the check is evaluated as RBG computes it and one replica less is taken if it
 * fails. Below `B` the exact gap (at least `1/(D·d)` basis points) outweighs float64's error
 * (< 4e-12) for `D·d < 2^38`; float64 ratios and differences are monotone, so a count that passes
 * against the others' current counts passes against any larger ones: in whatever order the
 * workloads catch up, every state passes RBG's check.
 */
function skewBound(maxSkewPercent: number, role: RbgRoleState, coordinated: readonly RbgRoleState[], smallest: number): number {
  const D = role.desired;
  const checkBound = Math.max(1, 100 * maxSkewPercent) + Math.ceil(10000 / smallest);
  let bound = D;
  for (const other of coordinated) {
    if (other === role) continue;
    const d = other.desired;
    const u = other.updatedReplicas;
    let x = Math.floor((100 * u * D * smallest + maxSkewPercent * d * D * smallest + 100 * d * D) / (100 * d * smallest));
    if (10000 * (x * d - u * D) === checkBound * D * d && Math.ceil(10000 * (x / D - u / d)) > checkBound) x -= 1;
    if (x < bound) bound = x;
  }
  return bound;
}
