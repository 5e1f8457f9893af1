/**
 * capacityPolicy shrinkFirst: the zero-surge sequence on plain numbers (forward and rollback), the
 * policy at the start of an upgrade, and the plan with its dip. Every expected sequence is written
 * out by hand from the rule in `migration-steps.ts`: each round the giver drops by maxSurge, the
 * taker grows by as much, traffic follows; the giver's last traffic leaves before its capacity goes to 0.
 */
import type { CapacityVerdict } from '../../lib/engine/capacity-preflight';
import { nextForwardMove, nextRollbackMove, type MigrationPoint } from '../../lib/engine/migration-steps';
import type { RayServiceObservation } from '../../lib/engine/observation';
import { planRayService } from '../../lib/engine/plan-rayservice';
import { nextRayService } from '../../lib/engine/rayservice-engine';
import type { RayServiceStatus } from '../../lib/engine/status';
import type { ResolvedUpgradeOptions } from '../../lib/spec/rayservice';

/** `atc/ptc aw/pw` after each move, driving the moves until promote (or complete). */
function drive(start: MigrationPoint, next: (p: MigrationPoint) => { kind: string; [k: string]: unknown }): string[] {
  let p = { ...start };
  const out: string[] = [];
  for (let i = 0; i < 100; i++) {
    const m = next(p);
    if (m.kind === 'promote' || m.kind === 'complete') return [...out, m.kind];
    if (m.kind === 'scale-active') p = { ...p, activeTargetCapacity: m.activeTargetCapacity as number };
    if (m.kind === 'scale-pending') p = { ...p, pendingTargetCapacity: m.pendingTargetCapacity as number };
    if (m.kind === 'shift-traffic') {
      const pw = m.pendingWeight !== undefined ? (m.pendingWeight as number) : 100 - (m.activeWeight as number);
      p = { ...p, pendingWeight: pw, activeWeight: 100 - pw };
    }
    out.push(`${m.kind} ${p.activeTargetCapacity}/${p.pendingTargetCapacity} ${p.activeWeight}/${p.pendingWeight}`);
  }
  throw new Error(`no end: ${out.join('; ')}`);
}

const START: MigrationPoint = { activeTargetCapacity: 100, pendingTargetCapacity: 0, activeWeight: 100, pendingWeight: 0 };

test('forward, maxSurge 25 / step 10: the old cluster gives back 25 before the new one takes it; its last 25 of traffic leaves before its capacity goes to 0', () => {
  expect(drive(START, (p) => nextForwardMove(p, 25, 10, false, true))).toEqual([
    'scale-active 75/0 100/0',
    'scale-pending 75/25 100/0',
    'shift-traffic 75/25 90/10',
    'shift-traffic 75/25 80/20',
    'shift-traffic 75/25 75/25',
    'scale-active 50/25 75/25',
    'scale-pending 50/50 75/25',
    'shift-traffic 50/50 65/35',
    'shift-traffic 50/50 55/45',
    'shift-traffic 50/50 50/50',
    'scale-active 25/50 50/50',
    'scale-pending 25/75 50/50',
    'shift-traffic 25/75 40/60',
    'shift-traffic 25/75 30/70',
    'shift-traffic 25/75 25/75',
    'shift-traffic 25/75 15/85',
    'shift-traffic 25/75 5/95',
    'shift-traffic 25/75 0/100',
    'scale-active 0/75 0/100',
    'scale-pending 0/100 0/100',
    'promote',
  ]);
});

test('forward, maxSurge 30 / step 30 (not dividing 100): the last round gives back the remaining 10', () => {
  expect(drive(START, (p) => nextForwardMove(p, 30, 30, false, true))).toEqual([
    'scale-active 70/0 100/0',
    'scale-pending 70/30 100/0',
    'shift-traffic 70/30 70/30',
    'scale-active 40/30 70/30',
    'scale-pending 40/60 70/30',
    'shift-traffic 40/60 40/60',
    'scale-active 10/60 40/60',
    'scale-pending 10/90 40/60',
    'shift-traffic 10/90 10/90',
    'shift-traffic 10/90 0/100',
    'scale-active 0/90 0/100',
    'scale-pending 0/100 0/100',
    'promote',
  ]);
});

test('promote-now in the last round drains the old cluster at once', () => {
  const p: MigrationPoint = { activeTargetCapacity: 25, pendingTargetCapacity: 75, activeWeight: 25, pendingWeight: 75 };
  expect(nextForwardMove(p, 25, 10, true, true)).toEqual({ kind: 'shift-traffic', pendingWeight: 100 });
});

test('without zeroSurge the same points surge as before (the capacities sum to 125)', () => {
  expect(nextForwardMove(START, 25, 10, false)).toEqual({ kind: 'scale-pending', pendingTargetCapacity: 25 });
  expect(nextForwardMove({ activeTargetCapacity: 100, pendingTargetCapacity: 25, activeWeight: 75, pendingWeight: 25 }, 25, 10, false)).toEqual({ kind: 'scale-active', activeTargetCapacity: 75 });
});

test('rollback mid-way, maxSurge 25 / step 25: the new cluster gives back before the old one takes it, never summing over 100', () => {
  const mid: MigrationPoint = { activeTargetCapacity: 50, pendingTargetCapacity: 50, activeWeight: 50, pendingWeight: 50 };
  expect(drive(mid, (p) => nextRollbackMove(p, 25, 25, true))).toEqual([
    'scale-pending 50/25 50/50',
    'scale-active 75/25 50/50',
    'shift-traffic 75/25 75/25',
    'shift-traffic 75/25 100/0',
    'scale-pending 75/0 100/0',
    'scale-active 100/0 100/0',
    'complete',
  ]);
});

const NOW = 1_000_000;
const steady: RayServiceStatus = {
  phase: 'Running', reason: 'UpToDate', activeClusterName: 'svc-aaaaa', activeTargetCapacity: 100, pendingTargetCapacity: 0,
  activeWeight: 100, pendingWeight: 0, trafficConfirmed: true, deletions: [],
};
const active = { name: 'svc-aaaaa', specHash: 'old', headReady: true, targetCapacity: 100, appsRunning: true, readyReplicas: 4, targetReplicas: 4 };
const obs = (capacity: CapacityVerdict, status: RayServiceStatus = steady): RayServiceObservation => ({
  name: 'svc', goalSpecHash: 'new', clusters: [active], route: { backends: [{ cluster: 'svc-aaaaa', weight: 100 }], ready: true }, servingCluster: 'svc-aaaaa', status, capacity,
});
const opts: ResolvedUpgradeOptions = {
  strategy: 'NewClusterWithIncrementalUpgrade', maxSurgePercent: 25, stepSizePercent: 25, intervalSeconds: 1,
  rayClusterDeletionDelaySeconds: 0, progressDeadlineSeconds: 600, capacityPolicy: 'shrinkFirst',
};
const MESSAGE = 'gpu: needs 2 nvidia.com/gpu on nodes matching {type=kwok}, 1 free';

test('shrinkFirst on fitsAfterOldShrinks: the upgrade starts without a surge, recorded in the status, one Event; its first capacity move lowers the old cluster', () => {
  const d = nextRayService(obs({ outcome: 'fitsAfterOldShrinks', message: MESSAGE }), opts, NOW);
  expect(d.actions.map((a) => a.type)).toEqual(['createPendingCluster']);
  expect(d.status.capacity).toEqual({ outcome: 'fitsAfterOldShrinks', message: MESSAGE, at: NOW, shrinkFirst: true });
  expect(d.events).toEqual([{
    type: 'Warning', reason: 'InsufficientCapacity', action: 'CapacityPreflight',
    message: `upgrade started without a surge (capacityPolicy shrinkFirst): the old cluster gives back 25% of its capacity before the new one takes it, so the service runs at 75% during each step: ${MESSAGE}`,
  }]);
  // The pending head is ready and acknowledges capacity 0: the next move is the old cluster's, down to 75.
  const pending = { name: d.status.pendingClusterName!, specHash: 'new', headReady: true, targetCapacity: 0, appsRunning: true, readyReplicas: 0, targetReplicas: 0 };
  const route = { backends: [{ cluster: 'svc-aaaaa', weight: 100 }, { cluster: pending.name, weight: 0 }], ready: true };
  const next = nextRayService({ ...obs({ outcome: 'fits' }, d.status), clusters: [active, pending], route }, opts, NOW + 1_000);
  expect(next.actions).toContainEqual({ type: 'setTargetCapacity', cluster: 'active', clusterName: 'svc-aaaaa', percent: 75 });
  expect(next.status).toMatchObject({ activeTargetCapacity: 75, pendingTargetCapacity: 0, capacity: { shrinkFirst: true } });
});

test('shrinkFirst on a surge that fits: the usual surge, no Event, no dip', () => {
  const d = nextRayService(obs({ outcome: 'fits' }), opts, NOW);
  expect(d.status.capacity).toEqual({ outcome: 'fits', at: NOW });
  expect(d.events).toEqual([]);
  expect(d.actions.map((a) => a.type)).toEqual(['createPendingCluster']);
});

test('shrinkFirst on doesNotFit (not even once the old cluster is gone): refused as under fail', () => {
  const d = nextRayService(obs({ outcome: 'doesNotFit', message: MESSAGE }), opts, NOW);
  expect(d.actions).toEqual([]);
  expect(d.status).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity', rejectedSpecHash: 'new' });
  expect(d.events.map((e) => e.message)).toEqual([`upgrade not started (capacityPolicy shrinkFirst: it does not fit even once the old cluster has shrunk): ${MESSAGE}`]);
});

test('plan of shrinkFirst, maxSurge 25 / step 10 / interval 10 s: the zero-surge timeline, peak 100%, and the dip (75% served, 4 times, 90 s in all)', () => {
  const p = planRayService({ kind: 'RayService', name: 'svc', options: { ...opts, stepSizePercent: 10, intervalSeconds: 10 } });
  expect(p.steps.map((s) => `${s.atSeconds} ${s.action} ${s.activeTargetCapacity}/${s.pendingTargetCapacity} ${s.activeWeight}/${s.pendingWeight}`)).toEqual([
    '0 scale-active 75/0 100/0',
    '0 scale-pending 75/25 100/0',
    '0 shift-traffic 75/25 90/10',
    '10 shift-traffic 75/25 80/20',
    '20 shift-traffic 75/25 75/25',
    '30 scale-active 50/25 75/25',
    '30 scale-pending 50/50 75/25',
    '30 shift-traffic 50/50 65/35',
    '40 shift-traffic 50/50 55/45',
    '50 shift-traffic 50/50 50/50',
    '60 scale-active 25/50 50/50',
    '60 scale-pending 25/75 50/50',
    '60 shift-traffic 25/75 40/60',
    '70 shift-traffic 25/75 30/70',
    '80 shift-traffic 25/75 25/75',
    '90 shift-traffic 25/75 15/85',
    '100 shift-traffic 25/75 5/95',
    '110 shift-traffic 25/75 0/100',
    '120 scale-active 0/75 0/100',
    '120 scale-pending 0/100 0/100',
    '120 promote 100/0 100/0',
  ]);
  expect(p.peakCapacityPercent).toBe(100);
  expect(p.outcome).toBe('promoted');
  // Served = min(capacity, weight) summed: 75 at 0 s until traffic reaches the new 25 at 20 s (20 s), the same in rounds 2 and 3, and 90 → 75 from 90 s to 120 s.
  expect(p.dip).toEqual({ value: 75, from: 0, until: 120, lasts: 90, times: 4 });
  // A step equal to maxSurge moves traffic onto each new step at once: only the last round dips for any time.
  const quick = planRayService({ kind: 'RayService', name: 'svc', options: { ...opts, intervalSeconds: 10 } });
  expect(quick.dip).toEqual({ value: 75, from: 0, until: 40, lasts: 10, times: 4 });
});

test('plan of the other policies has no dip', () => {
  expect(planRayService({ kind: 'RayService', name: 'svc', options: { ...opts, capacityPolicy: 'wait' } }).dip).toBeUndefined();
  expect(planRayService({ kind: 'RayService', name: 'svc', options: { ...opts, capacityPolicy: 'wait' } }).peakCapacityPercent).toBe(125);
});

test('plan of shrinkFirst with the live preflight (plan --cluster): fits surges as usual, doesNotFit is refused with no step', () => {
  const fits = planRayService({ kind: 'RayService', name: 'svc', options: opts, capacity: 'fits' });
  expect(fits.peakCapacityPercent).toBe(125);
  expect(fits.dip).toBeUndefined();
  expect(fits.steps[0]).toMatchObject({ action: 'scale-pending', activeTargetCapacity: 100, pendingTargetCapacity: 25 });
  const refused = planRayService({ kind: 'RayService', name: 'svc', options: opts, capacity: 'doesNotFit' });
  expect(refused).toMatchObject({ outcome: 'refused', steps: [], durationSeconds: 0, peakCapacityPercent: 100 });
  expect(planRayService({ kind: 'RayService', name: 'svc', options: opts, capacity: 'fitsAfterOldShrinks' }).dip).toEqual({ value: 75, from: 0, until: 4, lasts: 1, times: 4 });
});

test('plan of shrinkFirst shows each freeing of the old cluster\'s idle workers between its give and the new cluster\'s take', () => {
  const p = planRayService({ kind: 'RayService', name: 'svc', options: { ...opts, intervalSeconds: 10 } });
  expect(p.footprint.map((f) => `${f.atSeconds} ${f.events.join(',')} ${f.old?.capacityPercent ?? '-'}/${f.new?.capacityPercent ?? '-'}`)).toEqual([
    '0 create-new 100/0',
    '0 scale-active 75/0',
    '0 free-old-workers 75/0',
    '0 scale-pending 75/25',
    '0 shift-traffic 75/25',
    '10 scale-active 50/25',
    '10 free-old-workers 50/25',
    '10 scale-pending 50/50',
    '10 shift-traffic 50/50',
    '20 scale-active 25/50',
    '20 free-old-workers 25/50',
    '20 scale-pending 25/75',
    '20 shift-traffic 25/75',
    '30 shift-traffic 25/75',
    '40 scale-active 0/75',
    '40 free-old-workers 0/75',
    '40 scale-pending 0/100',
    '40 promote,delete-old -/100',
  ]);
});
