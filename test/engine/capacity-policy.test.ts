/**
 * The capacity policy at the start of an upgrade: one engine run per case, on a steady service
 * whose goal spec differs from its active cluster's, with the preflight's verdict observed.
 */
import { needsCapacityPreflight } from '../../lib/engine/capacity-policy';
import type { CapacityUnread, CapacityVerdict } from '../../lib/engine/capacity-preflight';
import type { RayServiceObservation } from '../../lib/engine/observation';
import { nextRayService } from '../../lib/engine/rayservice-engine';
import { isGoalGivenUp, isSettled, type RayServiceStatus } from '../../lib/engine/status';
import type { ResolvedUpgradeOptions } from '../../lib/spec/rayservice';

const NOW = 1_000_000;
const steady: RayServiceStatus = {
  phase: 'Running', reason: 'UpToDate', activeClusterName: 'svc-aaaaa', activeTargetCapacity: 100, pendingTargetCapacity: 0,
  activeWeight: 100, pendingWeight: 0, trafficConfirmed: true, deletions: [],
};
const active = { name: 'svc-aaaaa', specHash: 'old', headReady: true, targetCapacity: 100, appsRunning: true, readyReplicas: 4, targetReplicas: 4 };
const obs = (capacity: CapacityVerdict | CapacityUnread | undefined, status: RayServiceStatus = steady, goal = 'new'): RayServiceObservation => ({
  name: 'svc', goalSpecHash: goal, clusters: [active], route: { backends: [{ cluster: 'svc-aaaaa', weight: 100 }], ready: true }, servingCluster: 'svc-aaaaa', status, ...(capacity ? { capacity } : {}),
});
const opts = (capacityPolicy?: 'wait' | 'fail' | 'shrinkFirst'): ResolvedUpgradeOptions => ({
  strategy: 'NewClusterWithIncrementalUpgrade', maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 1,
  rayClusterDeletionDelaySeconds: 0, progressDeadlineSeconds: 600, ...(capacityPolicy ? { capacityPolicy } : {}),
});
const misfit: CapacityVerdict = { outcome: 'doesNotFit', message: 'gpu: needs 4 nvidia.com/gpu on nodes matching {gpu=a100}, 1 free' };

test('wait (the default): the pending cluster is created as without a preflight, with the reason recorded and one Warning Event', () => {
  const d = nextRayService(obs(misfit), opts(), NOW);
  const unchecked = nextRayService(obs(undefined), opts(), NOW);
  // The same actions and the same upgrade as an upgrade that ran no preflight: only the record differs.
  expect(d.actions).toEqual(unchecked.actions);
  expect(d.actions.map((a) => a.type)).toEqual(['createPendingCluster']);
  const { capacity, ...rest } = d.status;
  expect(rest).toEqual(unchecked.status);
  expect(d.status).toMatchObject({ phase: 'Upgrading', reason: 'CreatingCluster', pendingSpecHash: 'new' });
  expect(capacity).toEqual({ outcome: 'doesNotFit', message: misfit.message, at: NOW });
  expect(d.events).toEqual([{ type: 'Warning', reason: 'InsufficientCapacity', action: 'CapacityPreflight', message: 'upgrade started; its new Pods wait for the scheduler until capacity is free (capacityPolicy wait): gpu: needs 4 nvidia.com/gpu on nodes matching {gpu=a100}, 1 free' }]);
  // The next run has a pending cluster: no preflight is asked for, so no second Event; the record stays.
  expect(needsCapacityPreflight(d.status, 'new', [active], 'NewClusterWithIncrementalUpgrade')).toBe(false);
  const pending = { name: d.status.pendingClusterName!, specHash: 'new', headReady: false, targetCapacity: 0, appsRunning: false, readyReplicas: 0, targetReplicas: 4 };
  const again = nextRayService({ ...obs(undefined, d.status), clusters: [active, pending] }, opts(), NOW + 1_000);
  expect(again.events).toEqual([]);
  expect(again.status).toMatchObject({ phase: 'Upgrading', pendingClusterName: d.status.pendingClusterName, capacity: { outcome: 'doesNotFit', at: NOW } });
});

test('a fitting preflight is recorded with no Event', () => {
  const d = nextRayService(obs({ outcome: 'fits' }), opts(), NOW);
  expect(d.status).toMatchObject({ phase: 'Upgrading', reason: 'CreatingCluster', capacity: { outcome: 'fits', at: NOW } });
  expect(d.events).toEqual([]);
});

test('fail: phase Failed, the spec given up (not retried, no new preflight) until the goal changes', () => {
  const d = nextRayService(obs(misfit), opts('fail'), NOW);
  expect(d.actions).toEqual([]);
  expect(d.status).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity', rejectedSpecHash: 'new' });
  expect(d.events).toEqual([{ type: 'Warning', reason: 'InsufficientCapacity', action: 'CapacityPreflight', message: 'upgrade not started (capacityPolicy fail): gpu: needs 4 nvidia.com/gpu on nodes matching {gpu=a100}, 1 free' }]);
  expect(d.nextStepAt).toBeUndefined();
  expect(isGoalGivenUp(d.status, 'new')).toBe(true);
  expect(isSettled(d.status, 0)).toBe(true);
  expect(needsCapacityPreflight(d.status, 'new', [active], 'NewClusterWithIncrementalUpgrade')).toBe(false);
  const later = nextRayService(obs(undefined, d.status), opts('fail'), NOW + 60_000);
  expect(later.status).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity' });
  expect(later.actions).toEqual([]);
  // A new goal spec is checked again.
  expect(needsCapacityPreflight(later.status, 'newer', [active], 'NewClusterWithIncrementalUpgrade')).toBe(true);
  const next = nextRayService(obs({ outcome: 'fits' }, later.status, 'newer'), opts('fail'), NOW + 70_000);
  expect(next.status).toMatchObject({ phase: 'Upgrading', reason: 'CreatingCluster', pendingSpecHash: 'newer' });
  // Back to the active cluster's spec: Running, UpToDate, no capacity record.
  const back = nextRayService(obs(undefined, later.status, 'old'), opts('fail'), NOW + 70_000);
  expect(back.status).toMatchObject({ phase: 'Running', reason: 'UpToDate' });
  expect(back.status.capacity).toBeUndefined();
});

test('fitsAfterOldShrinks is a misfit under wait and fail, and names shrinkFirst', () => {
  const d = nextRayService(obs({ outcome: 'fitsAfterOldShrinks', message: 'gpu: needs 4 nvidia.com/gpu on nodes matching {}, 1 free' }), opts(), NOW);
  expect(d.status).toMatchObject({ phase: 'Upgrading', reason: 'CreatingCluster', capacity: { outcome: 'fitsAfterOldShrinks' } });
  expect(d.events[0].message).toBe('upgrade started; its new Pods wait for the scheduler until capacity is free (capacityPolicy wait): gpu: needs 4 nvidia.com/gpu on nodes matching {}, 1 free (it fits only once the old cluster shrinks: capacityPolicy shrinkFirst would start it without a surge)');
  const refused = nextRayService(obs({ outcome: 'fitsAfterOldShrinks', message: 'x' }), opts('fail'), NOW);
  expect(refused.status).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity' });
  expect(refused.actions).toEqual([]);
});

test('the cluster could not be read, wait: the upgrade starts as unchecked, with an unknown record and one CapacityUnknown Event', () => {
  const d = nextRayService(obs({ unread: 'nodes is forbidden' }), opts(), NOW);
  const unchecked = nextRayService(obs(undefined), opts(), NOW);
  expect(d.actions).toEqual(unchecked.actions);
  expect(d.status.capacity).toEqual({ outcome: 'unknown', message: 'the cluster could not be read: nodes is forbidden', at: NOW });
  expect(d.events).toEqual([{ type: 'Warning', reason: 'CapacityUnknown', action: 'CapacityPreflight', message: 'upgrade started without a capacity preflight (capacityPolicy wait): the cluster could not be read: nodes is forbidden' }]);
});

test.each(['fail', 'shrinkFirst'] as const)('the cluster could not be read, %s: held (not refused), one Event, read again in 10 s; not settled; a read that fits starts it', (policy) => {
  const d = nextRayService(obs({ unread: 'nodes is forbidden' }), opts(policy), NOW);
  expect(d.actions).toEqual([]);
  expect(d.status).toMatchObject({ phase: 'Running', reason: 'CapacityUnknown', capacity: { outcome: 'unknown', message: 'the cluster could not be read: nodes is forbidden', at: NOW } });
  expect(d.status.pendingClusterName).toBeUndefined();
  expect(d.status.rejectedSpecHash).toBeUndefined();
  expect(d.events).toEqual([{ type: 'Warning', reason: 'CapacityUnknown', action: 'CapacityPreflight', message: `upgrade held (capacityPolicy ${policy} starts no surge it has not placed; the preflight reads the cluster again every 10 s): the cluster could not be read: nodes is forbidden` }]);
  expect(d.nextStepAt).toBe(NOW + 10_000);
  // A Pulumi update waits on (isSettled), and the executor reads the cluster again.
  expect(isSettled(d.status, 0)).toBe(false);
  expect(isGoalGivenUp(d.status, 'new')).toBe(false);
  expect(needsCapacityPreflight(d.status, 'new', [active], 'NewClusterWithIncrementalUpgrade')).toBe(true);
  // Still unreadable: no second Event, the record's time kept.
  const again = nextRayService(obs({ unread: 'nodes is forbidden' }, d.status), opts(policy), NOW + 10_000);
  expect(again.events).toEqual([]);
  expect(again.status).toMatchObject({ phase: 'Running', reason: 'CapacityUnknown', capacity: { at: NOW } });
  // A read that fits: the upgrade starts, the record replaced.
  const started = nextRayService(obs({ outcome: 'fits' }, again.status), opts(policy), NOW + 20_000);
  expect(started.status).toMatchObject({ phase: 'Upgrading', reason: 'CreatingCluster', pendingSpecHash: 'new', capacity: { outcome: 'fits', at: NOW + 20_000 } });
  expect(started.actions.map((a) => a.type)).toEqual(['createPendingCluster']);
});

test('no preflight observed: the upgrade starts as before', () => {
  const d = nextRayService(obs(undefined), opts('fail'), NOW);
  expect(d.status).toMatchObject({ phase: 'Upgrading', reason: 'CreatingCluster' });
  expect(d.status.capacity).toBeUndefined();
});

test('the executor is asked for a preflight only when a run would start an upgrade', () => {
  const strategy = 'NewClusterWithIncrementalUpgrade';
  expect(needsCapacityPreflight(steady, 'new', [active], strategy)).toBe(true);
  expect(needsCapacityPreflight(steady, 'old', [active], strategy)).toBe(false);
  expect(needsCapacityPreflight(steady, 'new', [active], 'None')).toBe(false);
  expect(needsCapacityPreflight(undefined, 'new', [active], strategy)).toBe(false);
  expect(needsCapacityPreflight({ ...steady, pendingClusterName: 'svc-bbbbb' }, 'new', [active], strategy)).toBe(false);
  expect(needsCapacityPreflight(steady, 'new', [], strategy)).toBe(false);
});
