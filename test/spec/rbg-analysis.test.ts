/**
 * The `analysis` option of a RoleBasedGroup rollout (lib/spec/rbg-analysis.ts): the RayService's
 * validator with its field paths, and what a RoleBasedGroup cannot run, in the annotation the
 * executors read and in the construct that writes it.
 */
import { Testing } from 'cdk8s';
import { validateUpgradeAnalysis, type UpgradeAnalysis } from '../../lib/spec/analysis';
import { validateCoordinationAnnotation } from '../../lib/spec/rbg-executor';
import { RoleBasedGroup, type RoleBasedGroupProps } from '../../lib/cdk8s/rolebasedgroup';
import { readCoordination } from '../../lib/engine/rbg-executor-rules';
import { COORDINATION_ANNOTATION } from '../../lib/spec/rbg';

const policies = [{ name: 'pd', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: '10%' } } }];
const good: UpgradeAnalysis = {
  prometheusUrl: 'http://prometheus:9090',
  metrics: [{ name: 'errors', query: 'sum(rate(errors_total{namespace="{{namespace}}",controller_revision_hash=~"{{cluster}}"}[{{window}}]))', successCondition: { maximum: 0.05 } }],
  onFailure: 'abort',
};

function errors(analysis: unknown): string[][] {
  return validateCoordinationAnnotation({ name: 'pd' }, { policies, analysis }).errors.map((p) => [p.path, p.message]);
}

test('a query-based analysis in the annotation has no problem', () => {
  expect(errors(good)).toEqual([]);
});

test('the RayService validator reports each wrong field at its path under analysis', () => {
  const paths = errors({ prometheusUrl: 'ftp://x', metrics: [{ name: 'Bad', query: '{{role}}', successCondition: {} }], onFailure: 'explode' }).map(([p]) => p);
  expect(paths).toEqual(expect.arrayContaining(['analysis.prometheusUrl', 'analysis.metrics[0].name', 'analysis.metrics[0].query', 'analysis.metrics[0].successCondition', 'analysis.onFailure']));
});

test('templates and the …Active bounds measure a RayCluster: refused for a RoleBasedGroup, naming the field', () => {
  const result = errors({ ...good, metrics: [{ name: 'e', template: 'ray-serve-error-ratio', successCondition: { maximum: 0.1, maxAboveActive: 1 } }] });
  expect(result.map(([p]) => p)).toEqual(['analysis.metrics[0].template', 'analysis.metrics[0].successCondition.maxAboveActive']);
  expect(result[0][1]).toMatch(/measures a RayCluster .* use query, selecting the new release by a label of the role template/);
});

test('a query naming the release instead of {{cluster}} is no warning for a RoleBasedGroup (it is for a RayService)', () => {
  const byVersion = { ...good, metrics: [{ name: 'errors', query: 'sum(rate(errors_total{app_kubernetes_io_version="v2"}[{{window}}]))', successCondition: { maximum: 0.05 } }] };
  expect(validateCoordinationAnnotation({ name: 'pd' }, { policies, analysis: byVersion }).warnings).toEqual([]);
  expect(validateUpgradeAnalysis(byVersion).warnings.map((p) => p.path)).toEqual(['spec.rayshift.analysis.metrics[0].query']);
});

function synth(props: Partial<RoleBasedGroupProps>) {
  const chart = Testing.chart();
  const group = new RoleBasedGroup(chart, 'g', {
    metadata: { name: 'pd', namespace: 'pd' },
    roles: ['prefill', 'decode'].map((name) => ({ name, replicas: 2, template: { spec: { containers: [{ name, image: 'sglang:v1' }] } } })),
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%' } }],
    ...props,
  });
  return { group, synth: () => Testing.synth(chart) };
}

test('the construct carries the analysis in the coordination annotation, which the executor reads back resolved', () => {
  const objects = synth({ executor: 'operator', analysis: good }).synth();
  const annotation = JSON.parse(objects[0].metadata.annotations[COORDINATION_ANNOTATION]);
  expect(annotation.analysis).toEqual(good);
  const reading = readCoordination(objects[0]);
  expect(reading.problem).toBeUndefined();
  expect(reading.analysis).toMatchObject({ onFailure: 'abort', beforeEachStep: true, metrics: [{ name: 'errors', intervalSeconds: 30, count: 1 }] });
});

test('executor rbg cannot wait for a measurement: refused at synthesis, naming analysis', () => {
  expect(() => synth({ executor: 'rbg', analysis: good }).synth()).toThrow(/analysis: is run only by the rayshift executors \(operator, pulumi\)/);
});

test('RBG v0.8 executes every failure action: its rollback writes only partitions its webhook admits (lib/engine/rbg-rollback.ts)', () => {
  const { onFailure: _default, ...rollback } = good;
  for (const analysis of [rollback, { ...good, onFailure: 'pause' as const }, { ...good, onFailure: 'abort' as const }]) {
    expect(() => synth({ executor: 'operator', rbgVersion: 'v0.8', analysis }).synth()).not.toThrow();
  }
});
