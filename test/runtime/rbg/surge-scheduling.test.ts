/**
 * The RBG reconciler's scheduler watch over an in-memory API (FakeKube): the group's Pods are listed
 * (by RBG's group label, once per pass) only while a coordination is Progressing, the coordinated
 * roles' Unschedulable ones reach the engine, and under `capacityPolicy: fail` the pass past the
 * bound records the `SurgeUnschedulable` Event and starts the rollback. No API server, fake clock.
 */
import type { KubeClient } from '../../../lib/runtime/kube/client';
import type { KubeObject } from '../../../lib/runtime/kube/types';
import { groupPodsOnce, podsByRole } from '../../../lib/runtime/rbg/group-pods';
import { RbgRolloutReconciler } from '../../../lib/runtime/rbg/reconciler';
import { readRolloutStatus } from '../../../lib/runtime/rbg/status';
import { RBG_V1ALPHA2_TYPE } from '../../../lib/spec/object-names';
import type { FakeKube } from '../support/fake-kube';
import { GROUP_LABEL, ROLE_LABEL, RbgFakeKube, changeRelease, coordinatedGroup, createdEvents, settle } from '../support/rbg-fake';

const T0 = Date.parse('2026-11-30T10:00:00Z');
const SCHEDULER = '0/2 nodes are available: 2 Insufficient nvidia.com/gpu.';

const group = () => coordinatedGroup({ capacityPolicy: 'fail', surgeUnschedulableSeconds: 5 });

/** A Pod of group `g`'s `role`; `unschedulableAt` (epoch ms) makes its PodScheduled False/Unschedulable since then. */
function pod(name: string, g: string, roleName: string, unschedulableAt?: number): KubeObject {
  const scheduled = unschedulableAt === undefined
    ? { type: 'PodScheduled', status: 'True' }
    : { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: new Date(unschedulableAt).toISOString(), message: SCHEDULER };
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', labels: { [GROUP_LABEL]: g, [ROLE_LABEL]: roleName } }, status: { phase: 'Pending', conditions: [scheduled] } };
}

const coordination = (kube: FakeKube) => readRolloutStatus(kube.peek(RBG_V1ALPHA2_TYPE, 'pd', 'ns')!)!.coordinations[0];

test('under capacityPolicy fail: Pods listed only while Progressing; recorded and woken at the bound, then one Event and the rollback', async () => {
  const kube = new RbgFakeKube();
  kube.seed(group());
  settle(kube, { prefill: { updated: 2, ready: 2 }, decode: { updated: 1, ready: 1 } });
  let now = T0;
  const reconciler = new RbgRolloutReconciler({ client: kube as unknown as KubeClient, type: RBG_V1ALPHA2_TYPE, readWorkloads: false, now: () => now });

  // Pass 1: the group seen for the first time is Complete and armed; no Pod is listed.
  expect((await reconciler.reconcile('ns', 'pd')).status!.coordinations[0].phase).toBe('Complete');
  // The new release asks 2 GPUs per replica.
  changeRelease(kube, 'v2');
  settle(kube, { prefill: { updated: 0, ready: 2 }, decode: { updated: 0, ready: 1 } });
  now = T0 + 1_000;
  // Pass 2: round 1 written (the rollout starts on this pass, nothing of it can be Unschedulable yet).
  expect((await reconciler.reconcile('ns', 'pd')).status!.coordinations[0]).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten' });
  expect(kube.podListsByLabel).toEqual([]);

  // The round's decode replica cannot be placed since T0 + 2 s; another group's Unschedulable Pod is not this group's.
  kube.seed(pod('pd-prefill-0', 'pd', 'prefill'));
  kube.seed(pod('pd-decode-0', 'pd', 'decode', T0 + 2_000));
  kube.seed(pod('other-decode-0', 'other', 'decode', T0));
  settle(kube, { prefill: { updated: 1, ready: 1 }, decode: { updated: 1, ready: 0 } });
  now = T0 + 3_000;
  const seen = await reconciler.reconcile('ns', 'pd');
  expect(kube.podListsByLabel).toEqual([JSON.stringify({ [GROUP_LABEL]: 'pd' })]);
  expect(seen.status!.coordinations[0].surgeUnschedulable).toEqual({ pods: 1, roles: ['decode'], since: '2026-11-30T10:00:02.000Z', message: SCHEDULER, boundExceeded: false });
  expect(seen.requeueAt).toBe(T0 + 2_000 + 5_000);
  expect(createdEvents(kube).map((e) => e.reason)).not.toContain('SurgeUnschedulable');

  // At the bound: one Event, and the way back starts (reason SurgeUnschedulable).
  now = T0 + 7_000;
  const failed = await reconciler.reconcile('ns', 'pd');
  expect(kube.podListsByLabel).toHaveLength(2);
  const c = failed.status!.coordinations[0];
  expect(c).toMatchObject({ phase: 'RollingBack', reason: 'SurgeUnschedulable', surgeUnschedulable: { pods: 1, roles: ['decode'], boundExceeded: true } });
  expect(c.rollback!.cause).toBe(`1 Pod of role decode Unschedulable for 5 s (surgeUnschedulableSeconds 5); rolled back (capacityPolicy fail): ${SCHEDULER}`);
  const surge = createdEvents(kube).filter((e) => e.reason === 'SurgeUnschedulable');
  expect(surge).toEqual([
    expect.objectContaining({ action: 'SurgeScheduling', note: `pd: 1 Pod of role decode Unschedulable for 5 s (surgeUnschedulableSeconds 5); returning every role to the revision before the rollout (capacityPolicy fail): ${SCHEDULER}` }),
  ]);
  expect(coordination(kube).phase).toBe('RollingBack');

  // Rolling back: the Pods are no longer read, the record is gone, the Event is not repeated.
  settle(kube, { prefill: { updated: 1, ready: 1 }, decode: { updated: 1, ready: 0 } });
  now = T0 + 8_000;
  const back = await reconciler.reconcile('ns', 'pd');
  expect(kube.podListsByLabel).toHaveLength(2);
  expect(back.status!.coordinations[0].surgeUnschedulable).toBeUndefined();
  expect(createdEvents(kube).filter((e) => e.reason === 'SurgeUnschedulable')).toHaveLength(1);
});

test('podsByRole: each listed role\'s Pods, by RBG\'s role label; groupPodsOnce lists once', async () => {
  const kube = new RbgFakeKube();
  const g = kube.seed(group());
  for (const p of [pod('a', 'pd', 'prefill', T0), pod('b', 'pd', 'prefill', T0 - 1_000), pod('c', 'pd', 'decode'), pod('d', 'pd', 'router', T0)]) kube.seed(p);
  const pods = groupPodsOnce(kube as unknown as KubeClient, g);
  const listed = await pods();
  expect(await pods()).toBe(listed);
  expect(kube.podListsByLabel).toHaveLength(1);
  const byRole = podsByRole(g, listed, new Set(['prefill', 'decode']));
  expect([...byRole].map(([role, of]) => [role, of.map((p) => p.metadata.name)])).toEqual([['prefill', ['a', 'b']], ['decode', ['c']]]);
});
