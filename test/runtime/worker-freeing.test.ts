/**
 * The runtime half of shrinkFirst's worker freeing: reading the workers and where Serve runs
 * (`workersOf`, over a body shaped like Ray 2.60's `GET /api/serve/applications/`), the floors,
 * both guarded JSON patches, and the status that shows a freeing. Expected values are written out by hand.
 */
import type { KubeObject } from '../../lib/runtime/kube/types';
import { freeWorkersPatch, restoreWorkerFloorsPatch, workerFloorsOf, workersFromZero, workersOf } from '../../lib/runtime/rayservice/worker-freeing';
import { parseServeInstanceDetails } from '../../lib/runtime/serve/types';
import { renderStatus } from '../../lib/runtime/rayservice/status';
import type { RayServiceStatus } from '../../lib/engine/status';

const cluster = (annotations: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'ray.io/v1', kind: 'RayCluster', metadata: { name: 'svc-aaaaa', namespace: 'ns', annotations },
  spec: {
    workerGroupSpecs: [
      { groupName: 'gpu', replicas: 4, minReplicas: 2, maxReplicas: 8, numOfHosts: 1, scaleStrategy: { workersToDelete: ['w-9'] } },
      { groupName: 'tp', replicas: 1, minReplicas: 1, maxReplicas: 1, numOfHosts: 2 },
    ],
  },
});
const pod = (name: string, group: string, deleting = false): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { 'ray.io/group': group }, ...(deleting ? { deletionTimestamp: '2026-11-29T19:00:00Z' } : {}) },
});
/** Serve at 50%: replicas on w-0 (RUNNING) and w-1 (STOPPING), proxies on the head, w-0, w-1 (draining), w-2 (DRAINED). */
const serve = (stopping: string, w1Proxy: string) => parseServeInstanceDetails({
  target_capacity: 50,
  controller_info: { node_id: 'head-node' },
  proxies: {
    'head-node': { status: 'HEALTHY', node_instance_id: 'svc-aaaaa-head-x', node_ip: '10.0.0.1' },
    n0: { status: 'HEALTHY', node_instance_id: 'w-0' },
    n1: { status: w1Proxy, node_instance_id: 'w-1' },
    n2: { status: 'DRAINED', node_instance_id: 'w-2' },
  },
  applications: {
    app: {
      name: 'app', status: 'RUNNING', message: '', route_prefix: '/',
      deployments: {
        Model: {
          name: 'Model', status: 'HEALTHY', message: '', target_num_replicas: 1,
          replicas: [
            { replica_id: 'r0', state: 'RUNNING', node_id: 'n0', node_ip: '10.0.0.2', node_instance_id: 'w-0' },
            { replica_id: 'r1', state: stopping, node_id: 'n1', node_instance_id: 'w-1' },
            { replica_id: 'r2', state: 'STARTING', node_instance_id: null },
          ],
        },
      },
    },
  },
});

test('parseServeInstanceDetails keeps each replica\'s and proxy\'s node_instance_id (the Pod name), and reads null as absent', () => {
  const d = serve('STOPPING', 'DRAINING');
  expect(d.applications.app.deployments.Model.replicas).toEqual([
    { replica_id: 'r0', state: 'RUNNING', node_instance_id: 'w-0' },
    { replica_id: 'r1', state: 'STOPPING', node_instance_id: 'w-1' },
    { replica_id: 'r2', state: 'STARTING' },
  ]);
  expect(d.proxies.n2).toEqual({ status: 'DRAINED', node_instance_id: 'w-2' });
  expect(() => parseServeInstanceDetails({ applications: {}, proxies: { n: { status: 'HEALTHY', node_instance_id: 7 } } })).toThrow('proxies.n.node_instance_id must be a string; got a number');
});

test('workersOf: groups as read, Pods by group label, replicas in any state and undrained proxies make a Pod busy; a replica not RUNNING or a draining proxy is settling', () => {
  const pods = [pod('w-0', 'gpu'), pod('w-1', 'gpu'), pod('w-2', 'gpu'), pod('w-3', 'gpu', true), pod('t-0', 'tp')];
  expect(workersOf(cluster(), pods, serve('STOPPING', 'DRAINING'))).toEqual({
    groups: [
      { index: 0, name: 'gpu', replicas: 4, minReplicas: 2, numOfHosts: 1, workersToDelete: ['w-9'] },
      { index: 1, name: 'tp', replicas: 1, minReplicas: 1, numOfHosts: 2, workersToDelete: [] },
    ],
    pods: [
      { name: 'w-0', group: 'gpu', deleting: false }, { name: 'w-1', group: 'gpu', deleting: false }, { name: 'w-2', group: 'gpu', deleting: false },
      { name: 'w-3', group: 'gpu', deleting: true }, { name: 't-0', group: 'tp', deleting: false },
    ],
    busyPods: ['svc-aaaaa-head-x', 'w-0', 'w-1'],
    settling: true,
  });
});

test('workersOf: a RUNNING replica or a live proxy without node_instance_id makes the placement unknown; a replica not yet placed does not', () => {
  const body = (replica: Record<string, unknown>, proxy: Record<string, unknown>) => parseServeInstanceDetails({
    target_capacity: 50, proxies: { n0: { status: 'HEALTHY', ...proxy } },
    applications: { app: { name: 'app', status: 'RUNNING', message: '', route_prefix: '/', deployments: { M: { name: 'M', status: 'HEALTHY', message: '', target_num_replicas: 1, replicas: [{ replica_id: 'r', ...replica }] } } } },
  });
  expect(workersOf(cluster(), [], body({ state: 'RUNNING' }, { node_instance_id: 'w-0' })).placementUnknown).toBe(true);
  expect(workersOf(cluster(), [], body({ state: 'RUNNING', node_instance_id: 'w-0' }, {})).placementUnknown).toBe(true);
  const starting = workersOf(cluster(), [], body({ state: 'STARTING' }, { node_instance_id: 'w-0' }));
  expect([starting.placementUnknown, starting.settling, starting.busyPods]).toEqual([undefined, true, ['w-0']]);
});

test('workerFloorsOf reads the floors annotation, and ignores one that is not a list of {index, groupName, minReplicas}', () => {
  const floors = [{ index: 0, groupName: 'gpu', minReplicas: 2 }, { index: 1, groupName: 'tp', minReplicas: 1 }];
  expect(workerFloorsOf(cluster({ 'rayshift.dev/worker-floors': JSON.stringify(floors) }))).toEqual(floors);
  expect(workerFloorsOf(cluster({ 'rayshift.dev/worker-floors': '[{"index":0,"groupName":"gpu","minReplicas":"two"}]' }))).toBeUndefined();
  expect(workerFloorsOf(cluster({ 'rayshift.dev/worker-floors': '{"gpu":2}' }))).toBeUndefined();
  expect(workerFloorsOf(cluster({ 'rayshift.dev/worker-floors': 'not json' }))).toBeUndefined();
  expect(workerFloorsOf(cluster({ 'rayshift.dev/worker-floors': `[${'1,'.repeat(9000)}1]` }))).toBeUndefined();
  expect(workerFloorsOf(cluster())).toBeUndefined();
});

test('workersFromZero: every group at replicas and minReplicas 0, the spec\'s minReplicas as floors; restoreWorkerFloorsPatch gives them back and removes the annotation', () => {
  const zero = workersFromZero((cluster().spec as { workerGroupSpecs: unknown }).workerGroupSpecs);
  expect(zero.floors).toEqual([{ index: 0, groupName: 'gpu', minReplicas: 2 }, { index: 1, groupName: 'tp', minReplicas: 1 }]);
  expect(zero.groups.map((g: any) => `${g.groupName} ${g.replicas}/${g.minReplicas}/${g.maxReplicas}`)).toEqual(['gpu 0/0/8', 'tp 0/0/1']);
  expect(restoreWorkerFloorsPatch({ type: 'restoreWorkerFloors', clusterName: 'svc-bbbbb', floors: zero.floors })).toEqual([
    { op: 'test', path: '/spec/workerGroupSpecs/0/groupName', value: 'gpu' },
    { op: 'replace', path: '/spec/workerGroupSpecs/0/minReplicas', value: 2 },
    { op: 'test', path: '/spec/workerGroupSpecs/1/groupName', value: 'tp' },
    { op: 'replace', path: '/spec/workerGroupSpecs/1/minReplicas', value: 1 },
    { op: 'remove', path: '/metadata/annotations/rayshift.dev~1worker-floors' },
  ]);
});

test('freeWorkersPatch: per group, test what was read, then set replicas, minReplicas and the list in the same write; the floors annotation when given', () => {
  expect(freeWorkersPatch({
    type: 'freeWorkers', clusterName: 'svc-aaaaa', floors: [{ index: 0, groupName: 'gpu', minReplicas: 2 }, { index: 1, groupName: 'tp', minReplicas: 1 }],
    groups: [{ index: 0, groupName: 'gpu', read: { replicas: 4, minReplicas: 2, workersToDelete: ['w-9'] }, replicas: 1, minReplicas: 1, workersToDelete: ['w-9', 'w-2'] }],
  })).toEqual([
    { op: 'test', path: '/spec/workerGroupSpecs/0/groupName', value: 'gpu' },
    { op: 'test', path: '/spec/workerGroupSpecs/0/replicas', value: 4 },
    { op: 'test', path: '/spec/workerGroupSpecs/0/minReplicas', value: 2 },
    { op: 'test', path: '/spec/workerGroupSpecs/0/scaleStrategy/workersToDelete', value: ['w-9'] },
    { op: 'replace', path: '/spec/workerGroupSpecs/0/replicas', value: 1 },
    { op: 'replace', path: '/spec/workerGroupSpecs/0/minReplicas', value: 1 },
    { op: 'add', path: '/spec/workerGroupSpecs/0/scaleStrategy', value: { workersToDelete: ['w-9', 'w-2'] } },
    { op: 'add', path: '/metadata/annotations/rayshift.dev~1worker-floors', value: '[{"index":0,"groupName":"gpu","minReplicas":2},{"index":1,"groupName":"tp","minReplicas":1}]' },
  ]);
  // An empty list read (perhaps absent on the object) is not tested: the replicas test guards it, since Ray's autoscaler writes both.
  expect(freeWorkersPatch({
    type: 'freeWorkers', clusterName: 'svc-aaaaa',
    groups: [{ index: 1, groupName: 'gpu', read: { replicas: 2, minReplicas: 0, workersToDelete: [] }, replicas: 1, minReplicas: 0, workersToDelete: ['n-1'] }],
  }).map((o) => `${o.op} ${o.path}`)).toEqual([
    'test /spec/workerGroupSpecs/1/groupName', 'test /spec/workerGroupSpecs/1/replicas', 'test /spec/workerGroupSpecs/1/minReplicas',
    'replace /spec/workerGroupSpecs/1/replicas', 'replace /spec/workerGroupSpecs/1/minReplicas', 'add /spec/workerGroupSpecs/1/scaleStrategy',
  ]);
});

test('renderStatus shows a freeing in status.capacity and the message', () => {
  const engine: RayServiceStatus = {
    phase: 'Upgrading', reason: 'FreeingWorkers', activeClusterName: 'svc-aaaaa', pendingClusterName: 'svc-bbbbb', activeTargetCapacity: 75, pendingTargetCapacity: 0,
    activeWeight: 100, pendingWeight: 0, trafficConfirmed: true, deletions: [],
    capacity: { outcome: 'fitsAfterOldShrinks', message: 'small: needs 4 nvidia.com/gpu on nodes matching {type=kwok}, 1 free', at: 0, shrinkFirst: true, freeing: { cluster: 'svc-aaaaa', pods: ['w-2', 'w-3'], since: 1_000 } },
  };
  const out = renderStatus(engine, 1, undefined, new Date(2_000));
  expect(out.capacity).toEqual({
    outcome: 'fitsAfterOldShrinks', message: 'small: needs 4 nvidia.com/gpu on nodes matching {type=kwok}, 1 free', checkedTime: '1970-01-01T00:00:00.000Z', shrinkFirst: true,
    freeing: { cluster: 'svc-aaaaa', pods: ['w-2', 'w-3'], sinceTime: '1970-01-01T00:00:01.000Z' },
  });
  expect(out.message).toBe('Upgrading/FreeingWorkers: svc-aaaaa @75% w100 -> svc-bbbbb @0% w0; capacity preflight: small: needs 4 nvidia.com/gpu on nodes matching {type=kwok}, 1 free; freeing 2 worker Pods of svc-aaaaa before the next capacity step: w-2, w-3');
});
