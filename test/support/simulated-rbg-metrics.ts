/**
 * TEST-ONLY simulated serving metrics of RoleBasedGroups, where no inference server runs: one
 * loopback `/metrics` endpoint in Prometheus' text format with a request and an error counter per
 * group and revision (`simulated_rbg_requests_total{namespace,group,revision}`,
 * `simulated_rbg_errors_total{…}`). `revision` is the revision the rayshift executor rolls to (its
 * status annotation's `revision`, the `{{cluster}}` of a RoleBasedGroup's analysis queries while no
 * workload reports its own), so a real Prometheus scraping this endpoint sees the new revision's
 * series as a query of the analysis selects them.
 *
 * The load is simulated too: `requestsPerSecond` per group, split by the updated replicas the
 * group's status reports (a watch); the new revision fails `errorRatio(group)` of its share. The
 * counters advance at every scrape by the time since the previous one.
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { readRolloutStatus } from '../../lib/runtime/rbg/status';
import type { RbgResourceType } from '../../lib/spec/object-names';
import { asArray, asObject } from '../../lib/spec/read';
import { serveMetrics } from './metrics-endpoint';

/** A running simulated metrics endpoint. */
export interface SimulatedRbgMetrics {
  /** `127.0.0.1:<port>`, a Prometheus scrape target. */
  readonly target: string;
  close(): Promise<void>;
}

/** Options of `startSimulatedRbgMetrics`. */
export interface SimulatedRbgMetricsOptions {
  readonly type: RbgResourceType;
  readonly namespace: string;
  /** Simulated requests per second of each group. */
  readonly requestsPerSecond: number;
  /** The share of the new revision's requests of `group` that fail, 0–1. */
  readonly errorRatio: (group: string) => number;
}

interface GroupLoad {
  revision?: string;
  share: number;
}

/** Starts the endpoint and the group watch. */
export async function startSimulatedRbgMetrics(admin: KubeClient, opts: SimulatedRbgMetricsOptions): Promise<SimulatedRbgMetrics> {
  const loads = new Map<string, GroupLoad>();
  const totals = new Map<string, { requests: number; errors: number }>();
  let last = Date.now();
  const informer = admin.watch(opts.type, opts.namespace, (e) => {
    const name = String(e.object.metadata.name);
    advance();
    if (e.type === 'delete') return void loads.delete(name);
    const statuses = asArray(asObject(e.object.status).roleStatuses).map(asObject);
    const desired = statuses.reduce((s, r) => s + Number(r.replicas ?? 0), 0);
    const updated = statuses.reduce((s, r) => s + Number(r.updatedReplicas ?? 0), 0);
    loads.set(name, { revision: readRolloutStatus(e.object)?.coordinations[0]?.revision, share: desired === 0 ? 0 : updated / desired });
  });

  /** Adds the new revisions' requests of the time since the last call. */
  function advance(): void {
    const now = Date.now();
    const seconds = (now - last) / 1000;
    last = now;
    for (const [group, load] of loads) {
      if (load.revision === undefined) continue;
      const key = `${group}/${load.revision}`;
      const t = totals.get(key) ?? { requests: 0, errors: 0 };
      const requests = opts.requestsPerSecond * seconds * load.share;
      totals.set(key, { requests: t.requests + requests, errors: t.errors + requests * opts.errorRatio(group) });
    }
  }

  const endpoint = await serveMetrics(() => {
    advance();
    const labels = (key: string) => {
      const [group, revision] = key.split('/');
      return `namespace="${opts.namespace}",group="${group}",revision="${revision}"`;
    };
    return [
      '# TYPE simulated_rbg_requests_total counter',
      ...[...totals].map(([k, t]) => `simulated_rbg_requests_total{${labels(k)}} ${t.requests}`),
      '# TYPE simulated_rbg_errors_total counter',
      ...[...totals].map(([k, t]) => `simulated_rbg_errors_total{${labels(k)}} ${t.errors}`),
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
