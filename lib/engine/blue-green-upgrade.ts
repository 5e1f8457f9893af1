/**
 * `NewCluster` (blue/green) while both clusters exist: the pending cluster is built from the full
 * spec at full capacity and the Services switch to it in one step once it serves everything.
 * Differences from KubeRay, on purpose: "ready" also means every target replica is ready (not
 * only apps RUNNING); reverting the goal to the active spec drops the pending cluster instead of
 * building a third one; pause holds the switch; abort, the progress deadline and (under
 * `capacityPolicy: fail`) a surge Unschedulable past its bound drop the pending cluster and reject
 * its spec until the goal changes.
 */
import type { EngineRun } from './engine-run';
import { rejectsSpec, type RayServiceReason } from './status';
import { judgeSurgeScheduling } from './surge-scheduling';

/** Runs one step of a blue/green upgrade; `r.active` is observed. */
export function runBlueGreenUpgrade(r: EngineRun): void {
  const { s, obs } = r;
  const active = r.active!;
  const pending = r.pending;
  r.resumeIfPaused();
  s.phase = 'Upgrading';
  if (obs.goalSpecHash !== s.pendingSpecHash) return dropPending(r, 'UpgradeCancelled');
  if (obs.controls?.abort === true) return dropPending(r, 'Aborted');
  if (obs.controls?.paused === true) {
    s.phase = 'Paused';
    s.reason = 'Paused';
    return;
  }
  if (r.now >= r.progressDeadline()) return dropPending(r, 'ProgressDeadlineExceeded');
  if (judgeSurgeScheduling(r)) return dropPending(r, 'SurgeUnschedulable');
  if (pending === undefined) s.reason = 'CreatingCluster';
  else if (!pending.headReady) s.reason = 'WaitingForHead';
  else if (!r.ready(pending, s.pendingTargetCapacity)) s.reason = 'WaitingForCapacity';
  else {
    r.retire(active.name);
    s.activeClusterName = pending.name;
    s.activeTargetCapacity = s.pendingTargetCapacity;
    clearPending(r, 'Promoted');
  }
}

/** Abandons the pending cluster (a spec change starts a new one on the next run). */
function dropPending(r: EngineRun, reason: RayServiceReason): void {
  const s = r.s;
  if (rejectsSpec(reason)) s.rejectedSpecHash = s.pendingSpecHash;
  if (s.pendingClusterName !== undefined) r.retire(s.pendingClusterName);
  clearPending(r, reason);
}

/** Ends the pending side with `reason` (a blue/green upgrade has no rollback and leaves the weights to the switch). */
function clearPending(r: EngineRun, reason: RayServiceReason): void {
  r.endPending();
  r.s.reason = reason;
  r.decide();
}
