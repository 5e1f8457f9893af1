/**
 * Reading a RayService status side (lib/runtime/rayservice/progress.ts `statusSide`) with KubeRay's
 * defaults: KubeRay v1.7.0 leaves `targetCapacity` and `trafficRoutedPercent` unset outside an
 * incremental upgrade and reads an unset active side as 100 %, an unset pending side as 0 %
 * (`ptr.Deref(activeServiceStatus.TargetCapacity, 100)`, `ptr.Deref(pendingServiceStatus.TargetCapacity, 0)`).
 * The Pulumi follower, the progress views and the API server read through it (`statusSideOrUnset`
 * where a side has no cluster yet), so they agree.
 */
import { upgradeStatusOf } from '../../lib/apiserver/convert/upgrade-status';
import { snapshotOf } from '../../lib/pulumi/upgrade-progress-operations';
import { serviceView, statusSide, statusSideOrUnset } from '../../lib/runtime/rayservice/progress';

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

test('a side without a cluster reads as KubeRay reads it: no name, active 100 %, pending 0 %', () => {
  expect(statusSideOrUnset(undefined, 'active')).toEqual({ weight: 100, capacity: 100 });
  expect(statusSideOrUnset({ trafficRoutedPercent: 30 }, 'pending')).toEqual({ weight: 0, capacity: 0 });
  expect(statusSideOrUnset({ rayClusterName: 'kr-b', targetCapacity: 50 }, 'pending')).toEqual({ name: 'kr-b', weight: 0, capacity: 50 });
  const starting = { ...SERVING, status: { observedGeneration: 1, conditions: [] } };
  expect(snapshotOf(starting).line).toBe('weights - 100 / - 0, capacity 100% / 0%');
  // A KubeRay status with only a pending side (its first cluster coming up): the engine view keeps the active side's unset 100 %.
  const first = { ...SERVING, status: { pendingServiceStatus: { rayClusterName: 'kr-a' } } };
  expect(serviceView(first).engine).toMatchObject({ pendingClusterName: 'kr-a', activeWeight: 100, activeTargetCapacity: 100, pendingWeight: 0, pendingTargetCapacity: 0 });
});
