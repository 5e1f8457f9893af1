/**
 * One pass as steps (lib/engine/rayservice-pass.ts): what the executor is told to keep in place
 * around each engine action, what every pass keeps, and when the status is written or held. The
 * expected step lists are written out literally.
 */
import { RayServiceAction } from '../../lib/engine/actions';
import { ObservedCluster, RayServiceObservation } from '../../lib/engine/observation';
import { PassSpec, finalizationSteps, persistChoice, planPass } from '../../lib/engine/rayservice-pass';
import { RayServiceDecision } from '../../lib/engine/rayservice-engine';
import { RayServiceStatus } from '../../lib/engine/status';
import { MIGRATING as MIGRATING_NO_STRATEGY, NOW } from './pass-fixtures';

const CONFIG = 'applications: []\n';
const MIGRATING: RayServiceStatus = { ...MIGRATING_NO_STRATEGY, upgradeStrategy: 'NewClusterWithIncrementalUpgrade' };
const RUNNING: RayServiceStatus = { ...MIGRATING, phase: 'Running', reason: 'UpToDate', pendingClusterName: undefined, activeWeight: 100, pendingWeight: 0, pendingTargetCapacity: 0 };
const INCREMENTAL: PassSpec = { strategy: 'NewClusterWithIncrementalUpgrade', userGateway: false, serveConfig: CONFIG, excludeHeadPodFromServeSvc: false };

function cluster(name: string, o: Partial<ObservedCluster> = {}): ObservedCluster {
  return { name, specHash: 'h', headReady: true, headProxyHealthy: true, appsRunning: true, readyReplicas: 2, targetReplicas: 2, targetCapacity: 100, appliedServeConfig: CONFIG, ...o };
}
const decision = (status: RayServiceStatus, actions: RayServiceAction[] = []): RayServiceDecision => ({ status, actions, events: [] });
const observation = (clusters: ObservedCluster[], o: Partial<RayServiceObservation> = {}): RayServiceObservation => ({ name: 'svc', goalSpecHash: 'h', clusters, ...o });

test('a traffic step on an existing route: the Gateway and both serve Services are ensured, then the weights patched; every cluster keeps its head label', () => {
  const shift: RayServiceAction = { type: 'setTrafficWeights', activeCluster: 'a', active: 25, pendingCluster: 'b', pending: 75 };
  const obs = observation([cluster('a'), cluster('b')], { route: { backends: [], ready: true } });
  expect(planPass(decision(MIGRATING, [shift]), obs, INCREMENTAL)).toEqual([
    { type: 'ensureGateway' },
    { type: 'ensureServeService', cluster: 'a' },
    { type: 'ensureServeService', cluster: 'b' },
    { type: 'patchRouteWeights', backends: [{ cluster: 'a', weight: 25 }, { cluster: 'b', weight: 75 }] },
    { type: 'setHeadServeLabel', cluster: 'a', value: 'true' },
    { type: 'setHeadServeLabel', cluster: 'b', value: 'true' },
  ]);
});

test("the first weights create the route; a user's Gateway (gatewayRef) is never ensured", () => {
  const first: RayServiceAction = { type: 'setTrafficWeights', activeCluster: 'a', active: 100, pending: 0 };
  expect(planPass(decision(RUNNING, [first]), observation([]), { ...INCREMENTAL, userGateway: true })).toEqual([
    { type: 'ensureServeService', cluster: 'a' },
    { type: 'createRoute', backends: [{ cluster: 'a', weight: 100 }] },
  ]);
});

test('a pending cluster gets its serve Service only while the route is managed (incremental spec, or an incremental upgrade in flight)', () => {
  const create: RayServiceAction = { type: 'createPendingCluster', name: 'b', specHash: 'h2', startFromMinReplicas: true };
  expect(planPass(decision(MIGRATING, [create]), observation([]), INCREMENTAL)).toEqual([create, { type: 'ensureServeService', cluster: 'b' }]);
  expect(planPass(decision(MIGRATING, [create]), observation([]), { ...INCREMENTAL, strategy: 'NewCluster' })).toEqual([create, { type: 'ensureServeService', cluster: 'b' }]);
  const blueGreen = { ...MIGRATING, upgradeStrategy: 'NewCluster' as const };
  expect(planPass(decision(blueGreen, [create]), observation([]), { ...INCREMENTAL, strategy: 'NewCluster' })).toEqual([create]);
});

test('a capacity step carries the frozen config to the active cluster and records nothing already recorded; the pending one gets the spec config, recorded', () => {
  const down: RayServiceAction = { type: 'setTargetCapacity', cluster: 'active', clusterName: 'a', percent: 50 };
  const up: RayServiceAction = { type: 'setTargetCapacity', cluster: 'pending', clusterName: 'b', percent: 75 };
  const obs = observation([cluster('a', { appliedServeConfig: 'old' }), cluster('b', { appliedServeConfig: undefined })], { route: { backends: [], ready: true } });
  expect(planPass(decision(MIGRATING, [down, up]), obs, { ...INCREMENTAL, excludeHeadPodFromServeSvc: true })).toEqual([
    { type: 'putServeConfig', clusterName: 'a', config: 'old', percent: 50, record: false, inPlace: false },
    { type: 'putServeConfig', clusterName: 'b', config: CONFIG, percent: 75, record: true, inPlace: false },
    { type: 'setHeadServeLabel', cluster: 'a', value: 'false' },
    { type: 'setHeadServeLabel', cluster: 'b', value: 'false' },
  ]);
  // Without serveConfigV2 nothing is deployed (KubeRay sends no PUT).
  expect(planPass(decision(MIGRATING, [up]), obs, { ...INCREMENTAL, serveConfig: '' }).filter((s) => s.type === 'putServeConfig')).toEqual([]);
});

test('a Serve config change alone is applied in place to the serving cluster; spent steering is cleared; the decision\'s Events are recorded before the actions (a failing action must not lose them)', () => {
  const obs = observation([cluster('a', { appliedServeConfig: 'old', headProxyHealthy: false })], { controls: { abort: true, promoteNow: true } });
  const withEvent = { ...decision(RUNNING), events: [{ reason: 'AnalysisSucceeded', message: 'ok', type: 'Normal' as const }] } as unknown as RayServiceDecision;
  expect(planPass(withEvent, obs, INCREMENTAL)).toEqual([
    { type: 'recordEvents' },
    { type: 'putServeConfig', clusterName: 'a', config: CONFIG, percent: 100, record: true, inPlace: true },
    { type: 'setHeadServeLabel', cluster: 'a', value: 'false' },
    { type: 'clearSteering', annotations: ['rayshift.dev/abort', 'rayshift.dev/promote'] },
  ]);
});

test('a decision with Events and actions: the Events are recorded first, so an action that fails cannot lose them', () => {
  const back: RayServiceAction = { type: 'setTargetCapacity', cluster: 'active', clusterName: 'a', percent: 100 };
  const obs = observation([cluster('a', { appliedServeConfig: CONFIG })], { route: { backends: [], ready: true } });
  const withEvent = { ...decision(MIGRATING, [back]), events: [{ reason: 'SurgeUnschedulable', message: 'rolling the upgrade back', type: 'Warning' as const }] } as unknown as RayServiceDecision;
  expect(planPass(withEvent, obs, INCREMENTAL).map((s) => s.type)).toEqual(['recordEvents', 'putServeConfig', 'setHeadServeLabel']);
});

test('deletion moves the traffic home only on a route that exists, and ensures nothing', () => {
  const home = { type: 'setTrafficWeights' as const, activeCluster: 'a', active: 100, pending: 0 };
  expect(finalizationSteps([home], true)).toEqual([{ type: 'patchRouteWeights', backends: [{ cluster: 'a', weight: 100 }] }]);
  expect(finalizationSteps([home], false)).toEqual([]);
});

describe('persistChoice', () => {
  const confirmed: RayServiceStatus = { ...MIGRATING, reason: 'WaitingForInterval', trafficConfirmed: true, lastTrafficMigratedTime: NOW };
  const input = { stored: MIGRATING, storedIsOwn: true, replicasDiffer: false, now: NOW, onlyReplicasDiffer: false };
  const WRITE = { status: 'write', confirmationHeld: false };

  test('a confirmation alone is held, as pass-rules says', () => {
    expect(persistChoice(decision(confirmed), input)).toEqual({ status: 'hold', confirmationHeld: true });
  });

  test("a change of either side's Serve replicas is written even then, when the stored status is older than the refresh or its time unknown", () => {
    expect(persistChoice(decision(confirmed), { ...input, replicasDiffer: true })).toEqual(WRITE);
    expect(persistChoice(decision(confirmed), { ...input, replicasDiffer: true, lastWriteAt: NOW - 5_000 })).toEqual(WRITE);
  });

  test('within 5 s of the last write, a replica change waits with the held confirmation until 5 s after that write', () => {
    expect(persistChoice(decision(confirmed), { ...input, replicasDiffer: true, lastWriteAt: NOW - 4_999 })).toEqual({ status: 'hold', confirmationHeld: true, until: NOW + 1 });
  });

  test('a status whose only change is the replicas shown waits until 5 s after the last write; any other change is written at once', () => {
    const unchanged = decision(MIGRATING);
    const replicasOnly = { ...input, replicasDiffer: true, onlyReplicasDiffer: true };
    expect(persistChoice(unchanged, { ...replicasOnly, lastWriteAt: NOW - 1_000 })).toEqual({ status: 'hold', confirmationHeld: false, until: NOW + 4_000 });
    expect(persistChoice(unchanged, { ...replicasOnly, lastWriteAt: NOW - 6_000 })).toEqual(WRITE);
    expect(persistChoice(unchanged, replicasOnly)).toEqual(WRITE);
    expect(persistChoice(decision({ ...MIGRATING, activeWeight: 50, pendingWeight: 50 }), { ...input, lastWriteAt: NOW - 1_000 })).toEqual(WRITE);
  });

  test('a status this process did not write is written', () => {
    expect(persistChoice(decision(confirmed), { ...input, storedIsOwn: false })).toEqual(WRITE);
  });
});
