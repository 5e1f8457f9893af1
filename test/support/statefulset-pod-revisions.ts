/**
 * The revision each StatefulSet Pod of a group ran, per Pod name (per ordinal), from a Pod watch:
 * the proof that a forward rollout never sent a replica back. A StatefulSet labels each Pod with the
 * ControllerRevision it was made from (`controller-revision-hash`, the same string as the workload's
 * `updateRevision`); in a forward rollout an ordinal goes from the old revision to the new one once,
 * and a Pod on the new revision is never deleted. A workload's counts cannot show either (a replica
 * killed and recreated on the same revision leaves `updatedReplicas` where it was, or dips it for
 * one state); the Pods can. Test support, not the package's API.
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes } from '../../lib/runtime/kube/types';
import { CONTROLLER_REVISION_LABEL as REVISION_LABEL } from '../../lib/spec/object-names';

/** One Pod (one UID) of an ordinal, as the watch saw it. */
export interface PodLife {
  readonly uid: string;
  readonly revision: string;
  /** Seen with a `deletionTimestamp`, or deleted. */
  terminated: boolean;
}

/** Revisions by Pod name since the watch started. */
export interface PodRevisions {
  /** Marks the start of a forward rollout: only Pods seen after it are judged. */
  from(): void;
  /**
   * Pods (by name) that ran a revision of `old` after a Pod of that name ran another one since
   * `from()`, each with its revisions in order: a replica sent back to the old release.
   */
  returnedToOld(old: ReadonlySet<string>): Record<string, string[]>;
  /** Pods (`name@revision`) on a revision outside `old` that were deleted since `from()`. */
  lostOnNew(old: ReadonlySet<string>): string[];
  stop(): void;
}

/** Watches the Pods of `namespace` whose names start with `<group>-` and that carry a StatefulSet revision. */
export function watchStatefulSetPodRevisions(client: KubeClient, namespace: string, group: string): PodRevisions {
  /** Per Pod name, its Pods in the order they appeared (a name's Pods follow one another). */
  const lives = new Map<string, PodLife[]>();
  let judging = false;
  const informer = client.watch(KnownTypes.Pod, namespace, (e) => {
    const name = String(e.object.metadata.name);
    const revision = e.object.metadata.labels?.[REVISION_LABEL];
    if (!judging || !name.startsWith(`${group}-`) || !revision) return;
    const uid = String(e.object.metadata.uid);
    const list = lives.get(name) ?? [];
    lives.set(name, list);
    let life = list.find((l) => l.uid === uid);
    if (!life) {
      life = { uid, revision, terminated: false };
      list.push(life);
    }
    if (e.type === 'delete' || e.object.metadata.deletionTimestamp) life.terminated = true;
  });
  return {
    from: () => {
      judging = true;
      // The Pods alive now are the first of each name (the cache holds what the watch saw).
      for (const pod of informer.list()) {
        const name = String(pod.metadata.name);
        const revision = pod.metadata.labels?.[REVISION_LABEL];
        if (!name.startsWith(`${group}-`) || !revision || lives.has(name)) continue;
        lives.set(name, [{ uid: String(pod.metadata.uid), revision, terminated: Boolean(pod.metadata.deletionTimestamp) }]);
      }
    },
    returnedToOld: (old) => {
      const out: Record<string, string[]> = {};
      for (const [name, list] of lives) {
        const firstNew = list.findIndex((l) => !old.has(l.revision));
        if (firstNew >= 0 && list.slice(firstNew).some((l) => old.has(l.revision))) out[name] = list.map((l) => l.revision);
      }
      return out;
    },
    lostOnNew: (old) => [...lives].flatMap(([name, list]) => list.filter((l) => l.terminated && !old.has(l.revision)).map((l) => `${name}@${l.revision}`)),
    stop: () => void informer.stop(),
  };
}
