/**
 * The runtime half of replacing replicas a RoleInstanceSet will never update (lib/engine/rbg-stranded.ts):
 * reading its RoleInstances per ordinal when the engine's `mayStrand` says the set may strand some,
 * and deleting the ones the engine names.
 */
import type { ReplicaState, RoleReplace } from '../../engine/rbg-coordination-types';
import { mayStrand } from '../../engine/rbg-stranded';
import { CONTROLLER_REVISION_LABEL, ROLE_INSTANCE_TYPE } from '../../spec/object-names';
import { JsonObject, asArray, asObject } from '../../spec/read';
import { KubeClient } from '../kube/client';
import type { KubeObject } from '../kube/types';
import { deleteReplica } from './delete-replica';
import { controlledReplicas, desiredReplicas, isStatelessSet, roleInstanceReady, workloadOf, workloadStatus } from './workloads';

/** `mayStrand` (lib/engine/rbg-stranded.ts) of the RoleInstanceSet `set` as read. */
export function setMayStrand(set: KubeObject): boolean {
  const status = workloadStatus(set as unknown as JsonObject);
  return mayStrand({ stateless: isStatelessSet(set), ...status, desired: desiredReplicas(set) });
}

/** The RoleInstances `set` controls (found by its `spec.selector.matchLabels`), an ordinal below `below` only when given. */
async function instancesOf(client: KubeClient, set: KubeObject, below?: number): Promise<{ replica: KubeObject; ordinal: number }[]> {
  const selector = asObject(asObject(set.spec).selector).matchLabels as Record<string, string> | undefined;
  const list = await client.list(ROLE_INSTANCE_TYPE, { namespace: String(set.metadata.namespace), ...(selector ? { labelSelector: selector } : {}) });
  return controlledReplicas(set, list.items, below);
}

/**
 * Each ordinal below `set`'s replicas that has a RoleInstance: `current` when on the set's one
 * revision, else `other` (stranded), Ready by RBG's `RoleInstanceReady` condition.
 */
export async function roleInstanceReplicas(client: KubeClient, set: KubeObject): Promise<ReplicaState[]> {
  const revision = workloadStatus(set as unknown as JsonObject).updateRevision;
  return (await instancesOf(client, set, desiredReplicas(set)))
    .map(({ replica: instance, ordinal }) => ({
      ordinal,
      revision: instance.metadata.labels?.[CONTROLLER_REVISION_LABEL] === revision ? ('current' as const) : ('other' as const),
      ready: roleInstanceReady(instance),
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
  if (!set || !setMayStrand(set) || workloadStatus(set as unknown as JsonObject).updateRevision !== rep.revision) return 0;
  let deleted = 0;
  for (const { replica: instance, ordinal } of await instancesOf(client, set)) {
    if (!rep.ordinals.includes(ordinal) || instance.metadata.deletionTimestamp || instance.metadata.labels?.[CONTROLLER_REVISION_LABEL] === rep.revision) continue;
    if (await deleteReplica(client, ROLE_INSTANCE_TYPE, instance, namespace)) deleted++;
  }
  return deleted;
}
