/**
 * The typed analysis of an upgrade status (lib/apiserver/convert/analysis.ts): the engine's analysis
 * status as the operator persists it becomes `UpgradeStatus.analysis` (epoch ms → Timestamps), the
 * same over REST JSON and gRPC binary; KubeRay's status has none. Each side's Serve replicas come
 * from the operator's sides (`readyReplicas`, `targetReplicas`), and stay unset where a status has none.
 */
import { fromBinary, fromJson, toBinary, toJson } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { upgradeAnalysisOf } from '../../lib/apiserver/convert/analysis';
import { upgradeStatusOf } from '../../lib/apiserver/convert/upgrade-status';
import { UpgradeStatusSchema } from '../../lib/apiserver/gen/rayshift/v1/upgrade_pb';
import type { AnalysisStatus } from '../../lib/engine/analysis-status';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { rayService } from '../support/operator-env';

const T0 = Date.parse('2026-11-24T12:00:00.000Z');

const ANALYSIS: AnalysisStatus = {
  step: {
    id: `step/svc-b/25/${T0}`,
    kind: 'step',
    cluster: 'svc-b',
    pendingWeight: 25,
    startedAt: T0,
    holdUntil: T0 + 120_000,
    phase: 'Failed',
    metrics: [
      {
        name: 'error-ratio',
        phase: 'Failed',
        taken: 2,
        successes: 0,
        failures: 2,
        inconclusives: 0,
        consecutiveSuccesses: 0,
        last: { at: T0 + 40_000, result: 'Failed', value: 0.2, message: '0.2 > maximum 0.05' },
      },
      { name: 'p99-latency', phase: 'Running', taken: 0, successes: 0, failures: 0, inconclusives: 0, consecutiveSuccesses: 0 },
    ],
  },
  verdicts: [{ id: `step/svc-b/10/${T0 - 60_000}`, kind: 'step', pendingWeight: 10, phase: 'Successful', at: T0 - 1_000, dryRun: false, message: 'error-ratio passed' }],
};

/** A rayshift RayService with the status the operator writes, paused by its failed analysis. */
function analysed(analysis: unknown): KubeObject {
  const engineState = { phase: 'Paused', reason: 'AnalysisFailed', activeClusterName: 'svc-a', pendingClusterName: 'svc-b', analysis };
  const status = {
    phase: 'Paused',
    reason: 'AnalysisFailed',
    activeServiceStatus: { rayClusterName: 'svc-a', targetCapacity: 100, trafficRoutedPercent: 75 },
    pendingServiceStatus: { rayClusterName: 'svc-b', targetCapacity: 30, trafficRoutedPercent: 25 },
    engineState,
  };
  return { ...rayService('ns', 'svc'), status };
}

test("the engine's analysis status becomes the typed analysis, times as Timestamps", () => {
  const u = upgradeStatusOf(analysed(ANALYSIS));
  expect(u.analysis?.step).toMatchObject({
    id: `step/svc-b/25/${T0}`,
    kind: 'step',
    cluster: 'svc-b',
    pendingWeight: 25,
    startTime: timestampFromMs(T0),
    holdUntilTime: timestampFromMs(T0 + 120_000),
    phase: 'Failed',
    skipped: false,
  });
  expect(u.analysis?.step?.metrics.map((m) => [m.name, m.phase, m.taken, m.failures, m.last?.value, m.last?.activeValue, m.last?.message])).toEqual([
    ['error-ratio', 'Failed', 2, 2, 0.2, undefined, '0.2 > maximum 0.05'],
    ['p99-latency', 'Running', 0, 0, undefined, undefined, undefined],
  ]);
  expect(u.analysis?.step?.metrics[0].last?.time).toEqual(timestampFromMs(T0 + 40_000));
  expect(u.analysis?.background).toBeUndefined();
  expect(u.analysis?.verdicts).toHaveLength(1);
  expect(u.analysis?.verdicts[0]).toMatchObject({ id: `step/svc-b/10/${T0 - 60_000}`, kind: 'step', pendingWeight: 10, phase: 'Successful', time: timestampFromMs(T0 - 1_000), dryRun: false, message: 'error-ratio passed' });
});

test('REST JSON and gRPC binary carry the same analysis', () => {
  const u = upgradeStatusOf(analysed(ANALYSIS));
  const json = toJson(UpgradeStatusSchema, u, { alwaysEmitImplicit: true }) as any;
  expect(json.analysis.step).toMatchObject({ id: `step/svc-b/25/${T0}`, pendingWeight: 25, startTime: '2026-11-24T12:00:00Z', holdUntilTime: '2026-11-24T12:02:00Z', phase: 'Failed', skipped: false });
  expect(json.analysis.step.metrics[0]).toMatchObject({ name: 'error-ratio', consecutiveSuccesses: 0, last: { time: '2026-11-24T12:00:40Z', result: 'Failed', value: 0.2, message: '0.2 > maximum 0.05' } });
  // Unset optional values stay absent (not 0) on REST, as over gRPC.
  expect('activeValue' in json.analysis.step.metrics[0].last).toBe(false);
  expect('last' in json.analysis.step.metrics[1]).toBe(false);
  expect(json.analysis.verdicts[0]).toEqual({ id: `step/svc-b/10/${T0 - 60_000}`, kind: 'step', pendingWeight: 10, phase: 'Successful', time: '2026-11-24T11:59:59Z', dryRun: false, message: 'error-ratio passed' });
  expect(fromJson(UpgradeStatusSchema, json).analysis).toEqual(u.analysis);
  expect(fromBinary(UpgradeStatusSchema, toBinary(UpgradeStatusSchema, u)).analysis).toEqual(u.analysis);
});

test("Serve replicas per cluster come from the operator's sides, and stay unset where the status has none (KubeRay, a cluster not observed)", () => {
  const operator = analysed(ANALYSIS);
  const status = operator.status as Record<string, any>;
  status.pendingServiceStatus = { ...status.pendingServiceStatus, readyReplicas: 1, targetReplicas: 2 };
  const u = upgradeStatusOf(operator);
  expect([u.pending?.readyReplicas, u.pending?.targetReplicas, u.active?.readyReplicas, u.active?.targetReplicas]).toEqual([1, 2, undefined, undefined]);
  const json = toJson(UpgradeStatusSchema, u, { alwaysEmitImplicit: true }) as any;
  expect(json.pending).toMatchObject({ readyReplicas: 1, targetReplicas: 2 });
  expect(fromBinary(UpgradeStatusSchema, toBinary(UpgradeStatusSchema, u)).pending).toEqual(u.pending);
  const kuberay: KubeObject = {
    ...rayService('ns', 'svc'),
    apiVersion: 'ray.io/v1',
    status: { activeServiceStatus: { rayClusterName: 'svc-a', applicationStatuses: { app: { status: 'RUNNING', serveDeploymentStatuses: { d: { status: 'HEALTHY' } } } } } },
  };
  const k = upgradeStatusOf(kuberay);
  expect(k.active?.cluster).toBe('svc-a');
  expect(Object.keys((toJson(UpgradeStatusSchema, k, { alwaysEmitImplicit: true }) as any).active).sort()).toEqual(['cluster', 'targetCapacity', 'trafficRoutedPercent']);
  // KubeRay runs no analysis.
  expect(k.analysis).toBeUndefined();
});

test('a status without analysis has none; malformed fields read as zero values', () => {
  expect(upgradeStatusOf(analysed(undefined)).analysis).toBeUndefined();
  expect(upgradeAnalysisOf({})).toBeUndefined();
  expect(upgradeAnalysisOf({ analysis: 'x' })).toBeUndefined();
  const odd = upgradeAnalysisOf({ analysis: { step: { id: 7, pendingWeight: 'a', startedAt: 'yesterday', metrics: [{ name: 'm', last: null }] }, verdicts: 'none' } });
  expect(odd?.step).toMatchObject({ id: '', pendingWeight: 0, metrics: [{ name: 'm' }] });
  expect([odd?.step?.startTime, odd?.step?.metrics[0].last]).toEqual([undefined, undefined]);
  expect(odd?.verdicts).toEqual([]);
});
