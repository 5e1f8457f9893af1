/**
 * Dry run of a RoleBasedGroup coordinated rolling update: rounds of `nextRbgRound` (or upstream's
 * one-role-at-a-time step) with every workload catching up at once (updated = target, all ready).
 */
import { RBG_PLAN_MAX_ROUNDS, zeroSkewRolloutProblem } from '../spec/rbg-rules';
import { progressSkewPercent, type RbgRoleState } from './rbg-roles';
import { nextRbgRound } from './rbg-rollout';
import { upstreamPartition, upstreamRollingTargets } from './rbg-upstream';

/** Which controller's rounds to plan: rayshift's parallel rounds or the upstream RBG controller's. */
export type RbgCoordination = 'parallel' | 'upstream';

/** A role to roll, with its resolved settings. */
export interface RbgPlanRole {
  readonly name: string;
  readonly replicas: number;
  /** Replicas kept on the old revision at the end (count). */
  readonly partition: number;
  /** Replicas allowed unavailable at once (count). */
  readonly maxUnavailable: number;
}

/** What to plan: a template change of every role of one coordinated rule. */
export interface RoleBasedGroupPlanInput {
  readonly kind: 'RoleBasedGroup';
  readonly name: string;
  readonly maxSkewPercent: number;
  readonly roles: readonly RbgPlanRole[];
  readonly coordination: RbgCoordination;
}

/** One round: updated replicas after it and the partitions written for it. */
export interface RbgPlanRound {
  readonly updated: Readonly<Record<string, number>>;
  readonly partition: Readonly<Record<string, number>>;
}

/** The rollout's rounds. */
export interface RoleBasedGroupPlan {
  readonly kind: 'RoleBasedGroup';
  readonly name: string;
  readonly coordination: RbgCoordination;
  readonly rounds: readonly RbgPlanRound[];
  /** Largest progress skew between two roles seen after any round, percent. */
  readonly maxSkewPercentObserved: number;
  /** Every role reached `replicas − partition`. */
  readonly complete: boolean;
}

/**
 * Plans the coordinated rollout of `input.roles` in at most `RBG_PLAN_MAX_ROUNDS` rounds. The one
 * rollout that could take more, maxSkew 0% over many replicas, is refused by the validators and here
 * at once (a RangeError naming the field, value and range); any other that would take more throws too.
 */
export function planRoleBasedGroup(input: RoleBasedGroupPlanInput): RoleBasedGroupPlan {
  const tooLong = zeroSkewRolloutProblem(input.maxSkewPercent, input.roles);
  if (tooLong) throw new RangeError(`maxSkewPercent of RoleBasedGroup ${input.name}: ${tooLong}`);
  let roles: RbgRoleState[] = input.roles.map((r) => ({
    name: r.name,
    desired: r.replicas,
    updatedReplicas: 0,
    readyReplicas: r.replicas,
    maxUnavailable: r.maxUnavailable,
    partition: r.partition,
    currentPartition: r.replicas,
  }));
  const rounds: RbgPlanRound[] = [];
  let maxSkew = 0;
  // One pass more than the limit: the pass after the last round is the one that sees nothing change.
  for (let i = 0; i <= RBG_PLAN_MAX_ROUNDS; i++) {
    const partitions = input.coordination === 'parallel' ? parallelPartitions(input.maxSkewPercent, roles) : upstreamPartitions(input.maxSkewPercent, roles);
    const next = roles.map((r) => ({ ...r, updatedReplicas: r.desired - partitions[r.name], currentPartition: partitions[r.name] }));
    if (next.every((r, k) => r.updatedReplicas === roles[k].updatedReplicas)) {
      return {
        kind: 'RoleBasedGroup',
        name: input.name,
        coordination: input.coordination,
        rounds,
        maxSkewPercentObserved: maxSkew,
        complete: roles.every((r) => r.updatedReplicas >= r.desired - Math.min(r.partition, r.desired)),
      };
    }
    roles = next;
    maxSkew = Math.max(maxSkew, progressSkewPercent(roles));
    rounds.push({ updated: Object.fromEntries(roles.map((r) => [r.name, r.updatedReplicas])), partition: partitions });
  }
  throw new RangeError(`plan of RoleBasedGroup ${input.name} did not finish within ${RBG_PLAN_MAX_ROUNDS} rounds (maxSkewPercent ${input.maxSkewPercent}); allowed: rollouts of at most ${RBG_PLAN_MAX_ROUNDS} rounds`);
}

function parallelPartitions(maxSkewPercent: number, roles: readonly RbgRoleState[]): Record<string, number> {
  return Object.fromEntries(nextRbgRound(maxSkewPercent, roles).roles.map((r) => [r.name, r.partition]));
}

function upstreamPartitions(maxSkewPercent: number, roles: readonly RbgRoleState[]): Record<string, number> {
  const targets = upstreamRollingTargets(maxSkewPercent, roles);
  return Object.fromEntries(roles.map((r) => [r.name, upstreamPartition(r, targets?.get(r.name) ?? r.desired)]));
}
