/**
 * TEST-ONLY stand-ins, each at the narrowest seam and named for why it stands in:
 * - `simulateGatewayStatusWithoutDataPlane`: no Gateway API data plane runs in these suites, so
 *   this writes the status one would: Gateways Accepted/Programmed and each route parent
 *   Accepted/ResolvedRefs for the route's generation.
 * - `startServeFleetWhereNoRayRuns`: no Ray process runs in the integration suites, so one loopback
 *   address fronts one simulated Serve dashboard per RayCluster (`/{namespace}/{cluster}/api/serve/...`),
 *   reached by the operator through its dashboard address template, the one injectable seam of
 *   the dashboard client.
 */
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { SimulatedServeDashboard, SimulatedServeDashboardOptions, startSimulatedServeDashboard } from './serve-simulator';

const GATEWAY = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', plural: 'gateways', namespaced: true };
const HTTPROUTE = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true };
const GRPCROUTE = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GRPCRoute', plural: 'grpcroutes', namespaced: true };

/** A running simulator; `stop()` ends its watches and timers. */
export interface Simulator {
  stop(): Promise<void>;
}

/** The Gateway status writer, which a test can hold (as a slow Gateway controller would) and release. */
export interface GatewayStatusSimulator extends Simulator {
  /** From now on, route changes are not acknowledged (their events are kept) until `release()`. */
  hold(): void;
  /** Acknowledges the current version of every route changed while held, and resumes. */
  release(): Promise<void>;
  /**
   * Holds only the routes `match` accepts when they change (and every later change of a route once
   * held) until the handle's `release`; every other route is acknowledged as before.
   */
  holdWhere(match: (route: KubeObject) => boolean): { release(): Promise<void> };
}

function condition(type: string, reason: string, generation?: number): Record<string, unknown> {
  return { type, status: 'True', reason, message: 'simulated by rayshift tests', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** TEST-ONLY: writes the status a Gateway API implementation would (see the file comment). */
export function simulateGatewayStatusWithoutDataPlane(client: KubeClient, controllerName = 'rayshift.dev/simulated-gateway-controller'): GatewayStatusSimulator {
  // A status write that fails (the API server busy or restarting) is retried from the newest cached
  // version, as a controller requeues: no change event may come to retry it otherwise.
  const retries = new Set<NodeJS.Timeout>();
  let stopped = false;
  const retryLater = (informer: { get(name: string, namespace?: string): KubeObject | undefined }, o: KubeObject, write: (latest: KubeObject) => Promise<void>) => {
    if (stopped) return;
    const t = setTimeout(() => {
      retries.delete(t);
      const latest = informer.get(String(o.metadata.name), o.metadata.namespace);
      if (latest && !stopped) void write(latest);
    }, 200);
    retries.add(t);
  };
  const programGateway = async (g: KubeObject): Promise<void> => {
    const gen = g.metadata.generation;
    const conds = ((g.status as { conditions?: { type: string; observedGeneration?: number }[] } | undefined)?.conditions ?? []);
    if (conds.some((c) => c.type === 'Programmed' && c.observedGeneration === gen)) return;
    await client
      .patchMerge(GATEWAY, String(g.metadata.name), g.metadata.namespace, { status: { conditions: [condition('Accepted', 'Accepted', gen), condition('Programmed', 'Programmed', gen)] } }, { subresource: 'status' })
      .catch(() => retryLater(gateways, g, programGateway));
  };
  const gateways = client.watch(GATEWAY, '*', async (event) => {
    if (event.type !== 'delete') await programGateway(event.object);
  });
  let held: Map<string, () => Promise<void>> | undefined;
  const partial = new Set<{ match: (route: KubeObject) => boolean; held: Map<string, () => Promise<void>> }>();
  const routeHandler = (type: typeof HTTPROUTE) => async (event: { type: string; object: KubeObject }) => {
    const r = event.object;
    if (event.type === 'delete') return;
    const key = `${type.kind}/${r.metadata.namespace}/${r.metadata.name}`;
    const into = held ?? [...partial].find((h) => h.held.has(key) || h.match(r))?.held;
    if (into) {
      const informer = type === HTTPROUTE ? http : grpc;
      into.set(key, async () => {
        const latest = informer.get(String(r.metadata.name), r.metadata.namespace);
        if (latest) await acknowledge(type, latest);
      });
      return;
    }
    await acknowledge(type, r);
  };
  const acknowledge = async (type: typeof HTTPROUTE, r: KubeObject) => {
    const gen = r.metadata.generation;
    const parents = ((r.spec as { parentRefs?: Record<string, unknown>[] } | undefined)?.parentRefs ?? []);
    const current = ((r.status as { parents?: { conditions?: { observedGeneration?: number }[] }[] } | undefined)?.parents ?? []);
    if (current.length === parents.length && current.every((p) => (p.conditions ?? []).every((c) => c.observedGeneration === gen))) return;
    const status = {
      parents: parents.map((p) => ({
        parentRef: p,
        controllerName,
        conditions: [condition('Accepted', 'Accepted', gen), condition('ResolvedRefs', 'ResolvedRefs', gen)],
      })),
    };
    await client.patchMerge(type, String(r.metadata.name), r.metadata.namespace, { status }, { subresource: 'status' }).catch(() => retryLater(type === HTTPROUTE ? http : grpc, r, (latest) => acknowledge(type, latest)));
  };
  const http = client.watch(HTTPROUTE, '*', routeHandler(HTTPROUTE));
  const grpc = client.watch(GRPCROUTE, '*', routeHandler(GRPCROUTE));
  gateways.start();
  http.start();
  grpc.start();
  return {
    hold() {
      held ??= new Map();
    },
    async release() {
      // Events already queued in the informers are still seen as held: wait for them first.
      await Promise.all([http.idle(), grpc.idle()]);
      const pending = held ?? new Map<string, () => Promise<void>>();
      held = undefined;
      for (const ack of pending.values()) await ack();
    },
    holdWhere(match) {
      const hold = { match, held: new Map<string, () => Promise<void>>() };
      partial.add(hold);
      return {
        async release() {
          await Promise.all([http.idle(), grpc.idle()]);
          partial.delete(hold);
          const acks = [...hold.held.values()];
          hold.held.clear();
          for (const ack of acks) await ack();
        },
      };
    },
    async stop() {
      stopped = true;
      for (const t of retries) clearTimeout(t);
      gateways.stop();
      http.stop();
      grpc.stop();
    },
  };
}

/** TEST-ONLY fleet of simulated Serve dashboards behind one loopback address. */
export interface SimulatedServeFleet {
  /** Dashboard address template for the operator: `http://127.0.0.1:PORT/{namespace}/{cluster}`. */
  readonly template: string;
  /** The simulated dashboard of a cluster (created on first request). */
  dashboard(namespace: string, cluster: string): SimulatedServeDashboard | undefined;
  close(): Promise<void>;
}

/** Starts the fleet; each cluster's dashboard is created with `options(namespace, cluster)`. */
export async function startServeFleetWhereNoRayRuns(options: (namespace: string, cluster: string) => SimulatedServeDashboardOptions = () => ({})): Promise<SimulatedServeFleet> {
  const dashboards = new Map<string, Promise<SimulatedServeDashboard>>();
  const settled = new Map<string, SimulatedServeDashboard>();
  const server = http.createServer((req, res) => {
    const m = /^\/([^/]+)\/([^/]+)(\/.*)$/.exec(req.url ?? '');
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const [, ns, cluster, rest] = m;
    const key = `${ns}/${cluster}`;
    if (!dashboards.has(key)) {
      const p = startSimulatedServeDashboard(options(ns, cluster));
      dashboards.set(key, p);
      void p.then((d) => settled.set(key, d));
    }
    void dashboards.get(key)!.then((d) => {
      const upstream = http.request({ host: '127.0.0.1', port: d.port, path: rest, method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    template: `http://127.0.0.1:${port}/{namespace}/{cluster}`,
    dashboard: (namespace, cluster) => settled.get(`${namespace}/${cluster}`),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await Promise.all([...dashboards.values()].map(async (p) => (await p).close()));
    },
  };
}
