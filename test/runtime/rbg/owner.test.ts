/**
 * The RBG reconciler records the operator replica working on a group in the group's status
 * document (`owner`, with the shard of a sharded operator): every document it writes carries it, an
 * unchanged owner costs no write, and a replica taking the group over rewrites the document once.
 * In-memory API (FakeKube), fake clock.
 */
import type { KubeClient } from '../../../lib/runtime/kube/client';
import { RbgRolloutReconciler } from '../../../lib/runtime/rbg/reconciler';
import { readRolloutStatus } from '../../../lib/runtime/rbg/status';
import { RBG_V1ALPHA2_TYPE } from '../../../lib/spec/object-names';
import { RbgFakeKube, coordinatedGroup, settle } from '../support/rbg-fake';

const T0 = Date.parse('2026-12-02T03:00:00Z');

test('the status document names the replica; a new replica rewrites it once, with nothing else changed', async () => {
  const kube = new RbgFakeKube();
  kube.seed(coordinatedGroup({}));
  settle(kube, { prefill: { updated: 2, ready: 2 }, decode: { updated: 1, ready: 1 } });
  let replica = 'replica-a';
  const reconciler = new RbgRolloutReconciler({ client: kube as unknown as KubeClient, type: RBG_V1ALPHA2_TYPE, readWorkloads: false, now: () => T0, ownerOf: (namespace, name) => (namespace === 'ns' && name === 'pd' ? { replica, shard: 4 } : undefined) });
  const doc = () => readRolloutStatus(kube.peek(RBG_V1ALPHA2_TYPE, 'pd', 'ns')!)!;
  const patches = () => kube.writes.filter((w) => w.verb === 'patchJson').length;

  await reconciler.reconcile('ns', 'pd');
  expect(doc().owner).toEqual({ replica: 'replica-a', shard: 4 });
  const before = doc();
  const written = patches();
  await reconciler.reconcile('ns', 'pd');
  expect(patches()).toBe(written);

  replica = 'replica-b';
  await reconciler.reconcile('ns', 'pd');
  expect(patches()).toBe(written + 1);
  expect(doc()).toEqual({ ...before, owner: { replica: 'replica-b', shard: 4 } });
  await reconciler.reconcile('ns', 'pd');
  expect(patches()).toBe(written + 1);
});
