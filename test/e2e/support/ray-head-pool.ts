/**
 * TEST-ONLY stand-in for KubeRay's RayCluster controller and the pods it would run (no kubelets
 * here), bound to REAL Ray heads: each RayCluster the operator creates is given a free head from a
 * pool, and each head serves one RayCluster at a time.
 *
 * - Head ready: a RayCluster gets `HeadPodReady=True` once a head is bound to it (KubeRay: the head
 *   pod is Running and Ready).
 * - Endpoints: for each per-cluster serve Service (`<cluster>-serve-svc`) an EndpointSlice with the
 *   head's address and Serve port(s), `ready` while the head's Serve HTTP proxy answers `/-/healthz`
 *   (a head's `ray.io/serve` label is `true` while its proxy is healthy, kept by KubeRay's
 *   RayService controller for its services and by rayshift for its own; the EndpointSlice
 *   controller then lists it as ready, with the Service's labels). Traefik reads these slices, and
 *   rayshift waits for a ready endpoint before it routes to a cluster. As in KubeRay, one check with a
 *   2 s timeout decides and one failed check relabels the head: KubeRay has no failure threshold
 *   for a head (kubelet probes with thresholds gate worker pods). KubeRay checks once per
 *   reconcile (every 2 s); this checks every 500 ms, so a head comes back within 0.5 s.
 * - Deletion: when a RayCluster goes away its head keeps running for a termination grace period
 *   (a deleted pod is stopped gracefully, not at once), then its Serve is shut down (`DELETE
 *   /api/serve/applications/`) and the head returns to the pool clean.
 * - Dashboard addresses: `resolver` maps each bound RayCluster to its head's dashboard, which the
 *   operator calls for real (the one seam the operator offers for dashboards).
 */
import * as http from 'node:http';
import { KubeClient } from '../../../lib/runtime/kube/client';
import { KubeObject } from '../../../lib/runtime/kube/types';
import { CLUSTER_LABEL, ENDPOINT_SLICE, ORIGINATED_FROM_CRD, ORIGINATED_FROM_NAME } from '../../../lib/spec/object-names';
import type { ClusterRef } from '../../../lib/runtime/serve/errors';
import { DashboardResolver } from '../../../lib/runtime/serve/resolver';
import { RAY_AUTH_HEADER } from '../../../lib/runtime/serve/client';
import { RayHead, httpGet } from './ray-head';

const RAYCLUSTER = { apiVersion: 'ray.io/v1', kind: 'RayCluster', plural: 'rayclusters', namespaced: true };
const SERVICE = { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true };
/** `endpointslice.kubernetes.io/managed-by` of the slices this simulation writes. */
export const SIMULATED_SLICE_MANAGER = 'rayshift-e2e-simulated-kuberay';

/** Options of `simulateKubeRayWithRealHeads`. */
export interface RealHeadPoolOptions {
  /** Health poll period of the Serve proxies, ms. @default 500 */
  readonly healthPollMs?: number;
  /** Time between a RayCluster's deletion and its head's Serve shutdown, ms (a pod's graceful termination). @default 5000 */
  readonly terminationGraceMs?: number;
  /** Called with every binding change (for test logs). */
  readonly onEvent?: (message: string) => void;
}

/** A running pool (see the file comment). */
export interface RealHeadPool {
  /** Dashboard addresses of bound RayClusters, for the operator. */
  readonly resolver: DashboardResolver;
  /** The head bound to a RayCluster. */
  headOf(namespace: string, cluster: string): RayHead | undefined;
  /** `namespace/cluster` → head label, for every binding. */
  bindings(): Record<string, string>;
  /** Heads that are free and clean. */
  freeHeads(): string[];
  /** Stops the watches and timers (the heads keep running). */
  stop(): Promise<void>;
}

interface Binding {
  readonly head: RayHead;
  readonly namespace: string;
  readonly cluster: string;
  proxyHealthy: boolean;
}

function authHeaders(head: RayHead): Record<string, string> {
  // Both the standard header and the one rayshift's client (and KubeRay) send.
  return head.auth.mode === 'token' ? { authorization: `Bearer ${head.auth.token}`, [RAY_AUTH_HEADER]: `Bearer ${head.auth.token}` } : {};
}

function httpDelete(url: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'DELETE', timeout: timeoutMs, headers: { 'user-agent': 'rayshift-e2e', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`DELETE ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Shuts Serve down on a head and waits until no application, controller or proxy is left. */
export async function resetServe(head: RayHead, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    try {
      const status = await httpDelete(`${head.dashboardUrl}/api/serve/applications/`, authHeaders(head), 60_000);
      if (status === 200) {
        const got = await httpGet(`${head.dashboardUrl}/api/serve/applications/`, 10_000, authHeaders(head));
        const body = JSON.parse(got.body) as { applications?: object; proxies?: object; controller_info?: object };
        const empty = (o: object | undefined) => o === undefined || o === null || Object.keys(o).length === 0;
        if (got.status === 200 && empty(body.applications) && empty(body.proxies) && empty(body.controller_info)) return;
        lastError = `still running: ${got.body.slice(0, 200)}`;
      } else lastError = `DELETE answered ${status}`;
    } catch (err) {
      lastError = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`resetting Serve on head ${head.label}: ${lastError}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** TEST-ONLY: see the file comment. All heads must be clean (no Serve running) when given. */
export function simulateKubeRayWithRealHeads(client: KubeClient, heads: readonly RayHead[], options: RealHeadPoolOptions = {}): RealHeadPool {
  const free: RayHead[] = [...heads];
  const bound = new Map<string, Binding>();
  const waiting: { namespace: string; cluster: string }[] = [];
  const services = new Map<string, KubeObject>(); // `ns/cluster` → its serve Service
  const log = options.onEvent ?? (() => undefined);
  let stopped = false;
  const key = (ns: string, c: string) => `${ns}/${c}`;

  const writeSlice = async (svc: KubeObject, b: Binding) => {
    const ports = ((svc.spec as { ports?: { name?: string; port: number }[] }).ports ?? []).map((p) => ({
      name: p.name ?? '',
      port: p.name === 'serve-grpc' ? b.head.grpcPort : b.head.servePort,
      protocol: 'TCP',
    }));
    const slice: KubeObject = {
      apiVersion: ENDPOINT_SLICE.apiVersion,
      kind: ENDPOINT_SLICE.kind,
      metadata: {
        name: `${svc.metadata.name}-sim`,
        namespace: svc.metadata.namespace,
        // As kube-controller-manager does: the Service's labels (the operator watches the slices of RayService-owned Services by them), its name, the manager.
        labels: { ...(svc.metadata.labels ?? {}), 'kubernetes.io/service-name': String(svc.metadata.name), 'endpointslice.kubernetes.io/managed-by': SIMULATED_SLICE_MANAGER },
      },
      addressType: b.head.endpoint.addressType,
      endpoints: [{ addresses: [b.head.endpoint.address], conditions: { ready: b.proxyHealthy, serving: b.proxyHealthy, terminating: false } }],
      ports,
    } as KubeObject;
    await client.apply(slice, { force: true });
  };

  const syncSlice = async (ns: string, cluster: string) => {
    const svc = services.get(key(ns, cluster));
    const b = bound.get(key(ns, cluster));
    if (svc && b) await writeSlice(svc, b).catch((err: Error) => log(`EndpointSlice for ${ns}/${cluster}: ${err.message}`));
  };

  const bindWaiting = async () => {
    while (!stopped && free.length > 0 && waiting.length > 0) {
      const next = waiting.shift()!;
      const k = key(next.namespace, next.cluster);
      if (bound.has(k)) continue;
      const current = await client.tryGet(RAYCLUSTER, next.cluster, next.namespace);
      if (!current || current.metadata.deletionTimestamp) continue;
      const head = free.shift()!;
      const b: Binding = { head, namespace: next.namespace, cluster: next.cluster, proxyHealthy: false };
      bound.set(k, b);
      log(`bound RayCluster ${k} to Ray head ${head.label}`);
      await client
        .patchMerge(RAYCLUSTER, next.cluster, next.namespace, {
          status: {
            state: 'ready',
            conditions: [{ type: 'HeadPodReady', status: 'True', reason: 'HeadPodRunningAndReady', message: `simulated: real Ray head ${head.label} at ${head.dashboardUrl}`, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }],
          },
        }, { subresource: 'status' })
        .catch((err: Error) => log(`marking ${k} ready: ${err.message}`));
      await syncSlice(next.namespace, next.cluster);
    }
  };

  const releasing = new Set<Promise<void>>();
  // Unbinds at once; the grace period and the Serve shutdown run beside the event chain, and the
  // head rejoins the pool through it.
  const release = async (ns: string, cluster: string) => {
    const k = key(ns, cluster);
    const b = bound.get(k);
    if (!b) return;
    bound.delete(k);
    const grace = options.terminationGraceMs ?? 5000;
    log(`RayCluster ${k} deleted: Ray head ${b.head.label} terminates gracefully (${grace} ms), then Serve shuts down`);
    const p = (async () => {
      await new Promise((r) => setTimeout(r, grace));
      try {
        await resetServe(b.head);
      } catch (err) {
        log(`Ray head ${b.head.label} could not be reset and leaves the pool: ${(err as Error).message}`);
        return;
      }
      serially(async () => {
        free.push(b.head);
        log(`Ray head ${b.head.label} is free again`);
        await bindWaiting();
      });
    })().finally(() => releasing.delete(p));
    releasing.add(p);
  };

  // One event at a time, in order.
  let chain: Promise<void> = Promise.resolve();
  const serially = (f: () => Promise<void>) => {
    chain = chain.then(f).catch((err: Error) => log(`simulated KubeRay: ${err.message}`));
  };

  const clusters = client.watch(RAYCLUSTER, '*', (e) => {
    const c = e.object;
    const ns = String(c.metadata.namespace);
    const name = String(c.metadata.name);
    if (e.type === 'delete' || c.metadata.deletionTimestamp) {
      serially(() => release(ns, name));
      return;
    }
    if (!bound.has(key(ns, name)) && !waiting.some((w) => w.namespace === ns && w.cluster === name)) {
      waiting.push({ namespace: ns, cluster: name });
      serially(bindWaiting);
    }
  });
  const serveServices = client.watch(SERVICE, '*', (e) => {
    const svc = e.object;
    const selector = (svc.spec as { selector?: Record<string, string> } | undefined)?.selector ?? {};
    const cluster = selector[CLUSTER_LABEL];
    if (cluster === undefined || selector['ray.io/serve'] !== 'true' || svc.metadata.labels?.[ORIGINATED_FROM_NAME] !== cluster) return;
    const ns = String(svc.metadata.namespace);
    if (e.type === 'delete') {
      services.delete(key(ns, cluster));
      serially(async () => {
        await client.delete(ENDPOINT_SLICE, `${svc.metadata.name}-sim`, ns, { ignoreNotFound: true }).then(() => undefined, () => undefined);
      });
      return;
    }
    services.set(key(ns, cluster), svc);
    serially(() => syncSlice(ns, cluster));
  }, { labelSelector: { [ORIGINATED_FROM_CRD]: 'RayService' } });
  clusters.start();
  serveServices.start();

  // Serve proxy health → endpoint readiness.
  let polling = false;
  const poll = setInterval(() => {
    if (polling || stopped) return;
    polling = true;
    void Promise.all(
      [...bound.values()].map(async (b) => {
        const healthy = await httpGet(`http://${b.head.host}:${b.head.servePort}/-/healthz`, 2000).then((r) => r.status === 200, () => false);
        if (healthy !== b.proxyHealthy && bound.get(key(b.namespace, b.cluster)) === b) {
          b.proxyHealthy = healthy;
          log(`Serve proxy of ${b.namespace}/${b.cluster} (head ${b.head.label}) ${healthy ? 'healthy' : 'not healthy'}`);
          serially(() => syncSlice(b.namespace, b.cluster));
        }
      }),
    ).finally(() => {
      polling = false;
    });
  }, options.healthPollMs ?? 500);

  return {
    resolver: {
      resolve(cluster: ClusterRef): string {
        const b = bound.get(key(cluster.namespace, cluster.name));
        if (!b) throw new Error(`no Ray head is bound to RayCluster ${cluster.namespace}/${cluster.name} (TEST-ONLY simulated KubeRay)`);
        return b.head.dashboardUrl;
      },
    },
    headOf: (namespace, cluster) => bound.get(key(namespace, cluster))?.head,
    bindings: () => Object.fromEntries([...bound.entries()].map(([k, b]) => [k, b.head.label])),
    freeHeads: () => free.map((h) => h.label),
    async stop() {
      stopped = true;
      clearInterval(poll);
      clusters.stop();
      serveServices.stop();
      await Promise.all([...releasing]);
      await chain;
    },
  };
}
