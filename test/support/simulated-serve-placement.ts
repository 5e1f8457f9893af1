/**
 * TEST-ONLY: the Ray nodes a simulated Serve places its replicas on (serve-simulator-placement.ts),
 * read from the real Pods. kwok runs no Ray process, so no Ray node joins any cluster; this watches
 * a namespace's KubeRay Pods and answers, per cluster, the Pods a raylet would run on: Running with
 * an IP and not terminating (KubeRay's delete stops the raylet, and the actors on it die with it).
 * Give `nodes` to each cluster's dashboard as its `placement` (`startOperatorHarness({ serve })`).
 * Of lib/ it imports only the Kubernetes client's type (the way to watch, not code under test).
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import type { SimulatedServeNode } from './serve-simulator';

const POD_TYPE = { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true } as const;

/** A running Pod watch; `nodes(namespace, cluster)` is what each cluster's Serve places on. */
export interface SimulatedServePlacement {
  /** The cluster's Ray nodes now: head and workers, by Pod name. */
  nodes(namespace: string, cluster: string): SimulatedServeNode[];
  waitForSync(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** Watches `namespace`'s Pods with `client` (every namespace with `'*'`). */
export function startSimulatedServePlacement(client: KubeClient, namespace = '*'): SimulatedServePlacement {
  const pods = client.watch(POD_TYPE, namespace, undefined, { resyncIntervalMs: 0 });
  return {
    nodes(ns, cluster) {
      const out: SimulatedServeNode[] = [];
      for (const p of pods.list(ns)) {
        const labels = p.metadata.labels ?? {};
        const status = (p.status ?? {}) as { phase?: string; podIP?: string };
        const kind = labels['ray.io/node-type'];
        if (labels['ray.io/cluster'] !== cluster || (kind !== 'head' && kind !== 'worker')) continue;
        if (p.metadata.deletionTimestamp !== undefined || status.phase !== 'Running' || !status.podIP) continue;
        out.push({ name: String(p.metadata.name), kind, ip: status.podIP });
      }
      // By name, so a run's placement does not depend on the watch's order.
      return out.sort((a, b) => a.name.localeCompare(b.name));
    },
    waitForSync: (timeoutMs) => pods.waitForSync(timeoutMs),
    stop: () => pods.stop(),
  };
}
