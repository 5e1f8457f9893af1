/** Blue/green (`NewCluster`), `None`, first creation and cluster deletion. */
import { describeStatus, nextRayService, plan, type ObservedCluster } from '../../lib/engine';
import type { ResolvedUpgradeOptions } from '../../lib/spec';
import { fixedTiming, incremental, Simulation } from './harness';

const options = (strategy: ResolvedUpgradeOptions['strategy'], extra: Partial<ResolvedUpgradeOptions> = {}): ResolvedUpgradeOptions => ({
  strategy,
  maxSurgePercent: 100,
  stepSizePercent: 100,
  intervalSeconds: 1,
  rayClusterDeletionDelaySeconds: 60,
  progressDeadlineSeconds: 0,
  ...extra,
});

describe('NewCluster (blue/green)', () => {
  it('switches the Services once the pending cluster serves everything, then deletes the old one after the delay', () => {
    const sim = new Simulation(options('NewCluster'), fixedTiming({ headReadyMs: 40_000, replicaReadyMs: 20_000 }), { goal: 'B', activeSpec: 'A' });
    sim.runUntilIdle();
    const actions = sim.trace.flatMap((e) => e.actions.map((a) => ({ t: e.t, a })));
    const create = actions.find((x) => x.a.type === 'createPendingCluster')!;
    expect(create.a).toMatchObject({ startFromMinReplicas: false });
    const capacity = actions.find((x) => x.a.type === 'setTargetCapacity')!;
    expect(capacity.a).toMatchObject({ cluster: 'pending', percent: 100 });
    const promote = actions.find((x) => x.a.type === 'promote')!;
    expect(promote.a).toMatchObject({ previous: 'svc-a0000' });
    // Head ready after 40 s, then the replicas after 20 s more: no switch before both.
    expect(promote.t).toBeGreaterThanOrEqual(60_000);
    const deletion = actions.find((x) => x.a.type === 'deleteCluster')!;
    expect(deletion.a).toMatchObject({ name: 'svc-a0000' });
    expect(deletion.t - promote.t).toBeGreaterThanOrEqual(60_000);
    expect(deletion.t - promote.t).toBeLessThan(61_000);
    expect(actions.some((x) => x.a.type === 'setTrafficWeights')).toBe(false);
    expect(sim.lastStatus).toMatchObject({ phase: 'Running', reason: 'Promoted' });
    expect(sim.clusterNames()).toEqual([sim.lastStatus.activeClusterName]);
  });

  it('drops the pending cluster when the goal reverts, and replaces it when a third spec arrives', () => {
    const revert = new Simulation(options('NewCluster'), fixedTiming(), {
      goal: 'B',
      activeSpec: 'A',
      hooks: [{ name: 'revert', when: (s) => s.reason === 'WaitingForHead', act: (x) => { x.goal = 'A'; x.changed(); } }],
    });
    revert.runUntilIdle();
    expect(revert.lastStatus).toMatchObject({ reason: 'UpgradeCancelled', activeClusterName: 'svc-a0000' });
    expect(revert.clusterNames()).toEqual(['svc-a0000']);

    const third = new Simulation(options('NewCluster'), fixedTiming(), {
      goal: 'B',
      activeSpec: 'A',
      hooks: [{ name: 'C', when: (s) => s.reason === 'WaitingForHead', act: (x) => { x.goal = 'C'; x.changed(); } }],
    });
    third.runUntilIdle();
    expect(third.specOf(third.lastStatus.activeClusterName)).toBe('C');
    expect(third.clusterNames()).toHaveLength(1);
    expect(third.trace.flatMap((e) => e.actions).filter((a) => a.type === 'createPendingCluster').map((a) => a.type === 'createPendingCluster' && a.specHash)).toEqual(['B', 'C']);
  });

  it('gives up on a pending cluster that misses the progress deadline', () => {
    const sim = new Simulation(options('NewCluster', { progressDeadlineSeconds: 300 }), fixedTiming({ headReadyMs: Infinity }), { goal: 'B', activeSpec: 'A' });
    sim.runUntilIdle();
    expect(sim.lastStatus).toMatchObject({ reason: 'ProgressDeadlineExceeded', rejectedSpecHash: 'B', activeClusterName: 'svc-a0000' });
    expect(sim.clusterNames()).toEqual(['svc-a0000']);
  });

  it('plans the switch at 200 % peak', () => {
    const p = plan({ kind: 'RayService', name: 'svc', options: options('NewCluster') });
    expect(p.steps.map((s) => s.action)).toEqual(['scale-pending', 'promote']);
    expect(p).toMatchObject({ strategy: 'NewCluster', peakCapacityPercent: 200, durationSeconds: 0, outcome: 'promoted', oldClusterDeletedAtSeconds: 60 });
  });
});

describe('None', () => {
  it('never creates a second cluster on a spec change', () => {
    const sim = new Simulation(options('None'), fixedTiming(), { goal: 'B', activeSpec: 'A' });
    sim.resync(30_000, 600_000);
    sim.runUntilIdle();
    expect(sim.trace.length).toBeGreaterThan(10);
    expect(sim.trace.every((e) => e.actions.length === 0)).toBe(true);
    expect(sim.lastStatus).toMatchObject({ phase: 'Running', reason: 'UpgradeDisabled', activeClusterName: 'svc-a0000' });
    expect(plan({ kind: 'RayService', name: 'svc', options: options('None') })).toMatchObject({ steps: [], peakCapacityPercent: 100, outcome: 'unchanged' });
  });
});

describe('first creation', () => {
  it.each(['None', 'NewCluster', 'NewClusterWithIncrementalUpgrade'] as const)('builds one cluster at full capacity and promotes it (%s)', (strategy) => {
    const sim = new Simulation(strategy === 'NewClusterWithIncrementalUpgrade' ? incremental({ maxSurge: 25, step: 5, interval: 2 }) : options(strategy), fixedTiming(), { goal: 'A' });
    sim.runUntilIdle();
    const end = sim.lastStatus;
    expect(end).toMatchObject({ phase: 'Running', reason: 'Promoted', activeTargetCapacity: 100 });
    expect(sim.clusterNames()).toEqual([end.activeClusterName]);
    expect(sim.trace[0].actions).toEqual([{ type: 'createPendingCluster', name: end.activeClusterName, specHash: 'A', startFromMinReplicas: false }]);
    expect(sim.routeBackends()).toEqual(strategy === 'NewClusterWithIncrementalUpgrade' ? [{ cluster: end.activeClusterName, weight: 100 }] : []);
  });

  it('is deterministic: the same observation, options and time give the same decision', () => {
    const obs = { name: 'svc', goalSpecHash: 'A', clusters: [] };
    const a = nextRayService(obs, options('NewCluster'), 1000);
    const b = nextRayService(obs, options('NewCluster'), 1000);
    expect(a).toEqual(b);
    expect(JSON.parse(JSON.stringify(a.status))).toEqual(a.status);
  });
});

describe('first run without a status', () => {
  const cluster = (name: string, specHash: string): ObservedCluster => ({ name, specHash, headReady: true, targetCapacity: 100, appsRunning: true, readyReplicas: 4, targetReplicas: 4 });

  it('adopts the cluster the Services select and retires the others after the deletion delay', () => {
    const obs = { name: 'svc', goalSpecHash: 'A', clusters: [cluster('svc-old', 'B'), cluster('svc-x', 'A')], servingCluster: 'svc-x' };
    const first = nextRayService(obs, options('NewCluster'), 1_000);
    expect(first.actions).toEqual([]);
    expect(first.status).toMatchObject({ phase: 'Running', reason: 'UpToDate', activeClusterName: 'svc-x', deletions: [{ name: 'svc-old', at: 61_000 }] });
    expect(first.nextStepAt).toBe(61_000);
    expect(describeStatus(first.status)).toBe('Running/UpToDate: svc-x @100%');
    const due = nextRayService({ ...obs, status: first.status }, options('NewCluster'), 61_000);
    expect(due.actions).toEqual([{ type: 'deleteCluster', name: 'svc-old', at: 61_000 }]);
    const gone = nextRayService({ ...obs, clusters: [obs.clusters[1]], status: due.status }, options('NewCluster'), 62_000);
    expect(gone.status.deletions).toEqual([]);
    expect(gone.nextStepAt).toBeUndefined();
  });
});

describe('options', () => {
  it('rejects out-of-range options naming the field, value and range', () => {
    const obs = { name: 'svc', goalSpecHash: 'A', clusters: [] };
    expect(() => nextRayService(obs, options('NewCluster', { maxSurgePercent: 0 }), 0)).toThrow('maxSurgePercent is 0; allowed: an integer 1–100');
    expect(() => nextRayService(obs, options('NewCluster', { intervalSeconds: 0 }), 0)).toThrow('intervalSeconds is 0; allowed: a finite number > 0');
    expect(() => nextRayService(obs, options('NewCluster', { rayClusterDeletionDelaySeconds: -1 }), 0)).toThrow('rayClusterDeletionDelaySeconds is -1');
  });
});
