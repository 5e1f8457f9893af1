/**
 * One round of a coordinated RBG rollout in the tests, with every workload catching up at once:
 * either rayshift's parallel rounds or the port of RBG's own rolling targets. Returns the roles with
 * their new updated counts (and, for parallel rounds, partitions).
 */
import { nextRbgRound, upstreamPartition, upstreamRollingTargets, type RbgRoleState } from '../../lib/engine';

/** Which planner takes the round. */
export type RbgRoundPlanner = 'upstream' | 'parallel';

/** The roles after one round of `planner` at `maxSkew`. */
export function rbgRoundStep(planner: RbgRoundPlanner, maxSkew: number, roles: RbgRoleState[]): RbgRoleState[] {
  if (planner === 'parallel') {
    const round = nextRbgRound(maxSkew, roles);
    return roles.map((r, i) => ({ ...r, updatedReplicas: round.roles[i].target, currentPartition: round.roles[i].partition }));
  }
  const targets = upstreamRollingTargets(maxSkew, roles);
  return roles.map((r) => ({ ...r, updatedReplicas: r.desired - upstreamPartition(r, targets?.get(r.name) ?? r.desired) }));
}
