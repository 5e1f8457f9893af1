/**
 * What the executor observes of each role of a RoleBasedGroup (pure): desired replicas, the
 * rolling-update fields written on the role, its template revision, and its progress from the
 * group's `status.roleStatuses` — or from the role's workload where the group's entry is stale
 * (RBG rewrites an entry only when `replicas` or `readyReplicas` change, reference §3.4).
 */
import { createHash } from 'node:crypto';
import { IntOrPercent, resolvePartition } from '../../spec/percent';
import { JsonObject, asArray, asObject, isInteger } from '../../spec/read';
import { roleReplicas, roleWorkloadType, workloadHonoursPaused } from '../../spec/rbg-releases';
import { resolveMaxUnavailable } from '../../engine/from-spec';
import type { ObservedRole, ReplicaState, RoleProgress } from '../../engine/rbg-coordination-types';
import { ROUTER_REVISION_LABEL } from '../../spec/object-names';

/** The status of a role's workload (RoleInstanceSet, StatefulSet, LeaderWorkerSet), as far as the executor reads it. */
export interface WorkloadStatus {
  /** `metadata.generation`. */
  readonly generation?: number;
  /** `status.observedGeneration`. */
  readonly observedGeneration?: number;
  /** `status.updatedReplicas`. */
  readonly updatedReplicas?: number;
  /** `status.readyReplicas`. */
  readonly readyReplicas?: number;
  /** `status.updateRevision`: the revision of the template the workload counts `updatedReplicas` against. */
  readonly updateRevision?: string;
  /** `status.currentRevision`: the revision it recreates a replica below its partition from. */
  readonly currentRevision?: string;
  /** The partition in the workload's own spec (an integer; RBG copies the role's there). */
  readonly partition?: number;
  /** `status.updatedReadyReplicas` (RoleInstanceSet). */
  readonly updatedReadyReplicas?: number;
  /** Per ordinal, from one list of its Pods read right after it (StatefulSet: statefulset-replicas.ts). */
  readonly replicas?: readonly ReplicaState[];
}

/**
 * A role's progress: the workload's own status once it has observed its latest spec (the group
 * copies from it, possibly late); none while a workload that was read has not (the group's entry
 * then still counts the previous template's replicas as updated); else, when no workload was read,
 * the group's `roleStatuses` entry.
 */
export function roleProgress(groupEntry: JsonObject | undefined, workload: WorkloadStatus | undefined): RoleProgress | undefined {
  if (workload) {
    const observed = workload.generation !== undefined && (workload.observedGeneration ?? -1) >= workload.generation;
    if (!observed || !isInteger(workload.updatedReplicas) || !isInteger(workload.readyReplicas)) return undefined;
    const revision = workload.updateRevision ? { workloadRevision: workload.updateRevision } : {};
    const current = workload.currentRevision ? { workloadCurrentRevision: workload.currentRevision } : {};
    const partition = workload.partition !== undefined ? { workloadPartition: workload.partition } : {};
    const updatedReady = isInteger(workload.updatedReadyReplicas) ? { updatedReadyReplicas: workload.updatedReadyReplicas } : {};
    const replicas = workload.replicas ? { replicas: workload.replicas } : {};
    return { updatedReplicas: workload.updatedReplicas, readyReplicas: workload.readyReplicas, source: 'workload', ...revision, ...current, ...partition, ...updatedReady, ...replicas };
  }
  if (!groupEntry) return undefined;
  return { updatedReplicas: count(groupEntry.updatedReplicas), readyReplicas: count(groupEntry.readyReplicas), source: 'group' };
}

/**
 * Whether RBG has carried the group's latest spec into its workloads: the group's
 * `status.observedGeneration` says so, or, for a `v1alpha1` group, every role in `roles` (the
 * coordinated ones) has a workload that was read, has observed its own spec and carries at least
 * the role's partition (RBG copies it there as a floor). RBG v0.6.0 writes a group's status,
 * `observedGeneration` included, only when a role's replicas or readyReplicas change, so a write
 * that moves no replica (arming, a held round) would otherwise never be seen as carried.
 */
export function controllerCaughtUp(group: JsonObject, roles: ReadonlyMap<string, ObservedRole>, coordinated: readonly string[]): boolean {
  const observedGeneration = asObject(group.status).observedGeneration;
  const generation = asObject(group.metadata).generation;
  if (typeof observedGeneration === 'number' && typeof generation === 'number' && observedGeneration >= generation) return true;
  if (!String(group.apiVersion).endsWith('/v1alpha1') || coordinated.length === 0) return false;
  return coordinated.every((name) => {
    const r = roles.get(name);
    const p = r?.progress;
    return r !== undefined && p?.source === 'workload' && p.workloadPartition !== undefined && p.workloadPartition >= (r.partition ?? 0);
  });
}

/**
 * Every role of the group, keyed by name; `workloads` maps role names to their workload's status.
 * `partitionBelowReplicas`: the cluster's RBG release has a webhook that admits only a partition
 * below replicas (v0.8), so every role is marked so.
 */
export function observeRoles(group: JsonObject, workloads: ReadonlyMap<string, WorkloadStatus> = new Map(), partitionBelowReplicas = false): Map<string, ObservedRole> {
  const statuses = new Map(asArray(asObject(group.status).roleStatuses).map((s) => [String(asObject(s).name), asObject(s)]));
  const out = new Map<string, ObservedRole>();
  asArray(asObject(group.spec).roles).forEach((value, index) => {
    const role = asObject(value);
    const name = String(role.name);
    const desired = roleReplicas(role);
    const ru = asObject(asObject(role.rolloutStrategy).rollingUpdate);
    // The template is `template` (v1alpha1) or under the role's pattern (v1alpha2).
    const template = role.template ?? asObject(role.standalonePattern).template ?? asObject(role.leaderWorkerPattern).template;
    const routerRevision = asObject(asObject(asObject(template).metadata).labels)[ROUTER_REVISION_LABEL];
    out.set(name, {
      name,
      index,
      desired,
      ...(ru.partition !== undefined ? { partition: resolvePartition(ru.partition as IntOrPercent, desired) } : {}),
      ...(ru.maxUnavailable !== undefined ? { maxUnavailable: resolveMaxUnavailable(ru.maxUnavailable as IntOrPercent, desired) } : {}),
      paused: ru.paused === true,
      ...(workloadHonoursPaused(roleWorkloadType(group.apiVersion, role).kind) ? {} : { holdsByPartition: true }),
      ...(partitionBelowReplicas ? { partitionBelowReplicas: true } : {}),
      revision: roleRevision(role),
      progress: roleProgress(statuses.get(name), workloads.get(name)),
      ...(typeof routerRevision === 'string' ? { routerRevision } : {}),
    });
  });
  return out;
}

/** Hash of a role without `replicas` and `rolloutStrategy` (sorted keys), 16 hex digits. */
export function roleRevision(role: JsonObject): string {
  const { replicas: _replicas, rolloutStrategy: _rollout, ...rest } = role;
  return createHash('sha256').update(sortedJson(rest)).digest('hex').slice(0, 16);
}

function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as JsonObject).filter(([, v]) => v !== undefined && v !== null).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function count(v: unknown): number {
  return isInteger(v) && v >= 0 ? v : 0;
}
