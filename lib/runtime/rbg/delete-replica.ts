/**
 * Deletes one replica of a role's workload (a RoleInstance, or a StatefulSet's Pod) so that the
 * workload recreates its ordinal: guarded by the replica's uid (one replaced meanwhile stays), in
 * the foreground. A RoleInstance finds its Pods by a label of its name, so one recreated while the
 * old Pods await the garbage collector counts them and reports Ready for a replica about to go
 * down (seen under load on RBG v0.7.0: a rollback round then took maxUnavailable + 1 down).
 */
import { KubeClient } from '../kube/client';
import { KubeApiError } from '../kube/errors';
import type { KubeObject, ResourceType } from '../kube/types';

/** True when the replica was deleted; false when it was gone or replaced meanwhile (a failed uid precondition). */
export async function deleteReplica(client: KubeClient, type: ResourceType, replica: KubeObject, namespace: string): Promise<boolean> {
  try {
    return await client.delete(type, String(replica.metadata.name), namespace, { preconditions: { uid: String(replica.metadata.uid) }, propagationPolicy: 'Foreground', ignoreNotFound: true });
  } catch (err) {
    if (err instanceof KubeApiError && err.isConflict) return false;
    throw err;
  }
}
