/**
 * Carries a role's partition into its StatefulSet where RBG v0.6.0 leaves it above. v0.6.0 takes
 * any change of a role's rollout strategy for a new rolling update: it resets the StatefulSet's
 * partition to the replicas (the role's partition is only a floor) and lowers it by its own steps
 * on later reconciles, which only a change of the group's spec or of a workload's status starts. A
 * round that moves no replica starts none, so the StatefulSet stayed at replicas and the rollout
 * stalled (seen on the real v0.6.0 controller: 4 prefill / 2 decode, round 1 written at partitions
 * 2 and 1, nothing updated for 3 min). Writing the role's partition into the StatefulSet is what
 * v0.6.0's next step computes at most (it never goes below the role's partition), and the change
 * of the StatefulSet wakes v0.6.0, which then keeps it.
 */
import type { ObservedRole, RoleWrite } from '../../engine/rbg-coordination-types';
import { JsonObject, asArray, asObject } from '../../spec/read';
import { KubeClient } from '../kube/client';
import { isPatchConflict } from '../kube/errors';
import { KubeObject } from '../kube/types';
import { workloadOf } from './workloads';

const PARTITION = '/spec/updateStrategy/rollingUpdate/partition';

/**
 * For each role held by its partition (`holdsByPartition`) that this pass leaves unpaused, lowers
 * its StatefulSet's partition to the role's when the StatefulSet carries a higher one (guarded by a
 * `test` of the value read, so a concurrent write of RBG wins and the next pass looks again).
 * Returns the StatefulSets written.
 */
export async function carryPartitions(client: KubeClient, group: KubeObject, roles: ReadonlyMap<string, ObservedRole>, writes: readonly RoleWrite[]): Promise<number> {
  const namespace = String(group.metadata.namespace);
  const specRoles = asArray(asObject(group.spec).roles).map(asObject);
  let carried = 0;
  for (const role of roles.values()) {
    const written = writes.find((w) => w.name === role.name);
    const partition = written ? written.partition : role.partition ?? 0;
    const paused = written ? written.paused : role.paused;
    const carriedNow = role.progress?.source === 'workload' ? role.progress.workloadPartition : undefined;
    if (!role.holdsByPartition || paused || carriedNow === undefined || carriedNow <= partition) continue;
    const ref = workloadOf(group as unknown as JsonObject, specRoles[role.index]);
    if (ref.type.kind !== 'StatefulSet') continue;
    try {
      await client.patchJson(ref.type, ref.name, namespace, [
        { op: 'test', path: PARTITION, value: carriedNow },
        { op: 'replace', path: PARTITION, value: partition },
      ]);
      carried++;
    } catch (err) {
      // A failed test: RBG wrote the StatefulSet meanwhile; the next pass reads it again.
      if (!isPatchConflict(err)) throw err;
    }
  }
  return carried;
}
