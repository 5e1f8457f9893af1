/**
 * Lists what the capacity preflight (lib/engine/capacity-demand.ts) reads: every Node, every Pod
 * bound to a node (a field selector, so Pending Pods are never transferred), and the namespace's
 * ResourceQuotas and LimitRanges. Reads only, each a `list` the operator's RBAC grants. The
 * RayService's observer and `plan --cluster` call it before an upgrade, the RoleBasedGroup
 * reconciler before a rollout's first round.
 */
import type { ListedCapacity } from '../engine/capacity-demand';
import type { KubeClient } from './kube/client';
import { KnownTypes } from './kube/types';

/** Lists the cluster's capacity for a preflight of an upgrade or rollout in `namespace`. */
export async function listCapacity(client: Pick<KubeClient, 'list'>, namespace: string): Promise<ListedCapacity> {
  const [nodes, pods, quotas, limitRanges] = await Promise.all([
    client.list(KnownTypes.Node),
    client.list(KnownTypes.Pod, { fieldSelector: 'spec.nodeName!=' }),
    client.list(KnownTypes.ResourceQuota, { namespace }),
    client.list(KnownTypes.LimitRange, { namespace }),
  ]);
  return { nodes: nodes.items, pods: pods.items, quotas: quotas.items, limitRanges: limitRanges.items };
}
