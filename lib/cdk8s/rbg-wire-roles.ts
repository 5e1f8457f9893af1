/**
 * A role as RBG's API carries it (`spec.roles[]`), in either version: the fields both share, a
 * v1alpha2 role's pattern and workload annotation, a v1alpha1 role's workload. Rendering only.
 */
import { RBG_INSTANCE_PATTERN_ANNOTATION, RBG_RECREATE_POD_UPDATE, RBG_STATELESS_PATTERN } from '../spec/object-names';
import { RBG_WORKLOAD_API_VERSIONS, RbgRelease, RbgWorkloadKind, RoleSpec, WORKLOAD_TYPE_ANNOTATION } from '../spec/rbg';

/** `<apiVersion>/<kind>` of a workload kind, as RBG writes it in the role-workload-type annotation. */
function workloadType(kind: RbgWorkloadKind): string {
  return `${RBG_WORKLOAD_API_VERSIONS[kind]}/${kind}`;
}

/** The fields both role versions share; `recreatePods` writes RBG's RecreatePod update type (v1alpha2 only). */
function commonRoleFields(r: RoleSpec, annotations = r.annotations, recreatePods = false): Record<string, unknown> {
  const rollingUpdate = recreatePods ? { ...r.rollingUpdate, type: RBG_RECREATE_POD_UPDATE } : r.rollingUpdate;
  return {
    name: r.name,
    replicas: r.replicas ?? 1,
    ...(r.labels ? { labels: r.labels } : {}),
    ...(annotations ? { annotations } : {}),
    // Anything but a list is written as given, for the pinned CRD's schema to name.
    ...(r.dependencies !== undefined && !(Array.isArray(r.dependencies) && r.dependencies.length === 0) ? { dependencies: r.dependencies } : {}),
    ...(rollingUpdate ? { rolloutStrategy: { type: 'RollingUpdate', rollingUpdate } } : {}),
  };
}

/**
 * A v1alpha2 role: RoleInstanceSet unless the role-workload-type annotation names another workload;
 * `routed` for a routed role, which a RoleInstanceSet gets as a Stateless set with RecreatePod
 * (another workload, a StatefulSet, replaces its Pods anyway and is left as given).
 */
export function roleV1Alpha2(r: RoleSpec, routed = false): Record<string, unknown> {
  const recreatePods = routed && (r.workload === undefined || r.workload === 'RoleInstanceSet');
  const pattern =
    (r.leaderWorkerSize ?? 1) > 1
      ? { leaderWorkerPattern: { size: r.leaderWorkerSize, template: r.template, ...(r.restartPolicyConfig ? { restartPolicyConfig: r.restartPolicyConfig } : {}) } }
      : { standalonePattern: { template: r.template } };
  const given = r.workload && r.workload !== 'RoleInstanceSet' ? { ...r.annotations, [WORKLOAD_TYPE_ANNOTATION]: workloadType(r.workload) } : r.annotations;
  // RBG v0.7.0's default (Stateful) RoleInstanceSet updates in place whatever the update type says.
  const annotations = recreatePods ? { ...given, [RBG_INSTANCE_PATTERN_ANNOTATION]: RBG_STATELESS_PATTERN } : given;
  return { ...commonRoleFields(r, annotations, recreatePods), ...pattern };
}

/**
 * A v1alpha1 role. Its schema defaults the workload to StatefulSet, so for RBG v0.8 (where that is
 * deprecated) RoleInstanceSet is written out, as upstream's webhook advises.
 */
export function roleV1Alpha1(r: RoleSpec, rbgVersion: RbgRelease): Record<string, unknown> {
  const leaderWorker = (r.leaderWorkerSize ?? 1) > 1;
  const kind = r.workload ?? (rbgVersion === 'v0.8' ? 'RoleInstanceSet' : leaderWorker ? 'LeaderWorkerSet' : undefined);
  return {
    ...commonRoleFields(r),
    template: r.template,
    ...(kind ? { workload: { apiVersion: RBG_WORKLOAD_API_VERSIONS[kind], kind } } : {}),
    ...(leaderWorker ? { leaderWorkerSet: { size: r.leaderWorkerSize } } : {}),
  };
}
