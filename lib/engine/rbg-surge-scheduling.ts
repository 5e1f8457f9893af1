/**
 * Watching the real scheduler during a RoleBasedGroup's coordinated rollout (pure): the executor
 * reads the group's Pods while a coordination is `Progressing` (`needsRbgSurgeScheduling`) and
 * passes each coordinated role's Pods; a rule's step sees the Unschedulable ones of its own roles
 * as one (`ruleSurgeScheduling`, on `surgeSchedulingOf` as a RayService's pending cluster's), only
 * those Unschedulable since its rollout started: a role's Pods are of both revisions, and an old
 * one the scheduler could not place before is not the rollout's doing. (The scheduler's clock
 * times the condition, the executor's the start: a skew only delays the watch, the progress
 * deadline still applies.) What the
 * step does with them (the record, the wake, the one Event per episode, the rollback under
 * `capacityPolicy: fail`) is `rbg-coordination.ts`'s, on `judgeSurge` shared with the RayService.
 */
import type { CoordinationStatus } from './rbg-coordination-status';
import { surgeSchedulingOf, type SurgeScheduling } from './surge-scheduling';

/**
 * Whether the executor should read the group's Pods for the next pass: a coordination is
 * Progressing (its rounds may have created Pods the scheduler cannot place). A rollout that starts
 * on this pass has written no round yet, so nothing of it can be Unschedulable.
 */
export function needsRbgSurgeScheduling(previous: readonly CoordinationStatus[] | undefined): boolean {
  return (previous ?? []).some((c) => c.phase === 'Progressing');
}

/**
 * The Pods of `roles` among `podsByRole` (each role's listed Pods) Unschedulable since `startedAt`
 * (epoch ms, the rollout's start; `surgeSchedulingOf` at `now`), as one: their count, the earliest
 * time with that role's message, and the roles that have any. Undefined when none has.
 */
export function ruleSurgeScheduling(podsByRole: ReadonlyMap<string, readonly unknown[]>, roles: readonly string[], startedAt: number, now: number): SurgeScheduling | undefined {
  const seen = roles.flatMap((name) => {
    const s = surgeSchedulingOf(podsByRole.get(name) ?? [], now, startedAt);
    return s === undefined ? [] : [{ name, ...s }];
  });
  if (seen.length === 0) return undefined;
  const first = seen.reduce((a, b) => (b.since < a.since ? b : a));
  return { unschedulablePods: seen.reduce((sum, s) => sum + s.unschedulablePods, 0), since: first.since, message: first.message, roles: seen.map((s) => s.name) };
}
