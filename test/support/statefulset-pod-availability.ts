/**
 * How many replicas of each StatefulSet role are down at each moment a Pod watch sees (RBG v0.6.0's
 * roles): an ordinal below the role's replicas is up when its Pod, named `<group>-<role>-<ordinal>`,
 * is Running with its Ready condition True and not being deleted. A StatefulSet's `readyReplicas`
 * still counts a Pod being deleted while it is Ready, so a watch of the workloads alone cannot show
 * a returned Pod and the next one down at once; this one can.
 *
 * A replica down is charged to rayshift unless another actor deleted its Pod: rayshift returns a
 * replica with a Foreground delete, which puts the `foregroundDeletion` finalizer on the Pod in the
 * same write that sets its deletionTimestamp; kube-controller-manager's StatefulSet controller
 * deletes in the background (no finalizer). From a deletion seen after `from()` (the way back, where
 * no partition is lowered, so the StatefulSet controller has no update of its own to make) until the
 * ordinal is up again (through its absence and its replacement starting), the replica stays charged
 * to whoever deleted it; a replica down since before `from()` is charged to rayshift. Once kube-apiserver restarts, the StatefulSet controller may delete a Pod on its own from a
 * cache still being refilled (docs/rbg-coordination.md): no executor can prevent that, so a suite
 * that restarts kube-apiserver can leave those replicas out. A replica whose deletion the watch did
 * not see (a gap) stays charged to rayshift. Test support, not the package's API.
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes, KubeObject } from '../../lib/runtime/kube/types';

/** The most replicas of a role down at once, and the Pods' states then (`ordinal:U|S|T|-`, `*` after a replica another actor deleted). */
export interface MostDown {
  readonly down: number;
  readonly at: string;
}

/** The most replicas each role had down at once since `from()`, with the moment it first happened. */
export interface PodAvailability {
  /** Starts counting (states before are not kept). */
  from(): void;
  /**
   * Per role: the most replicas down at once, whoever took them down; with `exceptDeletedByOthers`,
   * leaving out the replicas whose Pods an actor other than rayshift deleted.
   */
  worst(o?: { exceptDeletedByOthers?: boolean }): Record<string, MostDown>;
  stop(): void;
}

/** Watches the Pods of `group`'s `replicas` roles in `namespace`. */
export function watchStatefulSetPods(client: KubeClient, namespace: string, group: string, replicas: Readonly<Record<string, number>>): PodAvailability {
  const pods = new Map<string, KubeObject>();
  // Pods (by name) down since another actor deleted them, until they are up again.
  const deletedByOthers = new Set<string>();
  const worstOfAll: Record<string, MostDown> = {};
  const worstOfOwn: Record<string, MostDown> = {};
  let counting = false;
  const isUp = (p: KubeObject): boolean => {
    const status = (p.status ?? {}) as { phase?: string; conditions?: { type: string; status: string }[] };
    return !p.metadata.deletionTimestamp && status.phase === 'Running' && (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  };
  const state = (p: KubeObject | undefined): string => (!p ? '-' : p.metadata.deletionTimestamp ? 'T' : isUp(p) ? 'U' : 'S');
  const keep = (into: Record<string, MostDown>, role: string, down: number, at: string) => {
    if (down > (into[role]?.down ?? -1)) into[role] = { down, at };
  };
  const look = () => {
    if (!counting) return;
    for (const [role, n] of Object.entries(replicas)) {
      const names = Array.from({ length: n }, (_, i) => `${group}-${role}-${i}`);
      const states = names.map((name) => state(pods.get(name)));
      const at = states.map((s, i) => `${i}:${s}${deletedByOthers.has(names[i]) ? '*' : ''}`).join(' ');
      keep(worstOfAll, role, states.filter((s) => s !== 'U').length, at);
      keep(worstOfOwn, role, states.filter((s, i) => s !== 'U' && !deletedByOthers.has(names[i])).length, at);
    }
  };
  const informer = client.watch(KnownTypes.Pod, namespace, (e) => {
    const name = String(e.object.metadata.name);
    const before = pods.get(name);
    if (e.type === 'delete') pods.delete(name);
    else pods.set(name, e.object);
    const deletionStarts = e.type !== 'delete' && e.object.metadata.deletionTimestamp !== undefined && before?.metadata.deletionTimestamp === undefined;
    // Only deletions while counting (the way back, where rayshift lowers no partition, so the
    // StatefulSet controller has no update of its own to make) are charged by who made them.
    if (deletionStarts && counting && !(e.object.metadata.finalizers ?? []).includes('foregroundDeletion')) deletedByOthers.add(name);
    else if (deletionStarts) deletedByOthers.delete(name);
    if (e.type !== 'delete' && isUp(e.object)) deletedByOthers.delete(name);
    look();
  });
  return {
    from: () => {
      counting = true;
      look();
    },
    worst: (o) => ({ ...(o?.exceptDeletedByOthers ? worstOfOwn : worstOfAll) }),
    stop: () => informer.stop(),
  };
}
