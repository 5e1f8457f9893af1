/**
 * Watching the real scheduler during a RoleBasedGroup's coordinated rollout (pure): the executor
 * reads the group's Pods while a coordination is `Progressing` (`needsRbgSurgeScheduling`), and
 * passes each coordinated role's Unschedulable ones (`surgeSchedulingOf`, as a RayService's pending
 * cluster's); a rule's step sees those of its own roles as one (`ruleSurgeScheduling`). What the
 * step does with them (the record, the wake, the one Event per episode, the rollback under
 * `capacityPolicy: fail`) is `rbg-coordination.ts`'s, on `judgeSurge` shared with the RayService.
 */
import type { CoordinationStatus } from './rbg-coordination-status';
import type { SurgeScheduling } from './surge-scheduling';

/**
 * Whether the executor should read the group's Pods for the next pass: a coordination is
 * Progressing (its rounds may have created Pods the scheduler cannot place). A rollout that starts
 * on this pass has written no round yet, so nothing of it can be Unschedulable.
 */
export function needsRbgSurgeScheduling(previous: readonly CoordinationStatus[] | undefined): boolean {
  return (previous ?? []).some((c) => c.phase === 'Progressing');
}

/**
 * The Unschedulable Pods of `roles` among `byRole` (each role's, as `surgeSchedulingOf` read them)
 * as one: their count, the earliest time with that role's message, and the roles that have any.
 * Undefined when none has.
 */
export function ruleSurgeScheduling(byRole: ReadonlyMap<string, SurgeScheduling>, roles: readonly string[]): SurgeScheduling | undefined {
  const seen = roles.flatMap((name) => {
    const s = byRole.get(name);
    return s === undefined ? [] : [{ name, ...s }];
  });
  if (seen.length === 0) return undefined;
  const first = seen.reduce((a, b) => (b.since < a.since ? b : a));
  return { unschedulablePods: seen.reduce((sum, s) => sum + s.unschedulablePods, 0), since: first.since, message: first.message, roles: seen.map((s) => s.name) };
}
