/**
 * Replicas a role's workload will never update (pure): RBG's RoleInstanceSet (v0.7.0, v0.8) rolls
 * only while its update revision differs from its current one, and takes a revision as current only
 * once every replica is on it. A template applied again mid-rollout (a GitOps revert before the
 * rollout ended) makes the update revision equal the current one again: the set then counts itself
 * done, and the replicas already updated to the abandoned revision stay on it whatever the
 * partition (measured on v0.7.0: 3 replicas, one on v2, v1 applied again: `rv-w-2` on v2 for
 * minutes at partition 2, then at 0). Such a replica is replaced: deleted, and the set recreates
 * its ordinal from its one revision, the one the template names. That is the update the round
 * releases, so only replicas at or above the role's partition go, at most as many as the role's
 * `maxUnavailable` leaves room for beside the replicas already down.
 */
import type { RoleReplace } from './rbg-coordination-types';
import type { Member } from './rbg-members';

/** What `mayStrand` reads of a RoleInstanceSet. */
export interface StrandableSet {
  /** In RBG's Stateless pattern (`role-instance-pattern: Stateless`). */
  readonly stateless: boolean;
  readonly updateRevision?: string;
  readonly currentRevision?: string;
  readonly updatedReplicas?: number;
  /** `spec.replicas`. */
  readonly desired: number;
}

/**
 * True when a RoleInstanceSet says it is on one revision yet counts fewer replicas updated than it
 * has: the executor then lists its instances per ordinal for `strandedReplace`. Never for a
 * Stateless set: with its update revision equal to its current one it updates the instances off it
 * itself, down to its partition, whenever unpaused (RBG v0.7.0 statelessmode/sync/helper.go:145-153,
 * update.go:69-111), and its instances have no ordinals to name.
 */
export function mayStrand(set: StrandableSet): boolean {
  if (set.stateless) return false;
  return set.updateRevision !== undefined && set.updateRevision === set.currentRevision && set.updatedReplicas !== undefined && set.updatedReplicas < set.desired;
}

/**
 * The replicas of `m` to replace in this pass, given the partition decided for it: none unless the
 * workload reports one list of its replicas (`progress.replicas`) and an update revision equal to its
 * current one. Highest ordinals first, as the workload itself updates.
 */
export function strandedReplace(m: Member, partition: number): RoleReplace | undefined {
  const p = m.observed.progress;
  if (!p?.replicas || p.workloadRevision === undefined || p.workloadCurrentRevision !== p.workloadRevision) return undefined;
  const stranded = p.replicas.filter((r) => r.revision === 'other' && !r.terminating && r.ordinal >= partition).sort((a, b) => b.ordinal - a.ordinal);
  if (stranded.length === 0) return undefined;
  // A stranded replica that is down already goes at no cost; each ready one takes one of the role's
  // maxUnavailable beside the replicas down now.
  const up = p.replicas.filter((r) => r.ready && !r.terminating).length;
  const room = Math.max(0, m.state.maxUnavailable - Math.max(0, m.observed.desired - up));
  const down = stranded.filter((r) => !r.ready);
  const ready = stranded.filter((r) => r.ready).slice(0, room);
  const ordinals = [...down, ...ready].map((r) => r.ordinal).sort((a, b) => b - a);
  return ordinals.length === 0 ? undefined : { name: m.observed.name, index: m.observed.index, revision: p.workloadRevision, ordinals };
}
