/**
 * Which replicas a rollback round returns on a role whose workload names them by ordinal (pure): a
 * StatefulSet's Pods, a RoleInstanceSet's RoleInstances in its stateful pattern. Such a workload
 * recreates a missing ordinal below its partition from its current revision (the one before the
 * rollout), so a replica on the abandoned revision below the round's partition is deleted; where
 * the webhook caps the partition (`revertBelow`, RBG v0.8) the ones from the partition up to
 * `revertBelow` are reverted in place instead, only on a workload that keeps them there (a paused
 * RoleInstanceSet). A Ready one is returned only within the role's `maxUnavailable`
 * (`withinUnavailable`, rbg-return-budget.ts). The runtime half is lib/runtime/rbg/return-replicas.ts.
 */
import type { ReplicaReturn, RoleReturn } from './rbg-coordination-types';
import { withinUnavailable } from './rbg-return-budget';

/** One replica of a workload with ordinals, as one list of its replicas shows it. */
export interface OrderedReplica {
  readonly name: string;
  /** Its ordinal in the workload (`<workload>-<ordinal>`). */
  readonly ordinal: number;
  /** On the workload's update revision (the one the rollback abandons). */
  readonly abandoned: boolean;
  /** Its Ready condition is True. */
  readonly ready: boolean;
  /** Being deleted (`deletionTimestamp` set): on its way back, and down. */
  readonly terminating: boolean;
}

/**
 * The replicas of a role with `desired` replicas to return for `ret`: the live ones on the abandoned
 * revision with an ordinal below `ret.below` removed, those from `ret.below` up to `ret.revertBelow`
 * reverted when `revertable`; in ordinal order, the Ready ones only while the role's replicas down
 * (an ordinal below `desired` without a live Ready replica) stay within `ret.maxUnavailable`.
 */
export function orderedReturn(replicas: readonly OrderedReplica[], desired: number, ret: Pick<RoleReturn, 'below' | 'revertBelow' | 'maxUnavailable'>, revertable: boolean): ReplicaReturn {
  const byOrdinal = replicas.slice().sort((a, b) => a.ordinal - b.ordinal);
  const candidates = byOrdinal.filter((r) => r.abandoned && !r.terminating);
  const revertBelow = revertable ? (ret.revertBelow ?? 0) : 0;
  const up = byOrdinal.filter((r) => r.ordinal < desired && r.ready && !r.terminating).length;
  return withinUnavailable(
    candidates.filter((r) => r.ordinal < ret.below),
    candidates.filter((r) => r.ordinal >= ret.below && r.ordinal < revertBelow),
    Math.max(0, desired - up),
    ret.maxUnavailable,
  );
}
