/**
 * A service with an active cluster and no upgrade in flight: start an upgrade when the goal spec
 * hash differs from the active cluster's, unless the strategy is `None` (which, like KubeRay's,
 * never creates a second cluster) or the goal is a spec that was aborted or timed out.
 */
import { admitUpgrade } from './capacity-policy';
import { newClusterName } from './cluster-name';
import type { EngineRun } from './engine-run';
import { rejectsSpec } from './status';

/** Runs one step of a steady service; `r.active` is observed. */
export function runSteadyState(r: EngineRun): void {
  const { s, obs, opts } = r;
  const goal = obs.goalSpecHash;
  s.phase = 'Running';
  if (s.rejectedSpecHash !== undefined && s.rejectedSpecHash !== goal) s.rejectedSpecHash = undefined;
  if (goal === r.active!.specHash) {
    s.capacity = undefined;
    if (s.reason !== 'Promoted' && s.reason !== 'RollbackComplete' && s.reason !== 'UpgradeCancelled') s.reason = 'UpToDate';
    return;
  }
  if (s.rejectedSpecHash === goal) {
    // An upgrade capacityPolicy fail refused stays Failed while its spec is the goal.
    if (s.reason === 'InsufficientCapacity') s.phase = 'Failed';
    else if (!rejectsSpec(s.reason)) s.reason = 'SpecRejected';
    return;
  }
  if (opts.strategy === 'None') return void (s.reason = 'UpgradeDisabled');
  if (!admitUpgrade(r)) return;
  const incremental = opts.strategy === 'NewClusterWithIncrementalUpgrade';
  s.phase = 'Upgrading';
  s.reason = 'CreatingCluster';
  s.pendingClusterName = newClusterName(obs.name, goal, takenNames(r));
  s.pendingSpecHash = goal;
  s.upgradeStrategy = opts.strategy;
  s.activeTargetCapacity = 100;
  s.pendingTargetCapacity = incremental ? 0 : 100;
  s.activeWeight = 100;
  s.pendingWeight = 0;
  s.trafficConfirmed = true;
  s.upgradeStartedAt = r.now;
  s.rollback = undefined;
  r.decide();
}

/** Names a new cluster must not take: every observed, named or scheduled cluster. */
export function takenNames(r: EngineRun): Set<string> {
  const taken = new Set<string>(r.s.deletions.map((d) => d.name));
  for (const c of r.obs.clusters) taken.add(c.name);
  if (r.s.activeClusterName !== undefined) taken.add(r.s.activeClusterName);
  if (r.s.pendingClusterName !== undefined) taken.add(r.s.pendingClusterName);
  return taken;
}
