/**
 * How many replicas of each StatefulSet role are down at each moment a Pod watch sees (RBG v0.6.0's
 * roles): an ordinal below the role's replicas is up when its Pod, named `<group>-<role>-<ordinal>`,
 * is Running with its Ready condition True and not being deleted. A StatefulSet's `readyReplicas`
 * still counts a Pod being deleted while it is Ready, so a watch of the workloads alone cannot show
 * a returned Pod and the next one down at once; this one can. Test support, not the package's API.
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes, KubeObject } from '../../lib/runtime/kube/types';

/** The most replicas each role had down at once since `from()`, with the moment it first happened. */
export interface PodAvailability {
  /** Starts counting (states before are not kept). */
  from(): void;
  /** Per role: the most replicas down at once, and the Pods' states then (`ordinal:U|S|T|-`). */
  worst(): Record<string, { down: number; at: string }>;
  stop(): void;
}

/** Watches the Pods of `group`'s `replicas` roles in `namespace`. */
export function watchStatefulSetPods(client: KubeClient, namespace: string, group: string, replicas: Readonly<Record<string, number>>): PodAvailability {
  const pods = new Map<string, KubeObject>();
  const worst: Record<string, { down: number; at: string }> = {};
  let counting = false;
  const state = (p: KubeObject | undefined): string => {
    if (!p) return '-';
    if (p.metadata.deletionTimestamp) return 'T';
    const status = (p.status ?? {}) as { phase?: string; conditions?: { type: string; status: string }[] };
    return status.phase === 'Running' && (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') ? 'U' : 'S';
  };
  const look = () => {
    if (!counting) return;
    for (const [role, n] of Object.entries(replicas)) {
      const states = Array.from({ length: n }, (_, i) => state(pods.get(`${group}-${role}-${i}`)));
      const down = states.filter((s) => s !== 'U').length;
      if (down > (worst[role]?.down ?? -1)) worst[role] = { down, at: states.map((s, i) => `${i}:${s}`).join(' ') };
    }
  };
  const informer = client.watch(KnownTypes.Pod, namespace, (e) => {
    if (e.type === 'delete') pods.delete(String(e.object.metadata.name));
    else pods.set(String(e.object.metadata.name), e.object);
    look();
  });
  return {
    from: () => {
      counting = true;
      look();
    },
    worst: () => ({ ...worst }),
    stop: () => informer.stop(),
  };
}
