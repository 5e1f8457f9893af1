/**
 * TEST-ONLY simulated serving metrics of real Pods that run no server (kwok's pods in the test
 * cluster): one loopback `/metrics` endpoint in Prometheus' text format with a request and an
 * error counter per Ready pod, labelled as a PodMonitor would label an inference server's own
 * series: `namespace`, `pod`, the pod's RoleBasedGroup (`group`, from RBG's group-name label) and
 * its release (`app_kubernetes_io_version`, from the `app.kubernetes.io/version` label of its
 * template, which RBG's in-place update carries onto the pod).
 *
 * The load is simulated: each Ready pod serves `requestsPerSecond`, of which `errorRatio(version)`
 * fail. Counters advance at every scrape by the time since the previous one, each pod by what its
 * labels were during that time (a watch).
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes } from '../../lib/runtime/kube/types';
import { serveMetrics } from './metrics-endpoint';

/** RBG's label naming the RoleBasedGroup of a pod (v0.7.0 `constants.GroupNameLabelKey`). */
export const RBG_GROUP_NAME_LABEL = 'rbg.workloads.x-k8s.io/group-name';
/** The same label of RBG v0.6.0 (`v1alpha1.SetNameLabelKey`). */
export const RBG_V06_GROUP_NAME_LABEL = 'rolebasedgroup.workloads.x-k8s.io/name';
/** The release label of a role template. */
export const VERSION_LABEL = 'app.kubernetes.io/version';

/** Options of `startSimulatedPodMetrics`. */
export interface SimulatedPodMetricsOptions {
  readonly namespace: string;
  /** Simulated requests per second of each Ready pod. */
  readonly requestsPerSecond: number;
  /** The share of a pod's requests that fail, by its release label, 0–1. */
  readonly errorRatio: (version: string) => number;
}

/** A running endpoint. */
export interface SimulatedPodMetrics {
  /** `127.0.0.1:<port>`, a Prometheus scrape target. */
  readonly target: string;
  close(): Promise<void>;
}

interface PodLoad {
  readonly group: string;
  readonly version: string;
  readonly ready: boolean;
}

/** Starts the endpoint and the pod watch. */
export async function startSimulatedPodMetrics(admin: KubeClient, opts: SimulatedPodMetricsOptions): Promise<SimulatedPodMetrics> {
  const pods = new Map<string, PodLoad>();
  const totals = new Map<string, { labels: string; requests: number; errors: number }>();
  let last = Date.now();
  const informer = admin.watch(KnownTypes.Pod, opts.namespace, (e) => {
    advance();
    const name = String(e.object.metadata.name);
    if (e.type === 'delete') return void pods.delete(name);
    const labels = e.object.metadata.labels ?? {};
    const conditions = ((e.object.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
    pods.set(name, {
      group: labels[RBG_GROUP_NAME_LABEL] ?? labels[RBG_V06_GROUP_NAME_LABEL] ?? '',
      version: labels[VERSION_LABEL] ?? '',
      ready: conditions.some((c) => c.type === 'Ready' && c.status === 'True') && e.object.metadata.deletionTimestamp === undefined,
    });
  });

  /** Adds each Ready pod's requests of the time since the last call. */
  function advance(): void {
    const now = Date.now();
    const seconds = (now - last) / 1000;
    last = now;
    for (const [pod, load] of pods) {
      if (!load.ready) continue;
      const labels = `namespace="${opts.namespace}",pod="${pod}",group="${load.group}",app_kubernetes_io_version="${load.version}"`;
      const t = totals.get(labels) ?? { labels, requests: 0, errors: 0 };
      const requests = opts.requestsPerSecond * seconds;
      totals.set(labels, { labels, requests: t.requests + requests, errors: t.errors + requests * opts.errorRatio(load.version) });
    }
  }

  const endpoint = await serveMetrics(() => {
    advance();
    return [
      '# TYPE simulated_pod_requests_total counter',
      ...[...totals.values()].map((t) => `simulated_pod_requests_total{${t.labels}} ${t.requests}`),
      '# TYPE simulated_pod_errors_total counter',
      ...[...totals.values()].map((t) => `simulated_pod_errors_total{${t.labels}} ${t.errors}`),
    ];
  });
  return {
    target: endpoint.target,
    close: async () => {
      informer.stop();
      await endpoint.close();
    },
  };
}
