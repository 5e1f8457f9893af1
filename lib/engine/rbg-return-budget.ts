/**
 * How many replicas one pass of a rollback round may take down on one role (pure). The round's
 * partition is sized to the role's room under `maxUnavailable` (`nextRollbackPartitions`), but the
 * replicas on the abandoned revision below it are counted when they are returned: a workload that
 * recreated returned ordinals on the abandoned revision (a StatefulSet controller acting on a stale
 * cache after the API server restarted, cluster-rbg-rollback-faults with RBG v0.6.0) leaves more of
 * them than the round planned for, and returning them all at once took two Ready prefill Pods down
 * 24 ms apart under maxUnavailable 1. So the replicas returned are checked against the replicas down
 * as the same list shows them: one not ready is down already and returns for free (as the round's
 * room assumes), a Ready one only while the role stays within `maxUnavailable`; the rest wait for a
 * later pass, once the returned ones are back.
 */
import type { ReplicaReturn } from './rbg-coordination-types';

/** A replica a round would return, as the role's one list of replicas shows it. */
export interface ReturnCandidate {
  readonly name: string;
  /** Its Ready condition is True. */
  readonly ready: boolean;
}

/**
 * Of `remove` then `revert` (each in the order the caller chose), the replicas to return now: every
 * one not ready, and the Ready ones, in that order, while the role's replicas down — `down` of them
 * as listed, less the not-ready ones returned here — plus those taken stay within `maxUnavailable`
 * (0 read as 1, as RBG's workloads read it).
 */
export function withinUnavailable(remove: readonly ReturnCandidate[], revert: readonly ReturnCandidate[], down: number, maxUnavailable: number): ReplicaReturn {
  const free = [...remove, ...revert].filter((r) => !r.ready).length;
  let room = Math.max(1, maxUnavailable) - (down - free);
  const take = (rs: readonly ReturnCandidate[]) =>
    rs.filter((r) => {
      if (!r.ready) return true;
      if (room <= 0) return false;
      room--;
      return true;
    });
  // The removes spend the room first: taken in this order.
  const removed = take(remove).map((r) => r.name);
  const reverted = take(revert).map((r) => r.name);
  return { remove: removed, revert: reverted };
}
