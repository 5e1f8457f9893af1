/**
 * The Pods of a RoleBasedGroup, listed by the group label RBG puts on every Pod of the group (one of
 * those the routers' service discovery selects by), at most once per pass whichever readers ask:
 * the routers' ready Pods per release (`router-route.ts`) and the coordinated roles' Pods for the
 * scheduler watch (`podsByRole`; the engine counts the Unschedulable ones). Read fresh from the API
 * server, not a cache.
 */
import { POD, rbgPodLabels } from '../../spec/object-names';
import type { KubeClient } from '../kube/client';
import type { KubeObject } from '../kube/types';

/** The group's Pods, listed on the first call of a pass and the same list on every later one. */
export type GroupPods = () => Promise<readonly KubeObject[]>;

/** A `GroupPods` for one pass over `group`. */
export function groupPodsOnce(client: KubeClient, group: KubeObject): GroupPods {
  let listed: Promise<readonly KubeObject[]> | undefined;
  return () => {
    listed ??= client.list(POD, { namespace: String(group.metadata.namespace), labelSelector: { [rbgPodLabels(group).group]: String(group.metadata.name) } }).then((l) => l.items);
    return listed;
  };
}

/** The Pods among `pods` of each of `roles`, by RBG's role label; a role without any is absent. */
export function podsByRole(group: KubeObject, pods: readonly KubeObject[], roles: ReadonlySet<string>): Map<string, KubeObject[]> {
  const label = rbgPodLabels(group).role;
  const byRole = new Map<string, KubeObject[]>();
  for (const pod of pods) {
    const role = pod.metadata.labels?.[label];
    if (role === undefined || !roles.has(role)) continue;
    const of = byRole.get(role);
    if (of) of.push(pod);
    else byRole.set(role, [pod]);
  }
  return byRole;
}
