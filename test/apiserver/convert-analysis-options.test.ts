/**
 * The analysis options of a RayService (lib/apiserver/convert/analysis-options.ts): `spec.rayshift.analysis`
 * round-trips through `AnalysisOptions` unchanged, over REST JSON and gRPC binary, with no default
 * filled in; every template and failure action of the model has its enum value; a bad analysis is
 * INVALID_ARGUMENT naming the request field.
 */
import { ConnectError, Code } from '@connectrpc/connect';
import { create, fromBinary, fromJson, toBinary, toJson } from '@bufbuild/protobuf';
import { analysisFromKube, analysisToKube } from '../../lib/apiserver/convert/analysis-options';
import { rayServiceFromKube, rayServiceToKube } from '../../lib/apiserver/convert/rayservice';
import { upgradeStatusOf } from '../../lib/apiserver/convert/upgrade-status';
import { requestFieldPath, requireValidRayService } from '../../lib/apiserver/convert/validation';
import { BadRequestSchema } from '../../lib/apiserver/gen/google/rpc/error_details_pb';
import { AnalysisFailureAction, AnalysisTemplate, RayServiceSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_pb';
import { ANALYSIS_FAILURE_ACTIONS, type UpgradeAnalysis } from '../../lib/spec/analysis';
import { ANALYSIS_TEMPLATE_NAMES } from '../../lib/spec/analysis-templates';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { rayService } from '../support/operator-env';

/** Every option set, zeros and `false` included (they must not read back as unset). */
const FULL: UpgradeAnalysis = {
  prometheusUrl: 'http://prometheus.monitoring:9090',
  metrics: [
    { name: 'error-ratio', template: 'ray-serve-error-ratio', successCondition: { maximum: 0.02, minimum: 0 }, intervalSeconds: 20, windowSeconds: 40, count: 3, failureLimit: 1, inconclusiveLimit: 0, consecutiveSuccessLimit: 0 },
    { name: 'p99', template: 'traefik-latency-ms', quantile: 0.99, successCondition: { maxAboveActive: 200, maxAboveActivePercent: 0 } },
    { name: 'custom', query: 'sum(rate(x{cluster="{{cluster}}"}[{{window}}]))', successCondition: { minimum: -1.5 } },
  ],
  beforeEachStep: false,
  background: true,
  holds: [{ weightPercent: 50, seconds: 600 }, { weightPercent: 10, seconds: 60 }],
  onFailure: 'pause',
  dryRun: false,
  queryTimeoutSeconds: 30,
  clusterLabel: 'cluster',
};

/** The only required options. */
const MINIMAL: UpgradeAnalysis = { prometheusUrl: 'https://prom:9090', metrics: [{ name: 'm', template: 'envoy-error-ratio', successCondition: { maximum: 0.1 } }] };

function withAnalysis(analysis: unknown): KubeObject {
  return rayService('ns', 'svc', { extensions: { progressDeadlineSeconds: 600, analysis } });
}

/** The object after object → message → (wire) → message → object. */
function roundTrip(obj: KubeObject, wire: 'json' | 'binary'): KubeObject {
  const msg = rayServiceFromKube(obj, upgradeStatusOf(obj));
  const back = wire === 'json' ? fromJson(RayServiceSchema, toJson(RayServiceSchema, msg)) : fromBinary(RayServiceSchema, toBinary(RayServiceSchema, msg));
  return rayServiceToKube(back, 'ns');
}

test.each(['json', 'binary'] as const)('spec.rayshift.analysis round-trips unchanged over %s, every option or the required ones only', (wire) => {
  for (const analysis of [FULL, MINIMAL]) {
    const obj = withAnalysis(analysis);
    const back = roundTrip(obj, wire);
    expect(back.spec).toEqual(obj.spec);
    expect((back.spec as any).overlay).toBeUndefined();
  }
});

test('unset options stay unset in the message; zeros and false are set', () => {
  const min = analysisFromKube(MINIMAL);
  expect({ quantile: min.metrics[0].quantile, count: min.metrics[0].count, beforeEachStep: min.beforeEachStep, dryRun: min.dryRun, onFailure: min.onFailure, clusterLabel: min.clusterLabel }).toEqual({
    quantile: undefined,
    count: undefined,
    beforeEachStep: undefined,
    dryRun: undefined,
    onFailure: AnalysisFailureAction.UNSPECIFIED,
    clusterLabel: undefined,
  });
  const full = analysisFromKube(FULL);
  expect({ inconclusiveLimit: full.metrics[0].inconclusiveLimit, minimum: full.metrics[0].successCondition?.minimum, beforeEachStep: full.beforeEachStep, dryRun: full.dryRun }).toEqual({ inconclusiveLimit: 0, minimum: 0, beforeEachStep: false, dryRun: false });
  expect(toJson(RayServiceSchema, create(RayServiceSchema, { spec: { rayshift: { analysis: full } } }))).toMatchObject({
    spec: { rayshift: { analysis: { beforeEachStep: false, onFailure: 'ANALYSIS_FAILURE_ACTION_PAUSE', holds: [{ weightPercent: 50, seconds: 600 }, { weightPercent: 10, seconds: 60 }] } } },
  });
});

test('every template and failure action of the model has its enum value', () => {
  for (const template of ANALYSIS_TEMPLATE_NAMES) {
    const a = analysisFromKube({ ...MINIMAL, metrics: [{ ...MINIMAL.metrics[0], template }] });
    expect(a.metrics[0].template).not.toBe(AnalysisTemplate.UNSPECIFIED);
    expect((analysisToKube(a).metrics as any)[0].template).toBe(template);
  }
  for (const onFailure of ANALYSIS_FAILURE_ACTIONS) {
    const a = analysisFromKube({ ...MINIMAL, onFailure });
    expect(a.onFailure).not.toBe(AnalysisFailureAction.UNSPECIFIED);
    expect(analysisToKube(a).onFailure).toBe(onFailure);
  }
});

test('an analysis field the message does not type travels in the overlay', () => {
  const obj = withAnalysis({ ...MINIMAL, futureOption: 'x' });
  const msg = rayServiceFromKube(obj, upgradeStatusOf(obj));
  expect(msg.spec?.overlay).toEqual({ rayshift: { analysis: { futureOption: 'x' } } });
  expect(roundTrip(obj, 'json').spec).toEqual(obj.spec);
});

test('a bad analysis is INVALID_ARGUMENT with request field paths', () => {
  expect(requestFieldPath('spec.rayshift.analysis.metrics[1].successCondition.maxAboveActivePercent', 'ray_service')).toBe('ray_service.spec.rayshift.analysis.metrics[1].success_condition.max_above_active_percent');
  expect(requestFieldPath('spec.rayshift.analysis.holds[0].weightPercent', 'proposed', true)).toBe('proposed.rayshift.analysis.holds[0].weight_percent');
  const bad = { ...MINIMAL, queryTimeoutSeconds: 0, metrics: [{ ...MINIMAL.metrics[0], successCondition: { maxAboveActive: -1 } }] };
  const msg = rayServiceFromKube(withAnalysis(bad), upgradeStatusOf(withAnalysis(bad)));
  let err: unknown;
  try {
    requireValidRayService(rayServiceToKube(msg, 'ns'), 'ray_service');
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  expect((err as ConnectError).findDetails(BadRequestSchema)[0].fieldViolations.map((v) => v.field).sort()).toEqual([
    'ray_service.spec.rayshift.analysis.metrics[0].success_condition.max_above_active',
    'ray_service.spec.rayshift.analysis.query_timeout_seconds',
  ]);
});
