/**
 * The runtime half of replacing replicas a RoleInstanceSet will never update (lib/engine/rbg-stranded.ts):
 * reading its RoleInstances per ordinal when it reports its update revision equal to its current
 * one with fewer replicas updated than it has, and deleting the ones the engine names.
 */
import type { ReplicaState, RoleReplace } from '../../engine/rbg-coordination-types';
import { CONTROLLER_REVISION_LABEL, ROLE_INSTANCE_TYPE } from '../../spec/object-names';
import { JsonObject, asArray, asObject } from '../../spec/read';
import { KubeClient } from '../kube/client';
import type { KubeObject } from '../kube/types';
import { deleteReplica } from './delete-replica';
import { ordinalOf, workloadOf } from './workloads';

/** RBG's condition of a ready RoleInstance (`RoleInstanceReady`, api/workloads/v1alpha2). */
const ROLE_INSTANCE_READY = 'RoleInstanceReady';

/** True when `set` (a RoleInstanceSet) says it is on one revision yet counts fewer replicas updated than it has. */
export function mayStrand(set: KubeObject): boolean {
  const status = asObject(set.status);
  const replicas = asObject(set.spec).replicas;
  return typeof status.updateRevision === 'string' && status.updateRevision === status.currentRevision && typeof status.updatedReplicas === 'number' && status.updatedReplicas < (typeof replicas === 'number' ? replicas : 1);
}

/** The RoleInstances `set` controls (by its uid, found by its `spec.selector.matchLabels`). */
async function instancesOf(client: KubeClient, set: KubeObject): Promise<{ instance: KubeObject; ordinal: number }[]> {
  const selector = asObject(asObject(set.spec).selector).matchLabels as Record<string, string> | undefined;
  const namespace = String(set.metadata.namespace);
  const list = await client.list(ROLE_INSTANCE_TYPE, { namespace, ...(selector ? { labelSelector: selector } : {}) });
  return list.items.flatMap((instance) => {
    const ordinal = ordinalOf(String(set.metadata.name), instance.metadata.name);
    const controlled = (instance.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.uid === set.metadata.uid);
    return ordinal !== undefined && controlled ? [{ instance, ordinal }] : [];
  });
}

/**
 * Each ordinal below `set`'s replicas that has a RoleInstance: `current` when on the set's one
 * revision, else `other` (stranded), Ready by RBG's `RoleInstanceReady` condition.
 */
export async function roleInstanceReplicas(client: KubeClient, set: KubeObject): Promise<ReplicaState[]> {
  const revision = asObject(set.status).updateRevision;
  const size = asObject(set.spec).replicas;
  const replicas = typeof size === 'number' ? size : 1;
  return (await instancesOf(client, set))
    .filter((x) => x.ordinal < replicas)
    .map(({ instance, ordinal }) => ({
      ordinal,
      revision: instance.metadata.labels?.[CONTROLLER_REVISION_LABEL] === revision ? ('current' as const) : ('other' as const),
      ready: asArray(asObject(instance.status).conditions).some((c) => asObject(c).type === ROLE_INSTANCE_READY && asObject(c).status === 'True'),
      terminating: Boolean(instance.metadata.deletionTimestamp),
    }))
    .sort((a, b) => a.ordinal - b.ordinal);
}

/**
 * Deletes the RoleInstances of the role `rep` names at its ordinals that are still on a revision
 * other than `rep.revision` and not terminating (each guarded by its uid); the set recreates each
 * from its revision. Returns how many were deleted; none when the role's workload is not a
 * RoleInstanceSet or no longer on `rep.revision`.
 */
export async function replaceStranded(client: KubeClient, group: KubeObject, rep: RoleReplace): Promise<number> {
  const role = asObject(asArray(asObject(group.spec).roles)[rep.index]);
  if (role.name !== rep.name) return 0;
  const ref = workloadOf(group as unknown as JsonObject, role);
  if (ref.type.kind !== 'RoleInstanceSet') return 0;
  const namespace = String(group.metadata.namespace);
  const set = await client.tryGet(ref.type, ref.name, namespace);
  if (!set || !mayStrand(set) || asObject(set.status).updateRevision !== rep.revision) return 0;
  let deleted = 0;
  for (const { instance, ordinal } of await instancesOf(client, set)) {
    if (!rep.ordinals.includes(ordinal) || instance.metadata.deletionTimestamp || instance.metadata.labels?.[CONTROLLER_REVISION_LABEL] === rep.revision) continue;
    if (await deleteReplica(client, ROLE_INSTANCE_TYPE, instance, namespace)) deleted++;
  }
  return deleted;
}
