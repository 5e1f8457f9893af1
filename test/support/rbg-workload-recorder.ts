/**
 * Records, from a watch, every distinct state of the RoleInstanceSets that RBG's real controller
 * (v0.7.0, test/support/cluster.ts) keeps for one RoleBasedGroup (or of the StatefulSets v0.6.0 keeps): per role the partition written
 * into the workload, the updated and ready replicas its controller reports, and the role's entry in
 * the group's status (what RBG reads while a workload has not observed its spec). The cluster tests
 * read RBG's coordinated rolling rounds from this (the partitions as they change) and check the
 * skew at every observed state. Test support, not the package's API.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { Informer } from '../../lib/runtime/kube/informer';
import { KubeObject, ResourceType } from '../../lib/runtime/kube/types';
import { RBG_V1ALPHA2_TYPE, ROLE_INSTANCE_SET_TYPE, RbgResourceType } from '../../lib/spec/object-names';
import { StateRecorder } from './state-recorder';

/** One role's workload as observed. */
export interface WorkloadState {
  readonly replicas: number;
  /** `spec.updateStrategy.partition` as written (a count; RBG writes counts). */
  readonly partition: number;
  readonly paused: boolean;
  readonly updated: number;
  readonly ready: number;
  /** The workload's controller has seen its latest spec. */
  readonly observed: boolean;
  readonly updateRevision: string;
  /** The field manager that owns the partition as written (`managedFields`): who wrote its value last. */
  readonly partitionWriter?: string;
  /** The role's entry in the group's `status.roleStatuses` (RBG rewrites it only when replicas or readyReplicas change). */
  readonly reported?: { readonly updated: number; readonly ready: number };
}

/** Every role's workload at one moment (roles without a workload yet are absent). */
export type GroupState = Readonly<Record<string, WorkloadState>>;

/** Watches the RoleInstanceSets of `group`'s `roles` and keeps each distinct combined state. */
export class WorkloadRecorder extends StateRecorder<GroupState> {
  private readonly current: Record<string, WorkloadState> = {};
  private readonly reported: Record<string, { updated: number; ready: number }> = {};
  private readonly informers: Informer[];

  /**
   * `types` names the workload and group resources when they are not RoleInstanceSets of a
   * `v1alpha2` group (RBG v0.6.0: StatefulSets of a `v1alpha1` group).
   */
  constructor(client: KubeClient, namespace: string, readonly group: string, readonly roles: readonly string[], types: { workload: ResourceType; group: RbgResourceType } = { workload: ROLE_INSTANCE_SET_TYPE, group: RBG_V1ALPHA2_TYPE }) {
    super(group, 120_000);
    const byName = new Map(roles.map((r) => [`${group}-${r}`, r]));
    const workloads = client.watch(types.workload, namespace, (e) => {
      const role = byName.get(e.object.metadata.name ?? '');
      if (role === undefined || e.type === 'delete') return;
      this.current[role] = workloadState(e.object);
      this.recordCurrent();
    });
    // The group's role statuses: what RBG reads for a workload that has not observed its latest spec.
    const groups = client.watch(types.group, namespace, (e) => {
      if (e.object.metadata.name !== group || e.type === 'delete') return;
      for (const s of ((e.object.status as any)?.roleStatuses ?? []) as any[]) {
        if (roles.includes(s.name)) this.reported[s.name] = { updated: s.updatedReplicas ?? 0, ready: s.readyReplicas ?? 0 };
      }
      this.recordCurrent();
    });
    this.informers = [workloads, groups];
  }

  private recordCurrent(): void {
    this.record(Object.fromEntries(Object.entries(this.current).map(([role, w]) => [role, this.reported[role] ? { ...w, reported: { ...this.reported[role] } } : w])));
  }

  stop(): void {
    for (const i of this.informers) i.stop();
  }
}

function workloadState(ris: KubeObject): WorkloadState {
  const spec = (ris.spec ?? {}) as any;
  const status = (ris.status ?? {}) as any;
  const us = spec.updateStrategy ?? {};
  const replicas = spec.replicas ?? 1;
  return {
    replicas,
    // A RoleInstanceSet's `updateStrategy.partition`, a StatefulSet's `updateStrategy.rollingUpdate.partition`.
    partition: partitionCount(us.partition ?? us.rollingUpdate?.partition, replicas),
    paused: us.paused === true,
    updated: status.updatedReplicas ?? 0,
    ready: status.readyReplicas ?? 0,
    observed: (status.observedGeneration ?? 0) >= (ris.metadata.generation ?? 0),
    updateRevision: status.updateRevision ?? '',
    ...partitionWriter(ris),
  };
}

/**
 * The manager owning the workload's partition field: a RoleInstanceSet's `spec.updateStrategy.partition`,
 * a StatefulSet's `spec.updateStrategy.rollingUpdate.partition`. A write that changes a field takes it
 * over from every other manager (an update) or by force (RBG's server-side apply), so the owner is the
 * last writer of its value; with several owners (the same value applied by two), the latest entry.
 */
function partitionWriter(w: KubeObject): { partitionWriter?: string } {
  let found: { manager: string; time: string } | undefined;
  for (const m of (w.metadata.managedFields ?? []) as any[]) {
    const us = m.fieldsV1?.['f:spec']?.['f:updateStrategy'];
    if (!us?.['f:partition'] && !us?.['f:rollingUpdate']?.['f:partition']) continue;
    if (!found || String(m.time ?? '') >= found.time) found = { manager: String(m.manager), time: String(m.time ?? '') };
  }
  return found ? { partitionWriter: found.manager } : {};
}

/** A partition as RBG's workloads read it: a count, or a percent of replicas rounded up; absent is 0. */
function partitionCount(p: unknown, replicas: number): number {
  if (typeof p === 'number') return p;
  if (typeof p === 'string' && p.endsWith('%')) return Math.ceil((Number(p.slice(0, -1)) * replicas) / 100);
  return 0;
}

/** Updated fraction skew of a state, percent (largest minus smallest over its roles). */
export function stateSkewPercent(s: GroupState): number {
  const p = Object.values(s).map((r) => r.updated / r.replicas);
  return (Math.max(...p) - Math.min(...p)) * 100;
}
