/**
 * The `rollback` steering verb's write on a RoleBasedGroup, for the CLI's kubeconfig path and the
 * API server (as the caller): the steering rules of lib/engine/rbg-steering.ts on a fresh read of the
 * group, and their patch guarded by the resourceVersion read (re-read and re-checked on a conflict:
 * the executor writes the group often). The executor then starts the tandem rollback rounds.
 */
import type { KubeClient } from '../kube/client';
import { retryOnConflict } from '../kube/retry';
import type { KubeObject } from '../kube/types';
import { readRolloutStatus } from './status';
import { rbgRollbackPatch, rbgRollbackRefusal } from '../../engine/rbg-steering';
import type { SteeringRecord } from '../../engine/steering';
import { RBG_V1ALPHA1_TYPE, RBG_V1ALPHA2_TYPE } from '../../spec/object-names';

/** What a rollback of a group came to: done, the group missing, or refused (the rules' words). */
export type GroupRollbackOutcome = { readonly done: true; readonly group: KubeObject } | { readonly done: false; readonly missing: true } | { readonly done: false; readonly missing?: false; readonly refusal: string };

/** Rolls the rollouts in flight of group `namespace/name` back, as the steering `record` says, unless the rules refuse. */
export async function rollbackGroup(client: KubeClient, namespace: string, name: string, record: SteeringRecord): Promise<GroupRollbackOutcome> {
  return retryOnConflict(async () => {
    for (const type of [RBG_V1ALPHA2_TYPE, RBG_V1ALPHA1_TYPE]) {
      const group = await client.tryGet(type, name, namespace);
      if (!group) continue;
      const coordinations = readRolloutStatus(group)?.coordinations ?? [];
      const refusal = rbgRollbackRefusal(coordinations);
      if (refusal !== undefined) return { done: false, refusal };
      const patch = rbgRollbackPatch(coordinations, record);
      const patched = await client.patchMerge(type, name, namespace, { metadata: { ...patch.metadata, resourceVersion: group.metadata.resourceVersion } });
      return { done: true, group: patched };
    }
    return { done: false, missing: true };
  });
}
