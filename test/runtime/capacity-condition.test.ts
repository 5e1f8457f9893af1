/**
 * The `CapacityFits` condition `renderStatus` writes for each capacity record of a RayService
 * upgrade: True when the first Pods fit, False with the reason when they do not, and Unknown when
 * the cluster could not be read for the preflight. Expected values are written out by hand.
 */
import type { RayServiceStatus } from '../../lib/engine/status';
import { renderStatus } from '../../lib/runtime/rayservice/status';

const NOW = new Date('2026-12-01T08:00:00Z');
const held: RayServiceStatus = {
  phase: 'Running', reason: 'CapacityUnknown', activeClusterName: 'svc-aaaaa', activeTargetCapacity: 100, pendingTargetCapacity: 0,
  activeWeight: 100, pendingWeight: 0, trafficConfirmed: true, deletions: [],
  capacity: { outcome: 'unknown', message: 'the cluster could not be read: nodes is forbidden', at: NOW.getTime() },
};

function capacityCondition(status: RayServiceStatus): unknown {
  const rendered = renderStatus(status, 3, undefined, NOW) as { conditions: { type: string }[] };
  return rendered.conditions.find((c) => c.type === 'CapacityFits');
}

test('the cluster could not be read: CapacityFits is Unknown (ClusterUnread) with the reason, and the status says CapacityUnknown', () => {
  expect(capacityCondition(held)).toEqual({
    type: 'CapacityFits', status: 'Unknown', reason: 'ClusterUnread', message: 'the cluster could not be read: nodes is forbidden',
    observedGeneration: 3, lastTransitionTime: '2026-12-01T08:00:00Z',
  });
  expect(renderStatus(held, 3, undefined, NOW)).toMatchObject({ reason: 'CapacityUnknown', capacity: { outcome: 'unknown', checkedTime: '2026-12-01T08:00:00.000Z' } });
});

test('a preflight that fits is True, one that does not is False with the outcome as reason', () => {
  expect(capacityCondition({ ...held, reason: 'CreatingCluster', capacity: { outcome: 'fits', at: NOW.getTime() } })).toMatchObject({ status: 'True', reason: 'Fits' });
  expect(capacityCondition({ ...held, reason: 'InsufficientCapacity', capacity: { outcome: 'doesNotFit', message: 'x', at: NOW.getTime() } })).toMatchObject({ status: 'False', reason: 'DoesNotFit', message: 'x' });
});
