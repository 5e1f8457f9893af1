/**
 * TEST-ONLY simulated Ray Serve metrics for the cluster suites, where no Ray process runs: one
 * loopback `/metrics` endpoint in Prometheus' text format with the counters Ray Serve's HTTP proxy
 * exports (`ray_serve_num_http_requests_total`, `ray_serve_num_http_error_requests_total`), one
 * series per RayCluster, labelled `ray_io_cluster` as KubeRay's PodMonitor labels them.
 *
 * The load is simulated too: `requestsPerSecond` requests split by the service's HTTPRoute weights
 * as the API server reports them (a watch), and each cluster fails `errorRatio(cluster)` of its
 * share. The counters are advanced at every scrape by the time since the previous one, so a real
 * Prometheus scraping this endpoint sees rates that follow the route's weights.
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { serveMetrics } from './metrics-endpoint';
import { HTTPROUTE } from './operator-env';

/** A running simulated metrics endpoint. */
export interface SimulatedServeMetrics {
  /** `127.0.0.1:<port>`, a Prometheus scrape target. */
  readonly target: string;
  /** Requests and errors counted so far per cluster. */
  counted(cluster: string): { requests: number; errors: number };
  close(): Promise<void>;
}

/** Options of `startSimulatedServeMetrics`. */
export interface SimulatedServeMetricsOptions {
  /** Whose route splits the simulated load. */
  readonly namespace: string;
  readonly routeName: string;
  /** Simulated requests per second over all clusters. */
  readonly requestsPerSecond: number;
  /** The share of a cluster's requests that fail with 500, 0–1. */
  readonly errorRatio: (cluster: string) => number;
}

/** Starts the endpoint and the route watch. */
export async function startSimulatedServeMetrics(admin: KubeClient, opts: SimulatedServeMetricsOptions): Promise<SimulatedServeMetrics> {
  let weights = new Map<string, number>();
  const totals = new Map<string, { requests: number; errors: number }>();
  let last = Date.now();
  const informer = admin.watch(HTTPROUTE, opts.namespace, (e) => {
    if (e.object.metadata.name !== opts.routeName || e.type === 'delete') return;
    const rule = ((e.object.spec as { rules?: { backendRefs?: { name: string; weight?: number }[] }[] }).rules ?? [])[0];
    advance();
    weights = new Map((rule?.backendRefs ?? []).map((b) => [b.name.replace(/-serve-svc$/, ''), b.weight ?? 1]));
  });
  informer.start();

  /** Adds the requests of the time since the last call, split by the current weights. */
  function advance(): void {
    const now = Date.now();
    const seconds = (now - last) / 1000;
    last = now;
    const sum = [...weights.values()].reduce((a, b) => a + b, 0);
    if (sum === 0) return;
    for (const [cluster, w] of weights) {
      const t = totals.get(cluster) ?? { requests: 0, errors: 0 };
      const requests = (opts.requestsPerSecond * seconds * w) / sum;
      totals.set(cluster, { requests: t.requests + requests, errors: t.errors + requests * opts.errorRatio(cluster) });
    }
  }

  const endpoint = await serveMetrics(() => {
    advance();
    return [
      '# TYPE ray_serve_num_http_requests_total counter',
      ...[...totals].map(([c, t]) => `ray_serve_num_http_requests_total{ray_io_cluster="${c}",route="/",method="GET",application="app"} ${t.requests}`),
      '# TYPE ray_serve_num_http_error_requests_total counter',
      ...[...totals].map(([c, t]) => `ray_serve_num_http_error_requests_total{ray_io_cluster="${c}",route="/",method="GET",application="app",error_code="500"} ${t.errors}`),
    ];
  });
  return {
    target: endpoint.target,
    counted: (cluster) => ({ ...(totals.get(cluster) ?? { requests: 0, errors: 0 }) }),
    close: async () => {
      informer.stop();
      await endpoint.close();
    },
  };
}
