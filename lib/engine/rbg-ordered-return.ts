/**
 * Which replicas a rollback round returns on a role whose workload names them by ordinal (pure): a
 * StatefulSet's Pods, a RoleInstanceSet's RoleInstances in its stateful pattern. Such a workload
 * recreates a missing ordinal below its partition from its current revision (the one before the
 * rollout), so a replica on the abandoned revision below the round's partition is deleted; where
 * the webhook caps the partition (`revertBelow`, RBG v0.8) the ones from the partition up to
 * `revertBelow` are reverted in place instead, only on a workload that keeps them there (a paused
 * RoleInstanceSet). The runtime half is lib/runtime/rbg/return-replicas.ts.
 */
import type { ReplicaReturn, RoleReturn } from './rbg-coordination-types';

/** One live replica on the abandoned revision of a workload with ordinals, as one list of them shows it. */
export interface OrderedReplica {
  readonly name: string;
  /** Its ordinal in the workload (`<workload>-<ordinal>`). */
  readonly ordinal: number;
}

/**
 * The replicas of `replicas` (live, on the abandoned revision) to return for `ret`: those with an
 * ordinal below `ret.below` removed, those from `ret.below` up to `ret.revertBelow` reverted when
 * `revertable`; in ordinal order.
 */
export function orderedReturn(replicas: readonly OrderedReplica[], ret: Pick<RoleReturn, 'below' | 'revertBelow'>, revertable: boolean): ReplicaReturn {
  const byOrdinal = replicas.slice().sort((a, b) => a.ordinal - b.ordinal);
  const revertBelow = revertable ? (ret.revertBelow ?? 0) : 0;
  return {
    remove: byOrdinal.filter((r) => r.ordinal < ret.below).map((r) => r.name),
    revert: byOrdinal.filter((r) => r.ordinal >= ret.below && r.ordinal < revertBelow).map((r) => r.name),
  };
}
