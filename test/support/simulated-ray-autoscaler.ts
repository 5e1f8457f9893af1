/**
 * TEST-ONLY stand-in for Ray's in-tree autoscaler (`enableInTreeAutoscaling`), which runs in the
 * head Pod on a real cluster and so never runs on kwok. It plays the autoscaler's KubeRay provider
 * (Ray's `autoscaler/v2/.../kuberay/cloud_provider.py`) at its one write, the RayCluster patch:
 *
 * - Demand: Serve replicas waiting for a node (STARTING with no `node_instance_id`, from the
 *   cluster's Serve details), less the workers that host none (idle, or still starting: a launched
 *   node counts before it is up). Each replica needs a worker of its own (one GPU each).
 * - A launch sets the group's `replicas` to its live (not terminating) worker Pods plus the launch,
 *   capped at `maxReplicas`, in a JSON patch without a guard, as Ray's `worker_replica_patch` does.
 * - `workersToDelete` is honoured as Ray's provider does: while a group names a Pod that is still
 *   listed and not terminating ("pending deletes") no launch is written at all; a group whose named
 *   Pods are all gone gets its list cleared (`[]`) in the next write.
 * - It never terminates idle workers: Ray's does so only after `idleTimeoutSeconds` (60 s by
 *   default) and never below `minReplicas`, which shrinkFirst does not wait for.
 *
 * Ray's loop runs every 5 s (`AUTOSCALER_UPDATE_INTERVAL_S`); this one every `intervalMs`. Of lib/ it
 * imports only the Kubernetes client's type (the way to read and write, not code under test).
 */
import type { KubeClient } from '../../lib/runtime/kube/client';

const POD_TYPE = { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true } as const;
const RAYCLUSTER_TYPE = { apiVersion: 'ray.io/v1', kind: 'RayCluster', plural: 'rayclusters', namespaced: true } as const;

/** One replica as Serve's `GET /api/serve/applications/` reports it (the fields read here). */
interface ReportedReplica {
  readonly state?: string;
  readonly node_instance_id?: string | null;
}

/** One patch the stand-in wrote. */
export interface AutoscalerWrite {
  readonly cluster: string;
  /** Group name → `replicas` written. */
  readonly replicas: Readonly<Record<string, number>>;
  /** Groups whose finished `workersToDelete` it cleared. */
  readonly cleared: readonly string[];
}

/** A running stand-in; `stop()` ends its loop after the pass in flight. */
export interface SimulatedRayAutoscaler {
  /** Every patch written, in order. */
  readonly writes: readonly AutoscalerWrite[];
  /** Launches held back because a group still had pending deletes (Ray: "Waiting for them to be deleted"). */
  readonly heldForDeletes: () => number;
  stop(): Promise<void>;
}

function replicasOf(details: unknown): ReportedReplica[] {
  const apps = Object.values(((details ?? {}) as { applications?: Record<string, unknown> }).applications ?? {});
  return apps.flatMap((a) => Object.values((a as { deployments?: Record<string, unknown> }).deployments ?? {}).flatMap((d) => ((d as { replicas?: ReportedReplica[] }).replicas ?? [])));
}

/**
 * Scales the worker groups of every RayCluster in `namespace` with `enableInTreeAutoscaling` from
 * `serve(cluster)`, the cluster's `ServeInstanceDetails` (undefined while Serve is not up: no demand).
 */
export function startSimulatedRayAutoscaler(client: KubeClient, namespace: string, serve: (cluster: string) => unknown, intervalMs = 100): SimulatedRayAutoscaler {
  const writes: AutoscalerWrite[] = [];
  let held = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const scale = async (cluster: Record<string, any>): Promise<void> => {
    const name = String(cluster.metadata.name);
    const replicas = replicasOf(serve(name));
    const waiting = replicas.filter((r) => r.state === 'STARTING' && (r.node_instance_id ?? undefined) === undefined).length;
    if (waiting === 0) return;
    const pods = (await client.list(POD_TYPE, { namespace, labelSelector: { 'ray.io/cluster': name, 'ray.io/node-type': 'worker' } })).items.filter((p) => p.metadata.deletionTimestamp === undefined);
    const live = new Set(pods.map((p) => String(p.metadata.name)));
    const hosting = new Set(replicas.map((r) => r.node_instance_id).filter((n): n is string => typeof n === 'string'));
    const toLaunch = waiting - pods.filter((p) => !hosting.has(String(p.metadata.name))).length;
    if (toLaunch <= 0) return;
    const groups = (cluster.spec.workerGroupSpecs ?? []) as Record<string, any>[];
    const named = (g: Record<string, any>) => ((g.scaleStrategy?.workersToDelete ?? []) as string[]);
    if (groups.some((g) => named(g).some((p) => live.has(p)))) {
      held += 1;
      return;
    }
    // Ray's `worker_replica_patch` and `worker_delete_patch`: plain replaces, no `test`.
    const ops: { op: 'replace'; path: string; value: unknown }[] = [];
    const written: Record<string, number> = {};
    const cleared: string[] = [];
    let left = toLaunch;
    groups.forEach((g, i) => {
      const current = pods.filter((p) => p.metadata.labels?.['ray.io/group'] === g.groupName).length;
      const max = typeof g.maxReplicas === 'number' ? g.maxReplicas : Number.POSITIVE_INFINITY;
      const target = Math.min(max, current + left);
      left -= target - current;
      if (target !== g.replicas) {
        ops.push({ op: 'replace', path: `/spec/workerGroupSpecs/${i}/replicas`, value: target });
        written[String(g.groupName)] = target;
      }
      if (named(g).length > 0) {
        ops.push({ op: 'replace', path: `/spec/workerGroupSpecs/${i}/scaleStrategy`, value: { workersToDelete: [] } });
        cleared.push(String(g.groupName));
      }
    });
    if (ops.length === 0) return;
    await client.patchJson(RAYCLUSTER_TYPE, name, namespace, ops);
    writes.push({ cluster: name, replicas: written, cleared });
  };

  const pass = async (): Promise<void> => {
    const clusters = (await client.list(RAYCLUSTER_TYPE, { namespace })).items as Record<string, any>[];
    for (const c of clusters) {
      if (c.spec?.enableInTreeAutoscaling !== true || c.metadata.deletionTimestamp !== undefined) continue;
      try {
        await scale(c);
      } catch {
        // Ray logs a failed patch and tries again on its next pass; so does this.
      }
    }
  };

  const loop = (): void => {
    if (stopped) return;
    running = pass()
      .catch(() => undefined)
      .then(() => {
        if (!stopped) timer = setTimeout(loop, intervalMs);
      });
  };
  loop();
  return {
    writes,
    heldForDeletes: () => held,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
