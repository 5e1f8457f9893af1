/**
 * The replicas of a role run as a StatefulSet (RBG v0.6.0, `v1alpha1`), per ordinal, from ONE list
 * of its Pods read right after the StatefulSet (whose revisions the Pods are matched against). A
 * StatefulSet reports no `updatedReadyReplicas`, and its status, read at another moment than the
 * Pods, cannot be combined with them: while a returned Pod is replaced, the status still counts it on
 * the abandoned revision and the Pods do not (seen on cluster-rbg-rollback-faults, v0.6.0). So the
 * way back (lib/engine/rbg-rollback.ts `rollbackCounts`) takes every count from this list alone.
 */
import type { ReplicaState } from '../../engine/rbg-coordination-types';
import { CONTROLLER_REVISION_LABEL, POD } from '../../spec/object-names';
import { asObject } from '../../spec/read';
import { KubeClient } from '../kube/client';
import { podReady } from '../kube/pod-ready';
import type { KubeObject, ResourceType } from '../kube/types';
import { controlledReplicas, desiredReplicas } from './workloads';

/** Each ordinal of `statefulSet` as `pods` show it, and whether a Pod carries a revision the StatefulSet does not name. */
export interface StatefulSetReplicas {
  /** One entry per ordinal below the StatefulSet's replicas that has a Pod it controls. */
  readonly replicas: readonly ReplicaState[];
  /** A Pod's revision is neither the StatefulSet's current nor its update revision (read before a template change?). */
  readonly strayRevision: boolean;
}

/**
 * The Pods of `pods` that `statefulSet` controls (by its uid), with an ordinal below its
 * `spec.replicas`, per ordinal: revision (its `controller-revision-hash` against the StatefulSet's
 * `status.currentRevision` / `status.updateRevision`), Ready (phase Running and the Ready condition
 * True, as the StatefulSet controller counts one ready) and terminating. Undefined when the
 * StatefulSet names no revisions yet.
 */
export function statefulSetReplicas(statefulSet: KubeObject, pods: readonly KubeObject[]): StatefulSetReplicas | undefined {
  const status = asObject(statefulSet.status);
  const { currentRevision, updateRevision } = status;
  if (typeof currentRevision !== 'string' || typeof updateRevision !== 'string') return undefined;
  const out: ReplicaState[] = [];
  let strayRevision = false;
  for (const { replica: pod, ordinal } of controlledReplicas(statefulSet, pods, desiredReplicas(statefulSet))) {
    const label = pod.metadata.labels?.[CONTROLLER_REVISION_LABEL];
    // A Pod's revision once the update and current revisions are the same is the update one: nothing is abandoned.
    const revision = label === updateRevision ? (updateRevision === currentRevision ? 'current' : 'update') : label === currentRevision ? 'current' : 'other';
    strayRevision ||= revision === 'other';
    out.push({ ordinal, revision, ready: podReady(pod), terminating: Boolean(pod.metadata.deletionTimestamp) });
  }
  return { replicas: out.sort((a, b) => a.ordinal - b.ordinal), strayRevision };
}

/**
 * Reads the StatefulSet `name`, then its Pods (by its `spec.selector.matchLabels`), and counts them
 * with `statefulSetReplicas`. When a Pod carries a revision the StatefulSet did not name, both are
 * read once more (the template may have changed between the two reads); a Pod still on another
 * revision then (a template changed during the rollout) counts as `other`: never abandoned, never
 * credited as down. Undefined when the StatefulSet is gone.
 */
export async function readStatefulSetReplicas(client: KubeClient, type: ResourceType, name: string, namespace: string): Promise<{ statefulSet: KubeObject; replicas?: readonly ReplicaState[] } | undefined> {
  let read: { statefulSet: KubeObject; counted?: StatefulSetReplicas } | undefined;
  for (let attempt = 0; attempt < 2 && (read === undefined || read.counted?.strayRevision === true); attempt++) {
    const statefulSet = await client.tryGet(type, name, namespace);
    if (!statefulSet) return undefined;
    const matchLabels = asObject(asObject(asObject(statefulSet.spec).selector).matchLabels);
    const selector = Object.fromEntries(Object.entries(matchLabels).filter((e): e is [string, string] => typeof e[1] === 'string'));
    const pods = await client.list(POD, { namespace, labelSelector: selector });
    const counted = statefulSetReplicas(statefulSet, pods.items);
    read = { statefulSet, ...(counted ? { counted } : {}) };
  }
  return read && { statefulSet: read.statefulSet, ...(read.counted ? { replicas: read.counted.replicas } : {}) };
}
