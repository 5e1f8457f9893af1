/**
 * Which replicas a rollback round returns on a role whose workload has no ordinals (pure): RBG's
 * RoleInstanceSet in its Stateless pattern (annotation `rbg.workloads.x-k8s.io/role-instance-pattern:
 * Stateless`), which the construct renders for routed roles (lib/cdk8s/rolebasedgroup.ts).
 *
 * How that set rolls, read in RBG v0.7.0's source (pkg/reconciler/roleinstanceset/statelessmode;
 * v0.8.0-alpha.5 is the same but for its in-place check, sync/update.go:182):
 * - its instances are named `<set>-<5 random characters>` (core/implement.go:114 and 187-190,
 *   sync/scale.go:311-342): they have no ordinal, so "below the partition" means nothing;
 * - its partition P is how many instances it keeps off its update revision: it computes
 *   `oldActive − P` and `newActive − (replicas − P)` (sync/helper.go:145-146) and, unpaused, updates
 *   that many to the update revision, the not-ready, unscheduled and pending ones first
 *   (sync/update.go:69-111, core/implement.go:144-151); with RecreatePod each is marked
 *   specified-delete (sync/update.go:246-258), deleted and created anew (sync/scale.go:107-134, 80-97);
 * - a partition raised above the instances off the update revision makes `updateNum` negative:
 *   unpaused, the set then takes that many instances back to its *current* revision itself
 *   (sync/update.go:75-79, 86-91); paused it updates nothing (sync/update.go:65-67);
 * - paused or not, it creates a missing instance from its current revision while fewer than P
 *   instances are off the update revision (`scaleNumOldRevision = P − oldRevisionCount`,
 *   sync/helper.go:193-198, core/implement.go:87-91), under a new random name; an instance being
 *   deleted is not counted at all (utils/utils.go:93-96);
 * - it takes its update revision as current only once every instance is on it (status.go:115-118),
 *   so the last-replica rule of the way back holds for it as for the stateful pattern.
 *
 * So a rollback round returns such a role as the stateful one (partition raised, paused; then deletes
 * that the set refills from its current revision), and only the choice differs: for a round at
 * partition `below`, at most `desired − below` live instances may stay on the abandoned revision, and
 * the rest are returned, the not-ready ones first (they cost no availability, as the round's room
 * under maxUnavailable assumes: `nextRollbackPartitions`). An instance being deleted is on its way
 * back and counts as returned, so a pass that runs again before the set refilled it returns no more.
 * Where the webhook caps the partition (`revertBelow`, RBG v0.8), the instances beyond
 * `desired − revertBelow` left on the abandoned revision are reverted in place instead. A Ready
 * instance is returned only within the role's `maxUnavailable` (`withinUnavailable`, rbg-return-budget.ts).
 */
import type { ReplicaReturn, RoleReturn } from './rbg-coordination-types';
import { withinUnavailable } from './rbg-return-budget';

/** One replica of a role's workload without ordinals, as one list of them shows it. */
export interface UnorderedReplica {
  readonly name: string;
  /** On the workload's update revision (the one the rollback abandons). */
  readonly abandoned: boolean;
  /** Its Ready condition is True. */
  readonly ready: boolean;
  /** Being deleted (`deletionTimestamp` set). */
  readonly terminating: boolean;
}

/**
 * The replicas of a role with `desired` replicas to return for `ret`: the live ones on the abandoned
 * revision beyond the `desired − ret.below` that may stay, not-ready first, then by name; of those
 * left, the ones beyond `desired − ret.revertBelow` are reverted instead, only when `revertable`
 * (the set is paused: unpaused, it would update a reverted instance forward again); the Ready ones
 * only while the role's replicas down (`desired` less its live Ready instances) stay within
 * `ret.maxUnavailable`.
 */
export function unorderedReturn(replicas: readonly UnorderedReplica[], desired: number, ret: Pick<RoleReturn, 'below' | 'revertBelow' | 'maxUnavailable'>, revertable: boolean): ReplicaReturn {
  const live = replicas
    .filter((r) => r.abandoned && !r.terminating)
    .slice()
    .sort((a, b) => Number(a.ready) - Number(b.ready) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const removeCount = Math.max(0, live.length - Math.max(0, desired - ret.below));
  const rest = live.slice(removeCount);
  const revertCount = !revertable || ret.revertBelow === undefined ? 0 : Math.max(0, rest.length - Math.max(0, desired - ret.revertBelow));
  const up = replicas.filter((r) => r.ready && !r.terminating).length;
  return withinUnavailable(live.slice(0, removeCount), rest.slice(0, revertCount), Math.max(0, desired - up), ret.maxUnavailable);
}
