/** The status view of `rayshift status`: screen, one-line form and the next step's due time. */
import type { RayServiceStatus } from '../../lib/engine/status';
import { bar, withoutTime, renderServiceLine, renderServiceScreen, serviceView } from '../../lib/cli/status-view';
import { nextTrafficStepAt } from '../../lib/runtime/rayservice/progress';
import { upgradeDone } from '../../lib/cli/status-command';
import { Style } from '../../lib/cli/style';
import { T, engine } from './engine-state-fixture';

const plain: Style = { red: (s) => s, yellow: (s) => s, green: (s) => s, dim: (s) => s, bold: (s) => s };

function obj(e: RayServiceStatus | undefined, generation = 2, observed = 2) {
  return {
    metadata: { namespace: 'serving', name: 'llm', generation },
    spec: { upgradeStrategy: { clusterUpgradeOptions: { intervalSeconds: 30 } } },
    status: e ? { observedGeneration: observed, engineState: e, conditions: [{ type: 'Ready', status: 'True', reason: 'Serving' }] } : undefined,
  };
}

test('bars fill in proportion and clamp', () => {
  expect(bar(0, 10)).toBe('░'.repeat(10));
  expect(bar(30, 10)).toBe('███░░░░░░░');
  expect(bar(100, 4)).toBe('████');
  expect(bar(250, 4)).toBe('████');
});

test('the next traffic step is due an interval after the confirmed change, or after the decision while confirming', () => {
  expect(nextTrafficStepAt(serviceView(obj(engine())))).toBe(T + 30_000);
  expect(nextTrafficStepAt(serviceView(obj(engine({ trafficConfirmed: false, lastTrafficMigratedTime: T - 30_000, lastProgressTime: T + 5 }))))).toBe(T + 30_005);
  expect(nextTrafficStepAt(serviceView(obj(engine({ phase: 'Paused', reason: 'Paused' }))))).toBeUndefined();
  expect(nextTrafficStepAt(serviceView(obj(engine({ pendingClusterName: undefined, phase: 'Running' }))))).toBeUndefined();
});

test('the screen shows both sides with weight and capacity, the countdown and conditions', () => {
  const screen = renderServiceScreen(serviceView(obj(engine())), T + 25_500, plain, 10).join('\n');
  expect(screen).toContain('RayService serving/llm  Upgrading (Migrating)');
  expect(screen).toMatch(/active\s+llm-aaaaa\s+traffic ███████░░░\s+70%\s+capacity █████\s+100%/);
  expect(screen).toMatch(/pending\s+llm-bbbbb\s+traffic ███░░░░░░░\s+30%\s+capacity ███░░\s+50%/);
  expect(screen).toContain('next traffic step in 4.5s (12:00:30.000 UTC)');
  expect(screen).toContain('Ready=True (Serving)');
  expect(renderServiceScreen(serviceView(obj(engine())), T + 40_000, plain).join('\n')).toContain('next traffic step due now');
});

test('a spec generation the status has not observed yet is called out', () => {
  expect(renderServiceScreen(serviceView(obj(engine(), 3, 2)), T, plain).join('\n')).toContain('spec generation 3 not observed yet');
});

test('one line per change: the key ignores the time and changes with the weights', () => {
  const a = serviceView(obj(engine()));
  const b = serviceView(obj(engine({ activeWeight: 60, pendingWeight: 40 })));
  expect(renderServiceLine(a, T)).toBe('12:00:00.000 serving/llm Upgrading/Migrating active llm-aaaaa w70 cap100 | pending llm-bbbbb w30 cap50');
  expect(withoutTime(renderServiceLine(a, T))).toBe(withoutTime(renderServiceLine(serviceView(obj(engine())), T + 999)));
  expect(withoutTime(renderServiceLine(a, T))).not.toBe(withoutTime(renderServiceLine(b, T)));
  expect(renderServiceLine(serviceView(obj(undefined)), T)).toBe('12:00:00.000 serving/llm no status yet');
});

test('done means the current generation observed with no upgrade in flight', () => {
  const running = engine({ phase: 'Running', reason: 'Promoted', pendingClusterName: undefined });
  expect(upgradeDone(serviceView(obj(running)))).toBe(true);
  expect(upgradeDone(serviceView(obj(running, 3, 2)))).toBe(false);
  expect(upgradeDone(serviceView(obj(engine())))).toBe(false);
  expect(upgradeDone(serviceView(obj(undefined)))).toBe(false);
  // An upgrade capacityPolicy fail refused is not in flight: watching it ends.
  expect(upgradeDone(serviceView(obj(engine({ phase: 'Failed', reason: 'InsufficientCapacity', pendingClusterName: undefined }))))).toBe(true);
});

describe("KubeRay's own RayService (ray.io/v1, executor kuberay): the view reads the status KubeRay writes", () => {
  /** A `ray.io/v1` RayService as KubeRay v1.7.0 writes its status (field names from its RayServiceStatuses). */
  function kuberay(status: Record<string, unknown> | undefined) {
    return {
      apiVersion: 'ray.io/v1',
      metadata: { namespace: 'serving', name: 'llm', generation: 3 },
      spec: { upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { intervalSeconds: 5 } } },
      ...(status ? { status: { observedGeneration: 3, ...status } } : {}),
    };
  }
  const side = (rayClusterName: string, targetCapacity?: number, trafficRoutedPercent?: number, lastTrafficMigratedTime?: string) => ({
    rayClusterName,
    ...(targetCapacity !== undefined ? { targetCapacity } : {}),
    ...(trafficRoutedPercent !== undefined ? { trafficRoutedPercent } : {}),
    ...(lastTrafficMigratedTime ? { lastTrafficMigratedTime } : {}),
  });

  test('mid-upgrade: both sides with capacities and weights, Migrating, the next step an interval after the pending side last moved', () => {
    const v = serviceView(kuberay({
      activeServiceStatus: side('llm-aaaaa', 100, 75, '2026-11-21T11:59:50Z'),
      pendingServiceStatus: side('llm-bbbbb', 50, 25, '2026-11-21T12:00:00Z'),
      conditions: [{ type: 'Ready', status: 'True', reason: 'NonZeroServeEndpoints' }, { type: 'UpgradeInProgress', status: 'True', reason: 'BothActivePendingClustersExist' }],
    }));
    expect(v.executor).toBe('kuberay');
    expect(withoutTime(renderServiceLine(v, T))).toBe('serving/llm Upgrading/Migrating active llm-aaaaa w75 cap100 | pending llm-bbbbb w25 cap50 (KubeRay)');
    expect(nextTrafficStepAt(v)).toBe(T + 5_000);
    expect(renderServiceScreen(v, T, plain)[0]).toBe('RayService serving/llm  Upgrading (Migrating)  executed by KubeRay');
    expect(upgradeDone(v)).toBe(false);
  });

  test("unset fields take KubeRay's defaults: a new pending cluster without traffic waits for capacity", () => {
    const v = serviceView(kuberay({ activeServiceStatus: side('llm-aaaaa'), pendingServiceStatus: side('llm-bbbbb') }));
    expect(withoutTime(renderServiceLine(v, T))).toBe('serving/llm Upgrading/WaitingForCapacity active llm-aaaaa w100 cap100 | pending llm-bbbbb w0 cap0 (KubeRay)');
  });

  test('promoted: one active cluster, done; first cluster still starting: Initializing', () => {
    const done = serviceView(kuberay({ activeServiceStatus: side('llm-bbbbb', 100, 100), pendingServiceStatus: {}, conditions: [{ type: 'Ready', status: 'True' }] }));
    expect(withoutTime(renderServiceLine(done, T))).toBe('serving/llm Running/UpToDate active llm-bbbbb w100 cap100 (KubeRay)');
    expect(upgradeDone(done)).toBe(true);
    const first = serviceView(kuberay({ activeServiceStatus: {}, pendingServiceStatus: side('llm-aaaaa', 100) }));
    expect(first.engine?.phase).toBe('Initializing');
    expect(upgradeDone(first)).toBe(false);
    expect(serviceView(kuberay(undefined)).engine).toBeUndefined();
  });

  test("a rollback: KubeRay's RollbackInProgress message tells a reverted spec from a changed one", () => {
    const rolling = (message: string) => serviceView(kuberay({
      activeServiceStatus: side('llm-aaaaa', 100, 60, '2026-11-21T12:00:00Z'),
      pendingServiceStatus: side('llm-bbbbb', 50, 40),
      conditions: [{ type: 'UpgradeInProgress', status: 'True' }, { type: 'RollbackInProgress', status: 'True', reason: 'DesiredClusterSpecChanged', message }],
    }));
    expect(rolling('Goal state reverted to original cluster, rolling back.').engine).toMatchObject({ phase: 'RollingBack', rollback: 'SpecReverted', lastTrafficMigratedTime: T });
    expect(rolling('Goal state changed mid-upgrade, rolling back to original cluster.').engine).toMatchObject({ phase: 'RollingBack', rollback: 'SpecChanged' });
  });

  test('a rayshift.dev object still reads its engine state, not the sides', () => {
    expect(serviceView(obj(engine())).executor).toBeUndefined();
    expect(serviceView({ ...obj(engine()), apiVersion: 'rayshift.dev/v1alpha1' }).engine).toEqual(engine());
  });
});

test('the screen names the operator replica working on the service, and its shard', () => {
  const o = obj(engine());
  const owned = { ...o, status: { ...o.status, owner: { replica: 'rayshift-operator-7d9f-x2k4p', shard: 5 } } };
  expect(renderServiceScreen(serviceView(owned), T, plain, 10)[0]).toBe('RayService serving/llm  Upgrading (Migrating)  (replica rayshift-operator-7d9f-x2k4p, shard 5)');
  expect(renderServiceScreen(serviceView(o), T, plain, 10)[0]).toBe('RayService serving/llm  Upgrading (Migrating)');
});
