/**
 * Where a role's workload is (pure): RBG names it `<group>-<role>`; its kind comes from the role's
 * `rbg.workloads.x-k8s.io/role-workload-type` annotation in v1alpha2 (default RoleInstanceSet) and
 * from `role.workload` in v1alpha1 (default StatefulSet).
 */
import { JsonObject, asObject } from '../../spec/read';
import type { ResourceType } from '../kube/types';
import type { WorkloadStatus } from './observe';

/** The v1alpha2 role annotation naming the workload kind, `<apiVersion>/<kind>`. */
export const WORKLOAD_TYPE_ANNOTATION = 'rbg.workloads.x-k8s.io/role-workload-type';

/** A role's workload: its resource type and name. */
export interface WorkloadRef {
  readonly type: ResourceType;
  readonly name: string;
}

/** The workload of `role` in `group` (`v1alpha1` or `v1alpha2` per the group's apiVersion). */
export function workloadOf(group: JsonObject, role: JsonObject): WorkloadRef {
  const name = `${String(asObject(group.metadata).name)}-${String(role.name)}`;
  if (String(group.apiVersion).endsWith('/v1alpha1')) {
    const w = asObject(role.workload);
    return { name, type: { apiVersion: typeof w.apiVersion === 'string' ? w.apiVersion : 'apps/v1', kind: typeof w.kind === 'string' ? w.kind : 'StatefulSet' } };
  }
  const declared = asObject(role.annotations)[WORKLOAD_TYPE_ANNOTATION];
  const text = typeof declared === 'string' && declared.includes('/') ? declared : 'workloads.x-k8s.io/v1alpha2/RoleInstanceSet';
  const cut = text.lastIndexOf('/');
  return { name, type: { apiVersion: text.slice(0, cut), kind: text.slice(cut + 1) } };
}

/** The fields of a workload object the executor reads. */
export function workloadStatus(workload: JsonObject): WorkloadStatus {
  const status = asObject(workload.status);
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  return {
    generation: num(asObject(workload.metadata).generation),
    observedGeneration: num(status.observedGeneration),
    updatedReplicas: num(status.updatedReplicas),
    readyReplicas: num(status.readyReplicas),
  };
}
