/** RayService conversion (typed spec + overlay), request field paths of violations, and upgrade phases. */
import { create } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { rayServiceFromKube, rayServiceToKube, specFromKube, specToKube } from '../../lib/apiserver/convert/rayservice';
import { mergePatch, residue } from '../../lib/apiserver/convert/json-merge';
import { operatorPhase, upgradeStatusOf } from '../../lib/apiserver/convert/upgrade-status';
import { requestFieldPath } from '../../lib/apiserver/convert/validation';
import { revertingClusterConfig } from '../../lib/apiserver/handlers/rollback-spec';
import { Executor } from '../../lib/apiserver/gen/rayshift/v1/common_pb';
import { CapacityPolicy, RayServiceSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_pb';
import { UpgradePhase } from '../../lib/apiserver/gen/rayshift/v1/upgrade_pb';
import { clusterSpecHash } from '../../lib/engine/cluster-hash';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { rayService } from '../support/operator-env';

test('a CRD spec survives spec → message → spec, untyped fields through the overlay', () => {
  const obj = rayService('ns', 'svc');
  const spec = { ...(obj.spec as Record<string, unknown>), excludeHeadPodFromServeSvc: true, upgradeStrategy: { ...(obj.spec as any).upgradeStrategy, futureField: 3 } };
  const typed = specFromKube(spec);
  expect(typed.overlay).toEqual({ excludeHeadPodFromServeSvc: true, upgradeStrategy: { futureField: 3 } });
  expect(specToKube(typed)).toEqual(spec);
});

test.each([
  ['wait', CapacityPolicy.WAIT],
  ['fail', CapacityPolicy.FAIL],
  ['shrinkFirst', CapacityPolicy.SHRINK_FIRST],
])('capacityPolicy %s is a typed field (%s), not overlay, both ways', (policy, typedPolicy) => {
  const obj = rayService('ns', 'svc');
  const spec = { ...(obj.spec as Record<string, unknown>), rayshift: { capacityPolicy: policy } };
  const typed = specFromKube(spec);
  expect(typed.rayshift?.capacityPolicy).toBe(typedPolicy);
  expect(typed.overlay).toBeUndefined();
  expect(specToKube(typed)).toEqual(spec);
});

test('a spec without capacityPolicy leaves it unset (the default, wait, is the operator\'s to apply)', () => {
  const typed = specFromKube({ ...(rayService('ns', 'svc').spec as Record<string, unknown>), rayshift: { paused: true } });
  expect(typed.rayshift?.capacityPolicy).toBe(CapacityPolicy.UNSPECIFIED);
  expect(specToKube(typed).rayshift).toEqual({ paused: true });
});

test('the overlay is a JSON merge patch over the typed fields', () => {
  expect(mergePatch({ a: { b: 1, c: 2 }, d: 1 }, { a: { b: null, e: 3 }, d: [1] })).toEqual({ a: { c: 2, e: 3 }, d: [1] });
  expect(residue({ a: 1, b: { c: 1, d: 2 } }, { a: true, b: { c: true } })).toEqual({ b: { d: 2 } });
  expect(residue({ a: 1 }, { a: true })).toBeUndefined();
});

test('an object round-trips through the message, executor from the apiVersion', () => {
  const obj: KubeObject = { ...rayService('ns', 'svc'), apiVersion: 'ray.io/v1' };
  obj.metadata = { ...obj.metadata, labels: { a: 'b' }, resourceVersion: '42', generation: 3 };
  const msg = rayServiceFromKube(obj, upgradeStatusOf(obj));
  expect(msg.executor).toBe(Executor.KUBERAY);
  expect(msg.etag).toBe('42');
  expect(msg.generation).toBe(3n);
  const back = rayServiceToKube(create(RayServiceSchema, msg), 'ns');
  expect(back).toEqual({ apiVersion: 'ray.io/v1', kind: 'RayService', metadata: { name: 'svc', namespace: 'ns', labels: { a: 'b' }, resourceVersion: '42' }, spec: obj.spec });
});

test('problem paths become request field paths', () => {
  expect(requestFieldPath('metadata.name', 'ray_service')).toBe('ray_service.name');
  expect(requestFieldPath('spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent', 'ray_service')).toBe('ray_service.spec.upgrade_strategy.cluster_upgrade_options.step_size_percent');
  expect(requestFieldPath('spec.rayClusterConfig.workerGroupSpecs[0].replicas', 'ray_service')).toBe('ray_service.spec.ray_cluster_config.workerGroupSpecs[0].replicas');
  expect(requestFieldPath('spec.serveConfigV2.applications[0].name', 'proposed', true)).toBe('proposed.serve_config_v2.applications[0].name');
  expect(requestFieldPath('spec.excludeHeadPodFromServeSvc', 'ray_service')).toBe('ray_service.spec.overlay.excludeHeadPodFromServeSvc');
});

test('operator phases and reasons map to upgrade phases', () => {
  expect(operatorPhase('Running', 'UpToDate')).toBe(UpgradePhase.IDLE);
  expect(operatorPhase('Upgrading', 'WaitingForHead')).toBe(UpgradePhase.PREPARING);
  expect(operatorPhase('Upgrading', 'WaitingForInterval')).toBe(UpgradePhase.SHIFTING);
  expect(operatorPhase('Upgrading', 'Promoted')).toBe(UpgradePhase.PROMOTING);
  expect(operatorPhase('Paused', 'Paused')).toBe(UpgradePhase.PAUSED);
  expect(operatorPhase('RollingBack', 'Aborted')).toBe(UpgradePhase.ROLLING_BACK);
  expect(operatorPhase('Invalid', 'ValidationFailed')).toBe(UpgradePhase.FAILED);
  expect(operatorPhase(undefined, undefined)).toBe(UpgradePhase.UNSPECIFIED);
});

test('an upgrade status counts traffic steps from the plan of the service options', () => {
  const obj = rayService('ns', 'svc', { maxSurge: 50, step: 25 });
  obj.status = {
    phase: 'Upgrading',
    reason: 'WaitingForInterval',
    activeServiceStatus: { rayClusterName: 'a', targetCapacity: 50, trafficRoutedPercent: 50 },
    pendingServiceStatus: { rayClusterName: 'b', targetCapacity: 100, trafficRoutedPercent: 50 },
  };
  const u = upgradeStatusOf(obj);
  expect(u.phase).toBe(UpgradePhase.SHIFTING);
  expect({ step: u.step, total: u.totalSteps }).toEqual({ step: 2, total: 4 });
  expect(u.pending?.trafficRoutedPercent).toBe(50);
});

test('a rollback spec must hash like the serving cluster; CRD defaults are dropped and scaling comes from the goal', () => {
  const goal = (rayService('ns', 'svc').spec as any).rayClusterConfig;
  const served = structuredClone(goal);
  served.headGroupSpec.template.spec.containers[0].ports[0].protocol = 'TCP';
  served.workerGroupSpecs[0].replicas = 0;
  const cluster = { apiVersion: 'ray.io/v1', kind: 'RayCluster', metadata: { name: 'c', annotations: { 'rayshift.dev/cluster-spec-hash': clusterSpecHash(goal) } }, spec: served };
  expect(revertingClusterConfig(cluster, goal)).toEqual(goal);
  const other = { ...cluster, metadata: { name: 'c', annotations: { 'rayshift.dev/cluster-spec-hash': 'different' } } };
  expect(revertingClusterConfig(other, goal)).toBeUndefined();
});

test('an upgrade status carries the next traffic step time rayshift status counts down to', () => {
  const obj = rayService('ns', 'svc', { maxSurge: 50, step: 25, interval: 30 });
  const decided = Date.parse('2026-11-21T12:00:00.000Z');
  const engineState = { phase: 'Upgrading', reason: 'Migrating', activeClusterName: 'a', pendingClusterName: 'b', activeTargetCapacity: 50, pendingTargetCapacity: 100, activeWeight: 50, pendingWeight: 50, trafficConfirmed: false, lastProgressTime: decided, deletions: [] };
  obj.status = { phase: 'Upgrading', reason: 'Migrating', engineState };
  expect(timestampMs(upgradeStatusOf(obj).nextTrafficStepTime!)).toBe(decided + 30_000);
  obj.status = { phase: 'Upgrading', reason: 'WaitingForInterval', engineState: { ...engineState, trafficConfirmed: true, lastTrafficMigratedTime: decided + 40 } };
  expect(timestampMs(upgradeStatusOf(obj).nextTrafficStepTime!)).toBe(decided + 30_040);
  obj.status = { phase: 'Paused', reason: 'Paused', engineState: { ...engineState, phase: 'Paused' } };
  expect(upgradeStatusOf(obj).nextTrafficStepTime).toBeUndefined();
});

test('an upgrade status says which steering verb applies and why not, by the rules the steering handlers enforce; KubeRay\'s none', () => {
  const obj = rayService('ns', 'svc', { maxSurge: 50, step: 25 });
  const engineState = { phase: 'Upgrading', reason: 'WaitingForInterval', upgradeStrategy: 'NewClusterWithIncrementalUpgrade', activeClusterName: 'a', pendingClusterName: 'b', deletions: [] };
  obj.status = { phase: 'Upgrading', reason: 'WaitingForInterval', engineState };
  const refusals = (o: KubeObject) => upgradeStatusOf(o).steering.map((s) => [s.verb, s.refusal]);
  const noRun = 'no failed analysis run holds the upgrade: only a run that failed and paused it (onFailure: pause) can be';
  expect(refusals(obj)).toEqual([
    ['pause', ''],
    ['resume', 'the upgrade is not paused (phase Upgrading)'],
    ['promote', ''],
    ['abort', ''],
    ['rollback', ''],
    ['retry-analysis', `${noRun} retried (phase Upgrading)`],
    ['skip-analysis', `${noRun} skipped (phase Upgrading)`],
  ]);
  obj.metadata.annotations = { ...obj.metadata.annotations, 'rayshift.dev/promote': 'true', 'rayshift.dev/paused': 'true' };
  expect(Object.fromEntries(refusals(obj))).toMatchObject({ pause: 'the upgrade is already paused (phase Upgrading)', resume: '', promote: 'a promotion is already requested (phase Upgrading)' });
  expect(upgradeStatusOf({ ...obj, apiVersion: 'ray.io/v1' }).steering).toEqual([]);
});
