/**
 * The RBG reconciler's capacity preflight over an in-memory API (FakeKube): the cluster's capacity
 * (Nodes, bound Pods, the namespace's ResourceQuotas and LimitRanges) is listed only in the pass
 * that may release a rollout's first round, a misfit under `capacityPolicy: fail` leaves every role
 * armed with one `InsufficientCapacity` Event, and a list the API server refuses holds the round
 * under `fail` (released unchecked under `wait`), with one `CapacityUnknown` Event. No API server, fake clock.
 */
import type { KubeClient } from '../../../lib/runtime/kube/client';
import type { KubeObject } from '../../../lib/runtime/kube/types';
import { RbgRolloutReconciler, type RbgReconcileLogger } from '../../../lib/runtime/rbg/reconciler';
import { RBG_V1ALPHA2_TYPE } from '../../../lib/spec/object-names';
import type { FakeKube } from '../support/fake-kube';
import { GROUP_LABEL, ROLE_LABEL, RbgFakeKube, changeRelease, coordinatedGroup, createdEvents, settle } from '../support/rbg-fake';

const T0 = Date.parse('2026-11-30T10:00:00Z');
const MISFIT = 'prefill: needs 2 nvidia.com/gpu on nodes matching {}, 0 free';

/** One 8-GPU Node, full: a filler of another namespace holds 5 GPUs and the group's three v1 replicas one each. */
function seedCluster(kube: FakeKube): void {
  kube.seed({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'gpu-0', labels: {} }, status: { allocatable: { cpu: '32', 'nvidia.com/gpu': '8', pods: '110' } } });
  const bound = (name: string, namespace: string, labels: Record<string, string>, gpus: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: { nodeName: 'gpu-0', containers: [{ name: 'c', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] },
    status: { phase: 'Running' },
  });
  kube.seed(bound('filler', 'other', {}, 5));
  for (const [name, r] of [['pd-prefill-0', 'prefill'], ['pd-prefill-1', 'prefill'], ['pd-decode-0', 'decode']]) kube.seed(bound(name, 'ns', { [GROUP_LABEL]: 'pd', [ROLE_LABEL]: r }, 1));
}

/** The new release: 2 GPUs per replica (the roles' rollout strategies, as the executor armed them, kept). */
function toV2(kube: FakeKube): void {
  changeRelease(kube, 'v2');
  settle(kube, { prefill: { updated: 0, ready: 2 }, decode: { updated: 0, ready: 1 } });
}

const roleWrites = (kube: FakeKube) => kube.writes.filter((w) => w.verb === 'patchJson' && JSON.stringify(w.body).includes('/rolloutStrategy'));
const CAPACITY_LISTS = ['Node *', 'Pod * spec.nodeName!=', 'ResourceQuota ns', 'LimitRange ns'];

async function armed(policy: 'wait' | 'fail', log?: RbgReconcileLogger): Promise<{ kube: RbgFakeKube; reconciler: RbgRolloutReconciler; clock: { now: number } }> {
  const kube = new RbgFakeKube();
  kube.seed(coordinatedGroup({ capacityPolicy: policy }));
  seedCluster(kube);
  settle(kube, { prefill: { updated: 2, ready: 2 }, decode: { updated: 1, ready: 1 } });
  const clock = { now: T0 };
  const reconciler = new RbgRolloutReconciler({ client: kube as unknown as KubeClient, type: RBG_V1ALPHA2_TYPE, readWorkloads: false, now: () => clock.now, ...(log ? { log } : {}) });
  // The group seen for the first time: Complete and armed, nothing listed.
  expect((await reconciler.reconcile('ns', 'pd')).status!.coordinations[0].phase).toBe('Complete');
  expect(kube.lists).toEqual([]);
  return { kube, reconciler, clock };
}

test('fail: the capacity is listed once, in the pass that would release round 1; nothing is released, Failed with one Event, and the next pass lists nothing', async () => {
  const { kube, reconciler, clock } = await armed('fail');
  const armedWrites = roleWrites(kube).length;
  toV2(kube);
  clock.now = T0 + 1_000;
  const refused = await reconciler.reconcile('ns', 'pd');
  expect(kube.lists).toEqual(CAPACITY_LISTS);
  // Round 1 would move prefill's replica 1 to 2 GPUs (under fail each role keeps its last replica): its old Pod frees 1, 0 are free now.
  expect(refused.status!.coordinations[0]).toMatchObject({
    phase: 'Failed',
    reason: 'InsufficientCapacity',
    message: `rollout not started (capacityPolicy fail): ${MISFIT}`,
    rounds: 0,
    capacity: { outcome: 'doesNotFit', message: MISFIT, at: '2026-11-30T10:00:01.000Z' },
  });
  expect(roleWrites(kube)).toHaveLength(armedWrites);
  expect(createdEvents(kube).filter((e) => e.reason === 'InsufficientCapacity')).toEqual([expect.objectContaining({ action: 'CapacityPreflight', note: `pd: rollout not started (capacityPolicy fail): ${MISFIT}` })]);

  clock.now = T0 + 2_000;
  const again = await reconciler.reconcile('ns', 'pd');
  expect(kube.lists).toEqual(CAPACITY_LISTS);
  expect(again.status!.coordinations[0]).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity' });
  expect(createdEvents(kube).filter((e) => e.reason === 'InsufficientCapacity')).toHaveLength(1);
  expect(roleWrites(kube)).toHaveLength(armedWrites);
});

test('wait: round 1 is released with the record and one Event; the Progressing passes after it list the group\'s Pods for the scheduler watch, not the capacity', async () => {
  const { kube, reconciler, clock } = await armed('wait');
  toV2(kube);
  clock.now = T0 + 1_000;
  const started = await reconciler.reconcile('ns', 'pd');
  expect(kube.lists).toEqual(CAPACITY_LISTS);
  // Without the last-replica hold, round 1 moves both prefill replicas (needs 4 GPUs, 2 freed) and decode's.
  const message = 'prefill: needs 4 nvidia.com/gpu on nodes matching {}, 0 free';
  expect(started.status!.coordinations[0]).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1, capacity: { outcome: 'doesNotFit', message } });
  expect(createdEvents(kube).map((e) => e.reason)).toEqual(['RolloutRound', 'InsufficientCapacity']);

  settle(kube, { prefill: { updated: 0, ready: 2 }, decode: { updated: 0, ready: 1 } });
  clock.now = T0 + 2_000;
  const next = await reconciler.reconcile('ns', 'pd');
  expect(kube.lists).toEqual([...CAPACITY_LISTS, `Pod ns ${JSON.stringify({ [GROUP_LABEL]: 'pd' })}`]);
  expect(next.status!.coordinations[0].capacity).toEqual(started.status!.coordinations[0].capacity);
  expect(createdEvents(kube).filter((e) => e.reason === 'InsufficientCapacity')).toHaveLength(1);
});

test('a list the API server refuses (no list on nodes), fail: logged, round 1 held with one CapacityUnknown Event and read again 10 s later; judged once the list answers', async () => {
  const warnings: string[] = [];
  const log: RbgReconcileLogger = { info: () => undefined, debug: () => undefined, warn: (_obj, msg) => warnings.push(msg) };
  const { kube, reconciler, clock } = await armed('fail', log);
  kube.forbidNodes = true;
  toV2(kube);
  clock.now = T0 + 1_000;
  const writesBefore = roleWrites(kube).length;
  const held = await reconciler.reconcile('ns', 'pd');
  expect(warnings).toEqual(['capacity preflight: the cluster could not be read']);
  expect(held.status!.coordinations[0]).toMatchObject({ phase: 'Progressing', reason: 'CapacityUnknown', rounds: 0, capacity: { outcome: 'unknown' } });
  expect(held.status!.coordinations[0].capacity!.message).toContain('nodes is forbidden');
  expect(held.requeueAt).toBe(T0 + 11_000);
  expect(roleWrites(kube).length).toBe(writesBefore);
  expect(createdEvents(kube).map((e) => e.reason)).toEqual(['CapacityUnknown']);

  clock.now = T0 + 11_000;
  expect((await reconciler.reconcile('ns', 'pd')).status!.coordinations[0]).toMatchObject({ reason: 'CapacityUnknown', rounds: 0 });
  expect(createdEvents(kube).map((e) => e.reason)).toEqual(['CapacityUnknown']);

  kube.forbidNodes = false;
  clock.now = T0 + 21_000;
  const judged = await reconciler.reconcile('ns', 'pd');
  // The cluster as seeded has no room for v2: once read, the preflight refuses it as it would have at once.
  expect(judged.status!.coordinations[0]).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity', rounds: 0, capacity: { outcome: 'doesNotFit', message: MISFIT } });
  expect(roleWrites(kube).length).toBe(writesBefore);
  expect(createdEvents(kube).map((e) => e.reason)).toEqual(['CapacityUnknown', 'InsufficientCapacity']);
});

test('a list the API server refuses, wait: round 1 is released as unchecked, with one CapacityUnknown Event', async () => {
  const { kube, reconciler, clock } = await armed('wait');
  kube.forbidNodes = true;
  toV2(kube);
  clock.now = T0 + 1_000;
  const started = await reconciler.reconcile('ns', 'pd');
  expect(started.status!.coordinations[0]).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1, capacity: { outcome: 'unknown' } });
  expect(createdEvents(kube).map((e) => e.reason)).toEqual(['RolloutRound', 'CapacityUnknown']);
});

test('the passes before the first round (RBG\'s controller has not caught up with the new template) list no capacity; the pass that releases it lists it once', async () => {
  const { kube, reconciler, clock } = await armed('wait');
  const capacityLists = () => kube.lists.filter((l) => CAPACITY_LISTS.includes(l));
  changeRelease(kube, 'v2');
  for (const at of [1_000, 6_000, 11_000]) {
    clock.now = T0 + at;
    expect((await reconciler.reconcile('ns', 'pd')).status!.coordinations[0].rounds).toBe(0);
  }
  expect(capacityLists()).toEqual([]);
  settle(kube, { prefill: { updated: 0, ready: 2 }, decode: { updated: 0, ready: 1 } });
  clock.now = T0 + 12_000;
  expect((await reconciler.reconcile('ns', 'pd')).status!.coordinations[0]).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1 });
  expect(capacityLists()).toEqual(CAPACITY_LISTS);
});
