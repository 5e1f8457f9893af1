/**
 * KubeRay's incremental-upgrade e2e parameter sets and worked example, replayed against the engine
 * with a simulated executor and cluster (test/engine/harness.ts).
 */
import { plan } from '../../lib/engine';
import { fixedTiming, incremental, prng, Simulation, type WorldTiming } from './harness';
import { invariantViolations } from './invariants';

type Field = 'pendingCapacity' | 'pendingTraffic' | 'activeTraffic' | 'activeCapacity';

/** Port of KubeRay's `generateUpgradeSteps(stepSize, maxSurge)` (test/e2eincrementalupgrade). */
function generateUpgradeSteps(stepSize: number, maxSurge: number): Array<[Field, number]> {
  const steps: Array<[Field, number]> = [];
  let pendingCapacity = 0;
  let pendingTraffic = 0;
  let activeCapacity = 100;
  let activeTraffic = 100;
  while (pendingTraffic < 100) {
    if (pendingTraffic === pendingCapacity) {
      const next = Math.min(pendingCapacity + maxSurge, 100);
      if (next > pendingCapacity) {
        steps.push(['pendingCapacity', next]);
        pendingCapacity = next;
      }
    }
    while (pendingTraffic < pendingCapacity) {
      pendingTraffic = Math.min(pendingTraffic + stepSize, 100);
      steps.push(['pendingTraffic', pendingTraffic]);
      activeTraffic = Math.max(activeTraffic - stepSize, 0);
      steps.push(['activeTraffic', activeTraffic]);
    }
    const nextActive = Math.max(activeCapacity - maxSurge, 0);
    if (nextActive < activeCapacity && nextActive > 0) {
      steps.push(['activeCapacity', nextActive]);
      activeCapacity = nextActive;
    }
  }
  return steps;
}

/** The sequence of value changes the engine's statuses went through while the pending cluster existed. */
function observedSteps(sim: Simulation): Array<[Field, number]> {
  const out: Array<[Field, number]> = [];
  let prev = { pendingCapacity: 0, pendingTraffic: 0, activeTraffic: 100, activeCapacity: 100 };
  for (const { status: s } of sim.trace) {
    if (s.pendingClusterName === undefined) continue;
    const cur = { pendingCapacity: s.pendingTargetCapacity, pendingTraffic: s.pendingWeight, activeTraffic: s.activeWeight, activeCapacity: s.activeTargetCapacity };
    for (const f of ['pendingCapacity', 'pendingTraffic', 'activeTraffic', 'activeCapacity'] as const) {
      if (cur[f] !== prev[f] && !(f === 'activeCapacity' && cur[f] === 0)) out.push([f, cur[f]]);
    }
    prev = cur;
  }
  return out;
}

function randomTiming(seed: number): WorldTiming {
  const rnd = prng(seed);
  return { headReadyMs: 20_000, replicaReadyMs: 7_000, routeProgramMs: 300, actionLatencyMs: () => rnd() * 400, watchLatencyMs: () => rnd() * 1500 };
}

describe.each([
  { name: 'BlueGreen', step: 100, interval: 1, maxSurge: 100 },
  { name: 'AggressiveGradual', step: 25, interval: 5, maxSurge: 50 },
  { name: 'ConservativeGradual', step: 5, interval: 10, maxSurge: 25 },
  { name: 'worked example', step: 10, interval: 2, maxSurge: 30 },
])('KubeRay parameter set $name {step $step, interval $interval, maxSurge $maxSurge}', ({ step, interval, maxSurge }) => {
  const options = incremental({ maxSurge, step, interval, deletionDelay: 60 });

  it.each([1, 2, 3])('follows generateUpgradeSteps exactly under random latencies (seed %i)', (seed) => {
    const sim = new Simulation(options, randomTiming(seed), { goal: 'B', activeSpec: 'A' });
    sim.runUntilIdle();
    expect(observedSteps(sim)).toEqual(generateUpgradeSteps(step, maxSurge));
    expect(invariantViolations(sim)).toEqual([]);
    const end = sim.lastStatus;
    expect(end).toMatchObject({ phase: 'Running', reason: 'Promoted', activeWeight: 100, activeTargetCapacity: 100 });
    expect(end.pendingClusterName).toBeUndefined();
    expect(sim.specOf(end.activeClusterName)).toBe('B');
    expect(sim.wasDeleted('svc-a0000')).toBe(true);
    expect(sim.routeBackends()).toEqual([{ cluster: end.activeClusterName, weight: 100 }]);
  });

  it('checks KubeRay e2e conditions: stamps ≥ interval apart, capacities and weights monotone', () => {
    const sim = new Simulation(options, randomTiming(7), { goal: 'B', activeSpec: 'A' });
    sim.runUntilIdle();
    const during = sim.trace.map((e) => e.status).filter((s) => s.pendingClusterName !== undefined);
    const stamps = [...new Set(during.map((s) => s.lastTrafficMigratedTime).filter((t): t is number => t !== undefined))];
    for (let i = 1; i < stamps.length; i++) expect(stamps[i] - stamps[i - 1]).toBeGreaterThanOrEqual(interval * 1000);
    for (let i = 1; i < during.length; i++) {
      expect(during[i].activeTargetCapacity).toBeLessThanOrEqual(during[i - 1].activeTargetCapacity);
      expect(during[i].pendingTargetCapacity).toBeGreaterThanOrEqual(during[i - 1].pendingTargetCapacity);
      expect(during[i].activeWeight).toBeLessThanOrEqual(during[i - 1].activeWeight);
      expect(during[i].pendingWeight).toBeGreaterThanOrEqual(during[i - 1].pendingWeight);
    }
  });

  it('plan() shows the same sequence with the minimum duration', () => {
    const p = plan({ kind: 'RayService', name: 'svc', options });
    const traffic = p.steps.filter((s) => s.action === 'shift-traffic');
    expect(traffic.map((s) => s.pendingWeight)).toEqual(
      generateUpgradeSteps(step, maxSurge).filter(([f]) => f === 'pendingTraffic').map(([, v]) => v),
    );
    // The first traffic step is immediate; each later one waits exactly one interval. Capacity moves
    // between traffic steps cost no time (the next step waits for the interval anyway), but the old
    // cluster's last capacity drop waits one interval after the last traffic step, to drain it.
    expect(traffic.map((s) => s.atSeconds)).toEqual(traffic.map((_, i) => i * interval));
    expect(p.durationSeconds).toBe(traffic.length * interval);
    expect(p.peakCapacityPercent).toBe(100 + maxSurge);
    expect(p.steps[p.steps.length - 1]).toMatchObject({ action: 'promote', activeWeight: 100, activeTargetCapacity: 100 });
    expect(p.oldClusterDeletedAtSeconds).toBe(p.durationSeconds + 60);
  });
});

describe('worked example maxSurge 30 / step 10', () => {
  it('plans pending 30 → traffic 10, 20, 30 → active 70 → pending 60 → … → promote', () => {
    const p = plan({ kind: 'RayService', name: 'svc', options: incremental({ maxSurge: 30, step: 10, interval: 2 }) });
    const compact = p.steps.map((s) =>
      s.action === 'shift-traffic' ? `t${s.pendingWeight}` : s.action === 'scale-pending' ? `p${s.pendingTargetCapacity}` : s.action === 'scale-active' ? `a${s.activeTargetCapacity}` : 'promote');
    expect(compact).toEqual([
      'p30', 't10', 't20', 't30', 'a70', 'p60', 't40', 't50', 't60', 'a40', 'p90', 't70', 't80', 't90', 'a10', 'p100', 't100', 'a0', 'promote',
    ]);
  });
});

describe('timing differences from KubeRay', () => {
  it('takes each traffic step exactly at lastTrafficMigratedTime + interval and returns that time', () => {
    const sim = new Simulation(incremental({ maxSurge: 50, step: 25, interval: 5 }), fixedTiming({ watchMs: 0, actionMs: 0, routeProgramMs: 0 }), { goal: 'B', activeSpec: 'A' });
    sim.runUntilIdle();
    const waits = sim.trace.filter((e) => e.status.reason === 'WaitingForInterval');
    expect(waits.length).toBeGreaterThan(0);
    for (const w of waits) expect(w.status.nextStepAt).toBe(w.status.lastTrafficMigratedTime! + 5000);
    // Every step that only waited for the interval is taken at exactly the due millisecond.
    const steps = sim.trace.filter((e, i) => i > 0 && e.status.pendingWeight !== sim.trace[i - 1].status.pendingWeight && sim.trace[i - 1].status.reason === 'WaitingForInterval');
    expect(steps.length).toBe(2); // 50 and 100; 75 waits for the new replicas (10 s > 5 s)
    for (const e of steps) {
      const before = sim.trace[sim.trace.indexOf(e) - 1].status;
      expect(e.t).toBe(before.lastTrafficMigratedTime! + 5000);
    }
  });

  it('never moves traffic before the added replicas are ready', () => {
    const sim = new Simulation(incremental({ maxSurge: 25, step: 25, interval: 1 }), fixedTiming({ replicaReadyMs: 45_000 }), { goal: 'B', activeSpec: 'A' });
    sim.runUntilIdle();
    expect(sim.violations).toEqual([]);
    const raises = sim.trace.filter((e, i) => i > 0 && e.status.pendingTargetCapacity > sim.trace[i - 1].status.pendingTargetCapacity && e.status.pendingClusterName !== undefined);
    for (const r of raises) {
      const shift = sim.trace.find((e) => e.t >= r.t && e.status.pendingWeight > r.status.pendingWeight);
      expect(shift!.t - r.t).toBeGreaterThanOrEqual(45_000);
    }
    expect(sim.lastStatus.reason).toBe('Promoted');
  });
});
