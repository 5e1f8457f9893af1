/**
 * RBG's own coordinated rolling step (`calculateNextRollingTarget`, after #308), ported for
 * `plan()` of groups run by the upstream controller and as the yardstick for the parallel rounds.
 * Only the slowest role advances per round. Ties between equal progress sort the larger role as
 * slowest as upstream does, then by name (upstream leaves that order to Go's map iteration).
 */
import type { RbgRelease } from '../spec/rbg-releases';
import { coordinationUpdatedReplicasBound } from './rbg-bound';
import { progressOf, type RbgRoleState } from './rbg-roles';

/** Upstream's (fastest, slowest) pair over roles with desired > 0; undefined with fewer than two such roles. */
export function fastestAndSlowestRole(roles: readonly RbgRoleState[]): { fastest: RbgRoleState; slowest: RbgRoleState } | undefined {
  const coordinated = roles.filter((r) => r.desired > 0);
  if (coordinated.length <= 1) return undefined;
  const sorted = [...coordinated].sort((x, y) => {
    const px = progressOf(x);
    const py = progressOf(y);
    if (Math.abs(px - py) > 1e-6) return px - py;
    if (x.desired !== y.desired) return y.desired - x.desired;
    return x.name < y.name ? -1 : x.name > y.name ? 1 : 0;
  });
  return { fastest: sorted[sorted.length - 1], slowest: sorted[0] };
}

/**
 * Upstream's next rolling target (updated replicas) per role: every role keeps its updated count
 * except the slowest, which moves to `min(U + step, upper + 1)`. Undefined when not coordinated.
 * `release` picks the step's rules: a step that works out to 0 advances the slowest role by one
 * while it has replicas left to update only from v0.8.0-alpha.5 (rolebasedgroup_controller.go:1415-1417);
 * v0.6.0 (:1033-1037) and v0.7.0 (:1310-1315) keep it at 0 unless the fastest role is all ready (seen
 * on v0.7.0's real controller: prefill 5, decode 3 at maxSkew 20 %, partition 2 written again where
 * the v0.8 rule gives 1).
 */
export function upstreamRollingTargets(maxSkewPercent: number, roles: readonly RbgRoleState[], release: RbgRelease = 'v0.8'): Map<string, number> | undefined {
  const pair = fastestAndSlowestRole(roles);
  if (pair === undefined) return undefined;
  const { fastest, slowest } = pair;
  const targets = new Map<string, number>();
  for (const r of roles) if (r.desired > 0) targets.set(r.name, r.updatedReplicas);
  const maxSkewAbs = Math.max(1, Math.ceil((maxSkewPercent * slowest.desired) / 100));
  const [lower, upper] = coordinationUpdatedReplicasBound(maxSkewPercent, fastest.updatedReplicas, fastest.desired, slowest.desired);
  const balance = (lower + upper + 1) >> 1;
  let step = Math.max(Math.max(balance - slowest.updatedReplicas, 0), maxSkewAbs >> 1);
  if (release === 'v0.8' && step === 0 && slowest.updatedReplicas < slowest.desired) step = 1;
  if (fastest.readyReplicas === fastest.desired) step = Math.max(step, 1);
  targets.set(slowest.name, Math.min(slowest.updatedReplicas + step, upper + 1));
  return targets;
}

/** Upstream's partition for a role: `max(desired − target, user partition)`. */
export function upstreamPartition(role: RbgRoleState, target: number): number {
  return Math.min(role.desired, Math.max(role.desired - target, role.partition, 0));
}
