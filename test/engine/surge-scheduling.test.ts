/**
 * Watching the scheduler during an upgrade: the pending cluster's Unschedulable Pods as read from
 * listed Pod objects, and the engine's record, Event and (under capacityPolicy fail) rollback once
 * they stay Unschedulable past surgeUnschedulableSeconds. Engine runs on literal observations.
 */
import type { RayServiceObservation, ObservedCluster } from '../../lib/engine/observation';
import { nextRayService } from '../../lib/engine/rayservice-engine';
import type { RayServiceStatus } from '../../lib/engine/status';
import { SURGE_MESSAGE_MAX, SURGE_RECHECK_MS, needsSurgeScheduling, surgeSchedulingOf, type SurgeScheduling } from '../../lib/engine/surge-scheduling';
import type { ResolvedUpgradeOptions, UpgradeStrategyType } from '../../lib/spec/rayservice';

const NOW = 1_000_000;
const T0 = '2026-11-29T12:00:00Z';
const T0_MS = Date.parse(T0);
const SCHEDULER = '0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.';

function pod(name: string, scheduled: { status: string; reason?: string; at?: string; message?: string } | undefined, deleting = false): unknown {
  return {
    metadata: { name, ...(deleting ? { deletionTimestamp: T0 } : {}) },
    status: { phase: 'Pending', conditions: scheduled === undefined ? [] : [{ type: 'PodScheduled', status: scheduled.status, reason: scheduled.reason, lastTransitionTime: scheduled.at, message: scheduled.message }] },
  };
}

test('surgeSchedulingOf counts the Pods the scheduler marked Unschedulable, from the earliest, with that Pod\'s message', () => {
  const later = new Date(T0_MS + 7_000).toISOString();
  const pods = [
    pod('w-1', { status: 'False', reason: 'Unschedulable', at: later, message: 'later' }),
    pod('w-2', { status: 'False', reason: 'Unschedulable', at: T0, message: SCHEDULER }),
    pod('w-3', { status: 'True', at: T0 }),
    pod('w-4', { status: 'False', reason: 'SchedulingGated', at: T0, message: 'gated' }),
    pod('w-5', { status: 'False', reason: 'Unschedulable', at: new Date(T0_MS - 60_000).toISOString(), message: 'going away' }, true),
    pod('w-6', undefined),
  ];
  expect(surgeSchedulingOf(pods, NOW)).toEqual({ unschedulablePods: 2, since: T0_MS, message: SCHEDULER });
  expect(surgeSchedulingOf([pods[2], pods[5]], NOW)).toBeUndefined();
  expect(surgeSchedulingOf([], NOW)).toBeUndefined();
  // No readable time: counted from the read; a long message is cut to SURGE_MESSAGE_MAX.
  const long = 'x'.repeat(SURGE_MESSAGE_MAX + 500);
  expect(surgeSchedulingOf([pod('w', { status: 'False', reason: 'Unschedulable', at: 'not a time', message: long })], NOW)).toEqual({ unschedulablePods: 1, since: NOW, message: 'x'.repeat(SURGE_MESSAGE_MAX) });
});

const active: ObservedCluster = { name: 'svc-aaaaa', specHash: 'old', headReady: true, targetCapacity: 100, appsRunning: true, readyReplicas: 4, targetReplicas: 4 };
const opts = (strategy: UpgradeStrategyType, capacityPolicy: 'wait' | 'fail' | 'shrinkFirst', surgeUnschedulableSeconds = 60): ResolvedUpgradeOptions => ({
  strategy, maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 1, rayClusterDeletionDelaySeconds: 0, progressDeadlineSeconds: 600, capacityPolicy, surgeUnschedulableSeconds,
});
const steady: RayServiceStatus = {
  phase: 'Running', reason: 'UpToDate', activeClusterName: 'svc-aaaaa', activeTargetCapacity: 100, pendingTargetCapacity: 0,
  activeWeight: 100, pendingWeight: 0, trafficConfirmed: true, deletions: [],
};
const route = { backends: [{ cluster: 'svc-aaaaa', weight: 100 }], ready: true };

/** A service whose upgrade (to spec hash 'new') just created its pending cluster, and the observation of it with the head not ready. */
function upgrading(o: ResolvedUpgradeOptions): { status: RayServiceStatus; obs: (status: RayServiceStatus, surge?: SurgeScheduling) => RayServiceObservation } {
  const started = nextRayService({ name: 'svc', goalSpecHash: 'new', clusters: [active], route, servingCluster: 'svc-aaaaa', status: steady }, o, NOW);
  expect(started.actions.map((a) => a.type)).toContain('createPendingCluster');
  const pending: ObservedCluster = { name: started.status.pendingClusterName!, specHash: 'new', headReady: false, targetCapacity: 0, appsRunning: false, readyReplicas: 0, targetReplicas: 0 };
  return {
    status: started.status,
    obs: (status, surge) => ({ name: 'svc', goalSpecHash: 'new', clusters: [active, pending], route, servingCluster: 'svc-aaaaa', status, ...(surge ? { surgeScheduling: surge } : {}) }),
  };
}

const surge: SurgeScheduling = { unschedulablePods: 3, since: NOW + 1_000, message: SCHEDULER };

test.each(['NewClusterWithIncrementalUpgrade', 'NewCluster'] as const)('wait (%s): recorded at once, one Event once past the bound, the upgrade goes on waiting', (strategy) => {
  const o = opts(strategy, 'wait');
  const u = upgrading(o);
  expect(needsSurgeScheduling(u.status)).toBe(true);
  // Nothing Unschedulable seen, head not ready: look again after SURGE_RECHECK_MS (Pods are not watched).
  const none = nextRayService(u.obs(u.status), o, NOW + 500);
  expect(none.status.surgeUnschedulable).toBeUndefined();
  expect(none.nextStepAt).toBe(NOW + 500 + SURGE_RECHECK_MS);
  // Seen: recorded, the engine wakes exactly when the bound passes.
  const seen = nextRayService(u.obs(none.status, surge), o, NOW + 2_000);
  expect(seen.status.surgeUnschedulable).toEqual({ pods: 3, since: NOW + 1_000, message: SCHEDULER, boundExceeded: false });
  expect(seen.events).toEqual([]);
  expect(seen.nextStepAt).toBe(NOW + 1_000 + 60_000);
  // One millisecond early: not yet.
  expect(nextRayService(u.obs(seen.status, surge), o, NOW + 1_000 + 59_999).status.surgeUnschedulable?.boundExceeded).toBe(false);
  const past = nextRayService(u.obs(seen.status, surge), o, NOW + 1_000 + 60_000);
  expect(past.status.surgeUnschedulable).toEqual({ pods: 3, since: NOW + 1_000, message: SCHEDULER, boundExceeded: true });
  expect(past.events).toEqual([{ type: 'Warning', reason: 'SurgeUnschedulable', action: 'SurgeScheduling', message: `3 Pods of the new cluster ${u.status.pendingClusterName} Unschedulable for 60 s (surgeUnschedulableSeconds 60); the upgrade waits for capacity (capacityPolicy wait): ${SCHEDULER}` }]);
  expect(past.status).toMatchObject({ phase: 'Upgrading', pendingClusterName: u.status.pendingClusterName });
  expect(past.status.rollback).toBeUndefined();
  expect(past.actions.map((a) => a.type)).not.toContain('deleteCluster');
  // Still Unschedulable on the next run: no second Event.
  expect(nextRayService(u.obs(past.status, surge), o, NOW + 90_000).events).toEqual([]);
  // Scheduled at last: the record is gone.
  const bound = nextRayService(u.obs(past.status), o, NOW + 100_000);
  expect(bound.status.surgeUnschedulable).toBeUndefined();
});

test('shrinkFirst: a surge that fit at the start and is Unschedulable past the bound waits, as under wait, and the Event names the policy', () => {
  const o = opts('NewClusterWithIncrementalUpgrade', 'shrinkFirst');
  const u = upgrading(o);
  const seen = nextRayService(u.obs(u.status, surge), o, NOW + 2_000);
  const past = nextRayService(u.obs(seen.status, surge), o, NOW + 1_000 + 60_000);
  expect(past.events.map((e) => e.message)).toEqual([`3 Pods of the new cluster ${u.status.pendingClusterName} Unschedulable for 60 s (surgeUnschedulableSeconds 60); the upgrade waits for capacity (capacityPolicy shrinkFirst): ${SCHEDULER}`]);
  expect(past.status.rollback).toBeUndefined();
});

test('fail (incremental): rolled back once past the bound, the spec given up', () => {
  const o = opts('NewClusterWithIncrementalUpgrade', 'fail', 30);
  const u = upgrading(o);
  const past = nextRayService(u.obs(u.status, surge), o, NOW + 1_000 + 30_000);
  expect(past.status.rollback).toBe('SurgeUnschedulable');
  expect(past.status.phase).toBe('RollingBack');
  expect(past.events.map((e) => e.message)).toEqual([`3 Pods of the new cluster ${u.status.pendingClusterName} Unschedulable for 30 s (surgeUnschedulableSeconds 30); rolling the upgrade back (capacityPolicy fail): ${SCHEDULER}`]);
  // Before the bound, fail changes nothing.
  expect(nextRayService(u.obs(u.status, surge), o, NOW + 1_000 + 29_999).status.rollback).toBeUndefined();
});

test('fail (blue/green): the pending cluster is dropped and its spec rejected once past the bound', () => {
  const o = opts('NewCluster', 'fail', 30);
  const u = upgrading(o);
  const past = nextRayService(u.obs(u.status, surge), o, NOW + 1_000 + 30_000);
  expect(past.status).toMatchObject({ phase: 'Running', reason: 'SurgeUnschedulable', rejectedSpecHash: 'new' });
  expect(past.status.pendingClusterName).toBeUndefined();
  expect(past.status.surgeUnschedulable).toBeUndefined();
  expect(past.actions.map((a) => a.type)).toContain('deleteCluster');
});

test('the pending cluster\'s Pods are read while the upgrade waits on it, or while a record of Unschedulable Pods stands; not between steps, nor without a pending cluster', () => {
  const base = { activeClusterName: 'svc-a', pendingClusterName: 'svc-b' } as const;
  for (const reason of ['CreatingCluster', 'WaitingForHead', 'WaitingForCapacity', 'FreeingWorkers'] as const) expect(needsSurgeScheduling({ ...base, reason })).toBe(true);
  for (const reason of ['Migrating', 'WaitingForInterval', 'WaitingForRoute', 'WaitingForAnalysis', 'DrainingTraffic'] as const) expect(needsSurgeScheduling({ ...base, reason })).toBe(false);
  expect(needsSurgeScheduling({ ...base, reason: 'WaitingForInterval', surgeUnschedulable: { pods: 1, since: NOW, message: SCHEDULER, boundExceeded: false } })).toBe(true);
  expect(needsSurgeScheduling({ activeClusterName: 'svc-a', reason: 'WaitingForCapacity' })).toBe(false);
  expect(needsSurgeScheduling(undefined)).toBe(false);
});
