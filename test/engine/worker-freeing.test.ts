/**
 * shrinkFirst's worker freeing (lib/engine/worker-freeing.ts) through the engine: before each take
 * the giver's idle workers are named in one patch and the take waits until they are gone. Every
 * expected action, status and Event is written out by hand from the rule in the file comment.
 */
import type { ObservedCluster, RayServiceObservation } from '../../lib/engine/observation';
import { nextRayService } from '../../lib/engine/rayservice-engine';
import type { RayServiceStatus } from '../../lib/engine/status';
import { freeWorkersOf, type ObservedWorkers } from '../../lib/engine/worker-freeing';
import type { ResolvedUpgradeOptions } from '../../lib/spec/rayservice';

const NOW = 10_000_000;
const OLD = 'svc-aaaaa';
const NEW = 'svc-bbbbb';
const opts: ResolvedUpgradeOptions = {
  strategy: 'NewClusterWithIncrementalUpgrade', maxSurgePercent: 25, stepSizePercent: 25, intervalSeconds: 1,
  rayClusterDeletionDelaySeconds: 0, progressDeadlineSeconds: 600, capacityPolicy: 'shrinkFirst',
};
/** Round 1 after the give: the old cluster is at 75, the new one still at 0, all traffic on the old. */
const afterGive: RayServiceStatus = {
  phase: 'Upgrading', reason: 'Migrating', activeClusterName: OLD, pendingClusterName: NEW, pendingSpecHash: 'new',
  upgradeStrategy: 'NewClusterWithIncrementalUpgrade', activeTargetCapacity: 75, pendingTargetCapacity: 0,
  activeWeight: 100, pendingWeight: 0, trafficConfirmed: true, lastTrafficMigratedTime: NOW - 60_000, lastProgressTime: NOW - 1_000,
  upgradeStartedAt: NOW - 120_000, deletions: [], capacity: { outcome: 'fitsAfterOldShrinks', at: NOW - 120_000, shrinkFirst: true },
};
const group = { index: 0, name: 'gpu', replicas: 4, minReplicas: 2, numOfHosts: 1, workersToDelete: [] as string[] };
const pod = (name: string, deleting = false) => ({ name, group: 'gpu', deleting });
/** Four 1-GPU workers; Serve at 75% runs its 3 replicas on w-0..w-2 and has settled. */
const oldWorkers: ObservedWorkers = { groups: [group], pods: ['w-0', 'w-1', 'w-2', 'w-3'].map((n) => pod(n)), busyPods: ['w-0', 'w-1', 'w-2'], settling: false };
const cluster = (name: string, tc: number, workers?: ObservedWorkers): ObservedCluster => ({
  name, specHash: name === OLD ? 'old' : 'new', headReady: true, targetCapacity: tc, appsRunning: true, readyReplicas: 3, targetReplicas: 3,
  ...(workers !== undefined ? { workers } : {}),
});
const obs = (status: RayServiceStatus, old: ObservedCluster, next: ObservedCluster, extra: Partial<RayServiceObservation> = {}): RayServiceObservation => ({
  name: 'svc', goalSpecHash: 'new', servingCluster: OLD, status, clusters: [old, next],
  route: { backends: [{ cluster: OLD, weight: status.activeWeight }, { cluster: NEW, weight: status.pendingWeight }], ready: true }, ...extra,
});
const FREE_W3 = {
  type: 'freeWorkers', clusterName: OLD, floors: [{ index: 0, groupName: 'gpu', minReplicas: 2 }],
  groups: [{ index: 0, groupName: 'gpu', read: { replicas: 4, minReplicas: 2, workersToDelete: [] }, replicas: 3, minReplicas: 2, workersToDelete: ['w-3'] }],
};

test('the take waits while the giver\'s Serve settles, and while its workers are unread', () => {
  for (const workers of [{ ...oldWorkers, settling: true }, undefined]) {
    const d = nextRayService(obs(afterGive, cluster(OLD, 75, workers), cluster(NEW, 0)), opts, NOW);
    expect(d.actions).toEqual([]);
    expect(d.status).toMatchObject({ reason: 'FreeingWorkers', pendingTargetCapacity: 0 });
    expect(d.status.capacity?.freeing).toBeUndefined();
  }
});

test('a settled giver: its idle worker is named in one patch, recorded, one Event; the new cluster\'s capacity waits', () => {
  const d = nextRayService(obs(afterGive, cluster(OLD, 75, oldWorkers), cluster(NEW, 0)), opts, NOW);
  expect(d.actions).toEqual([FREE_W3]);
  expect(d.status).toMatchObject({ reason: 'FreeingWorkers', pendingTargetCapacity: 0, activeTargetCapacity: 75 });
  expect(d.status.capacity).toEqual({ outcome: 'fitsAfterOldShrinks', at: NOW - 120_000, shrinkFirst: true, freeing: { cluster: OLD, pods: ['w-3'], since: NOW } });
  expect(d.events).toEqual([{ type: 'Normal', reason: 'WorkersFreed', action: 'FreeWorkers', message: `freeing 1 worker Pod(s) of ${OLD} that host no Serve replica before the next capacity step: w-3` }]);
});

test('the named Pod terminating holds the take; once it is gone the new cluster takes 25 and the record is cleared', () => {
  const freeing: RayServiceStatus = { ...afterGive, reason: 'FreeingWorkers', capacity: { ...afterGive.capacity!, freeing: { cluster: OLD, pods: ['w-3'], since: NOW } } };
  const named = { ...group, replicas: 3, workersToDelete: ['w-3'] };
  const terminating = { ...oldWorkers, groups: [named], pods: [...oldWorkers.pods.slice(0, 3), pod('w-3', true)] };
  const held = nextRayService(obs(freeing, cluster(OLD, 75, terminating), cluster(NEW, 0)), opts, NOW + 1_000);
  expect(held.actions).toEqual([]);
  expect(held.status).toMatchObject({ reason: 'FreeingWorkers', pendingTargetCapacity: 0 });
  const gone = { ...oldWorkers, groups: [named], pods: oldWorkers.pods.slice(0, 3) };
  const taken = nextRayService(obs(freeing, cluster(OLD, 75, gone), cluster(NEW, 0)), opts, NOW + 2_000);
  expect(taken.actions).toContainEqual({ type: 'setTargetCapacity', cluster: 'pending', clusterName: NEW, percent: 25 });
  expect(taken.actions.map((a) => a.type)).not.toContain('freeWorkers');
  expect(taken.status).toMatchObject({ reason: 'Migrating', pendingTargetCapacity: 25 });
  expect(taken.status.capacity).toEqual({ outcome: 'fitsAfterOldShrinks', at: NOW - 120_000, shrinkFirst: true });
});

test('a freeing whose patch was refused (the Pod alive and unnamed) is decided again from the fresh read', () => {
  const freeing: RayServiceStatus = { ...afterGive, reason: 'FreeingWorkers', capacity: { ...afterGive.capacity!, freeing: { cluster: OLD, pods: ['w-3'], since: NOW } } };
  const autoscaled = { ...oldWorkers, groups: [{ ...group, replicas: 5 }], pods: [...oldWorkers.pods, pod('w-4')] };
  const d = nextRayService(obs(freeing, cluster(OLD, 75, autoscaled), cluster(NEW, 0)), opts, NOW + 1_000);
  expect(d.actions).toEqual([{
    type: 'freeWorkers', clusterName: OLD, floors: [{ index: 0, groupName: 'gpu', minReplicas: 2 }],
    groups: [{ index: 0, groupName: 'gpu', read: { replicas: 5, minReplicas: 2, workersToDelete: [] }, replicas: 3, minReplicas: 2, workersToDelete: ['w-3', 'w-4'] }],
  }]);
  expect(d.status.capacity?.freeing).toEqual({ cluster: OLD, pods: ['w-3', 'w-4'], since: NOW + 1_000 });
});

test('an operator stopped mid-freeing neither skips nor repeats it: the record without the patch sends the same patch once more; the patch without the record holds the take until the Pod is gone', () => {
  const recorded: RayServiceStatus = { ...afterGive, reason: 'FreeingWorkers', capacity: { ...afterGive.capacity!, freeing: { cluster: OLD, pods: ['w-3'], since: NOW } } };
  const again = nextRayService(obs(recorded, cluster(OLD, 75, oldWorkers), cluster(NEW, 0)), opts, NOW + 1_000);
  expect(again.actions).toEqual([FREE_W3]);
  expect(again.status.capacity?.freeing).toEqual({ cluster: OLD, pods: ['w-3'], since: NOW + 1_000 });
  const patched = { ...oldWorkers, groups: [{ ...group, replicas: 3, workersToDelete: ['w-3'] }], pods: [...oldWorkers.pods.slice(0, 3), pod('w-3', true)] };
  const held = nextRayService(obs(afterGive, cluster(OLD, 75, patched), cluster(NEW, 0)), opts, NOW + 1_000);
  expect(held.actions).toEqual([]);
  expect(held.status).toMatchObject({ reason: 'FreeingWorkers', pendingTargetCapacity: 0 });
  const gone = { ...patched, pods: oldWorkers.pods.slice(0, 3) };
  const taken = nextRayService(obs(afterGive, cluster(OLD, 75, gone), cluster(NEW, 0)), opts, NOW + 2_000);
  expect(taken.actions).toContainEqual({ type: 'setTargetCapacity', cluster: 'pending', clusterName: NEW, percent: 25 });
});

test('no idle worker (every Pod hosts a replica): the take goes ahead with a WorkersNotFreed Event', () => {
  const busy = { ...oldWorkers, busyPods: ['w-0', 'w-1', 'w-2', 'w-3'] };
  const d = nextRayService(obs(afterGive, cluster(OLD, 75, busy), cluster(NEW, 0)), opts, NOW);
  expect(d.actions).toContainEqual({ type: 'setTargetCapacity', cluster: 'pending', clusterName: NEW, percent: 25 });
  expect(d.events).toEqual([{ type: 'Normal', reason: 'WorkersNotFreed', action: 'FreeWorkers', message: `no worker of ${OLD} is free of Serve replicas: the next capacity step is taken without freeing Pods` }]);
});

test('Serve not reporting where its replicas run (no node_instance_id): no worker is named, the take goes ahead with a WorkersNotFreed Event saying why', () => {
  const d = nextRayService(obs(afterGive, cluster(OLD, 75, { ...oldWorkers, busyPods: [], placementUnknown: true }), cluster(NEW, 0)), opts, NOW);
  expect(d.actions.map((a) => a.type)).not.toContain('freeWorkers');
  expect(d.actions).toContainEqual({ type: 'setTargetCapacity', cluster: 'pending', clusterName: NEW, percent: 25 });
  expect(d.events.map((e) => e.message)).toEqual([`Serve does not report which Pod each replica of ${OLD} runs on (node_instance_id): the next capacity step is taken without freeing Pods`]);
});

test('the give and the traffic steps never wait for freeing; an upgrade with a surge never frees', () => {
  const start: RayServiceStatus = { ...afterGive, activeTargetCapacity: 100 };
  const give = nextRayService(obs(start, cluster(OLD, 100, oldWorkers), cluster(NEW, 0)), opts, NOW);
  expect(give.actions).toContainEqual({ type: 'setTargetCapacity', cluster: 'active', clusterName: OLD, percent: 75 });
  expect(give.actions.map((a) => a.type)).not.toContain('freeWorkers');
  const surge: RayServiceStatus = { ...start, capacity: { outcome: 'fits', at: NOW - 120_000 } };
  const d = nextRayService(obs(surge, cluster(OLD, 100, oldWorkers), cluster(NEW, 0)), opts, NOW);
  expect(d.actions).toContainEqual({ type: 'setTargetCapacity', cluster: 'pending', clusterName: NEW, percent: 25 });
  expect(d.actions.map((a) => a.type)).not.toContain('freeWorkers');
});

test('rolling back, the new cluster gives: its idle worker is freed before the old cluster takes back 25', () => {
  // Aborted at 50/50 50/50: the new cluster gave 50 → 25 (shrink-first.test.ts' rollback sequence); the old one takes next.
  const rolling: RayServiceStatus = { ...afterGive, phase: 'RollingBack', rollback: 'Aborted', activeTargetCapacity: 50, pendingTargetCapacity: 25, activeWeight: 50, pendingWeight: 50 };
  const newWorkers: ObservedWorkers = { groups: [{ ...group, minReplicas: 0, replicas: 2 }], pods: [pod('n-0'), pod('n-1')], busyPods: ['n-0'], settling: false };
  const d = nextRayService(obs(rolling, cluster(OLD, 50, oldWorkers), cluster(NEW, 25, newWorkers), { controls: { abort: true } }), opts, NOW);
  expect(d.actions).toEqual([{
    type: 'freeWorkers', clusterName: NEW, floors: [{ index: 0, groupName: 'gpu', minReplicas: 0 }],
    groups: [{ index: 0, groupName: 'gpu', read: { replicas: 2, minReplicas: 0, workersToDelete: [] }, replicas: 1, minReplicas: 0, workersToDelete: ['n-1'] }],
  }]);
  expect(d.status).toMatchObject({ phase: 'RollingBack', reason: 'FreeingWorkers', activeTargetCapacity: 50 });
});

test('freeWorkersOf: floors kept once recorded, minReplicas lowered with replicas, multi-host groups and busy, deleting or named Pods left alone', () => {
  const workers: ObservedWorkers = {
    groups: [
      { index: 0, name: 'gpu', replicas: 3, minReplicas: 3, numOfHosts: 1, workersToDelete: ['a-9'] },
      { index: 1, name: 'tp', replicas: 2, minReplicas: 1, numOfHosts: 2, workersToDelete: [] },
    ],
    pods: [
      { name: 'a-0', group: 'gpu', deleting: false }, { name: 'a-1', group: 'gpu', deleting: false }, { name: 'a-2', group: 'gpu', deleting: true },
      { name: 'a-9', group: 'gpu', deleting: false }, { name: 'a-3', group: 'gpu', deleting: false }, { name: 't-0', group: 'tp', deleting: false },
    ],
    busyPods: ['a-0'],
    settling: false,
  };
  const recorded = [{ index: 0, groupName: 'gpu', minReplicas: 4 }, { index: 1, groupName: 'tp', minReplicas: 1 }];
  expect(freeWorkersOf('c', workers, recorded)).toEqual({
    type: 'freeWorkers', clusterName: 'c',
    groups: [{ index: 0, groupName: 'gpu', read: { replicas: 3, minReplicas: 3, workersToDelete: ['a-9'] }, replicas: 1, minReplicas: 1, workersToDelete: ['a-9', 'a-1', 'a-3'] }],
  });
  expect(freeWorkersOf('c', { ...workers, busyPods: ['a-0', 'a-1', 'a-3', 't-0'] }, recorded)).toBeUndefined();
});

test('a new cluster of a shrinkFirst upgrade starts its workers at 0; whichever cluster serves alone at the end gets its floors back, until the annotation is gone', () => {
  const started = nextRayService({ name: 'svc', goalSpecHash: 'new', servingCluster: OLD, clusters: [cluster(OLD, 100)], route: { backends: [{ cluster: OLD, weight: 100 }], ready: true },
    status: { ...afterGive, phase: 'Running', reason: 'UpToDate', pendingClusterName: undefined, pendingSpecHash: undefined, upgradeStrategy: undefined, activeTargetCapacity: 100, capacity: undefined },
    capacity: { outcome: 'fitsAfterOldShrinks', message: 'gpu: needs 4 nvidia.com/gpu on nodes matching {type=kwok}, 1 free' } }, opts, NOW);
  expect(started.actions).toEqual([{ type: 'createPendingCluster', name: started.status.pendingClusterName, specHash: 'new', startFromMinReplicas: true, workerFloorZero: true }]);
  const floors = [{ index: 0, groupName: 'gpu', minReplicas: 2 }];
  const promoted: RayServiceStatus = { ...afterGive, phase: 'Running', reason: 'Promoted', activeClusterName: NEW, pendingClusterName: undefined, pendingSpecHash: undefined, upgradeStrategy: undefined, activeTargetCapacity: 100, pendingTargetCapacity: 0, activeWeight: 100, pendingWeight: 0, capacity: undefined };
  const served = { ...cluster(NEW, 100), workerFloors: floors };
  const d = nextRayService({ name: 'svc', goalSpecHash: 'new', servingCluster: NEW, clusters: [served], route: { backends: [{ cluster: NEW, weight: 100 }], ready: true }, status: promoted }, opts, NOW);
  expect(d.actions).toEqual([{ type: 'restoreWorkerFloors', clusterName: NEW, floors }]);
  const done = nextRayService({ name: 'svc', goalSpecHash: 'new', servingCluster: NEW, clusters: [cluster(NEW, 100)], route: { backends: [{ cluster: NEW, weight: 100 }], ready: true }, status: promoted }, opts, NOW);
  expect(done.actions).toEqual([]);
  // While an upgrade runs, a recorded floor stays lowered.
  const mid = nextRayService(obs(afterGive, { ...cluster(OLD, 75, { ...oldWorkers, busyPods: oldWorkers.pods.map((p) => p.name) }), workerFloors: floors }, cluster(NEW, 0)), opts, NOW);
  expect(mid.actions.map((a) => a.type)).not.toContain('restoreWorkerFloors');
});
