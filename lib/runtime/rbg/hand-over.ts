/**
 * Handing a RoleBasedGroup back when it no longer names the executor that rolled it (its
 * `rayshift.dev/coordination-executor` label removed or changed): the roles it armed or stopped are
 * unpaused, so they roll again under their new executor, and its status annotation goes.
 */
import { roleReplicas, roleWorkloadType, workloadHonoursPaused } from '../../spec/rbg-releases';
import { RbgResourceType, STATUS_ANNOTATION } from '../../spec/object-names';
import { asArray, asObject } from '../../spec/read';
import type { KubeClient } from '../kube/client';
import { jsonPointer } from '../kube/json-pointer';
import type { JsonPatchOp } from '../kube/request-options';
import type { KubeObject } from '../kube/types';
import { readRolloutStatus } from './status';

/**
 * Hands back a group that no longer names this executor (its label was removed or changed):
 * unpauses the roles this executor coordinated (armed or stopped roles would otherwise never
 * roll again) and removes the status annotation, in one guarded patch. Partitions are left as
 * they are, but for a role held by its partition (a StatefulSet), whose arming partition goes.
 * Returns the API writes made (0 when there is nothing to hand back). A lost write race is
 * thrown, for the caller's retry.
 */
export async function handOver(client: KubeClient, type: RbgResourceType, group: KubeObject, log: { info(obj: object, msg: string): void }): Promise<number> {
  const namespace = String(group.metadata.namespace);
  const name = String(group.metadata.name);
  const status = readRolloutStatus(group);
  if (!status) return 0;
  const reported = new Map(status.coordinations.flatMap((c) => c.roles.map((r) => [r.name, r] as const)));
  const ops: JsonPatchOp[] = [];
  asArray(asObject(group.spec).roles).forEach((value, index) => {
    const role = asObject(value);
    const ru = asObject(asObject(role.rolloutStrategy).rollingUpdate);
    if (!reported.has(String(role.name)) || ru.paused !== true) return;
    ops.push({ op: 'test', path: `/spec/roles/${index}/name`, value: role.name }, { op: 'replace', path: `/spec/roles/${index}/rolloutStrategy/rollingUpdate/paused`, value: false });
    // A role held by its partition (its workload ignores paused) was armed at partition = replicas:
    // unpausing it is lowering that to the partition its last rollout ended at (the user's floor).
    const replicas = roleReplicas(role);
    if (!workloadHonoursPaused(roleWorkloadType(group.apiVersion, role).kind) && typeof ru.partition === 'number' && ru.partition >= replicas) {
      const floor = reported.get(String(role.name))!.partition;
      ops.push({ op: 'replace', path: `/spec/roles/${index}/rolloutStrategy/rollingUpdate/partition`, value: floor < replicas ? floor : 0 });
    }
  });
  ops.push({ op: 'remove', path: jsonPointer('metadata', 'annotations', STATUS_ANNOTATION) });
  await client.patchJson(type, name, namespace, [{ op: 'test', path: '/metadata/resourceVersion', value: group.metadata.resourceVersion }, ...ops]);
  log.info({ rbg: `${namespace}/${name}`, roles: [...reported.keys()] }, 'handed the group back to its new executor');
  return 1;
}
