/**
 * Where a RayService's upgrade stands (`rayshift.dev`, or KubeRay's `ray.io/v1` read from the
 * status KubeRay writes), as pure functions of the object as the
 * Kubernetes API returns it: the fields progress views read (`rayshift status`, the API server's
 * upgrade status, the dashboard through it) and when the next traffic step is due.
 */
import { nextTrafficStepDue } from '../../engine/incremental-upgrade';
import type { RayServiceStatus } from '../../engine/status';
import { storedOwner, type ObjectOwner } from '../../engine/shards';
import { asArray, asObject } from '../../spec/read';
import { KnownTypes } from '../kube/types';

/** The parts of a RayService object the progress views read. */
export interface ServiceView {
  readonly namespace: string;
  readonly name: string;
  /** `kuberay` for a `ray.io/v1` RayService, whose upgrade KubeRay runs; unset for rayshift's. */
  readonly executor?: 'kuberay';
  readonly generation?: number;
  readonly observedGeneration?: number;
  readonly engine?: RayServiceStatus;
  readonly message?: string;
  readonly intervalSeconds?: number;
  readonly conditions: ReadonlyArray<{ type: string; status: string; reason?: string }>;
  /** The operator replica working on the service (`status.owner`), when one recorded itself. */
  readonly owner?: ObjectOwner;
}

/** One side (`activeServiceStatus` or `pendingServiceStatus`) of a RayService status, with KubeRay's defaults. */
export interface StatusSide {
  /** `rayClusterName`. */
  readonly name: string;
  /** `trafficRoutedPercent`. */
  readonly weight: number;
  /** `targetCapacity`. */
  readonly capacity: number;
  /** `lastTrafficMigratedTime` (epoch ms), when set and readable. */
  readonly lastTrafficMigratedTime?: number;
  /** The Serve replicas the rayshift operator records (KubeRay records none). */
  readonly readyReplicas?: number;
  readonly targetReplicas?: number;
}

/**
 * Reads one side of a RayService status (KubeRay's field names, which the rayshift operator writes
 * too): undefined without a `rayClusterName`. KubeRay leaves `trafficRoutedPercent` and
 * `targetCapacity` unset outside incremental upgrades and reads an unset active side as 100 % and
 * an unset pending side as 0 % (v1.7.0 `rayservice_controller.go`, `ptr.Deref(..., 100)` for the
 * active cluster's weight and capacity, `0` for the pending one's): so does every reader here.
 */
export function statusSide(raw: unknown, role: 'active' | 'pending'): StatusSide | undefined {
  const o = asObject(raw);
  if (typeof o.rayClusterName !== 'string' || o.rayClusterName === '') return undefined;
  const unset = unsetPercent(role);
  const num = (v: unknown) => (typeof v === 'number' ? v : unset);
  const moved = typeof o.lastTrafficMigratedTime === 'string' ? Date.parse(o.lastTrafficMigratedTime) : Number.NaN;
  return {
    name: o.rayClusterName,
    weight: num(o.trafficRoutedPercent),
    capacity: num(o.targetCapacity),
    ...(!Number.isNaN(moved) ? { lastTrafficMigratedTime: moved } : {}),
    ...(typeof o.readyReplicas === 'number' ? { readyReplicas: o.readyReplicas } : {}),
    ...(typeof o.targetReplicas === 'number' ? { targetReplicas: o.targetReplicas } : {}),
  };
}

/** KubeRay's reading of an unset weight or capacity: 100 % on the active side, 0 % on the pending one. */
function unsetPercent(role: 'active' | 'pending'): number {
  return role === 'active' ? 100 : 0;
}

/** A side as KubeRay reads it, with or without a cluster: `statusSide`, else no name and the unset percentages. */
export function statusSideOrUnset(raw: unknown, role: 'active' | 'pending'): Omit<StatusSide, 'name'> & { readonly name?: string } {
  const unset = unsetPercent(role);
  return statusSide(raw, role) ?? { weight: unset, capacity: unset };
}

/** Reads the view's fields from a RayService object as the API returns it (`rayshift.dev` or KubeRay's `ray.io/v1`). */
export function serviceView(obj: { apiVersion?: string; metadata: { namespace?: string; name?: string; generation?: number }; spec?: unknown; status?: unknown }): ServiceView {
  const status = asObject(obj.status);
  const kuberay = obj.apiVersion === KnownTypes.RayService.apiVersion;
  const options = asObject(asObject(asObject(obj.spec).upgradeStrategy).clusterUpgradeOptions);
  const owner = storedOwner(status.owner);
  return {
    namespace: String(obj.metadata.namespace ?? ''),
    name: String(obj.metadata.name ?? ''),
    generation: obj.metadata.generation,
    observedGeneration: typeof status.observedGeneration === 'number' ? status.observedGeneration : undefined,
    ...(kuberay ? { executor: 'kuberay' as const } : {}),
    engine: kuberay ? kubeRayEngineView(status) : (status.engineState as RayServiceStatus | undefined),
    message: typeof status.message === 'string' ? status.message : undefined,
    intervalSeconds: typeof options.intervalSeconds === 'number' ? options.intervalSeconds : undefined,
    conditions: asArray(status.conditions).map(asObject).map((c) => ({ type: String(c.type), status: String(c.status), ...(typeof c.reason === 'string' ? { reason: c.reason } : {}) })),
    ...(owner ? { owner } : {}),
  };
}

/**
 * The engine-state fields of a KubeRay RayService, read from the status KubeRay writes (its sides'
 * `targetCapacity`, `trafficRoutedPercent`, `lastTrafficMigratedTime` and its conditions) with
 * KubeRay's defaults for unset fields (active 100 %, pending 0 %). KubeRay keeps no engine state,
 * so phase and reason are the nearest of rayshift's: `Upgrading`/`WaitingForCapacity` until the new
 * cluster has traffic, then `Migrating`; `RollingBack` with `SpecReverted` or `SpecChanged` from
 * its `RollbackInProgress` message. Its weights are read back from the route, hence confirmed.
 */
function kubeRayEngineView(status: Record<string, unknown>): RayServiceStatus | undefined {
  const a = statusSideOrUnset(status.activeServiceStatus, 'active');
  const p = statusSideOrUnset(status.pendingServiceStatus, 'pending');
  const active = a.name;
  const pending = p.name;
  if (active === undefined && pending === undefined) return undefined;
  const rollback = asArray(status.conditions).map(asObject).find((c) => c.type === 'RollbackInProgress' && c.status === 'True');
  const reverted = rollback !== undefined && /revert/i.test(String(rollback.message ?? ''));
  const upgrading = active !== undefined && pending !== undefined;
  const pendingWeight = p.weight;
  const lastMove = rollback ? a.lastTrafficMigratedTime : p.lastTrafficMigratedTime;
  return {
    phase: rollback ? 'RollingBack' : upgrading ? 'Upgrading' : active !== undefined ? 'Running' : 'Initializing',
    reason: rollback ? (reverted ? 'SpecReverted' : 'SpecChanged') : upgrading ? (pendingWeight > 0 ? 'Migrating' : 'WaitingForCapacity') : active !== undefined ? 'UpToDate' : 'CreatingCluster',
    ...(active !== undefined ? { activeClusterName: active } : {}),
    ...(pending !== undefined ? { pendingClusterName: pending } : {}),
    activeTargetCapacity: a.capacity,
    pendingTargetCapacity: p.capacity,
    activeWeight: a.weight,
    pendingWeight,
    trafficConfirmed: true,
    ...(lastMove !== undefined ? { lastTrafficMigratedTime: lastMove } : {}),
    ...(rollback ? { rollback: reverted ? 'SpecReverted' : 'SpecChanged' } : {}),
    deletions: [],
  };
}

/** When the next traffic step is due (epoch ms), if one waits for the clock: the engine's `nextTrafficStepDue` of the view. */
export function nextTrafficStepAt(v: ServiceView): number | undefined {
  return nextTrafficStepDue(v.engine, v.intervalSeconds === undefined ? undefined : v.intervalSeconds * 1000);
}
