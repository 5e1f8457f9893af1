/**
 * Freeing the giving cluster's worker Pods under `capacity.shrinkFirst`. Lowering a cluster's Serve
 * `target_capacity` stops replicas but deletes no Pod: with in-tree autoscaling KubeRay deletes a
 * worker only when it is named in its group's `scaleStrategy.workersToDelete` (a lower `replicas`
 * alone deletes nothing, and one below `minReplicas` is clamped back up), and Ray's autoscaler names
 * idle workers only after `idleTimeoutSeconds` (60 s by default) and never below `minReplicas`. So
 * the taker's new Pods would wait Pending for the accelerators the giver's idle Pods still hold.
 *
 * Before every take of a zero-surge round, once the giver's Serve has settled at its lowered
 * capacity, the engine names the giver's workers that host no Serve replica and no undrained proxy
 * in one guarded patch (`freeWorkers`): `replicas` down by the named Pods, `minReplicas` no higher
 * (the original floors kept in an annotation, restored once a cluster serves alone), and the Pods in
 * `workersToDelete`, all in one write (KubeRay creates Pods for `replicas − remaining` right after
 * deleting the named ones). The take then waits (`FreeingWorkers`) until none of the named Pods is
 * listed any more: a terminating Pod still holds its requests on its node.
 */
import type { FreeWorkersAction, FreeWorkersGroup, RestoreWorkerFloorsAction, WorkerFloor } from './actions';
import type { EngineRun } from './engine-run';
import type { ObservedCluster } from './observation';
import type { RayServiceStatus } from './status';

/** One worker group of a RayCluster as read (`spec.workerGroupSpecs[index]`). */
export interface ObservedWorkerGroup {
  readonly index: number;
  readonly name: string;
  readonly replicas: number;
  readonly minReplicas: number;
  /** Hosts per replica: groups of more than one are freed whole by KubeRay, never Pod by Pod, and are skipped. */
  readonly numOfHosts: number;
  readonly workersToDelete: readonly string[];
}

/** One worker Pod (`ray.io/node-type=worker`). */
export interface ObservedWorkerPod {
  readonly name: string;
  readonly group: string;
  /** It has a `deletionTimestamp`. */
  readonly deleting: boolean;
}

/** A cluster's workers and what Serve runs on them, read while a shrinkFirst upgrade runs. */
export interface ObservedWorkers {
  readonly groups: readonly ObservedWorkerGroup[];
  readonly pods: readonly ObservedWorkerPod[];
  /** Pods (Serve's `node_instance_id`) hosting a replica in any state, or a proxy that is not DRAINED. */
  readonly busyPods: readonly string[];
  /** Some replica is neither RUNNING nor gone (STARTING, STOPPING, …): Serve has not settled yet. */
  readonly settling: boolean;
  /**
   * Some replica or proxy Serve reports has no `node_instance_id` (a Ray that does not report it):
   * where Serve runs is unknown, so no worker counts as free.
   */
  readonly placementUnknown?: true;
}

/** The Pods a freeing named and waits for, in `status.capacity.freeing`. */
export interface FreeingRecord {
  readonly cluster: string;
  readonly pods: readonly string[];
  /** When they were named (epoch ms). */
  readonly since: number;
}

/** Whether the executor reads the clusters' workers (`ObservedCluster.workers`): while a shrinkFirst upgrade runs. */
export function needsWorkerObservation(status: Partial<RayServiceStatus> | undefined): boolean {
  return status?.pendingClusterName !== undefined && status.capacity?.shrinkFirst === true;
}

/** Reason of the Event a freeing records. */
export const WORKERS_FREED_EVENT = 'WorkersFreed';
/** Reason of the Event when a take found no Pod to free (Serve still uses every worker). */
export const WORKERS_NOT_FREED_EVENT = 'WorkersNotFreed';

/**
 * The guarded patch that frees every qualifying worker of `workers`: not deleting, not already
 * named, in a one-host group, hosting nothing; it records the groups' `minReplicas` as the
 * cluster's floors unless `recorded` already holds them. Undefined when none qualifies.
 */
export function freeWorkersOf(clusterName: string, workers: ObservedWorkers, recorded: readonly WorkerFloor[] | undefined): FreeWorkersAction | undefined {
  const busy = new Set(workers.busyPods);
  const groups: FreeWorkersGroup[] = [];
  for (const g of workers.groups) {
    if (g.numOfHosts !== 1) continue;
    const named = new Set(g.workersToDelete);
    const live = workers.pods.filter((p) => p.group === g.name && !p.deleting && !named.has(p.name));
    const free = live.filter((p) => !busy.has(p.name)).map((p) => p.name).sort();
    if (free.length === 0) continue;
    const replicas = live.length - free.length;
    groups.push({
      index: g.index,
      groupName: g.name,
      read: { replicas: g.replicas, minReplicas: g.minReplicas, workersToDelete: g.workersToDelete },
      replicas,
      minReplicas: Math.min(g.minReplicas, replicas),
      workersToDelete: [...g.workersToDelete, ...free],
    });
  }
  if (groups.length === 0) return undefined;
  const floors = recorded === undefined ? workers.groups.map((g) => ({ index: g.index, groupName: g.name, minReplicas: g.minReplicas })) : undefined;
  return { type: 'freeWorkers', clusterName, groups, ...(floors !== undefined ? { floors } : {}) };
}

/**
 * What a zero-surge take waits for, after emitting the freeing it needs: `FreeingWorkers` while the
 * Pods a freeing named are still listed, while the giver's Serve settles, its workers are unread or
 * some of them are already going, and right after naming Pods; undefined when the take may go ahead. A giver that is gone or has no
 * ready head serves nothing and is not waited for.
 */
export function freeingWait(r: EngineRun, giver: ObservedCluster | undefined): 'FreeingWorkers' | undefined {
  const s = r.s;
  const record = s.capacity?.freeing;
  if (record !== undefined) {
    const state = freeingState(record, r.cluster(record.cluster));
    if (state === 'waiting') return 'FreeingWorkers';
    const { freeing: _, ...rest } = s.capacity!;
    s.capacity = rest;
    // Gone: this round's take goes ahead, and the next round names Pods again. Lost: decide again.
    if (state === 'gone') return undefined;
  }
  if (giver === undefined || !giver.headReady) return undefined;
  const workers = giver.workers;
  if (workers === undefined || workers.settling || going(workers)) return 'FreeingWorkers';
  const action = workers.placementUnknown === true ? undefined : freeWorkersOf(giver.name, workers, giver.workerFloors);
  if (action === undefined) {
    const why = workers.placementUnknown === true ? `Serve does not report which Pod each replica of ${giver.name} runs on (node_instance_id)` : `no worker of ${giver.name} is free of Serve replicas`;
    r.events.push({ type: 'Normal', reason: WORKERS_NOT_FREED_EVENT, action: 'FreeWorkers', message: `${why}: the next capacity step is taken without freeing Pods` });
    return undefined;
  }
  const pods = action.groups.flatMap((g) => g.workersToDelete.slice(g.read.workersToDelete.length));
  r.actions.push(action);
  s.capacity = { ...s.capacity!, freeing: { cluster: giver.name, pods, since: r.now } };
  r.events.push({ type: 'Normal', reason: WORKERS_FREED_EVENT, action: 'FreeWorkers', message: `freeing ${pods.length} worker Pod(s) of ${giver.name} that host no Serve replica before the next capacity step: ${pods.join(', ')}` });
  r.decide();
  return 'FreeingWorkers';
}

/**
 * Some worker is already on its way out (named in a `workersToDelete`, or deleting) and still holds
 * its node: a freeing whose record was lost (the operator stopped between the patch and the status
 * write), or the autoscaler's own. Taking now would ask for the GPUs it still holds.
 */
function going(workers: ObservedWorkers): boolean {
  const named = new Set(workers.groups.flatMap((g) => g.workersToDelete));
  return workers.pods.some((p) => p.deleting || named.has(p.name));
}

/**
 * Where a freeing stands: `gone` when none of its Pods is listed (or its cluster is gone), `lost`
 * when one is listed alive but named in no group's `workersToDelete` (the patch was refused, or the
 * list was rewritten before KubeRay deleted it), else `waiting` (also while the workers are unread).
 */
function freeingState(record: FreeingRecord, cluster: ObservedCluster | undefined): 'gone' | 'lost' | 'waiting' {
  if (cluster === undefined) return 'gone';
  const workers = cluster.workers;
  if (workers === undefined) return 'waiting';
  const listed = workers.pods.filter((p) => record.pods.includes(p.name));
  if (listed.length === 0) return 'gone';
  const named = new Set(workers.groups.flatMap((g) => g.workersToDelete));
  return listed.some((p) => !p.deleting && !named.has(p.name)) ? 'lost' : 'waiting';
}

/**
 * The floors to give back once no upgrade runs: the serving cluster's recorded worker floors (a
 * promoted new cluster that started at 0, or an old one a rollback returned to). Repeated until the
 * annotation is gone.
 */
export function restoreWorkerFloors(r: EngineRun): RestoreWorkerFloorsAction | undefined {
  if (r.s.pendingClusterName !== undefined) return undefined;
  const active = r.cluster(r.s.activeClusterName);
  if (active?.workerFloors === undefined) return undefined;
  return { type: 'restoreWorkerFloors', clusterName: active.name, floors: active.workerFloors };
}
