/**
 * TEST-ONLY stand-in for the one thing a kubelet does at the end of a Pod's life that kwok's stages
 * cannot do safely: the final delete. A Pod bound to a Node is only marked for deletion by a client
 * (`deletionTimestamp`); the kubelet of its Node removes it once its containers stopped and its
 * finalizers are gone, with `gracePeriodSeconds: 0` and a UID precondition (kubelet's status manager,
 * `canBeDeleted` then `Delete(… Preconditions: UID)`). kwok's `pod-delete` Stage deletes by name only
 * and from its informer's view: a StatefulSet recreates a Pod under the same name at once, and a
 * stale delete of the old Pod then killed the fresh one (78–89 per `cluster-rbg-operator` run).
 *
 * This one watches the Pods bound to the test cluster's kwok Nodes (one informer over every
 * namespace, field selector `spec.nodeName!=`; the informer resumes after a dropped watch and relists
 * on 410) and sends ONE delete per UID once the Pod is terminating with no finalizer left. 404 (gone
 * already) and 409 (the name belongs to a newer Pod now) are the expected answers of a late delete,
 * counted, not errors; a delete the server did not answer (an API server restart) is sent again at
 * the next event or resync of that Pod. Pods on other Nodes are left alone. Of lib/ it imports only
 * the Kubernetes client and its error status (the way every test simulator talks to the API server).
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { errorStatus } from '../../lib/runtime/kube/errors';
import type { Informer } from '../../lib/runtime/kube/informer';
import { ALL_NAMESPACES, KnownTypes, KubeObject } from '../../lib/runtime/kube/types';

/** What the deleter did so far. */
export interface DeleterCounts {
  /** Deletes the API server accepted (the Pod with that UID is gone). */
  readonly deleted: number;
  /** Deletes answered 404: the Pod was gone already. */
  readonly alreadyGone: number;
  /** Deletes answered 409: the name belongs to a newer Pod (a delete by name would have killed it). */
  readonly nameReused: number;
  /** Other failures, each `namespace/name: message` (sent again at the Pod's next event). */
  readonly failures: readonly string[];
}

/** A running deleter. */
export interface SimulatedKubeletDeleter {
  /** Resolves once the informer's first list is in. */
  synced(): Promise<void>;
  counts(): DeleterCounts;
  /** Stops the informer and waits for the deletes in flight. */
  stop(): Promise<void>;
}

/** A kubelet re-syncs its Pods; this is how often a Pod whose delete failed is looked at again. */
const RESYNC_MS = 10_000;

/** How the API server answered a final delete: done, the Pod was gone, or the name is a newer Pod's. */
export type FinalDeleteOutcome = 'deleted' | 'already-gone' | 'name-reused';

/**
 * The kubelet's final delete of `pod` as this process last saw it: `gracePeriodSeconds: 0` with the
 * Pod's UID as precondition, so that a view gone stale can only miss, never kill the Pod that took
 * the name since. Throws on any other answer than 2xx, 404 and 409.
 */
export async function sendFinalDelete(client: KubeClient, pod: KubeObject): Promise<FinalDeleteOutcome> {
  try {
    await client.delete(KnownTypes.Pod, String(pod.metadata.name), String(pod.metadata.namespace), { gracePeriodSeconds: 0, preconditions: { uid: String(pod.metadata.uid) } });
    return 'deleted';
  } catch (e) {
    const status = errorStatus(e);
    if (status === 404) return 'already-gone';
    if (status === 409) return 'name-reused';
    throw e;
  }
}

/** Starts deleting the terminating Pods of the Nodes `nodes` (the cluster's kwok Nodes). */
export function startSimulatedKubeletDeleter(client: KubeClient, nodes: readonly string[]): SimulatedKubeletDeleter {
  const ours = new Set(nodes);
  /** UIDs a delete was sent for (and answered, or is in flight). */
  const sent = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  const outcomes: Record<FinalDeleteOutcome, number> = { deleted: 0, 'already-gone': 0, 'name-reused': 0 };
  const failures: string[] = [];

  const finalDelete = async (pod: KubeObject, uid: string) => {
    try {
      outcomes[await sendFinalDelete(client, pod)]++;
    } catch (e) {
      failures.push(`${pod.metadata.namespace}/${pod.metadata.name}: ${(e as Error).message}`);
      sent.delete(uid);
    }
  };

  const informer: Informer = client.watch(
    KnownTypes.Pod,
    ALL_NAMESPACES,
    (e) => {
      if (e.type === 'delete') return;
      const pod = e.object;
      const uid = String(pod.metadata.uid);
      const node = String((pod.spec as { nodeName?: string } | undefined)?.nodeName ?? '');
      if (!ours.has(node) || !pod.metadata.deletionTimestamp || (pod.metadata.finalizers ?? []).length > 0 || sent.has(uid)) return;
      sent.add(uid);
      const p = finalDelete(pod, uid).finally(() => inFlight.delete(p));
      inFlight.add(p);
    },
    { fieldSelector: 'spec.nodeName!=', resyncIntervalMs: RESYNC_MS },
  );

  return {
    synced: () => informer.waitForSync(),
    counts: () => ({ deleted: outcomes.deleted, alreadyGone: outcomes['already-gone'], nameReused: outcomes['name-reused'], failures: [...failures] }),
    stop: async () => {
      await informer.stop();
      await Promise.all(inFlight);
    },
  };
}
