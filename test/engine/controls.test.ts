/** Pause, resume, promote-now, abort and the progress deadline of the incremental engine. */
import { fixedTiming, incremental, Simulation } from './harness';
import { invariantViolations } from './invariants';

describe('pause and resume', () => {
  it('holds the forward migration while paused, without a deadline rollback, and finishes after resume', () => {
    let pausedAt = 0;
    const sim = new Simulation(incremental({ maxSurge: 50, step: 10, interval: 5, deadline: 60 }), fixedTiming(), {
      goal: 'B',
      activeSpec: 'A',
      hooks: [
        { name: 'pause', when: (s) => s.pendingWeight === 20, act: (x) => { pausedAt = x.now; x.controls = { paused: true }; x.changed(); } },
        // Resume 10 minutes later (10× the progress deadline); an unrelated observation change wakes the executor.
        { name: 'resume', when: (s, x) => s.phase === 'Paused' && x.now > pausedAt + 600_000, act: (x) => { x.controls = {}; x.changed(); } },
      ],
    });
    // Keep the executor observing while paused (a resync every 30 s).
    sim.resync(30_000, 900_000);
    sim.runUntilIdle();
    const paused = sim.trace.filter((e) => e.status.phase === 'Paused');
    expect(paused.length).toBeGreaterThan(5);
    expect(new Set(paused.map((e) => `${e.status.pendingWeight}/${e.status.pendingTargetCapacity}/${e.status.activeTargetCapacity}`)).size).toBe(1);
    expect(paused.every((e) => e.status.nextStepAt === undefined)).toBe(true);
    expect(sim.trace.some((e) => e.status.rollback !== undefined)).toBe(false);
    expect(sim.lastStatus.reason).toBe('Promoted');
    expect(sim.specOf(sim.lastStatus.activeClusterName)).toBe('B');
    expect(invariantViolations(sim)).toEqual([]);
  });
});

describe('promote-now', () => {
  it('finishes without waiting for intervals, still one capacity step at a time and onto ready capacity only', () => {
    const opts = incremental({ maxSurge: 25, step: 5, interval: 60 });
    const slow = new Simulation(opts, fixedTiming(), { goal: 'B', activeSpec: 'A' });
    slow.runUntilIdle();
    const fast = new Simulation(opts, fixedTiming(), {
      goal: 'B',
      activeSpec: 'A',
      hooks: [{ name: 'promote', when: (s) => s.pendingWeight === 5, act: (x) => { x.controls = { promoteNow: true }; x.changed(); } }],
    });
    fast.runUntilIdle();
    expect(fast.lastStatus.reason).toBe('Promoted');
    // 20 traffic steps of 5 % one minute apart vs. 5 (5, 25, 50, 75, 100) with no interval wait.
    expect(slow.trafficChanges.length).toBe(20);
    expect(fast.trafficChanges.map((c) => c.weights.get(fast.lastStatus.activeClusterName!))).toEqual([5, 25, 50, 75, 100]);
    expect(fast.trace[fast.trace.length - 1].t).toBeLessThan(slow.trace[slow.trace.length - 1].t / 10);
    expect(invariantViolations(fast, { promoteNow: true })).toEqual([]);
  });
});

describe('abort', () => {
  it('returns traffic and capacity to the active cluster and does not retry the aborted spec', () => {
    const sim = new Simulation(incremental({ maxSurge: 50, step: 25, interval: 2 }), fixedTiming(), {
      goal: 'B',
      activeSpec: 'A',
      hooks: [{ name: 'abort', when: (s) => s.pendingWeight === 50, act: (x) => { x.controls = { abort: true }; x.changed(); } }],
    });
    sim.runUntilIdle();
    expect(sim.trace.some((e) => e.status.rollback === 'Aborted')).toBe(true);
    expect(sim.lastStatus).toMatchObject({ phase: 'Running', reason: 'Aborted', activeClusterName: 'svc-a0000', activeWeight: 100, activeTargetCapacity: 100, rejectedSpecHash: 'B' });
    expect(sim.clusterNames()).toEqual(['svc-a0000']);
    expect(sim.trace.filter((e) => e.actions.some((a) => a.type === 'createPendingCluster')).length).toBe(1);
    expect(invariantViolations(sim)).toEqual([]);
  });

  it('starts a new upgrade once the goal changes after an abort', () => {
    const sim = new Simulation(incremental({ maxSurge: 100, step: 50, interval: 1 }), fixedTiming(), {
      goal: 'B',
      activeSpec: 'A',
      hooks: [
        { name: 'abort', when: (s) => s.pendingWeight === 50, act: (x) => { x.controls = { abort: true }; x.changed(); } },
        { name: 'new spec', when: (s) => s.rejectedSpecHash === 'B', act: (x) => { x.controls = {}; x.goal = 'C'; x.changed(); } },
      ],
    });
    sim.runUntilIdle();
    expect(sim.lastStatus.reason).toBe('Promoted');
    expect(sim.lastStatus.rejectedSpecHash).toBeUndefined();
    expect(sim.specOf(sim.lastStatus.activeClusterName)).toBe('C');
  });
});

describe('progress deadline', () => {
  it('rolls back automatically when the pending head never becomes ready, and reports why', () => {
    const sim = new Simulation(incremental({ maxSurge: 50, step: 25, interval: 2, deadline: 120 }), fixedTiming({ headReadyMs: Infinity }), { goal: 'B', activeSpec: 'A' });
    sim.runUntilIdle();
    // Nothing moved yet, so the rollback completes in the run that detects the deadline. The engine
    // woke itself exactly at the deadline: no observation arrives while the head is down.
    const first = sim.trace.find((e) => e.status.rejectedSpecHash === 'B')!;
    expect(first.t).toBe(sim.trace[0].t + 120_000);
    expect(sim.lastStatus).toMatchObject({ phase: 'Running', reason: 'ProgressDeadlineExceeded', rejectedSpecHash: 'B', activeClusterName: 'svc-a0000' });
    expect(sim.clusterNames()).toEqual(['svc-a0000']);
  });

  it('rolls back a migration that stalls half-way (pending head dies) and completes the rollback', () => {
    const sim = new Simulation(incremental({ maxSurge: 30, step: 10, interval: 2, deadline: 300 }), fixedTiming(), {
      goal: 'B',
      activeSpec: 'A',
      hooks: [{ name: 'crash', when: (s) => s.pendingWeight === 40, act: (x) => x.killHead(x.lastStatus.pendingClusterName!) }],
    });
    sim.runUntilIdle();
    const rollbackAt = sim.trace.find((e) => e.status.rollback === 'ProgressDeadlineExceeded')!.t;
    const lastProgress = sim.trace.filter((e) => e.t < rollbackAt).map((e) => e.status.lastProgressTime!).reduce((a, b) => Math.max(a, b));
    expect(rollbackAt).toBe(lastProgress + 300_000);
    expect(sim.lastStatus).toMatchObject({ phase: 'Running', activeClusterName: 'svc-a0000', activeTargetCapacity: 100, activeWeight: 100 });
    expect(sim.clusterNames()).toEqual(['svc-a0000']);
    expect(invariantViolations(sim)).toEqual([]);
  });

  it('reports a rollback that itself makes no progress', () => {
    // The route is never programmed again after the first write: neither direction can move.
    const sim = new Simulation(incremental({ maxSurge: 50, step: 25, interval: 2, deadline: 60 }), fixedTiming({ routeProgramMs: Infinity }), { goal: 'B', activeSpec: 'A' });
    sim.resync(30_000, 400_000);
    sim.runUntilIdle();
    expect(sim.lastStatus).toMatchObject({ phase: 'RollingBack', rollback: 'ProgressDeadlineExceeded', reason: 'RollbackDeadlineExceeded' });
    expect(sim.lastStatus.nextStepAt).toBeUndefined();
  });
});
