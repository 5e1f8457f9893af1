/**
 * Reading a RayService status side (lib/runtime/rayservice/progress.ts `statusSide`) with KubeRay's
 * defaults: KubeRay v1.7.0 leaves `targetCapacity` and `trafficRoutedPercent` unset outside an
 * incremental upgrade and reads an unset active side as 100 %, an unset pending side as 0 %
 * (`ptr.Deref(activeServiceStatus.TargetCapacity, 100)`, `ptr.Deref(pendingServiceStatus.TargetCapacity, 0)`).
 * The Pulumi follower and the API server read through it, so they agree.
 */
import { upgradeStatusOf } from '../../lib/apiserver/convert/upgrade-status';
import { snapshotOf } from '../../lib/pulumi/upgrade-progress-operations';
import { statusSide } from '../../lib/runtime/rayservice/progress';

/** A KubeRay `NewCluster` service that serves from one cluster: KubeRay set no capacity or weight. */
const SERVING = {
  apiVersion: 'ray.io/v1',
  kind: 'RayService',
  metadata: { name: 'kr', namespace: 'ns', generation: 1 },
  status: { observedGeneration: 1, activeServiceStatus: { rayClusterName: 'kr-a' }, conditions: [{ type: 'Ready', status: 'True' }] },
};

test('an unset active side is 100 % weight and capacity; an unset pending side is 0 %', () => {
  expect(statusSide({ rayClusterName: 'kr-a' }, 'active')).toEqual({ name: 'kr-a', weight: 100, capacity: 100 });
  expect(statusSide({ rayClusterName: 'kr-b' }, 'pending')).toEqual({ name: 'kr-b', weight: 0, capacity: 0 });
  expect(statusSide({ rayClusterName: 'kr-a', targetCapacity: 40, trafficRoutedPercent: 0, readyReplicas: 3 }, 'active')).toEqual({ name: 'kr-a', weight: 0, capacity: 40, readyReplicas: 3 });
  expect(statusSide({}, 'active')).toBeUndefined();
});

test('the Pulumi follower and the API server show the serving cluster at 100 %', () => {
  expect(snapshotOf(SERVING).line).toBe('weights kr-a 100 / - 0, capacity 100% / 0%');
  const u = upgradeStatusOf(SERVING);
  expect([u.active?.cluster, u.active?.trafficRoutedPercent, u.active?.targetCapacity, u.pending]).toEqual(['kr-a', 100, 100, undefined]);
});
