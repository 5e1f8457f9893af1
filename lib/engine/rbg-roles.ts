/**
 * The engine's normalized view of the roles of a RoleBasedGroup under one coordinated
 * rolling-update rule: plain counts, every percent already resolved by `lib/spec`.
 */

/** One coordinated role as observed from its workload's status and spec. */
export interface RbgRoleState {
  /** Role name. */
  readonly name: string;
  /** `spec.replicas`. Roles with 0 replicas are not coordinated (as in RBG). */
  readonly desired: number;
  /** `status.updatedReplicas`: replicas on the new revision, ready or not. */
  readonly updatedReplicas: number;
  /** `status.readyReplicas`. */
  readonly readyReplicas: number;
  /** Replicas allowed to be unavailable at once (count). */
  readonly maxUnavailable: number;
  /** The user's partition (count kept on the old revision); the rollout never goes below it. */
  readonly partition: number;
  /** The partition currently written on the workload for this revision, if known; never raised by a round. */
  readonly currentPartition?: number;
}

/** Throws a `RangeError` naming the field, value and range when maxSkew or a role count is invalid. */
export function checkRbgInput(maxSkewPercent: number, roles: readonly RbgRoleState[]): void {
  if (!Number.isInteger(maxSkewPercent) || maxSkewPercent < 0 || maxSkewPercent > 100) {
    throw new RangeError(`maxSkewPercent is ${maxSkewPercent}; allowed: an integer 0–100`);
  }
  for (const r of roles) {
    for (const field of ['desired', 'updatedReplicas', 'readyReplicas', 'maxUnavailable', 'partition'] as const) {
      const v = r[field];
      if (!Number.isInteger(v) || v < 0) throw new RangeError(`roles[${r.name}].${field} is ${v}; allowed: an integer ≥ 0`);
    }
  }
}

/** Fraction of the role on the new revision (`updated / desired`, as float64). */
export function progressOf(r: Pick<RbgRoleState, 'desired' | 'updatedReplicas'>): number {
  return r.updatedReplicas / r.desired;
}

/** Largest minus smallest progress over roles with desired > 0, in percent (0 for fewer than two roles). */
export function progressSkewPercent(roles: readonly Pick<RbgRoleState, 'desired' | 'updatedReplicas'>[]): number {
  let min = Infinity;
  let max = -Infinity;
  for (const r of roles) {
    if (r.desired === 0) continue;
    const p = progressOf(r);
    if (p < min) min = p;
    if (p > max) max = p;
  }
  return max > min ? (max - min) * 100 : 0;
}
