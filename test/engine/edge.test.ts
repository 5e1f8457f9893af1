/** Edge values: maxSurge not dividing 100, step not dividing maxSurge, step above maxSurge. */
import { plan, type RayServicePlan } from '../../lib/engine';
import { fixedTiming, incremental, Simulation } from './harness';

const planFor = (maxSurge: number, step: number, interval = 1): RayServicePlan =>
  plan({ kind: 'RayService', name: 'svc', options: incremental({ maxSurge, step, interval }) });

const values = (p: RayServicePlan, action: string, pick: (s: RayServicePlan['steps'][number]) => number): number[] =>
  p.steps.filter((s) => s.action === action).map(pick);

describe('maxSurge not dividing 100', () => {
  it.each([
    [30, [30, 60, 90, 100], [70, 40, 10, 0]],
    [40, [40, 80, 100], [60, 20, 0]],
    [33, [33, 66, 99, 100], [67, 34, 1, 0]],
    [99, [99, 100], [1, 0]],
  ])('maxSurge %i caps pending capacity at 100 and floors active at 0', (maxSurge, pending, active) => {
    const p = planFor(maxSurge, 1);
    expect(values(p, 'scale-pending', (s) => s.pendingTargetCapacity)).toEqual(pending);
    expect(values(p, 'scale-active', (s) => s.activeTargetCapacity)).toEqual(active);
    expect(p.peakCapacityPercent).toBe(100 + maxSurge);
  });
});

describe('step not dividing maxSurge', () => {
  it('cuts each step at the pending target capacity, deterministically (KubeRay #4636 example)', () => {
    const p = planFor(25, 10);
    expect(values(p, 'shift-traffic', (s) => s.pendingWeight)).toEqual([10, 20, 25, 35, 45, 50, 60, 70, 75, 85, 95, 100]);
    expect(planFor(25, 10)).toEqual(p);
  });

  it('simulated executors see the same sequence as the plan', () => {
    const sim = new Simulation(incremental({ maxSurge: 25, step: 10, interval: 1 }), fixedTiming(), { goal: 'B', activeSpec: 'A' });
    sim.runUntilIdle();
    const pending = sim.lastStatus.activeClusterName!;
    expect(sim.trafficChanges.map((c) => c.weights.get(pending))).toEqual([10, 20, 25, 35, 45, 50, 60, 70, 75, 85, 95, 100]);
  });

  it('handles a step above maxSurge (KubeRay rejects it) by capping at capacity', () => {
    expect(values(planFor(10, 25), 'shift-traffic', (s) => s.pendingWeight)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
  });
});

describe('plan invariants over a grid of options', () => {
  const grid = [1, 3, 7, 10, 25, 30, 33, 40, 50, 99, 100];
  it.each(grid)('maxSurge %i with every step of the grid', (maxSurge) => {
    for (const step of grid) {
      const p = planFor(maxSurge, step, 3);
      expect(p.outcome).toBe('promoted');
      let prev = { activeTargetCapacity: 100, pendingTargetCapacity: 0, activeWeight: 100, pendingWeight: 0, atSeconds: 0 };
      let lastShift = -Infinity;
      for (const s of p.steps) {
        expect(s.activeWeight + s.pendingWeight).toBe(100);
        if (s.action === 'promote') continue;
        expect(s.pendingWeight).toBeLessThanOrEqual(s.pendingTargetCapacity);
        expect(s.activeWeight).toBeLessThanOrEqual(s.activeTargetCapacity);
        expect(s.activeTargetCapacity + s.pendingTargetCapacity).toBeLessThanOrEqual(100 + maxSurge);
        expect(s.pendingTargetCapacity).toBeGreaterThanOrEqual(prev.pendingTargetCapacity);
        expect(s.activeTargetCapacity).toBeLessThanOrEqual(prev.activeTargetCapacity);
        expect(s.pendingWeight).toBeGreaterThanOrEqual(prev.pendingWeight);
        if (s.action === 'shift-traffic') {
          expect(s.pendingWeight - prev.pendingWeight).toBeLessThanOrEqual(step);
          expect(s.atSeconds - lastShift).toBeGreaterThanOrEqual(3);
          lastShift = s.atSeconds;
        }
        prev = s;
      }
      expect(p.steps[p.steps.length - 1].action).toBe('promote');
    }
  });
});

describe('plan with a progress deadline shorter than an interval', () => {
  it('shows the automatic rollback the engine would perform', () => {
    const p = plan({ kind: 'RayService', name: 'svc', options: incremental({ maxSurge: 50, step: 25, interval: 700, deadline: 600 }) });
    expect(p.outcome).toBe('rolled-back');
    // 25 % moves at once; the next step would be due at 700 s but the deadline passes at 600 s, so at
    // 700 s (one interval after the last change, as for any weight change) the traffic goes back, and
    // the pending capacity drops one interval after that, once the gateway has drained it.
    expect(p.steps.map((s) => [s.atSeconds, s.action, s.pendingTargetCapacity, s.pendingWeight])).toEqual([
      [0, 'scale-pending', 50, 0],
      [0, 'shift-traffic', 50, 25],
      [700, 'shift-traffic', 50, 0],
      [1400, 'scale-pending', 0, 0],
    ]);
  });
});

describe('draining before a capacity drop', () => {
  it.each([
    [{ maxSurge: 100, step: 100, interval: 1 }],
    [{ maxSurge: 50, step: 25, interval: 5 }],
    [{ maxSurge: 25, step: 5, interval: 10 }],
    [{ maxSurge: 30, step: 10, interval: 2 }],
  ])('%j: every drop of the old cluster\'s capacity comes one interval after the last weight change', (o) => {
    const p = plan({ kind: 'RayService', name: 'svc', options: incremental(o) });
    let lastShift: number | undefined;
    let drops = 0;
    let prevActive = 100;
    for (const s of p.steps) {
      if (s.action === 'shift-traffic') lastShift = s.atSeconds;
      if (s.activeTargetCapacity < prevActive && s.action !== 'promote') {
        drops++;
        expect(lastShift).toBeDefined();
        expect(s.atSeconds).toBeGreaterThanOrEqual(lastShift! + o.interval);
      }
      prevActive = s.activeTargetCapacity;
    }
    expect(drops).toBeGreaterThan(0);
  });
});
