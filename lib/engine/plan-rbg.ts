/**
 * Dry run of a RoleBasedGroup coordinated rolling update: rounds of `nextRbgRound` (or upstream's
 * one-role-at-a-time step) with every workload catching up at once (updated = target, all ready).
 */
import { RBG_PLAN_MAX_ROUNDS, zeroSkewRolloutProblem } from '../spec/rbg-rules';
import type { RoleShape } from '../spec/rbg-shape';
import type { RbgRelease } from '../spec/rbg-releases';
import { PlanPeak, PlanUsage, addUsage, NO_USAGE, scaleResources, usagePeaks } from './plan-cost';
import { smallestAchievableSkewPercent } from './rbg-bound';
import { progressSkewPercent, type RbgRoleState } from './rbg-roles';
import { nextRollbackPartitions } from './rbg-rollback';
import { nextRbgRound } from './rbg-rollout';
import { routerWeights, type RoutedRole } from './rbg-router-weight';
import { upstreamPartition, upstreamRollingTargets } from './rbg-upstream';

/**
 * Which rounds to plan: rayshift's parallel rounds (`parallel`), upstream RBG's step from a first
 * state with nothing updated (`upstream`, the yardstick of the round counts), or RBG v0.7.0's
 * controller as it runs (`controller`, what executor `rbg` does): its first partitions are
 * computed, in the same write as the new template, from role statuses its workloads have not yet
 * updated, which count every replica of the old revision as updated, so that round keeps only the
 * user's partitions and releases every other replica at once (observed against the real controller
 * in test/integration/cluster-rbg-coordinated.test.ts). Later rounds are upstream's step; with
 * every workload catching up at once none is needed.
 */
export type RbgCoordination = 'parallel' | 'upstream' | 'controller';

/** A role to roll, with its resolved settings. */
export interface RbgPlanRole {
  readonly name: string;
  readonly replicas: number;
  /** Replicas kept on the old revision at the end (count). */
  readonly partition: number;
  /** Replicas allowed unavailable at once (count). */
  readonly maxUnavailable: number;
  /** What one replica runs and the surge of its rolling update (`roleShape`): with it the plan counts Pods and accelerators. */
  readonly shape?: RoleShape;
}

/** What to plan: a template change of every role of one coordinated rule. */
export interface RoleBasedGroupPlanInput {
  readonly kind: 'RoleBasedGroup';
  readonly name: string;
  readonly maxSkewPercent: number;
  readonly roles: readonly RbgPlanRole[];
  readonly coordination: RbgCoordination;
  /**
   * Plan the way back too: the rollout's gate fails after this round (1-based) and a rayshift
   * executor returns every role to the revision before it (`rbg-rollback.ts`). Only with coordination
   * `parallel` (a rayshift executor's); a round past the last is the last.
   */
  readonly failAtRound?: number;
  /** The rule's router (`router` of the rule): with it every round shows the new release's route weight. @default no router */
  readonly router?: { readonly prefill: string; readonly decode: string };
}

/** One round: updated replicas after it and the partitions written for it. */
export interface RbgPlanRound {
  readonly updated: Readonly<Record<string, number>>;
  readonly partition: Readonly<Record<string, number>>;
  /**
   * Pods and accelerators of each role during the round, and of all of them: `replicas` plus the
   * surge replicas of a role the round moves (at most `maxSurge`, at most the replicas it moves),
   * times the Pods of a replica. Only when every role has a `shape`.
   */
  readonly usage?: { readonly roles: Readonly<Record<string, PlanUsage>>; readonly total: PlanUsage };
  /**
   * With a router: the new release's route weight once the round's replicas are ready
   * (`routerWeights`); 0 in every rollback round, written before the rollback's first partition.
   */
  readonly weight?: number;
  /**
   * With a router: the routed roles this round keeps at their last old replica (partition 1) because
   * the route still sends the old release a share (`rbg-router-hold.ts`); the round after the route
   * leaves the old release (this round's weight 100) releases them.
   */
  readonly heldForRoute?: readonly string[];
}

/** Whether the rule's maxSkew can hold, against the smallest skew any rollout of these roles can keep. */
export interface RbgPlanSkew {
  /** The rule's maxSkew, percent. */
  readonly maxSkewPercent: number;
  /** The largest skew after any round of this plan, percent. */
  readonly largestPercent: number;
  /** No rollout that updates one replica at a time keeps a smaller largest skew (`smallestAchievableSkewPercent`). */
  readonly smallestAchievablePercent: number;
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
  /** The skew the plan keeps against maxSkew and the best any rollout of these role sizes can keep. */
  readonly skew: RbgPlanSkew;
  /**
   * With `failAtRound`: the rollback rounds after a failure at that round, each with the replicas
   * left on the abandoned revision (`updated`) and the partitions written, every returned replica
   * ready before the next round.
   */
  readonly rollback?: { readonly afterRound: number; readonly rounds: readonly RbgPlanRound[] };
  /**
   * With a router and a complete rollout: after the last round, once the route sends the old release
   * 0, its router Deployment is scaled to 0 replicas (`routerScaleStep`, lib/engine/rbg-router-scale.ts).
   */
  readonly oldRouter?: 'scaledToZero';
  /** The peaks of the rounds' usage, in rounds (`from`/`until` count rounds from 1, `lasts` is a number of rounds); only with `usage`. */
  readonly peak?: { readonly pods?: PlanPeak; readonly accelerators: Readonly<Record<string, PlanPeak>> };
}

/**
 * Plans the coordinated rollout of `input.roles` in at most `RBG_PLAN_MAX_ROUNDS` rounds. The one
 * rollout that could take more, maxSkew 0% over many replicas, is refused by the validators and here
 * at once (a RangeError naming the field, value and range); any other that would take more throws too.
 */
export function planRoleBasedGroup(input: RoleBasedGroupPlanInput): RoleBasedGroupPlan {
  const planned = withWeights(input, planRounds(input));
  const rounds = input.failAtRound !== undefined && input.coordination === 'parallel' && planned.rounds.length > 0 ? { ...planned, rollback: planRollback(input, planned.rounds, input.failAtRound) } : planned;
  const skew: RbgPlanSkew = {
    maxSkewPercent: input.maxSkewPercent,
    largestPercent: rounds.maxSkewPercentObserved,
    smallestAchievablePercent: smallestAchievableSkewPercent(input.roles),
  };
  if (!input.roles.every((r) => r.shape !== undefined)) return { ...rounds, skew };
  let previous: Readonly<Record<string, number>> = Object.fromEntries(input.roles.map((r) => [r.name, 0]));
  const costed = rounds.rounds.map((round) => {
    const usage = roundUsage(input.roles, previous, round.updated);
    previous = round.updated;
    return { ...round, usage };
  });
  const peak = usagePeaks(costed.map((r, i) => ({ at: i + 1, usage: r.usage.total })), costed.length + 1);
  return { ...rounds, rounds: costed, skew, peak };
}

/** The rollback rounds after a failure at round `at` of `rounds` (`nextRollbackPartitions`, every workload catching up at once). */
function planRollback(input: RoleBasedGroupPlanInput, rounds: readonly RbgPlanRound[], at: number): NonNullable<RoleBasedGroupPlan['rollback']> {
  if (!Number.isInteger(at) || at < 1) throw new RangeError(`failAtRound of RoleBasedGroup ${input.name} is ${at}; allowed: an integer ≥ 1`);
  const afterRound = Math.min(at, rounds.length);
  const from = rounds[afterRound - 1];
  let roles = input.roles.map((r) => ({ name: r.name, desired: r.replicas, abandoned: from.updated[r.name], ready: r.replicas, partition: from.partition[r.name], maxUnavailable: r.maxUnavailable }));
  const out: RbgPlanRound[] = [];
  for (let i = 0; i < RBG_PLAN_MAX_ROUNDS && roles.some((r) => r.abandoned > 0); i++) {
    const next = nextRollbackPartitions(input.maxSkewPercent, roles);
    roles = roles.map((r) => ({ ...r, partition: next.get(r.name)!, abandoned: Math.min(r.abandoned, r.desired - next.get(r.name)!) }));
    out.push({ updated: Object.fromEntries(roles.map((r) => [r.name, r.abandoned])), partition: Object.fromEntries(roles.map((r) => [r.name, r.partition])) });
  }
  return { afterRound, rounds: input.router ? out.map((r) => ({ ...r, weight: routerWeights(routedRoles(input, r.updated), true).newWeight })) : out };
}

/** The rounds with the new release's route weight of each (every replica of a round ready), when the rule has a router and the rounds carry none yet. */
function withWeights(input: RoleBasedGroupPlanInput, planned: Omit<RoleBasedGroupPlan, 'skew' | 'peak'>): Omit<RoleBasedGroupPlan, 'skew' | 'peak'> {
  if (!input.router) return planned;
  const rounds = planned.rounds.map((round) => ({ ...round, weight: round.weight ?? routerWeights(routedRoles(input, round.updated), false).newWeight }));
  return { ...planned, rounds, ...(planned.complete ? { oldRouter: 'scaledToZero' as const } : {}) };
}

/**
 * The route hold in a planned round (`rbg-router-hold.ts`): the routed roles whose round releases
 * their last old replica (`lastRound`), and, while the route sends the old release a share, those of
 * two replicas or more kept at partition 1 (`partitions` is updated in place).
 */
function routeHeldRound(input: RoleBasedGroupPlanInput, roles: readonly RbgRoleState[], partitions: Record<string, number>, routeOld: boolean): { lastRound: string[]; held: string[] } {
  const routed = roles.filter((r) => r.name === input.router!.prefill || r.name === input.router!.decode);
  const lastRound = routed.filter((r) => partitions[r.name] === 0).map((r) => r.name);
  const held = routeOld ? routed.filter((r) => partitions[r.name] === 0 && r.desired >= 2 && (r.currentPartition ?? r.desired) > 0).map((r) => r.name) : [];
  for (const name of held) partitions[name] = 1;
  return { lastRound, held };
}

/** The router's prefill and decode roles with `updated` replicas each, all of them ready (as the plan assumes); `lastRound` as `routerWeights` reads it. */
function routedRoles(input: RoleBasedGroupPlanInput, updated: Readonly<Record<string, number>>, lastRound: readonly string[] = []): RoutedRole[] {
  const routed = input.roles.filter((r) => r.name === input.router?.prefill || r.name === input.router?.decode);
  return routed.map((r) => ({ name: r.name, desired: r.replicas, readyUpdated: updated[r.name] ?? 0, ...(lastRound.includes(r.name) ? { lastRound: true } : {}) }));
}

/** Each role's Pods and accelerators in a round that moves it from `before` to `after` updated replicas. */
function roundUsage(roles: readonly RbgPlanRole[], before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>): NonNullable<RbgPlanRound['usage']> {
  const byRole: Record<string, PlanUsage> = {};
  let total = NO_USAGE;
  for (const r of roles) {
    const shape = r.shape!;
    const replicas = r.replicas + Math.min(shape.maxSurge, Math.max(0, (after[r.name] ?? 0) - (before[r.name] ?? 0)));
    byRole[r.name] = { pods: replicas * shape.podsPerReplica, accelerators: scaleResources(shape.perReplica, replicas) };
    total = addUsage(total, byRole[r.name]);
  }
  return { roles: byRole, total };
}

/** The rounds of the rollout, before their cost and skew bound are added. */
function planRounds(input: RoleBasedGroupPlanInput): Omit<RoleBasedGroupPlan, 'skew' | 'peak'> {
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
  if (input.coordination === 'controller') return planControllerRounds(input, roles);
  // With a router, the route sends the old release a share until a round's weight is 100.
  let routeOld = true;
  // One pass more than the limit: the pass after the last round is the one that sees nothing change.
  for (let i = 0; i <= RBG_PLAN_MAX_ROUNDS; i++) {
    const partitions = input.coordination === 'parallel' ? parallelPartitions(input.maxSkewPercent, roles) : upstreamPartitions(input.maxSkewPercent, roles);
    const routed: { lastRound: string[]; held: string[] } | undefined = input.router && input.coordination === 'parallel' ? routeHeldRound(input, roles, partitions, routeOld) : undefined;
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
    const updated = Object.fromEntries(roles.map((r) => [r.name, r.updatedReplicas]));
    if (!routed) {
      rounds.push({ updated, partition: partitions });
      continue;
    }
    const weight: number = routerWeights(routedRoles(input, updated, routed.lastRound), false).newWeight;
    routeOld = weight < 100;
    rounds.push({ updated, partition: partitions, weight, ...(routed.held.length > 0 ? { heldForRoute: routed.held } : {}) });
  }
  throw new RangeError(`plan of RoleBasedGroup ${input.name} did not finish within ${RBG_PLAN_MAX_ROUNDS} rounds (maxSkewPercent ${input.maxSkewPercent}); allowed: rollouts of at most ${RBG_PLAN_MAX_ROUNDS} rounds`);
}

/** The release whose controller `planControllerRounds` plans (its step's rules, `upstreamRollingTargets`). */
const CONTROLLER_PLAN_RELEASE: RbgRelease = 'v0.7';

/**
 * RBG v0.7.0's controller as it runs: it takes upstream's step on every status change of a
 * workload, and its first step, written with the new template, reads statuses that still count
 * every old replica as updated. Between steps each workload updates in place up to
 * `maxUnavailable` replicas (at least one) toward its partition, all workloads at once; a round is
 * a step that changes some partition. The plan ends when a tick moves nothing: complete, or stalled
 * where only the slowest role may advance and it already reached its partition.
 */
function planControllerRounds(input: RoleBasedGroupPlanInput, initial: RbgRoleState[]): Omit<RoleBasedGroupPlan, 'skew' | 'peak'> {
  let roles = initial;
  const rounds: RbgPlanRound[] = [];
  let partitions = upstreamPartitions(input.maxSkewPercent, roles.map((r) => ({ ...r, updatedReplicas: r.desired })), CONTROLLER_PLAN_RELEASE);
  let maxSkew = 0;
  for (let i = 0; i <= RBG_PLAN_MAX_ROUNDS; i++) {
    const written = partitions;
    const next = roles.map((r) => ({ ...r, updatedReplicas: Math.max(r.updatedReplicas, Math.min(r.desired - written[r.name], r.updatedReplicas + Math.max(1, r.maxUnavailable))) }));
    if (rounds.length === 0 || roles.some((r) => rounds[rounds.length - 1].partition[r.name] !== written[r.name])) {
      rounds.push({ updated: Object.fromEntries(next.map((r) => [r.name, r.updatedReplicas])), partition: written });
    } else {
      rounds[rounds.length - 1] = { ...rounds[rounds.length - 1], updated: Object.fromEntries(next.map((r) => [r.name, r.updatedReplicas])) };
    }
    const moved = next.some((r, k) => r.updatedReplicas !== roles[k].updatedReplicas);
    roles = next;
    maxSkew = Math.max(maxSkew, progressSkewPercent(roles));
    partitions = upstreamPartitions(input.maxSkewPercent, roles, CONTROLLER_PLAN_RELEASE);
    if (!moved && roles.every((r) => partitions[r.name] === written[r.name])) {
      const complete = roles.every((r) => r.updatedReplicas >= r.desired - Math.min(r.partition, r.desired));
      return { kind: 'RoleBasedGroup', name: input.name, coordination: 'controller', rounds, maxSkewPercentObserved: maxSkew, complete };
    }
  }
  throw new RangeError(`plan of RoleBasedGroup ${input.name} did not finish within ${RBG_PLAN_MAX_ROUNDS} steps (maxSkewPercent ${input.maxSkewPercent}); allowed: rollouts of at most ${RBG_PLAN_MAX_ROUNDS} steps`);
}

function parallelPartitions(maxSkewPercent: number, roles: readonly RbgRoleState[]): Record<string, number> {
  return Object.fromEntries(nextRbgRound(maxSkewPercent, roles).roles.map((r) => [r.name, r.partition]));
}

function upstreamPartitions(maxSkewPercent: number, roles: readonly RbgRoleState[], release?: RbgRelease): Record<string, number> {
  const targets = upstreamRollingTargets(maxSkewPercent, roles, release);
  return Object.fromEntries(roles.map((r) => [r.name, upstreamPartition(r, targets?.get(r.name) ?? r.desired)]));
}
