/**
 * Where a role's workload is (pure): RBG names it `<group>-<role>`; its kind comes from the role's
 * `rbg.workloads.x-k8s.io/role-workload-type` annotation in v1alpha2 (default RoleInstanceSet) and
 * from `role.workload` in v1alpha1 (default StatefulSet).
 */
import { RBG_INSTANCE_PATTERN_ANNOTATION, RBG_ROLE_INSTANCE_READY, RBG_STATELESS_PATTERN, ordinalOf, rbgWorkloadName } from '../../spec/object-names';
import { roleWorkloadType } from '../../spec/rbg-releases';
import { JsonObject, asArray, asObject } from '../../spec/read';
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
  return { name: rbgWorkloadName(String(asObject(group.metadata).name), String(role.name)), type: roleWorkloadType(group.apiVersion, role) };
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
    return ordinal !== undefined && ordinal < below && controls(workload, replica) ? [{ replica, ordinal }] : [];
  });
}

/** True when `workload`'s uid is in `replica`'s controller reference (a same-named replica of an earlier workload is not its). */
export function controls(workload: KubeObject, replica: KubeObject): boolean {
  return (replica.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.uid === workload.metadata.uid);
}

/**
 * True for a RoleInstanceSet in RBG's Stateless pattern (its `role-instance-pattern` annotation,
 * copied from the role; v0.7.0 and v0.8.0-alpha.5): its RoleInstances are named
 * `<set>-<random>`, without ordinals (lib/engine/rbg-unordered-return.ts).
 */
export function isStatelessSet(workload: KubeObject): boolean {
  return workload.kind === 'RoleInstanceSet' && workload.metadata.annotations?.[RBG_INSTANCE_PATTERN_ANNOTATION] === RBG_STATELESS_PATTERN;
}

/** True when a RoleInstance's `RoleInstanceReady` condition is True. */
export function roleInstanceReady(instance: KubeObject): boolean {
  return asArray(asObject(instance.status).conditions).some((c) => asObject(c).type === RBG_ROLE_INSTANCE_READY && asObject(c).status === 'True');
}
