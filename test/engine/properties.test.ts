/**
 * Property-based tests of the incremental engine: random options, random world delays, random
 * observation (watch) and action latencies, and random interventions (revert, third spec, abort,
 * pause). Every run must keep the safety invariants and terminate.
 */
import fc from 'fast-check';
import { incremental, prng, Simulation, type Hook } from './harness';
import { invariantViolations } from './invariants';

const intervention = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constantFrom('revert' as const, 'third' as const, 'abort' as const, 'pause' as const), atPendingWeight: fc.integer({ min: 0, max: 99 }), pauseMs: fc.integer({ min: 0, max: 900_000 }) }),
);

const scenario = fc.record({
  maxSurge: fc.integer({ min: 1, max: 100 }),
  step: fc.integer({ min: 1, max: 100 }),
  intervalMs: fc.integer({ min: 100, max: 30_000 }),
  deletionDelay: fc.integer({ min: 0, max: 120 }),
  deadline: fc.oneof(fc.constant(0), fc.integer({ min: 30, max: 900 })),
  headReadyMs: fc.integer({ min: 0, max: 120_000 }),
  replicaReadyMs: fc.integer({ min: 0, max: 60_000 }),
  routeProgramMs: fc.integer({ min: 0, max: 5_000 }),
  maxActionMs: fc.integer({ min: 0, max: 3_000 }),
  maxWatchMs: fc.integer({ min: 0, max: 2_000 }),
  fullReplicas: fc.integer({ min: 1, max: 40 }),
  seed: fc.integer(),
  intervention,
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function simulate(sc: Scenario): { sim: Simulation; runs: number } {
  const rnd = prng(sc.seed);
  const hooks: Hook[] = [];
  const iv = sc.intervention;
  if (iv.kind !== 'none') {
    hooks.push({
      name: iv.kind,
      when: (s) => s.pendingClusterName !== undefined && s.pendingWeight >= iv.atPendingWeight,
      act: (x) => {
        if (iv.kind === 'revert') x.goal = 'A';
        else if (iv.kind === 'third') x.goal = 'C';
        else if (iv.kind === 'abort') x.controls = { abort: true };
        else {
          x.controls = { paused: true };
          const resumeAt = x.now + iv.pauseMs;
          x.resync(5_000, resumeAt + 5_000);
          x.addHook({ name: 'resume', when: (_s, y) => y.now >= resumeAt, act: (y) => { y.controls = {}; y.changed(); } });
        }
        x.changed();
      },
    });
  }
  const sim = new Simulation(
    incremental({ maxSurge: sc.maxSurge, step: sc.step, interval: sc.intervalMs / 1000, deletionDelay: sc.deletionDelay, deadline: sc.deadline }),
    {
      headReadyMs: sc.headReadyMs,
      replicaReadyMs: sc.replicaReadyMs,
      routeProgramMs: sc.routeProgramMs,
      actionLatencyMs: () => rnd() * sc.maxActionMs,
      watchLatencyMs: () => rnd() * sc.maxWatchMs,
    },
    { goal: 'B', activeSpec: 'A', hooks, fullReplicas: sc.fullReplicas },
  );
  return { sim, runs: sim.runUntilIdle() };
}

describe('incremental engine properties', () => {
  it('keeps weights, capacity bounds, interval spacing and forward monotonicity under random timing', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        const { sim } = simulate(sc);
        expect(invariantViolations(sim)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('terminates every run: promoted, rolled back, or a reported deadline', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        const { sim, runs } = simulate(sc);
        expect(runs).toBeLessThan(200_000);
        const end = sim.lastStatus;
        const settled = end.pendingClusterName === undefined && end.phase === 'Running';
        expect(settled || end.reason === 'RollbackDeadlineExceeded').toBe(true);
        if (settled) {
          expect(end).toMatchObject({ activeWeight: 100, activeTargetCapacity: 100 });
          expect(sim.clusterNames()).toEqual([end.activeClusterName]);
          const spec = sim.specOf(end.activeClusterName);
          if (end.rejectedSpecHash === undefined) expect(spec).toBe(sim.goal);
          else expect(spec).toBe('A');
        }
      }),
      { numRuns: 300 },
    );
  });
});
