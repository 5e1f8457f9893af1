/**
 * The runtime half of a rollback round (lib/engine/rbg-rollback.ts): replaces the replicas of one
 * role that run the abandoned revision below the partition the round wrote. RBG's workloads never
 * roll a replica back themselves; they recreate a missing ordinal below their partition from their
 * current revision (the one before the rollout), so deleting such a replica returns it. Observed with
 * RBG v0.7.0's RoleInstanceSet: with its partition raised from 2 to 3, nothing moved back; its
 * RoleInstance `-2` deleted came back at the current revision, its Pod on the old image.
 */
import type { RoleReturn } from '../../engine/rbg-coordination-types';
import { CONTROLLER_REVISION_LABEL, ROLE_INSTANCE_TYPE } from '../../spec/object-names';
import { JsonObject, asArray, asObject } from '../../spec/read';
import { KubeClient } from '../kube/client';
import { KubeApiError } from '../kube/errors';
import { KnownTypes, KubeObject, ResourceType } from '../kube/types';
import { workloadOf, workloadStatus } from './workloads';

/** The kind of each workload's replicas, named `<workload>-<ordinal>` and labelled with their revision. */
const REPLICA_TYPES: Readonly<Record<string, ResourceType>> = { RoleInstanceSet: ROLE_INSTANCE_TYPE, StatefulSet: KnownTypes.Pod };

/**
 * Deletes every replica of the role `ret` names whose ordinal is below `ret.below` and whose
 * revision label is the workload's update revision (the abandoned one), once the workload carries a
 * partition of at least `ret.below` (else a replica would come back on the abandoned revision).
 * Each delete is guarded by the replica's uid, so a replica recreated meanwhile stays. Returns the
 * replicas deleted; 0 when the workload is not there yet, or is of a kind without ordinals.
 */
export async function returnReplicas(client: KubeClient, group: KubeObject, ret: RoleReturn): Promise<number> {
  const role = asObject(asArray(asObject(group.spec).roles)[ret.index]);
  if (role.name !== ret.name) return 0;
  const ref = workloadOf(group as unknown as JsonObject, role);
  const replicaType = REPLICA_TYPES[ref.type.kind];
  const namespace = String(group.metadata.namespace);
  if (!replicaType) return 0;
  const workload = await client.tryGet(ref.type, ref.name, namespace);
  if (!workload) return 0;
  const status = workloadStatus(workload as unknown as JsonObject);
  const current = asObject(workload.status).currentRevision;
  const abandoned = status.updateRevision;
  if (abandoned === undefined || abandoned === current || (status.partition ?? -1) < ret.below) return 0;
  const ordinal = new RegExp(`^${ref.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`);
  const replicas = await client.list(replicaType, { namespace, labelSelector: { [CONTROLLER_REVISION_LABEL]: abandoned } });
  let deleted = 0;
  for (const r of replicas.items) {
    const m = ordinal.exec(String(r.metadata.name));
    const owned = (r.metadata.ownerReferences ?? []).some((o) => o.kind === ref.type.kind && o.name === ref.name);
    if (!m || !owned || Number(m[1]) >= ret.below || r.metadata.deletionTimestamp) continue;
    try {
      if (await client.delete(replicaType, String(r.metadata.name), namespace, { preconditions: { uid: String(r.metadata.uid) }, ignoreNotFound: true })) deleted++;
    } catch (err) {
      // A failed uid precondition: the replica was replaced meanwhile, by the workload from its current revision.
      if (!(err instanceof KubeApiError && err.isConflict)) throw err;
    }
  }
  return deleted;
}
