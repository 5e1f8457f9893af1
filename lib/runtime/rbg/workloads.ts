/**
 * Where a role's workload is (pure): RBG names it `<group>-<role>`; its kind comes from the role's
 * `rbg.workloads.x-k8s.io/role-workload-type` annotation in v1alpha2 (default RoleInstanceSet) and
 * from `role.workload` in v1alpha1 (default StatefulSet).
 */
import { roleWorkloadType } from '../../spec/rbg-releases';
import { JsonObject, asObject } from '../../spec/read';
import type { KubeObject, ResourceType } from '../kube/types';
import type { WorkloadStatus } from './observe';

export { WORKLOAD_TYPE_ANNOTATION } from '../../spec/rbg-releases';

/** A role's workload: its resource type and name. */
export interface WorkloadRef {
  readonly type: ResourceType;
  readonly name: string;
}

/** The workload of `role` in `group` (`v1alpha1` or `v1alpha2` per the group's apiVersion). */
export function workloadOf(group: JsonObject, role: JsonObject): WorkloadRef {
  const name = `${String(asObject(group.metadata).name)}-${String(role.name)}`;
  return { name, type: roleWorkloadType(group.apiVersion, role) };
}

/**
 * The fields of a workload object the executor reads. Its partition is a RoleInstanceSet's
 * `spec.updateStrategy.partition` or a StatefulSet's / LeaderWorkerSet's
 * `spec.(rolloutStrategy|updateStrategy).rollingUpdate.partition`, when an integer.
 */
export function workloadStatus(workload: JsonObject): WorkloadStatus {
  const status = asObject(workload.status);
  const spec = asObject(workload.spec);
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  // A StatefulSet's status omits a count of 0 (omitempty): once its controller wrote a status, an absent count is 0.
  const count = (v: unknown) => num(v) ?? (typeof status.observedGeneration === 'number' ? 0 : undefined);
  const partition = [asObject(spec.updateStrategy).partition, asObject(asObject(spec.updateStrategy).rollingUpdate).partition, asObject(asObject(spec.rolloutStrategy).rollingUpdate).partition].find((v) => typeof v === 'number');
  return {
    ...(typeof partition === 'number' ? { partition } : {}),
    generation: num(asObject(workload.metadata).generation),
    observedGeneration: num(status.observedGeneration),
    updatedReplicas: count(status.updatedReplicas),
    readyReplicas: count(status.readyReplicas),
    ...(typeof status.updatedReadyReplicas === 'number' ? { updatedReadyReplicas: status.updatedReadyReplicas } : {}),
    ...(typeof status.updateRevision === 'string' ? { updateRevision: status.updateRevision } : {}),
    ...(typeof status.currentRevision === 'string' ? { currentRevision: status.currentRevision } : {}),
  };
}

/** The ordinal of a workload's replica named `<workload>-<ordinal>`, or undefined for any other name. */
export function ordinalOf(workload: string, name: unknown): number | undefined {
  const text = String(name);
  const digits = text.startsWith(`${workload}-`) ? text.slice(workload.length + 1) : '';
  return /^\d{1,9}$/.test(digits) ? Number(digits) : undefined;
}

/** A workload's `spec.replicas` (default 1). */
export function desiredReplicas(workload: KubeObject): number {
  const size = asObject(workload.spec).replicas;
  return typeof size === 'number' ? size : 1;
}

/**
 * The replicas among `items` that `workload` controls (its uid in their controller reference), each
 * with its ordinal (`<workload>-<ordinal>`), an ordinal below `below` only when given.
 */
export function controlledReplicas(workload: KubeObject, items: readonly KubeObject[], below = Number.POSITIVE_INFINITY): { replica: KubeObject; ordinal: number }[] {
  const name = String(workload.metadata.name);
  return items.flatMap((replica) => {
    const ordinal = ordinalOf(name, replica.metadata.name);
    const controlled = (replica.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.uid === workload.metadata.uid);
    return ordinal !== undefined && ordinal < below && controlled ? [{ replica, ordinal }] : [];
  });
}
