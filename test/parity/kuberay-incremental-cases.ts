/**
 * KubeRay v1.7.0 `ray-operator/controllers/ray/rayservice_controller_unit_test.go`: the cases of
 * its incremental-upgrade (`NewClusterWithIncrementalUpgrade`) tests, each replayed as one run of
 * rayshift's RayService engine from the same status. KubeRay's status fields map to the engine's
 * (`TargetCapacity` → target capacity, `TrafficRoutedPercent` → weight, `LastTrafficMigratedTime`
 * → `lastTrafficMigratedTime`, the `RollbackInProgress` condition → `rollback`); a cluster whose
 * Serve apps are RUNNING ("ready") has acknowledged its target capacity and has its replicas.
 */
import { nextRayService, type ObservedCluster, type ObservedRoute, type RayServiceDecision, type RayServiceStatus } from '../../lib/engine';
import { validateRayService } from '../../lib/spec';
import { incremental } from '../engine/harness';
import { DIFFERENCES, type UpstreamCase } from './ledger';
import { cluster, service } from './kuberay-manifests';

/** One case: KubeRay's expected value, and rayshift's (computed by `rayshift`). */
export interface EngineCase extends UpstreamCase {
  readonly upstream: unknown;
  readonly rayshift: () => unknown;
  /** rayshift's value where it deliberately differs (asserted, so the difference stays pinned). */
  readonly rayshiftValue?: unknown;
}

const NOW = 1_000_000_000;

/** A side of a migration: target capacity and weight; for the pending side, its cluster's state. */
interface Side {
  readonly tc: number;
  readonly w: number;
}
interface PendingSide extends Side {
  /** The cluster exists (default true). */
  readonly exists?: boolean;
  /** Head ready (default true). */
  readonly headReady?: boolean;
  /** Serve apps RUNNING with every replica ready (default true). */
  readonly ready?: boolean;
  /** The spec hash on the cluster (default the status' pending hash, `B`). */
  readonly specHash?: string;
}

interface Scenario {
  readonly maxSurge?: number;
  readonly step?: number;
  readonly interval?: number;
  readonly active: Side;
  readonly pending?: PendingSide;
  /** Seconds since the last weight change; undefined: none yet. */
  readonly migratedAgo?: number;
  /** The route as observed: carrying the status' weights and accepted (default), missing, without backends, or not accepted. */
  readonly route?: 'converged' | 'missing' | 'empty' | 'not-ready';
  readonly rollback?: RayServiceStatus['rollback'];
  /** Hash of the goal spec (default the pending hash `B`; the active cluster's is `A`). */
  readonly goal?: string;
}

function observed(name: string, specHash: string, tc: number, headReady: boolean, ready: boolean): ObservedCluster {
  return { name, specHash, headReady, targetCapacity: headReady ? tc : undefined, appsRunning: ready, readyReplicas: ready ? 4 : 0, targetReplicas: 4 };
}

/** One engine run from the scenario's status and world, at `NOW`. */
export function engineRun(sc: Scenario): RayServiceDecision {
  const p = sc.pending;
  const status: RayServiceStatus = {
    phase: sc.rollback ? 'RollingBack' : p ? 'Upgrading' : 'Running',
    reason: 'Migrating',
    activeClusterName: 'svc-active',
    pendingClusterName: p ? 'svc-pending' : undefined,
    pendingSpecHash: p ? 'B' : undefined,
    upgradeStrategy: p ? 'NewClusterWithIncrementalUpgrade' : undefined,
    activeTargetCapacity: sc.active.tc,
    pendingTargetCapacity: p?.tc ?? 0,
    activeWeight: sc.active.w,
    pendingWeight: p?.w ?? 0,
    trafficConfirmed: true,
    lastTrafficMigratedTime: sc.migratedAgo === undefined ? undefined : NOW - sc.migratedAgo * 1000,
    lastProgressTime: NOW,
    rollback: sc.rollback,
    deletions: [],
  };
  const clusters = [observed('svc-active', 'A', sc.active.tc, true, true)];
  const pendingExists = p !== undefined && p.exists !== false;
  if (pendingExists) clusters.push(observed('svc-pending', p.specHash ?? 'B', p.tc, p.headReady ?? true, p.ready ?? true));
  const backends = [{ cluster: 'svc-active', weight: sc.active.w }, ...(pendingExists ? [{ cluster: 'svc-pending', weight: p.w }] : [])];
  const routes: Record<NonNullable<Scenario['route']>, ObservedRoute | undefined> = {
    converged: { backends, ready: true },
    missing: undefined,
    empty: { backends: [], ready: true },
    'not-ready': { backends, ready: false },
  };
  const options = incremental({ maxSurge: sc.maxSurge ?? 100, step: sc.step ?? sc.maxSurge ?? 100, interval: sc.interval ?? 30 });
  return nextRayService({ name: 'svc', goalSpecHash: sc.goal ?? 'B', clusters, route: routes[sc.route ?? 'converged'], servingCluster: 'svc-active', status }, options, NOW);
}

/** The route's weights rayshift intends after the run (active first; the pending one while its cluster exists). */
function weights(sc: Scenario): number[] {
  const s = engineRun(sc).status;
  return sc.pending !== undefined && sc.pending.exists !== false && s.pendingClusterName !== undefined ? [s.activeWeight, s.pendingWeight] : [s.activeWeight];
}

const createHttpRoute = (pending: PendingSide, migratedAgo?: number): Scenario => ({ step: 10, interval: 30, active: { tc: 100, w: 100 }, pending, migratedAgo });
const reconcileHttpRoute = (pending: PendingSide | undefined, route: Scenario['route'], migratedAgo?: number): Scenario =>
  ({ step: 10, interval: 30, active: { tc: 100, w: 100 }, pending, route, migratedAgo });
/** Mid-upgrade (70/30), so a rollback cannot also complete within the run. */
const rollbackState = (goal: string, inProgress: boolean, pendingHash = 'B'): Scenario =>
  ({ maxSurge: 30, active: { tc: 70, w: 70 }, pending: { tc: 30, w: 30, specHash: pendingHash }, goal, rollback: inProgress ? 'SpecReverted' : undefined });
const completeRollback = (pending: PendingSide | undefined): Scenario =>
  ({ maxSurge: 50, active: { tc: 100, w: 100 }, pending: pending ?? { tc: 0, w: 0, exists: false }, goal: 'A', rollback: 'SpecReverted', migratedAgo: 0 });

const T = 'TestCreateHTTPRoute';
const R = 'TestReconcileHTTPRoute';
const { capacityMoves, routeFirst } = DIFFERENCES;

/** The cases, grouped by Go test in the Go file's order. */
export const KUBERAY_INCREMENTAL_CASES: readonly EngineCase[] = [
  // TestCreateHTTPRoute (step 10, interval 30; pending capacity 30 unless changed)
  { test: T, name: 'NewClusterWithIncrementalUpgrade, but pending cluster is not ready, so no traffic shift.', upstream: [100, 0], rayshift: () => weights(createHttpRoute({ tc: 30, w: 0, ready: false }, 31)) },
  { test: T, name: 'NewClusterWithIncrementalUpgrade, time since LastTrafficMigratedTime < IntervalSeconds.', upstream: [100, 0], rayshift: () => weights(createHttpRoute({ tc: 30, w: 0 }, 0)) },
  { test: T, name: 'NewClusterWithIncrementalUpgrade, time since LastTrafficMigratedTime >= IntervalSeconds.', upstream: [90, 10], rayshift: () => weights(createHttpRoute({ tc: 60, w: 0 }, 31)) },
  { test: T, name: 'NewClusterWithIncrementalUpgrade, TrafficRoutedPercent capped to pending TargetCapacity.', upstream: [95, 5], rayshift: () => weights(createHttpRoute({ tc: 5, w: 0 }, 31)) },
  {
    test: T, name: 'Create HTTPRoute called with missing ClusterUpgradeOptions.', upstream: 'rejected',
    rayshift: () => (validateRayService(service({ rayClusterConfig: cluster({ enableInTreeAutoscaling: true }), upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade' } })).errors.length > 0 ? 'rejected' : 'accepted'),
  },
  { test: T, name: 'No on-going upgrade, pending cluster does not exist.', upstream: [100], rayshift: () => weights(createHttpRoute({ tc: 0, w: 0, exists: false })) },

  // TestReconcileHTTPRoute (step 10, interval 30; pending capacity 100; the route exists only where the case creates one)
  { test: R, name: 'Create HTTPRoute with no pending cluster.', upstream: [100], rayshift: () => weights(reconcileHttpRoute(undefined, 'missing')) },
  { test: R, name: 'Create HTTPRoute when pending cluster exists, but is not ready.', upstream: [100, 0], rayshift: () => weights(reconcileHttpRoute({ tc: 100, w: 0, ready: false }, 'missing')) },
  { test: R, name: 'Create new HTTPRoute with existing weights.', upstream: [90, 10], rayshift: () => weights(reconcileHttpRoute({ tc: 100, w: 0 }, 'missing')), difference: routeFirst, rayshiftValue: [100, 0] },
  { test: R, name: 'Update HTTPRoute when pending cluster is ready.', upstream: [90, 10], rayshift: () => weights(reconcileHttpRoute({ tc: 100, w: 0 }, 'missing')), difference: routeFirst, rayshiftValue: [100, 0] },
  {
    test: R, name: 'Existing HTTPRoute, time since LastTrafficMigratedTime >= IntervalSeconds so updates HTTPRoute.', upstream: [90, 10],
    rayshift: () => weights(reconcileHttpRoute({ tc: 100, w: 0 }, 'empty', 31)), difference: routeFirst, rayshiftValue: [100, 0],
  },
  { test: R, name: 'Existing HTTPRoute, time since LastTrafficMigratedTime < IntervalSeconds so no update.', upstream: [100, 0], rayshift: () => weights(reconcileHttpRoute({ tc: 100, w: 0 }, 'missing', 0)) },

  // TestReconcileServeTargetCapacity: [active, pending] target capacity after the run (the interval long passed)
  {
    test: 'TestReconcileServeTargetCapacity', name: 'Scale up pending RayCluster when total TargetCapacity < 100', upstream: [70, 30],
    rayshift: () => { const s = engineRun({ maxSurge: 20, active: { tc: 70, w: 90 }, pending: { tc: 10, w: 10 }, migratedAgo: 60 }).status; return [s.activeTargetCapacity, s.pendingTargetCapacity]; },
  },
  {
    test: 'TestReconcileServeTargetCapacity', name: 'Scale down active RayCluster when total TargetCapacity > 100', upstream: [60, 30],
    rayshift: () => { const s = engineRun({ maxSurge: 20, active: { tc: 80, w: 70 }, pending: { tc: 30, w: 30 }, migratedAgo: 60 }).status; return [s.activeTargetCapacity, s.pendingTargetCapacity]; },
    difference: capacityMoves, rayshiftValue: [70, 30],
  },

  // TestCheckIfNeedTargetCapacityUpdate: does the run change a target capacity (a setTargetCapacity action)?
  ...([
    ['Missing RayClusterNames', { active: { tc: 100, w: 100 } }, false],
    ['Gateway not ready', { maxSurge: 30, active: { tc: 100, w: 100 }, pending: { tc: 0, w: 0 }, route: 'not-ready' }, false],
    ['HTTPRoute not ready', { maxSurge: 30, active: { tc: 100, w: 100 }, pending: { tc: 0, w: 0 }, route: 'not-ready' }, false],
    ['NewClusterWithIncrementalUpgrade is complete', { maxSurge: 30, active: { tc: 0, w: 0 }, pending: { tc: 100, w: 100 } }, false],
    ['Pending RayCluster is still incrementally scaling', { maxSurge: 30, active: { tc: 70, w: 70 }, pending: { tc: 30, w: 30 } }, true],
  ] as const).map(([name, sc, upstream]): EngineCase => ({
    test: 'TestCheckIfNeedTargetCapacityUpdate', name, upstream, rayshift: () => engineRun(sc as Scenario).actions.some((a) => a.type === 'setTargetCapacity'),
  })),

  // TestReconcileRollbackState: is a rollback in progress after the run? (active spec A, pending created from B)
  ...([
    ['Normal RayService upgrade, goal matches pending', rollbackState('B', false), false],
    ['RayService Spec changed, initiate rollback', rollbackState('A', false), true],
    ['Rollback in progress, continues rolling back', rollbackState('A', true), true],
    ['Rollback canceled, user updated spec back to pending', rollbackState('B', true), false],
    ['Third-spec scenario: Goal updated to third spec mid-upgrade', rollbackState('C', false), true],
    ['Fast rollback: Goal matches active, but pending already updated to match active', rollbackState('A', false, 'A'), true],
  ] as const).map(([name, sc, upstream]): EngineCase => ({ test: 'TestReconcileRollbackState', name, upstream, rayshift: () => engineRun(sc).status.rollback !== undefined })),

  // TestShouldCompleteIncrementalRollback: does the rollback complete in this run? (active back at 100/100)
  ...([
    ['healthy pending at zero capacity and traffic — complete', completeRollback({ tc: 0, w: 0 }), true],
    ['unhealthy pending with leftover capacity — bypass complete', completeRollback({ tc: 30, w: 0, headReady: false }), true],
    ['no pending RayCluster — complete when active is full', completeRollback(undefined), true],
    ['healthy pending still holding target capacity — not complete', completeRollback({ tc: 50, w: 0 }), false],
  ] as const).map(([name, sc, upstream]): EngineCase => ({
    test: 'TestShouldCompleteIncrementalRollback', name, upstream, rayshift: () => engineRun(sc).status.reason === 'RollbackComplete',
  })),
];
