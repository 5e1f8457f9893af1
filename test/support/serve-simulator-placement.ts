/**
 * Where the TEST-ONLY Serve simulator (serve-simulator.ts) runs its replicas and proxies, when the
 * test gives it the cluster's Ray nodes (`SimulatedServeDashboardOptions.placement`): a stand-in for
 * Ray's actor scheduling, as far as Serve's REST API shows it.
 *
 * - A replica needs a worker of its own (the test's deployments ask for one GPU and each worker has
 *   one): a new replica waits STARTING, unplaced (`node_id`, `node_ip`, `node_instance_id` null, as
 *   Ray reports an actor not yet scheduled), until a worker hosting no replica is up; it is placed
 *   there and turns RUNNING `startDelay` ms later. The head hosts none (`num-cpus: 0`).
 * - A replica whose node is gone died with it and is dropped; Serve's reconcile starts a new one.
 * - Proxies (`proxy_location: EveryNode`): one on the head, always HEALTHY, and one on every worker
 *   hosting a replica; a worker left without replicas has its proxy DRAINING for `drainMs` (Ray's
 *   `RAY_SERVE_PROXY_MIN_DRAINING_PERIOD_S`, 30 s), then DRAINED until the worker goes or hosts again.
 * - `node_instance_id` is the Pod's name: KubeRay sets `RAY_CLOUD_INSTANCE_ID` to it (v1.7.0
 *   `common/pod.go`), and Ray's `ServeActorDetails` reports it for every replica and proxy.
 */
import { createHash } from 'node:crypto';
import type { JsonObject } from './serve-simulator-json';

/** One Ray node as the placement sees it: a running Pod of the cluster. */
export interface SimulatedServeNode {
  /** The Pod's name (Ray's `node_instance_id` under KubeRay). */
  readonly name: string;
  readonly kind: 'head' | 'worker';
  /** The Pod's IP (Ray's `node_ip`). */
  readonly ip: string;
}

/** The fields a replica needs for placement (serve-simulator-state.ts's `SimReplica`). */
export interface PlacedReplica {
  state: 'STARTING' | 'RUNNING' | 'STOPPING';
  readyAt: number;
  node?: string;
}

/** The node fields of `ServeActorDetails`: `node_id`, `node_ip`, `node_instance_id`. */
export type NodeFields = { node_id: string | null; node_ip: string | null; node_instance_id: string | null };

/** Placement state of one simulated Serve instance. */
export interface SimulatedPlacement {
  /** Drops replicas on gone nodes, places waiting ones on free workers, and moves proxy states on, as of `t`. */
  place(replicas: PlacedReplica[][], t: number): void;
  /** A replica's node fields (null while unplaced). */
  nodeOf(replica: PlacedReplica): NodeFields;
  /** The head's node fields (the controller's node). */
  head(): NodeFields;
  /** The `proxies` map of `ServeInstanceDetails`. */
  proxies(): JsonObject;
}

/** Ray's node id (28 bytes, hex) for a Pod: stable per Pod name. */
function nodeId(pod: string): string {
  return createHash('sha224').update(pod).digest('hex');
}

function fields(node: SimulatedServeNode | undefined): NodeFields {
  return node === undefined ? { node_id: null, node_ip: null, node_instance_id: null } : { node_id: nodeId(node.name), node_ip: node.ip, node_instance_id: node.name };
}

/** Placement on the nodes `nodes()` lists now; replicas start `startDelay` ms after placement (never, with `manual`). */
export function createSimulatedPlacement(nodes: () => readonly SimulatedServeNode[], startDelay: number, manual: boolean, drainMs: number): SimulatedPlacement {
  let current: readonly SimulatedServeNode[] = [];
  const proxyOf = new Map<string, { status: 'HEALTHY' | 'DRAINING' | 'DRAINED'; until: number }>();

  return {
    place(groups, t) {
      current = nodes();
      const alive = new Set(current.map((n) => n.name));
      const hosting = new Set<string>();
      for (const replicas of groups) {
        // A replica on a node that is gone died with its node.
        for (let i = replicas.length - 1; i >= 0; i--) if (replicas[i].node !== undefined && !alive.has(replicas[i].node!)) replicas.splice(i, 1);
        for (const r of replicas) if (r.node !== undefined) hosting.add(r.node);
      }
      const free = current.filter((n) => n.kind === 'worker' && !hosting.has(n.name));
      for (const replicas of groups) {
        for (const r of replicas) {
          if (r.state !== 'STARTING' || r.node !== undefined || free.length === 0) continue;
          const node = free.shift()!;
          r.node = node.name;
          r.readyAt = manual ? Number.POSITIVE_INFINITY : t + startDelay;
          hosting.add(node.name);
        }
      }
      for (const name of [...proxyOf.keys()]) if (!alive.has(name)) proxyOf.delete(name);
      for (const n of current) {
        if (n.kind !== 'worker') continue;
        const proxy = proxyOf.get(n.name);
        if (hosting.has(n.name)) proxyOf.set(n.name, { status: 'HEALTHY', until: Number.POSITIVE_INFINITY });
        else if (proxy?.status === 'HEALTHY') proxyOf.set(n.name, { status: 'DRAINING', until: t + drainMs });
        if (proxy?.status === 'DRAINING' && proxy.until <= t && !hosting.has(n.name)) proxyOf.set(n.name, { status: 'DRAINED', until: Number.POSITIVE_INFINITY });
      }
    },
    nodeOf: (replica) => fields(current.find((n) => n.name === replica.node)),
    head: () => fields(current.find((n) => n.kind === 'head')),
    proxies() {
      const out: JsonObject = {};
      const head = current.find((n) => n.kind === 'head');
      const proxy = (node: SimulatedServeNode, status: string) => {
        const f = fields(node);
        out[f.node_id!] = { ...f, worker_id: 'f'.repeat(56), actor_id: f.node_id!.slice(0, 32), actor_name: `SERVE_PROXY_ACTOR-${f.node_id}`, log_file_path: `/serve/proxy_${f.node_ip}.log`, status };
      };
      if (head !== undefined) proxy(head, 'HEALTHY');
      for (const n of current) {
        const p = proxyOf.get(n.name);
        if (p !== undefined) proxy(n, p.status);
      }
      return out;
    },
  };
}
