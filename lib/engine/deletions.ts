/**
 * Deletion of retired clusters: every owned cluster that is neither active nor pending is deleted
 * `rayClusterDeletionDelaySeconds` after it was retired. Unlike KubeRay's in-memory map, the due
 * times live in the status, so they survive an executor restart.
 */
import type { EngineRun } from './engine-run';
import type { ScheduledDeletion } from './status';

/** Schedules every unused cluster, emits `deleteCluster` for the due ones, and forgets deleted ones. */
export function scheduleDeletions(r: EngineRun): void {
  const { s, obs, now } = r;
  const previous = s.deletions;
  let next: ScheduledDeletion[] | undefined;
  let same = true;
  let count = 0;
  for (const c of obs.clusters) {
    if (c.name === s.activeClusterName || c.name === s.pendingClusterName) continue;
    const entry = findDeletion(previous, c.name) ?? { name: c.name, at: now + r.opts.rayClusterDeletionDelaySeconds * 1000 };
    if (previous[count] !== entry) same = false;
    (next ??= []).push(entry);
    count++;
    if (entry.at <= now) r.actions.push({ type: 'deleteCluster', name: entry.name, at: entry.at });
    else r.wake(entry.at);
  }
  if (!same || count !== previous.length) s.deletions = next ?? [];
}

function findDeletion(list: readonly ScheduledDeletion[], name: string): ScheduledDeletion | undefined {
  for (const d of list) if (d.name === name) return d;
  return undefined;
}
