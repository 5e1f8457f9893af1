/** The rayshift RayService status written by the operator, from the engine's status (pure). */
import type { CapacityRecord, RayServiceStatus } from '../../engine/status';
import { describeStatus } from '../../engine/status';
import type { ObservedCluster } from '../../engine/observation';
import type { CapacityRecordOutcome } from '../../engine/capacity-preflight';
import { serveReplicasOf } from '../../engine/rayservice-pass';
import { canonicalJson } from '../../spec/canonical-json';
import { Condition, ConditionStatus, ConditionUpdate, mergeConditions, removeCondition } from '../kube/conditions';

/** A timestamp as the API stores it, with millisecond precision kept. */
export function isoTime(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

function sideStatus(name: string | undefined, capacity: number, weight: number, migrated: number | undefined, clusters: readonly ObservedCluster[]): Record<string, unknown> {
  const replicas = serveReplicasOf(name, clusters);
  return {
    ...(name !== undefined ? { rayClusterName: name } : {}),
    targetCapacity: capacity,
    trafficRoutedPercent: weight,
    ...(migrated !== undefined ? { lastTrafficMigratedTime: isoTime(migrated) } : {}),
    ...(replicas ?? {}),
  };
}

/** Each side's Serve replicas as a status shows them (`ready/target`; absent: not shown). */
function serveReplicasShown(status: Record<string, unknown>): string {
  const side = (v: unknown) => {
    const s = (v ?? {}) as Record<string, unknown>;
    return typeof s.readyReplicas === 'number' && typeof s.targetReplicas === 'number' ? `${s.readyReplicas}/${s.targetReplicas}` : '-';
  };
  return `${side(status.activeServiceStatus)} ${side(status.pendingServiceStatus)}`;
}

/** The two statuses show other Serve replicas on either side (`persistChoice`'s `replicasDiffer`). */
export function serveReplicasDiffer(current: Record<string, unknown>, next: Record<string, unknown>): boolean {
  return serveReplicasShown(current) !== serveReplicasShown(next);
}

/**
 * Status equality as JSON, ignoring key order (the API server returns keys sorted) and
 * `lastUpdateTime` (it changes on every write), so an unchanged status is never rewritten.
 */
export function sameStatus(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return canonicalJson({ ...a, lastUpdateTime: undefined }) === canonicalJson({ ...b, lastUpdateTime: undefined });
}

/** `status` without the Serve replicas each side shows. */
function withoutServeReplicas(status: Record<string, unknown>): Record<string, unknown> {
  const side = (v: unknown) => {
    if (v === null || typeof v !== 'object') return v;
    const { readyReplicas: _ready, targetReplicas: _target, ...rest } = v as Record<string, unknown>;
    return rest;
  };
  return { ...status, activeServiceStatus: side(status.activeServiceStatus), pendingServiceStatus: side(status.pendingServiceStatus) };
}

/** `sameStatus` but for the Serve replicas each side shows: what differs, if anything, is only those (`persistChoice` writes them at most once per refresh). */
export function sameStatusButServeReplicas(current: Record<string, unknown>, next: Record<string, unknown>): boolean {
  return sameStatus(withoutServeReplicas(current), withoutServeReplicas(next));
}

/** The stored status's `lastUpdateTime` (epoch ms), or undefined when it has none or it does not parse. */
export function lastUpdateTimeOf(status: Record<string, unknown>): number | undefined {
  const at = typeof status.lastUpdateTime === 'string' ? Date.parse(status.lastUpdateTime) : NaN;
  return Number.isNaN(at) ? undefined : at;
}

/** The condition that carries the capacity preflight of the upgrade under way (or refused). */
export const CAPACITY_CONDITION = 'CapacityFits';

/** The condition status and reason of each preflight outcome (`Unknown`: the cluster could not be read). */
const CAPACITY_CONDITIONS: Readonly<Record<CapacityRecordOutcome, { status: ConditionStatus; reason: string }>> = {
  fits: { status: 'True', reason: 'Fits' },
  fitsAfterOldShrinks: { status: 'False', reason: 'FitsAfterOldShrinks' },
  doesNotFit: { status: 'False', reason: 'DoesNotFit' },
  unknown: { status: 'Unknown', reason: 'ClusterUnread' },
};

/**
 * The status subresource body: KubeRay's field names (`activeServiceStatus`, `pendingServiceStatus`
 * with `targetCapacity`, `trafficRoutedPercent`, `lastTrafficMigratedTime`; conditions `Ready`,
 * `UpgradeInProgress`, `RollbackInProgress`; rayshift's `CapacityFits` while a preflight is
 * recorded) plus rayshift's `capacity`, `surgeUnschedulable`, `phase`, `reason`, `message`, `nextStepAt`, each side's observed Serve replicas (`readyReplicas`, `targetReplicas`, when
 * `clusters` observed its head ready), and the engine's state persisted verbatim in `engineState`.
 */
export function renderStatus(engine: RayServiceStatus, generation: number, previous: readonly Condition[] | undefined, now: Date, clusters: readonly ObservedCluster[] = []): Record<string, unknown> {
  const upgrading = engine.pendingClusterName !== undefined && engine.activeClusterName !== undefined;
  const updates: ConditionUpdate[] = [
    engine.activeClusterName !== undefined && engine.phase !== 'Initializing'
      ? { type: 'Ready', status: 'True', reason: 'Serving', message: `RayCluster ${engine.activeClusterName} serves`, observedGeneration: generation }
      : { type: 'Ready', status: 'False', reason: 'Initializing', message: describeStatus(engine), observedGeneration: generation },
    upgrading
      ? { type: 'UpgradeInProgress', status: 'True', reason: 'BothActivePendingClustersExist', message: describeStatus(engine), observedGeneration: generation }
      : { type: 'UpgradeInProgress', status: 'False', reason: 'NoPendingCluster', message: 'no pending RayCluster', observedGeneration: generation },
  ];
  let conditions = mergeConditions(previous, updates, now);
  conditions = engine.rollback
    ? mergeConditions(conditions, [{ type: 'RollbackInProgress', status: 'True', reason: engine.rollback, message: `rolling back: ${engine.rollback}`, observedGeneration: generation }], now)
    : removeCondition(conditions, 'RollbackInProgress');
  const capacity = engine.capacity;
  const surge = engine.surgeUnschedulable;
  conditions = capacity
    ? mergeConditions(conditions, [{ type: CAPACITY_CONDITION, ...CAPACITY_CONDITIONS[capacity.outcome], message: capacity.message ?? 'the upgrade\'s first Pods fit the cluster', observedGeneration: generation }], now)
    : removeCondition(conditions, CAPACITY_CONDITION);
  return {
    observedGeneration: generation,
    phase: engine.phase,
    reason: engine.reason,
    message: statusMessage(engine),
    ...(capacity ? { capacity: capacityStatus(capacity) } : {}),
    ...(surge ? { surgeUnschedulable: { pods: surge.pods, sinceTime: isoTime(surge.since), message: surge.message, boundExceeded: surge.boundExceeded } } : {}),
    ...(engine.nextStepAt !== undefined ? { nextStepAt: isoTime(engine.nextStepAt) } : {}),
    activeServiceStatus: sideStatus(engine.activeClusterName, engine.activeTargetCapacity, engine.activeWeight, engine.lastTrafficMigratedTime, clusters),
    ...(engine.pendingClusterName !== undefined
      ? { pendingServiceStatus: sideStatus(engine.pendingClusterName, engine.pendingTargetCapacity, engine.pendingWeight, engine.lastTrafficMigratedTime, clusters) }
      : {}),
    conditions,
    engineState: engine,
  };
}

/** `describeStatus`, then what did not fit at the start, the worker Pods being freed and, once past its bound, the surge's Unschedulable Pods. */
function statusMessage(engine: RayServiceStatus): string {
  const parts = [describeStatus(engine)];
  if (engine.capacity?.message !== undefined) parts.push(`capacity preflight: ${engine.capacity.message}`);
  const surge = engine.surgeUnschedulable;
  const freeing = engine.capacity?.freeing;
  if (freeing !== undefined) parts.push(`freeing ${freeing.pods.length} worker Pod${freeing.pods.length === 1 ? '' : 's'} of ${freeing.cluster} before the next capacity step: ${freeing.pods.join(', ')}`);
  if (surge?.boundExceeded === true) parts.push(`${surge.pods} Pod${surge.pods === 1 ? '' : 's'} of ${engine.pendingClusterName ?? 'the new cluster'} Unschedulable: ${surge.message}`);
  return parts.join('; ');
}

/** The status of a RayService whose spec the model rejects: Ready=False naming the first problem; no engine run. */
export function renderInvalidStatus(message: string, generation: number, previous: readonly Condition[] | undefined, engineState: unknown, now: Date): Record<string, unknown> {
  return {
    observedGeneration: generation,
    phase: 'Invalid',
    reason: 'ValidationFailed',
    message,
    conditions: mergeConditions(previous, [{ type: 'Ready', status: 'False', reason: 'ValidationFailed', message, observedGeneration: generation }], now),
    ...(engineState !== undefined ? { engineState } : {}),
  };
}

/** `status.capacity`: the preflight, and the worker Pods a shrinkFirst round is freeing. */
function capacityStatus(capacity: CapacityRecord): Record<string, unknown> {
  const freeing = capacity.freeing;
  return {
    outcome: capacity.outcome,
    ...(capacity.message !== undefined ? { message: capacity.message } : {}),
    checkedTime: isoTime(capacity.at),
    ...(capacity.shrinkFirst === true ? { shrinkFirst: true } : {}),
    ...(freeing !== undefined ? { freeing: { cluster: freeing.cluster, pods: [...freeing.pods], sinceTime: isoTime(freeing.since) } } : {}),
  };
}
