/**
 * The capacity policy at the start of an upgrade: one engine run per case, on a steady service
 * whose goal spec differs from its active cluster's, with the preflight's verdict observed.
 */
import { CAPACITY_RECHECK_MS, needsCapacityPreflight } from '../../lib/engine/capacity-policy';
import type { CapacityVerdict } from '../../lib/engine/capacity-preflight';
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
const obs = (capacity: CapacityVerdict | undefined, status: RayServiceStatus = steady, goal = 'new'): RayServiceObservation => ({
  name: 'svc', goalSpecHash: goal, clusters: [active], route: { backends: [{ cluster: 'svc-aaaaa', weight: 100 }], ready: true }, servingCluster: 'svc-aaaaa', status, ...(capacity ? { capacity } : {}),
});
const opts = (capacityPolicy?: 'wait' | 'fail'): ResolvedUpgradeOptions => ({
  strategy: 'NewClusterWithIncrementalUpgrade', maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 1,
  rayClusterDeletionDelaySeconds: 0, progressDeadlineSeconds: 600, ...(capacityPolicy ? { capacityPolicy } : {}),
});
const misfit: CapacityVerdict = { outcome: 'doesNotFit', message: 'gpu: needs 4 nvidia.com/gpu on nodes matching {gpu=a100}, 1 free' };

test('wait (the default): no pending cluster, reason InsufficientCapacity, one Warning Event, checked again after CAPACITY_RECHECK_MS', () => {
  const d = nextRayService(obs(misfit), opts(), NOW);
  expect(d.actions).toEqual([]);
  expect(d.status).toMatchObject({ phase: 'Running', reason: 'InsufficientCapacity', capacity: { outcome: 'doesNotFit', message: misfit.message, at: NOW } });
  expect(d.status.pendingClusterName).toBeUndefined();
  expect(d.events).toEqual([{ type: 'Warning', reason: 'InsufficientCapacity', action: 'CapacityPreflight', message: 'upgrade held until it fits (capacityPolicy wait): gpu: needs 4 nvidia.com/gpu on nodes matching {gpu=a100}, 1 free' }]);
  expect(d.nextStepAt).toBe(NOW + 10_000);
  expect(CAPACITY_RECHECK_MS).toBe(10_000);
  // A held upgrade is not settled: the Pulumi executor keeps driving it (until its deadline).
  expect(isSettled(d.status, 0)).toBe(false);
  // The same misfit on the next run: no second Event, the first time kept.
  const again = nextRayService(obs(misfit, d.status), opts(), NOW + 10_000);
  expect(again.events).toEqual([]);
  expect(again.status.capacity).toEqual({ outcome: 'doesNotFit', message: misfit.message, at: NOW });
  // It fits now: the upgrade starts.
  const go = nextRayService(obs({ outcome: 'fits' }, again.status), opts(), NOW + 20_000);
  expect(go.status).toMatchObject({ phase: 'Upgrading', reason: 'CreatingCluster', capacity: { outcome: 'fits', at: NOW + 20_000 } });
  expect(go.actions.map((a) => a.type)).toEqual(['createPendingCluster']);
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

test('fitsAfterOldShrinks is a misfit until shrinkFirst exists, and says so', () => {
  const d = nextRayService(obs({ outcome: 'fitsAfterOldShrinks', message: 'gpu: needs 4 nvidia.com/gpu on nodes matching {}, 1 free' }), opts(), NOW);
  expect(d.status.reason).toBe('InsufficientCapacity');
  expect(d.events[0].message).toBe('upgrade held until it fits (capacityPolicy wait): gpu: needs 4 nvidia.com/gpu on nodes matching {}, 1 free (it fits only once the old cluster shrinks, which needs capacityPolicy shrinkFirst, not yet supported)');
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
