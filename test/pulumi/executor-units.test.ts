/**
 * The pure parts of the Pulumi executor: the record seen as a RayService, the record as the owner
 * of what the reconciler creates, when a run is settled, the step line, diff's replace and in-place
 * decisions, and the follower's reading of a KubeRay status.
 */
import { RayServiceStatus, isSettled } from '../../lib/engine/status';
import { KubeClient } from '../../lib/runtime/kube/client';
import { ObjectReader } from '../../lib/runtime/kube/object-reader';
import { KubeObject } from '../../lib/runtime/kube/types';
import { MigrationInputs, MigrationOutputs } from '../../lib/pulumi/migration-inputs';
import * as migration from '../../lib/pulumi/migration-operations';
import { RECORD_LABEL } from '../../lib/pulumi/record-name';
import { recordStore, serviceOfRecord } from '../../lib/pulumi/service-record';
import { rayshiftServiceStore } from '../../lib/runtime/rayservice/store';
import { stepLine } from '../../lib/pulumi/step-line';
import { snapshotOf } from '../../lib/pulumi/upgrade-progress-operations';
import { RayServiceSpec } from '../../lib/spec/rayservice';
import { INCREMENTAL, SERVE, clusterSpec } from './mocks';

const record: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'fruit-rayshift', namespace: 'ns', uid: 'u-1', resourceVersion: '42', labels: { [RECORD_LABEL]: 'fruit', team: 'ml' }, annotations: { 'rayshift.dev/paused': 'true' } },
  data: { spec: JSON.stringify({ serveConfigV2: SERVE }), status: JSON.stringify({ phase: 'Running' }), generation: '3' },
};

const status = (s: Partial<RayServiceStatus>): RayServiceStatus => ({
  phase: 'Running',
  reason: 'UpToDate',
  activeClusterName: 'fruit-aaaaa',
  activeTargetCapacity: 100,
  pendingTargetCapacity: 0,
  activeWeight: 100,
  pendingWeight: 0,
  trafficConfirmed: true,
  deletions: [],
  ...s,
});

test('the record reads as the rayshift.dev RayService it stands for, with the record uid and without the record label', () => {
  expect(serviceOfRecord(record, 'fruit')).toEqual({
    apiVersion: 'rayshift.dev/v1alpha1',
    kind: 'RayService',
    metadata: { name: 'fruit', namespace: 'ns', uid: 'u-1', resourceVersion: '42', generation: 3, labels: { team: 'ml' }, annotations: { 'rayshift.dev/paused': 'true' } },
    spec: { serveConfigV2: SERVE },
    status: { phase: 'Running' },
  });
});

test('what the reconciler creates is owned by the record ConfigMap, for the operator by the RayService', () => {
  const svc = serviceOfRecord(record, 'fruit');
  expect(recordStore({} as KubeClient).ownerReference(svc)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', name: 'fruit-rayshift', uid: 'u-1', controller: true, blockOwnerDeletion: true });
  expect(rayshiftServiceStore({} as KubeClient, {} as ObjectReader).ownerReference(svc)).toEqual({ apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', name: 'fruit', uid: 'u-1', controller: true, blockOwnerDeletion: true });
});

test('a run is settled only with one serving cluster, nothing pending, no deletion due and no action carried out', () => {
  expect(isSettled(status({}), 0)).toBe(true);
  expect(isSettled(status({}), 1)).toBe(false);
  expect(isSettled(status({ pendingClusterName: 'fruit-bbbbb' }), 0)).toBe(false);
  expect(isSettled(status({ deletions: [{ name: 'fruit-zzzzz', at: 1 }] }), 0)).toBe(false);
  expect(isSettled(status({ activeClusterName: undefined }), 0)).toBe(false);
  expect(isSettled(status({ phase: 'Initializing' }), 0)).toBe(false);
});

test('a step line names the time, the actions, both weights and both capacities', () => {
  const line = stepLine('fruit', [{ type: 'setTrafficWeights', activeCluster: 'fruit-aaaaa', active: 75, pendingCluster: 'fruit-bbbbb', pending: 25 }], status({ pendingClusterName: 'fruit-bbbbb', activeWeight: 75, pendingWeight: 25, activeTargetCapacity: 50, pendingTargetCapacity: 50 }), Date.UTC(2026, 0, 1, 12, 3, 4));
  expect(line).toBe('12:03:04 fruit setTrafficWeights: weights fruit-aaaaa 75 / fruit-bbbbb 25, capacity 50% / 50%');
});

describe('diff', () => {
  const spec = (cpu: string, serve = SERVE): RayServiceSpec => ({ rayClusterConfig: clusterSpec(cpu), serveConfigV2: serve, upgradeStrategy: INCREMENTAL });
  const inputs = (s: RayServiceSpec, extra: Partial<MigrationInputs> = {}): MigrationInputs => ({ name: 'fruit', namespace: 'ns', spec: s, labels: {}, deadlineSeconds: 60, onDeadline: 'rollback', capacityPollMs: 1000, ...extra });
  const outputs = (s: RayServiceSpec): MigrationOutputs => {
    const { kubeconfig: _k, ...shape } = inputs(s);
    return { ...shape, recordName: 'fruit-rayshift', activeClusterName: 'fruit-aaaaa', activeWeight: 100, activeTargetCapacity: 100, phase: 'Running', reason: 'UpToDate', stepsLastRun: 0 };
  };
  beforeEach(() => jest.spyOn(console, 'log').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  test('tells an upgrade from an in-place Serve change and from settings', () => {
    expect(migration.describeChange(spec('1'), spec('2'))).toBe('cluster spec changed: NewClusterWithIncrementalUpgrade upgrade to a new RayCluster');
    expect(migration.describeChange(spec('1'), spec('1', `${SERVE}  # v2\n`))).toBe('Serve config changed: applied in place to the serving cluster');
    expect(migration.describeChange(spec('1'), { ...spec('1'), rayClusterDeletionDelaySeconds: 5 })).toBe('upgrade settings changed: recorded for the next upgrade');
    expect(migration.describeChange(spec('1'), spec('1'))).toBeUndefined();
  });

  test('no change, an update, or a replacement for a new name or namespace; the kubeconfig is not compared', () => {
    expect(migration.diff(outputs(spec('1')), inputs(spec('1'), { kubeconfig: 'x' }))).toEqual({ changes: false });
    expect(migration.diff(outputs(spec('1')), inputs(spec('2')))).toEqual({ changes: true });
    expect(migration.diff(outputs(spec('1')), inputs(spec('1'), { deadlineSeconds: 61 }))).toEqual({ changes: true });
    expect(migration.diff(outputs(spec('1')), inputs(spec('1'), { namespace: 'other' }))).toEqual({ changes: true, replaces: ['namespace'] });
  });
});

test('the follower reads both sides and the upgrade state from a KubeRay status, and waits for the generation', () => {
  const svc = (generation: number, status: Record<string, unknown>): KubeObject => ({ apiVersion: 'ray.io/v1', kind: 'RayService', metadata: { name: 'kr', generation }, status });
  const upgrading = snapshotOf(svc(2, {
    observedGeneration: 2,
    activeServiceStatus: { rayClusterName: 'kr-a', targetCapacity: 50, trafficRoutedPercent: 75 },
    pendingServiceStatus: { rayClusterName: 'kr-b', targetCapacity: 50, trafficRoutedPercent: 25 },
    conditions: [{ type: 'Ready', status: 'True' }, { type: 'UpgradeInProgress', status: 'True' }],
  }));
  expect(upgrading).toEqual({ observed: true, ready: true, upgrading: true, active: 'kr-a', pending: 'kr-b', line: 'weights kr-a 75 / kr-b 25, capacity 50% / 50%' });
  expect(snapshotOf(svc(3, { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }] })).observed).toBe(false);
});
