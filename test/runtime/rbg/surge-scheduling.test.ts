/**
 * The RBG reconciler's scheduler watch over an in-memory API (FakeKube): the group's Pods are listed
 * (by RBG's group label, once per pass) only while a coordination is Progressing, the coordinated
 * roles' Unschedulable ones reach the engine, and under `capacityPolicy: fail` the pass past the
 * bound records the `SurgeUnschedulable` Event and starts the rollback. No API server, fake clock.
 */
import { UnknownKindError } from '../../../lib/runtime/kube/errors';
import type { KubeClient } from '../../../lib/runtime/kube/client';
import type { ListOptions } from '../../../lib/runtime/kube/request-options';
import type { KubeList, KubeObject, ResourceType } from '../../../lib/runtime/kube/types';
import { groupPodsOnce, unschedulableByRole } from '../../../lib/runtime/rbg/group-pods';
import { RbgRolloutReconciler } from '../../../lib/runtime/rbg/reconciler';
import { readRolloutStatus } from '../../../lib/runtime/rbg/status';
import { RBG_V1ALPHA2_TYPE } from '../../../lib/spec/object-names';
import { FakeKube } from '../support/fake-kube';

const T0 = Date.parse('2026-11-30T10:00:00Z');
const SCHEDULER = '0/2 nodes are available: 2 Insufficient nvidia.com/gpu.';
const GROUP_LABEL = 'rbg.workloads.x-k8s.io/group-name';
const ROLE_LABEL = 'rbg.workloads.x-k8s.io/role-name';

/** FakeKube with the discovery the reconciler asks (no RoleBasedGroupWarmup: not RBG v0.8) and a log of the group's Pod lists (by label; not the capacity preflight's list of bound Pods). */
class RbgFake extends FakeKube {
  readonly podLists: string[] = [];
  async resolve(type: ResourceType): Promise<never> {
    throw new UnknownKindError(type.apiVersion, type.kind);
  }
  override async list<T extends KubeObject = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    if (type.kind === 'Pod' && opts.labelSelector !== undefined) this.podLists.push(JSON.stringify(opts.labelSelector));
    return super.list<T>(type, opts);
  }
}

const role = (name: string, replicas: number, image: string) => ({ name, replicas, standalonePattern: { template: { spec: { containers: [{ name, image, resources: { limits: { 'nvidia.com/gpu': image === 'v2' ? '2' : '1' } } }] } } } });

function group(): KubeObject {
  const policies = [{ name: 'pd', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: '100%', maxUnavailable: 1 } }, capacityPolicy: 'fail', surgeUnschedulableSeconds: 5 }];
  return {
    apiVersion: RBG_V1ALPHA2_TYPE.apiVersion,
    kind: 'RoleBasedGroup',
    metadata: { name: 'pd', namespace: 'ns', labels: { 'rayshift.dev/coordination-executor': 'operator' }, annotations: { 'rayshift.dev/coordination': JSON.stringify({ policies }) } },
    spec: { roles: [role('prefill', 2, 'v1'), role('decode', 1, 'v1')] },
  };
}

/** A Pod of group `g`'s `role`; `unschedulableAt` (epoch ms) makes its PodScheduled False/Unschedulable since then. */
function pod(name: string, g: string, roleName: string, unschedulableAt?: number): KubeObject {
  const scheduled = unschedulableAt === undefined
    ? { type: 'PodScheduled', status: 'True' }
    : { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: new Date(unschedulableAt).toISOString(), message: SCHEDULER };
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', labels: { [GROUP_LABEL]: g, [ROLE_LABEL]: roleName } }, status: { phase: 'Pending', conditions: [scheduled] } };
}

/** RBG's controller catching up: the group's status observes its generation, with these counts per role. */
function settle(kube: FakeKube, counts: Record<string, { updated: number; ready: number }>): void {
  kube.mutate(RBG_V1ALPHA2_TYPE, 'pd', 'ns', (g) => ({
    ...g,
    status: { observedGeneration: g.metadata.generation, roleStatuses: Object.entries(counts).map(([name, c]) => ({ name, replicas: 0, updatedReplicas: c.updated, readyReplicas: c.ready })) },
  }));
}

const coordination = (kube: FakeKube) => readRolloutStatus(kube.peek(RBG_V1ALPHA2_TYPE, 'pd', 'ns')!)!.coordinations[0];
const events = (kube: FakeKube) => kube.writes.filter((w) => w.verb === 'create' && w.kind === 'Event').map((w) => w.body as { reason: string; note: string; action: string });

test('under capacityPolicy fail: Pods listed only while Progressing; recorded and woken at the bound, then one Event and the rollback', async () => {
  const kube = new RbgFake();
  kube.seed(group());
  settle(kube, { prefill: { updated: 2, ready: 2 }, decode: { updated: 1, ready: 1 } });
  let now = T0;
  const reconciler = new RbgRolloutReconciler({ client: kube as unknown as KubeClient, type: RBG_V1ALPHA2_TYPE, readWorkloads: false, now: () => now });

  // Pass 1: the group seen for the first time is Complete and armed; no Pod is listed.
  expect((await reconciler.reconcile('ns', 'pd')).status!.coordinations[0].phase).toBe('Complete');
  // The new release asks 2 GPUs per replica.
  kube.mutate(RBG_V1ALPHA2_TYPE, 'pd', 'ns', (g) => ({ ...g, spec: { roles: [role('prefill', 2, 'v2'), role('decode', 1, 'v2')].map((r, i) => ({ ...r, rolloutStrategy: (g.spec as { roles: { rolloutStrategy: unknown }[] }).roles[i].rolloutStrategy })) } }));
  settle(kube, { prefill: { updated: 0, ready: 2 }, decode: { updated: 0, ready: 1 } });
  now = T0 + 1_000;
  // Pass 2: round 1 written (the rollout starts on this pass, nothing of it can be Unschedulable yet).
  expect((await reconciler.reconcile('ns', 'pd')).status!.coordinations[0]).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten' });
  expect(kube.podLists).toEqual([]);

  // The round's decode replica cannot be placed since T0 + 2 s; another group's Unschedulable Pod is not this group's.
  kube.seed(pod('pd-prefill-0', 'pd', 'prefill'));
  kube.seed(pod('pd-decode-0', 'pd', 'decode', T0 + 2_000));
  kube.seed(pod('other-decode-0', 'other', 'decode', T0));
  settle(kube, { prefill: { updated: 1, ready: 1 }, decode: { updated: 1, ready: 0 } });
  now = T0 + 3_000;
  const seen = await reconciler.reconcile('ns', 'pd');
  expect(kube.podLists).toEqual([JSON.stringify({ [GROUP_LABEL]: 'pd' })]);
  expect(seen.status!.coordinations[0].surgeUnschedulable).toEqual({ pods: 1, roles: ['decode'], since: '2026-11-30T10:00:02.000Z', message: SCHEDULER, boundExceeded: false });
  expect(seen.requeueAt).toBe(T0 + 2_000 + 5_000);
  expect(events(kube).map((e) => e.reason)).not.toContain('SurgeUnschedulable');

  // At the bound: one Event, and the way back starts (reason SurgeUnschedulable).
  now = T0 + 7_000;
  const failed = await reconciler.reconcile('ns', 'pd');
  expect(kube.podLists).toHaveLength(2);
  const c = failed.status!.coordinations[0];
  expect(c).toMatchObject({ phase: 'RollingBack', reason: 'SurgeUnschedulable', surgeUnschedulable: { pods: 1, roles: ['decode'], boundExceeded: true } });
  expect(c.rollback!.cause).toBe(`1 Pod of role decode Unschedulable for 5 s (surgeUnschedulableSeconds 5); rolled back (capacityPolicy fail): ${SCHEDULER}`);
  const surge = events(kube).filter((e) => e.reason === 'SurgeUnschedulable');
  expect(surge).toEqual([
    expect.objectContaining({ action: 'SurgeScheduling', note: `pd: 1 Pod of role decode Unschedulable for 5 s (surgeUnschedulableSeconds 5); returning every role to the revision before the rollout (capacityPolicy fail): ${SCHEDULER}` }),
  ]);
  expect(coordination(kube).phase).toBe('RollingBack');

  // Rolling back: the Pods are no longer read, the record is gone, the Event is not repeated.
  settle(kube, { prefill: { updated: 1, ready: 1 }, decode: { updated: 1, ready: 0 } });
  now = T0 + 8_000;
  const back = await reconciler.reconcile('ns', 'pd');
  expect(kube.podLists).toHaveLength(2);
  expect(back.status!.coordinations[0].surgeUnschedulable).toBeUndefined();
  expect(events(kube).filter((e) => e.reason === 'SurgeUnschedulable')).toHaveLength(1);
});

test('unschedulableByRole: each listed role\'s Unschedulable Pods, by RBG\'s role label; groupPodsOnce lists once', async () => {
  const kube = new RbgFake();
  const g = kube.seed(group());
  for (const p of [pod('a', 'pd', 'prefill', T0), pod('b', 'pd', 'prefill', T0 - 1_000), pod('c', 'pd', 'decode'), pod('d', 'pd', 'router', T0)]) kube.seed(p);
  const pods = groupPodsOnce(kube as unknown as KubeClient, g);
  const listed = await pods();
  expect(await pods()).toBe(listed);
  expect(kube.podLists).toHaveLength(1);
  expect(unschedulableByRole(g, listed, new Set(['prefill', 'decode']), T0)).toEqual(new Map([['prefill', { unschedulablePods: 2, since: T0 - 1_000, message: SCHEDULER }]]));
});
