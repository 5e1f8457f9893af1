/**
 * Where a RayService's upgrade stands (`rayshift.dev`, or KubeRay's `ray.io/v1` read from the
 * status KubeRay writes), as pure functions of the object as the
 * Kubernetes API returns it: the fields progress views read (`rayshift status`, the API server's
 * upgrade status, the dashboard through it) and when the next traffic step is due.
 */
import type { RayServiceStatus } from '../../engine/status';
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
}

/** Reads the view's fields from a RayService object as the API returns it (`rayshift.dev` or KubeRay's `ray.io/v1`). */
export function serviceView(obj: { apiVersion?: string; metadata: { namespace?: string; name?: string; generation?: number }; spec?: unknown; status?: unknown }): ServiceView {
  const status = asObject(obj.status);
  const kuberay = obj.apiVersion === KnownTypes.RayService.apiVersion;
  const options = asObject(asObject(asObject(obj.spec).upgradeStrategy).clusterUpgradeOptions);
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
  const a = asObject(status.activeServiceStatus);
  const p = asObject(status.pendingServiceStatus);
  const name = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const num = (v: unknown, d: number) => (typeof v === 'number' ? v : d);
  const time = (v: unknown) => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : undefined);
  const active = name(a.rayClusterName);
  const pending = name(p.rayClusterName);
  if (active === undefined && pending === undefined) return undefined;
  const rollback = asArray(status.conditions).map(asObject).find((c) => c.type === 'RollbackInProgress' && c.status === 'True');
  const reverted = rollback !== undefined && /revert/i.test(String(rollback.message ?? ''));
  const upgrading = active !== undefined && pending !== undefined;
  const pendingWeight = num(p.trafficRoutedPercent, 0);
  const lastMove = time(rollback ? a.lastTrafficMigratedTime : p.lastTrafficMigratedTime);
  return {
    phase: rollback ? 'RollingBack' : upgrading ? 'Upgrading' : active !== undefined ? 'Running' : 'Initializing',
    reason: rollback ? (reverted ? 'SpecReverted' : 'SpecChanged') : upgrading ? (pendingWeight > 0 ? 'Migrating' : 'WaitingForCapacity') : active !== undefined ? 'UpToDate' : 'CreatingCluster',
    ...(active !== undefined ? { activeClusterName: active } : {}),
    ...(pending !== undefined ? { pendingClusterName: pending } : {}),
    activeTargetCapacity: num(a.targetCapacity, 100),
    pendingTargetCapacity: num(p.targetCapacity, 0),
    activeWeight: num(a.trafficRoutedPercent, 100),
    pendingWeight,
    trafficConfirmed: true,
    ...(lastMove !== undefined ? { lastTrafficMigratedTime: lastMove } : {}),
    ...(rollback ? { rollback: reverted ? 'SpecReverted' : 'SpecChanged' } : {}),
    deletions: [],
  };
}

/**
 * When the next traffic step is due (epoch ms), if one is waiting for the clock: the interval after
 * the last weight change once the route carries it, or (while the route is being confirmed) after
 * the decision, which precedes the confirmation by milliseconds.
 */
export function nextTrafficStepAt(v: ServiceView): number | undefined {
  const e = v.engine;
  if (!e || e.pendingClusterName === undefined || v.intervalSeconds === undefined || e.phase !== 'Upgrading') return undefined;
  const from = e.trafficConfirmed ? e.lastTrafficMigratedTime : e.lastProgressTime;
  return from === undefined ? undefined : from + v.intervalSeconds * 1000;
}
