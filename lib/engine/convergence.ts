/**
 * Level-triggered convergence: after the run's decisions, emit one action for every place where
 * the world differs from the intent. Re-emitting is how a lost or failed action is retried.
 */
import type { EngineRun } from './engine-run';
import { pendingBackend, routeManaged, routeMatches } from './route-convergence';
import { restoreWorkerFloors } from './worker-freeing';

/** Emits the create, capacity, route and Service actions that make the world match the status. */
export function converge(r: EngineRun): void {
  const { s, obs, actions } = r;
  const active = r.cluster(s.activeClusterName);
  if (s.pendingClusterName !== undefined) {
    const pending = r.cluster(s.pendingClusterName);
    if (pending === undefined) {
      actions.push({
        type: 'createPendingCluster',
        name: s.pendingClusterName,
        specHash: s.pendingSpecHash ?? obs.goalSpecHash,
        startFromMinReplicas: s.activeClusterName !== undefined && s.upgradeStrategy === 'NewClusterWithIncrementalUpgrade',
        ...(s.capacity?.shrinkFirst === true ? { workerFloorZero: true as const } : {}),
      });
    } else if (pending.headReady && r.acked(pending) !== s.pendingTargetCapacity) {
      actions.push({ type: 'setTargetCapacity', cluster: 'pending', clusterName: pending.name, percent: s.pendingTargetCapacity });
    }
  }
  if (active === undefined) return;
  const floors = restoreWorkerFloors(r);
  if (floors !== undefined) actions.push(floors);
  if (active.headReady && r.acked(active) !== s.activeTargetCapacity) {
    actions.push({ type: 'setTargetCapacity', cluster: 'active', clusterName: active.name, percent: s.activeTargetCapacity });
  }
  if (routeManaged(r) && !routeMatches(r)) {
    const pending = pendingBackend(r);
    actions.push(pending === undefined
      ? { type: 'setTrafficWeights', activeCluster: active.name, active: s.activeWeight, pending: s.pendingWeight }
      : { type: 'setTrafficWeights', activeCluster: active.name, active: s.activeWeight, pendingCluster: pending, pending: s.pendingWeight });
  }
  if (obs.servingCluster !== active.name) {
    actions.push(obs.servingCluster === undefined
      ? { type: 'promote', cluster: active.name }
      : { type: 'promote', cluster: active.name, previous: obs.servingCluster });
  }
}
