/**
 * TEST-ONLY fake of the Ray dashboard port of the RayService reconciler (`RayServiceServe`): each
 * cluster's Serve applies a PUT at once (one application `app`, every replica RUNNING, scaled by
 * `target_capacity` as Serve does), and every PUT is recorded. A cluster nothing was PUT to runs no
 * application. No network.
 */
import { ClusterRef } from '../../../lib/runtime/serve/errors';
import { ServeDeployBody } from '../../../lib/runtime/serve/client';
import { ServeInstanceDetails } from '../../../lib/runtime/serve/types';
import { RayServiceServe } from '../../../lib/runtime/rayservice/ports';

/** One PUT the fake received. */
export interface FakeServePut {
  readonly cluster: string;
  readonly targetCapacity: number | null;
}

/** See the file comment. */
export class FakeServe implements RayServiceServe {
  /** Every PUT, in order. */
  readonly puts: FakeServePut[] = [];
  private readonly capacity = new Map<string, number | null>();
  private readonly starting = new Map<string, number>();

  /** @param replicas replicas of the one deployment at full capacity */
  constructor(private readonly replicas = 4) {}

  async getServeDetails(cluster: ClusterRef): Promise<ServeInstanceDetails> {
    const key = `${cluster.namespace}/${cluster.name}`;
    if (!this.capacity.has(key)) return { target_capacity: null, applications: {}, proxies: {} };
    const tc = this.capacity.get(key) ?? null;
    const target = Math.ceil((this.replicas * (tc ?? 100)) / 100);
    const starting = this.starting.get(key) ?? 0;
    const replicas = Array.from({ length: target }, (_, i) => ({ replica_id: `r${i}`, state: i < target - starting ? 'RUNNING' : 'STARTING' }));
    const deployment = { name: 'Version', status: 'HEALTHY', message: '', target_num_replicas: target, replicas };
    return {
      target_capacity: tc,
      applications: { app: { name: 'app', status: 'RUNNING', message: '', route_prefix: '/', deployments: { Version: deployment } } },
      proxies: { node: { status: 'HEALTHY' } },
    };
  }

  /** The last `count` replicas of `namespace/cluster` report STARTING instead of RUNNING (a replica restarting). */
  setStarting(namespace: string, cluster: string, count: number): void {
    this.starting.set(`${namespace}/${cluster}`, count);
  }

  async putServeConfig(cluster: ClusterRef, _serveConfig: string | object, targetCapacity: number | null): Promise<ServeDeployBody> {
    this.puts.push({ cluster: cluster.name, targetCapacity });
    this.capacity.set(`${cluster.namespace}/${cluster.name}`, targetCapacity);
    return {};
  }
}
