/**
 * The runtime half of shrinkFirst's worker freeing (`lib/engine/worker-freeing.ts` decides): read a
 * cluster's worker groups, worker Pods and where Serve runs (`workersOf`) and its recorded floors
 * (`workerFloorsOf`), and turn `freeWorkers` / `restoreWorkerFloors` into their guarded JSON patches.
 */
import type { FreeWorkersAction, RestoreWorkerFloorsAction, WorkerFloor } from '../../engine/actions';
import type { ObservedWorkers } from '../../engine/worker-freeing';
import { GROUP_LABEL, WORKER_FLOORS_ANNOTATION } from '../../spec/object-names';
import { asArray, asObject, isInteger } from '../../spec/read';
import { jsonPointer } from '../kube/json-pointer';
import type { JsonPatchOp } from '../kube/request-options';
import type { KubeObject } from '../kube/types';
import type { ServeInstanceDetails } from '../serve/types';

/** Replica states that are settled: a RUNNING replica stays where it is, and no other state is reported for long. */
const SETTLED_REPLICA = 'RUNNING';

/**
 * The workers of `cluster` (its `workerGroupSpecs`, its worker `pods`) and what Serve (`details`)
 * runs on them: a Pod hosts a replica (any state) or a proxy that is not DRAINED is busy; a replica
 * that is not RUNNING, or a proxy DRAINING, means Serve has not settled yet (a draining proxy's Pod
 * is a Pod about to be free, not one to give up on); a RUNNING replica or a live proxy without
 * `node_instance_id` makes the placement unknown.
 */
export function workersOf(cluster: KubeObject, pods: readonly KubeObject[], details: ServeInstanceDetails): ObservedWorkers {
  const groups = asArray(asObject(cluster.spec).workerGroupSpecs).map((raw, index) => {
    const g = asObject(raw);
    return {
      index,
      name: String(g.groupName),
      replicas: isInteger(g.replicas) ? g.replicas : 0,
      minReplicas: isInteger(g.minReplicas) ? g.minReplicas : 0,
      numOfHosts: isInteger(g.numOfHosts) ? g.numOfHosts : 1,
      workersToDelete: asArray(asObject(g.scaleStrategy).workersToDelete).map(String),
    };
  });
  const busy = new Set<string>();
  let settling = false;
  let unknown = false;
  const uses = (instance: string | undefined) => {
    if (instance === undefined) unknown = true;
    else busy.add(instance);
  };
  for (const app of Object.values(details.applications)) {
    for (const dep of Object.values(app.deployments)) {
      for (const rep of dep.replicas) {
        // A replica not yet placed has no node; it keeps Serve settling, which holds the freeing anyway.
        if (rep.state === SETTLED_REPLICA || rep.node_instance_id !== undefined) uses(rep.node_instance_id);
        if (rep.state !== SETTLED_REPLICA) settling = true;
      }
    }
  }
  for (const proxy of Object.values(details.proxies)) {
    if (proxy.status === 'DRAINED') continue;
    uses(proxy.node_instance_id);
    if (proxy.status === 'DRAINING') settling = true;
  }
  return {
    groups,
    pods: pods.map((p) => ({ name: String(p.metadata.name), group: p.metadata.labels?.[GROUP_LABEL] ?? '', deleting: p.metadata.deletionTimestamp !== undefined })),
    busyPods: [...busy].sort(),
    settling,
    ...(unknown ? { placementUnknown: true as const } : {}),
  };
}

/** Longest floors annotation read: far above any real cluster's (a few dozen bytes per group). */
const MAX_FLOORS_TEXT = 16_384;

/**
 * The cluster's `rayshift.dev/worker-floors` (JSON `[{index, groupName, minReplicas}]`), or undefined
 * when absent, too long, or not that shape (then nothing is restored from it, and a freeing records it again).
 */
export function workerFloorsOf(cluster: KubeObject): WorkerFloor[] | undefined {
  const text = cluster.metadata.annotations?.[WORKER_FLOORS_ANNOTATION];
  if (text === undefined || text.length > MAX_FLOORS_TEXT) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const floors = parsed.map(asObject);
  const valid = floors.every((f) => isInteger(f.index) && f.index >= 0 && typeof f.groupName === 'string' && isInteger(f.minReplicas) && f.minReplicas >= 0);
  return valid ? floors.map((f) => ({ index: f.index as number, groupName: f.groupName as string, minReplicas: f.minReplicas as number })) : undefined;
}

/** The spec's worker groups at `replicas` and `minReplicas` 0, and their floors (the spec's `minReplicas`, 0 when unset). */
export function workersFromZero(workerGroupSpecs: unknown): { groups: unknown[]; floors: WorkerFloor[] } {
  const groups = asArray(workerGroupSpecs).map(asObject);
  return {
    groups: groups.map((g) => ({ ...g, replicas: 0, minReplicas: 0 })),
    floors: groups.map((g, index) => ({ index, groupName: String(g.groupName), minReplicas: isInteger(g.minReplicas) ? g.minReplicas : 0 })),
  };
}

/** The restore patch: per floor, `test` the group's name and set its `minReplicas`; then remove the annotation. */
export function restoreWorkerFloorsPatch(action: RestoreWorkerFloorsAction): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  for (const f of action.floors) {
    ops.push({ op: 'test', path: jsonPointer('spec', 'workerGroupSpecs', f.index, 'groupName'), value: f.groupName });
    ops.push({ op: 'replace', path: jsonPointer('spec', 'workerGroupSpecs', f.index, 'minReplicas'), value: f.minReplicas });
  }
  ops.push({ op: 'remove', path: jsonPointer('metadata', 'annotations', WORKER_FLOORS_ANNOTATION) });
  return ops;
}

/**
 * The JSON patch of a `freeWorkers` action: per group, `test` the `replicas` and `minReplicas` read
 * (Ray's autoscaler writes `replicas` with every `workersToDelete` it writes) and a non-empty list
 * read, then `replace` both counts and set the list, so KubeRay sees them in one write; with `floors`,
 * the annotation (`metadata.annotations` exists: it carries the cluster's spec hash).
 */
export function freeWorkersPatch(action: FreeWorkersAction): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  for (const g of action.groups) {
    const at = (...p: string[]) => jsonPointer('spec', 'workerGroupSpecs', g.index, ...p);
    ops.push({ op: 'test', path: at('groupName'), value: g.groupName });
    ops.push({ op: 'test', path: at('replicas'), value: g.read.replicas });
    ops.push({ op: 'test', path: at('minReplicas'), value: g.read.minReplicas });
    if (g.read.workersToDelete.length > 0) ops.push({ op: 'test', path: at('scaleStrategy', 'workersToDelete'), value: [...g.read.workersToDelete] });
    ops.push({ op: 'replace', path: at('replicas'), value: g.replicas });
    ops.push({ op: 'replace', path: at('minReplicas'), value: g.minReplicas });
    ops.push({ op: 'add', path: at('scaleStrategy'), value: { workersToDelete: [...g.workersToDelete] } });
  }
  if (action.floors !== undefined) ops.push({ op: 'add', path: jsonPointer('metadata', 'annotations', WORKER_FLOORS_ANNOTATION), value: JSON.stringify(action.floors) });
  return ops;
}
