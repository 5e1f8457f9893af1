/**
 * The operator's record of the spec its serving cluster runs (`status.servingSpec`), and the
 * rollback spec the API server derives from it: taken only from the RayService's own spec when it is
 * the serving cluster's with nothing in flight, kept otherwise, and never from a RayCluster.
 */
import { recordedRevertingSpec } from '../../lib/apiserver/handlers/rollback-spec';
import { clusterSpecHash } from '../../lib/engine/cluster-hash';
import type { ObservedCluster } from '../../lib/engine/observation';
import type { RayServiceStatus } from '../../lib/engine/status';
import { nextServingSpec, servingSpecIn } from '../../lib/runtime/rayservice/serving-spec';
import type { RayServiceSpec } from '../../lib/spec/rayservice';
import { rayClusterConfig, rayService, serveConfig } from '../support/operator-env';

const specOf = (cpu: string, serve = serveConfig()) => rayService('ns', 'svc', { cpu, serve }).spec as unknown as RayServiceSpec;
const hashOf = (cpu: string) => clusterSpecHash(rayClusterConfig(cpu) as never);
const observed = (name: string, cpu: string): ObservedCluster => ({ name, specHash: hashOf(cpu), headReady: true, appsRunning: true, readyReplicas: 1, targetReplicas: 1 });
const engine = (active: string | undefined, pending?: string, extra: Partial<RayServiceStatus> = {}): RayServiceStatus =>
  ({ phase: 'Running', reason: 'UpToDate', activeClusterName: active, pendingClusterName: pending, activeTargetCapacity: 100, pendingTargetCapacity: 0, activeWeight: 100, pendingWeight: 0, trafficConfirmed: true, deletions: [], ...extra }) as RayServiceStatus;

test('with nothing in flight and the serving cluster made from the goal, the goal spec is recorded', () => {
  const record = nextServingSpec({}, specOf('1', serveConfig(2)), engine('svc-a'), hashOf('1'), [observed('svc-a', '1')]);
  expect(record).toEqual({ rayClusterName: 'svc-a', specHash: hashOf('1'), rayClusterConfig: rayClusterConfig('1'), serveConfigV2: serveConfig(2) });
  // A Serve-config-only change (applied in place) is recorded too.
  expect(nextServingSpec({ servingSpec: record }, specOf('1', serveConfig(3)), engine('svc-a'), hashOf('1'), [observed('svc-a', '1')])?.serveConfigV2).toBe(serveConfig(3));
});

test('during an upgrade, before the first cluster serves, for a rejected spec or a spec the cluster was not made from, the stored record stands', () => {
  const stored = { servingSpec: { rayClusterName: 'svc-a', specHash: hashOf('1'), rayClusterConfig: rayClusterConfig('1'), serveConfigV2: serveConfig() } };
  const clusters = [observed('svc-a', '1'), observed('svc-b', '2')];
  // An upgrade to cpu 2 (pending svc-b), a rollback, or a new spec the operator does not roll out (strategy None).
  expect(nextServingSpec(stored, specOf('2'), engine('svc-a', 'svc-b'), hashOf('2'), clusters)).toEqual(stored.servingSpec);
  expect(nextServingSpec(stored, specOf('2'), engine('svc-a'), hashOf('2'), clusters)).toEqual(stored.servingSpec);
  // A rejected (aborted) spec is not recorded even if the serving cluster's annotation claims it.
  expect(nextServingSpec(stored, specOf('2'), engine('svc-b', undefined, { rejectedSpecHash: hashOf('2') }), hashOf('2'), clusters)).toEqual(stored.servingSpec);
  expect(nextServingSpec({}, specOf('1'), engine(undefined, 'svc-a'), hashOf('1'), clusters)).toBeUndefined();
  // Once the upgrade is done, the new serving cluster's spec is.
  expect(nextServingSpec(stored, specOf('2'), engine('svc-b'), hashOf('2'), clusters)?.rayClusterName).toBe('svc-b');
});

test('a malformed record is no record', () => {
  expect(servingSpecIn({ servingSpec: { rayClusterName: 'svc-a', specHash: 'h' } })).toBeUndefined();
  expect(servingSpecIn({ servingSpec: { rayClusterName: 'svc-a', specHash: 'h', rayClusterConfig: {}, serveConfigV2: 3 } })).toBeUndefined();
  expect(servingSpecIn(undefined)).toBeUndefined();
});

test('the rollback spec comes from the record of the serving cluster only, with the goal scaling; no record, no rollback', () => {
  const svc = rayService('ns', 'svc', { cpu: '2', serve: serveConfig(9, 'new.app:build') });
  (svc.spec as any).rayClusterConfig.workerGroupSpecs[0].replicas = 3;
  svc.status = { servingSpec: { rayClusterName: 'svc-a', specHash: hashOf('1'), rayClusterConfig: rayClusterConfig('1'), serveConfigV2: serveConfig() } };
  const revert = recordedRevertingSpec(svc, 'svc-a')!;
  expect(revert.serveConfigV2).toBe(serveConfig());
  expect(clusterSpecHash(revert.rayClusterConfig as never)).toBe(hashOf('1'));
  expect((revert.rayClusterConfig as any).workerGroupSpecs[0]).toMatchObject({ replicas: 3, template: { spec: { containers: [{ resources: { requests: { cpu: '1' } } }] } } });
  // A record of another cluster, one that does not hash like its config, or none: nothing to restore.
  expect(recordedRevertingSpec(svc, 'svc-b')).toBeUndefined();
  expect(recordedRevertingSpec({ ...svc, status: { servingSpec: { ...(svc.status as any).servingSpec, specHash: 'other' } } }, 'svc-a')).toBeUndefined();
  expect(recordedRevertingSpec({ ...svc, status: {} }, 'svc-a')).toBeUndefined();
  // A serving spec without a Serve config removes the goal's.
  svc.status = { servingSpec: { rayClusterName: 'svc-a', specHash: hashOf('1'), rayClusterConfig: rayClusterConfig('1') } };
  expect(recordedRevertingSpec(svc, 'svc-a')?.serveConfigV2).toBeNull();
});
