/**
 * KubeRay's seven-case rollback matrix (test/e2eincrementalupgrade, `TestRayServiceIncrementalUpgradeRollback`)
 * as engine-level scenarios, plus the case KubeRay can stall on.
 */
import type { RayServiceStatus } from '../../lib/engine';
import { incremental, prng, Simulation, type Hook, type WorldTiming } from './harness';
import { invariantViolations } from './invariants';

type Trigger = 'Early' | 'Middle' | 'Late' | 'BeforeTraffic';
type Sequence = 'ABA' | 'ABAB' | 'ABAC';

const inStage = (trigger: Trigger, s: RayServiceStatus): boolean => {
  if (s.pendingClusterName === undefined) return false;
  const p = s.pendingWeight;
  switch (trigger) {
    case 'BeforeTraffic': return p === 0;
    case 'Early': return p > 0 && p <= 30;
    case 'Middle': return p >= 30 && p <= 70;
    case 'Late': return p >= 70 && p < 100;
  }
};

function timing(seed: number): WorldTiming {
  const rnd = prng(seed);
  return { headReadyMs: 25_000, replicaReadyMs: 6_000, routeProgramMs: 400, actionLatencyMs: () => rnd() * 300, watchLatencyMs: () => rnd() * 1200 };
}

interface Case {
  readonly name: string;
  readonly sequence: Sequence;
  readonly maxSurge: number;
  readonly step: number;
  readonly interval: number;
  readonly trigger: Trigger;
  readonly crashPendingHead?: boolean;
}

const matrix: Case[] = [
  { name: 'BasicRollback', sequence: 'ABA', maxSurge: 50, step: 25, interval: 2, trigger: 'Middle' },
  { name: 'CancelRollback', sequence: 'ABAB', maxSurge: 25, step: 5, interval: 2, trigger: 'Middle' },
  { name: 'ThirdSpec', sequence: 'ABAC', maxSurge: 25, step: 5, interval: 2, trigger: 'Middle' },
  { name: 'UnhealthyPendingCluster', sequence: 'ABA', maxSurge: 50, step: 25, interval: 10, trigger: 'Late', crashPendingHead: true },
  { name: 'EarlyRollback', sequence: 'ABA', maxSurge: 50, step: 25, interval: 2, trigger: 'Early' },
  { name: 'LateRollback', sequence: 'ABA', maxSurge: 50, step: 25, interval: 10, trigger: 'Late' },
  { name: 'FastRollback', sequence: 'ABA', maxSurge: 100, step: 100, interval: 1, trigger: 'BeforeTraffic' },
];

describe.each(matrix)('rollback matrix: $name ($sequence, maxSurge $maxSurge, step $step, interval $interval, $trigger)', (c) => {
  it.each([11, 12])('converges as KubeRay requires (seed %i)', (seed) => {
    let pendingAtTrigger = '';
    let activeWeightAtTrigger = 0;
    const hooks: Hook[] = [
      {
        name: 'rollback',
        when: (s) => inStage(c.trigger, s),
        act: (sim) => {
          const s = sim.lastStatus;
          pendingAtTrigger = s.pendingClusterName!;
          activeWeightAtTrigger = s.activeWeight;
          if (c.crashPendingHead) sim.killHead(pendingAtTrigger);
          sim.goal = 'A';
          sim.changed();
        },
      },
    ];
    if (c.sequence !== 'ABA') {
      hooks.push({
        name: 'next spec',
        when: (s, sim) => sim.firedHooks.includes('rollback') && s.rollback !== undefined && s.activeWeight > activeWeightAtTrigger,
        act: (sim) => {
          sim.goal = c.sequence === 'ABAB' ? 'B' : 'C';
          sim.changed();
        },
      });
    }
    const sim = new Simulation(incremental({ maxSurge: c.maxSurge, step: c.step, interval: c.interval }), timing(seed), { goal: 'B', activeSpec: 'A', hooks });
    sim.runUntilIdle();

    expect(sim.firedHooks).toEqual(hooks.map((h) => h.name));
    const statuses = sim.trace.map((e) => e.status);
    // RollbackInProgress is seen, or the rollback had nothing to undo and converged at once.
    expect(statuses.some((s) => s.rollback !== undefined) || statuses.some((s) => s.reason === 'RollbackComplete')).toBe(true);
    const end = sim.lastStatus;
    expect(end).toMatchObject({ phase: 'Running', activeWeight: 100, activeTargetCapacity: 100, pendingWeight: 0 });
    expect(end.pendingClusterName).toBeUndefined();
    expect(end.rollback).toBeUndefined();
    expect(sim.routeBackends()).toEqual([{ cluster: end.activeClusterName, weight: 100 }]);
    expect(invariantViolations(sim)).toEqual([]);
    switch (c.sequence) {
      case 'ABA':
        expect(end.activeClusterName).toBe('svc-a0000');
        expect(sim.specOf(end.activeClusterName)).toBe('A');
        expect(sim.wasDeleted(pendingAtTrigger)).toBe(true);
        break;
      case 'ABAB':
        expect(end.activeClusterName).toBe(pendingAtTrigger);
        expect(sim.specOf(end.activeClusterName)).toBe('B');
        expect(sim.wasDeleted('svc-a0000')).toBe(true);
        break;
      case 'ABAC':
        expect(sim.specOf(end.activeClusterName)).toBe('C');
        expect(sim.wasDeleted(pendingAtTrigger)).toBe(true);
        expect(sim.wasDeleted('svc-a0000')).toBe(true);
        break;
    }
    expect(sim.clusterNames()).toEqual([end.activeClusterName]);
  });
});

describe('rollback details', () => {
  it('moves traffic back by step every interval and capacity back by maxSurge (A→B→A mid-way)', () => {
    const sim = new Simulation(incremental({ maxSurge: 30, step: 10, interval: 2 }), timing(5), {
      goal: 'B',
      activeSpec: 'A',
      hooks: [{ name: 'revert', when: (s) => s.pendingWeight === 50, act: (x) => { x.goal = 'A'; x.changed(); } }],
    });
    sim.runUntilIdle();
    const during = sim.trace.map((e) => e.status).filter((s) => s.rollback === 'SpecReverted');
    const moves: string[] = [];
    for (let i = 1; i < during.length; i++) {
      const [a, b] = [during[i - 1], during[i]];
      if (b.activeWeight !== a.activeWeight) moves.push(`w${b.activeWeight}`);
      if (b.activeTargetCapacity !== a.activeTargetCapacity) moves.push(`a${b.activeTargetCapacity}`);
      if (b.pendingTargetCapacity !== a.pendingTargetCapacity) moves.push(`p${b.pendingTargetCapacity}`);
    }
    // At pending weight 50: active 70/50, pending 60/50. Traffic back to active up to 70, then pending 60→30, active 70→100, traffic 80, 90, 100, pending 30→0.
    expect(during[0]).toMatchObject({ activeTargetCapacity: 70, pendingTargetCapacity: 60, activeWeight: 50 });
    expect(moves).toEqual(['w60', 'w70', 'p30', 'a100', 'w80', 'w90', 'w100', 'p0']);
    expect(sim.lastStatus.reason).toBe('RollbackComplete');
    expect(invariantViolations(sim)).toEqual([]);
  });

  it('completes where KubeRay stalls: pending head permanently unready while capacities sum over 100', () => {
    let sumAtTrigger = 0;
    const sim = new Simulation(incremental({ maxSurge: 30, step: 10, interval: 2 }), timing(9), {
      goal: 'B',
      activeSpec: 'A',
      hooks: [{
        name: 'crash and revert',
        when: (s) => s.pendingClusterName !== undefined && s.activeTargetCapacity + s.pendingTargetCapacity > 100 && s.pendingWeight > 30,
        act: (x) => {
          const s = x.lastStatus;
          sumAtTrigger = s.activeTargetCapacity + s.pendingTargetCapacity;
          x.killHead(s.pendingClusterName!);
          x.goal = 'A';
          x.changed();
        },
      }],
    });
    sim.runUntilIdle();
    expect(sumAtTrigger).toBeGreaterThan(100);
    expect(sim.lastStatus).toMatchObject({ phase: 'Running', reason: 'RollbackComplete', activeClusterName: 'svc-a0000', activeTargetCapacity: 100, activeWeight: 100 });
    expect(sim.clusterNames()).toEqual(['svc-a0000']);
    expect(invariantViolations(sim)).toEqual([]);
  });
});
