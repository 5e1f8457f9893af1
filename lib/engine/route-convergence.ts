/**
 * The route the engine wants (incremental strategy only): the active cluster's backend plus, once
 * the pending RayCluster exists, the pending one's, weighted by the status' intended weights.
 */
import type { EngineRun } from './engine-run';
import type { UpgradeStrategyType } from '../spec/rayservice';

/**
 * True when the service's route (and the per-cluster serve Services it points at) is the engine's
 * to manage: the spec asks for incremental upgrades, or the upgrade in flight is one (`inFlight`,
 * the status' strategy), which keeps its route until it ends whatever the spec says now.
 */
export function routeManagedFor(specStrategy: UpgradeStrategyType | undefined, inFlight: UpgradeStrategyType | undefined): boolean {
  return specStrategy === 'NewClusterWithIncrementalUpgrade' || inFlight === 'NewClusterWithIncrementalUpgrade';
}

/** True when the service's route is the engine's to manage in this run (`routeManagedFor`). */
export function routeManaged(r: EngineRun): boolean {
  return routeManagedFor(r.opts.strategy, r.s.upgradeStrategy);
}

/** Name of the pending cluster if it belongs on the route (it exists), else undefined. */
export function pendingBackend(r: EngineRun): string | undefined {
  const name = r.s.pendingClusterName;
  return name !== undefined && r.cluster(name) !== undefined ? name : undefined;
}

/** The observed route carries exactly the intended backends and weights. */
export function routeMatches(r: EngineRun): boolean {
  const route = r.obs.route;
  const s = r.s;
  if (route === undefined || s.activeClusterName === undefined) return false;
  const b = route.backends;
  const pending = pendingBackend(r);
  if (b.length !== (pending === undefined ? 1 : 2)) return false;
  if (b[0].cluster !== s.activeClusterName || b[0].weight !== s.activeWeight) return false;
  return pending === undefined || (b[1].cluster === pending && b[1].weight === s.pendingWeight);
}

/** The intended route is in place and its Gateway has accepted it. */
export function routeConverged(r: EngineRun): boolean {
  return routeMatches(r) && r.obs.route!.ready;
}
