/**
 * A service without an active cluster (first creation, or the active cluster disappeared): build
 * a cluster from the goal spec at full capacity and promote it once it serves everything. Applies
 * to every strategy, `None` included, as in KubeRay.
 */
import { newClusterName } from './cluster-name';
import type { EngineRun } from './engine-run';
import { takenNames } from './steady-state';

/** Runs one step of creating the service's first (or replacement) cluster. */
export function runServiceCreation(r: EngineRun): void {
  const { s, obs } = r;
  const goal = obs.goalSpecHash;
  const pending = r.pending;
  s.phase = 'Initializing';
  s.rollback = undefined;
  s.upgradeStrategy = undefined;
  if (s.pendingSpecHash !== goal || s.pendingClusterName === undefined || (pending !== undefined && pending.specHash !== goal)) {
    if (s.pendingClusterName !== undefined) r.retire(s.pendingClusterName);
    s.pendingClusterName = newClusterName(obs.name, goal, takenNames(r));
    s.pendingSpecHash = goal;
    s.pendingTargetCapacity = 100;
    s.reason = 'CreatingCluster';
    return r.decide();
  }
  if (s.pendingTargetCapacity !== 100) {
    s.pendingTargetCapacity = 100;
    r.decide();
  }
  if (pending === undefined) s.reason = 'CreatingCluster';
  else if (!pending.headReady) s.reason = 'WaitingForHead';
  else if (!r.ready(pending, 100)) s.reason = 'WaitingForCapacity';
  else {
    r.endPending();
    s.reason = 'Promoted';
    s.activeClusterName = pending.name;
    s.activeTargetCapacity = 100;
    s.activeWeight = 100;
    s.pendingWeight = 0;
    r.decide();
  }
}
