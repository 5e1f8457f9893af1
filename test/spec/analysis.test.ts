/**
 * The analysis model: every wrong field named at once with its value and the allowed range, the
 * defaults, the templates' queries for one cluster, and the hook into `validateRayService`.
 */
import { ANALYSIS_TEMPLATE_NAMES, renderAnalysisQuery } from '../../lib/spec/analysis-templates';
import { ANALYSIS_DEFAULTS, resolveUpgradeAnalysis, validateUpgradeAnalysis } from '../../lib/spec/analysis';
import { resolveUpgradeOptions, validateRayService } from '../../lib/spec/rayservice';
import { rayService } from './fixtures';

const GOOD = {
  prometheusUrl: 'http://prometheus.monitoring:9090',
  metrics: [{ name: 'errors', template: 'ray-serve-error-ratio', successCondition: { maximum: 0.05 } }],
};

describe('validateUpgradeAnalysis', () => {
  test('a minimal analysis is clean', () => {
    expect(validateUpgradeAnalysis(GOOD)).toEqual({ errors: [], warnings: [] });
  });

  test('every wrong field is named at once, with its value and the allowed range', () => {
    const r = validateUpgradeAnalysis({
      prometheusUrl: 'ftp://p',
      metrics: [
        { name: 'Errors', query: 'x', template: 'ray-serve-error-ratio', successCondition: {}, intervalSeconds: 0, count: 0 },
        { name: 'lat', query: 'histogram_quantile(0.9, {{clustr}})', successCondition: { minimum: 2, maximum: 1 }, quantile: 1 },
        { name: 'lat', template: 'nope', successCondition: { maxAboveActive: -1 }, count: 2, consecutiveSuccessLimit: 3 },
      ],
      onFailure: 'explode',
      queryTimeoutSeconds: 301,
      clusterLabel: 'ray.io/cluster',
      holds: [{ weightPercent: 0, seconds: 1.5 }],
      dryRun: 'yes',
    });
    const found = Object.fromEntries(r.errors.map((e) => [e.path, e.message]));
    expect(found).toMatchObject({
      'spec.rayshift.analysis.prometheusUrl': 'must be an http:// or https:// URL; got "ftp://p"',
      'spec.rayshift.analysis.metrics[0].name': expect.stringContaining('got "Errors"'),
      'spec.rayshift.analysis.metrics[0]': 'needs exactly one of query and template; got both',
      'spec.rayshift.analysis.metrics[0].successCondition': expect.stringContaining('needs at least one of maximum, minimum'),
      'spec.rayshift.analysis.metrics[0].intervalSeconds': 'must be an integer from 1 to 2147483647; got 0',
      'spec.rayshift.analysis.metrics[0].count': 'must be an integer from 1 to 1000; got 0',
      'spec.rayshift.analysis.metrics[1].query': expect.stringContaining('unknown placeholder {{clustr}}'),
      'spec.rayshift.analysis.metrics[1].successCondition.minimum': '2 exceeds maximum 1: no value could succeed',
      'spec.rayshift.analysis.metrics[1].quantile': 'must be a number between 0 and 1 (exclusive); got 1',
      'spec.rayshift.analysis.metrics[2].name': '"lat" is used by an earlier metric; names must be unique',
      'spec.rayshift.analysis.metrics[2].template': expect.stringContaining('"nope" is not a template; allowed: ray-serve-error-ratio'),
      'spec.rayshift.analysis.metrics[2].successCondition.maxAboveActive': 'must be a finite number ≥ 0; got -1',
      'spec.rayshift.analysis.metrics[2].consecutiveSuccessLimit': '3 exceeds count 2: a gate could never reach it; must be ≤ count',
      'spec.rayshift.analysis.onFailure': '"explode" is not a failure action; allowed: rollback, abort, pause',
      'spec.rayshift.analysis.queryTimeoutSeconds': 'must be an integer from 1 to 300; got 301',
      'spec.rayshift.analysis.clusterLabel': expect.stringContaining('got "ray.io/cluster"'),
      'spec.rayshift.analysis.holds[0].weightPercent': 'must be an integer from 1 to 100; got 0',
      'spec.rayshift.analysis.holds[0].seconds': 'must be an integer from 1 to 2147483647; got 1.5',
      'spec.rayshift.analysis.dryRun': 'must be true or false; got "yes"',
    });
    expect(r.warnings.map((w) => w.path)).toEqual(['spec.rayshift.analysis.metrics[0].query', 'spec.rayshift.analysis.metrics[1].query']);
  });

  test('credentials in the URL are refused (they would show in status and logs)', () => {
    const r = validateUpgradeAnalysis({ ...GOOD, prometheusUrl: 'http://admin:secret@prometheus:9090' });
    expect(r.errors.map((e) => e.path)).toEqual(['spec.rayshift.analysis.prometheusUrl']);
    expect(r.errors[0].message).not.toContain('secret');
  });

  test('an analysis that never measures is refused, and a failure limit a gate cannot pass warns', () => {
    expect(validateUpgradeAnalysis({ ...GOOD, beforeEachStep: false }).errors.map((e) => e.path)).toEqual(['spec.rayshift.analysis.beforeEachStep']);
    const w = validateUpgradeAnalysis({ ...GOOD, metrics: [{ ...GOOD.metrics[0], count: 2, failureLimit: 2 }] }).warnings;
    expect(w.map((x) => x.message)).toEqual(['2 is not below count 2: a step gate of this metric can never fail (only background analysis can)']);
  });

  test('garbage never throws', () => {
    for (const v of [null, 1, 'x', [], { metrics: 'x' }, { metrics: [null, 1, []] }, { holds: 'x', metrics: [] }]) {
      expect(validateUpgradeAnalysis(v).errors.length).toBeGreaterThan(0);
    }
  });
});

describe('resolveUpgradeAnalysis', () => {
  test('fills every default from ANALYSIS_DEFAULTS; the window follows the interval', () => {
    const r = resolveUpgradeAnalysis({ prometheusUrl: 'http://p:9090', metrics: [{ name: 'e', query: 'q{c="{{cluster}}"}', successCondition: { maximum: 1 }, intervalSeconds: 45 }] });
    expect(r).toEqual({
      prometheusUrl: 'http://p:9090',
      metrics: [{ name: 'e', query: 'q{c="{{cluster}}"}', quantile: 0.99, successCondition: { maximum: 1 }, intervalSeconds: 45, windowSeconds: 45, count: 1, failureLimit: 0, inconclusiveLimit: 0, consecutiveSuccessLimit: 0 }],
      beforeEachStep: ANALYSIS_DEFAULTS.beforeEachStep,
      background: false,
      holds: [],
      onFailure: 'rollback',
      dryRun: false,
      queryTimeoutSeconds: 10,
      clusterLabel: 'ray_io_cluster',
    });
  });
});

describe('templates', () => {
  const ctx = { namespace: 'ml', service: 'llm', cluster: 'llm-x7k2p', backendService: 'llm-x7k2p-serve-svc', windowSeconds: 30, clusterLabel: 'ray_io_cluster' };

  test.each([
    ['ray-serve-error-ratio', '(sum(rate(ray_serve_num_http_error_requests_total{ray_io_cluster="llm-x7k2p",error_code=~"5.."}[30s])) or vector(0)) / sum(rate(ray_serve_num_http_requests_total{ray_io_cluster="llm-x7k2p"}[30s]))'],
    ['ray-serve-latency-ms', 'histogram_quantile(0.9, sum by (le) (rate(ray_serve_http_request_latency_ms_bucket{ray_io_cluster="llm-x7k2p"}[30s])))'],
    ['traefik-error-ratio', '(sum(rate(traefik_service_requests_total{service=~".*llm-x7k2p-serve-svc.*",code=~"5.."}[30s])) or vector(0)) / sum(rate(traefik_service_requests_total{service=~".*llm-x7k2p-serve-svc.*"}[30s]))'],
    ['traefik-latency-ms', '1000 * histogram_quantile(0.9, sum by (le) (rate(traefik_service_request_duration_seconds_bucket{service=~".*llm-x7k2p-serve-svc.*"}[30s])))'],
    ['envoy-error-ratio', '(sum(rate(envoy_cluster_upstream_rq_xx{envoy_cluster_name=~".*llm-x7k2p-serve-svc.*",envoy_response_code_class="5"}[30s])) or vector(0)) / sum(rate(envoy_cluster_upstream_rq_xx{envoy_cluster_name=~".*llm-x7k2p-serve-svc.*"}[30s]))'],
    ['envoy-latency-ms', 'histogram_quantile(0.9, sum by (le) (rate(envoy_cluster_upstream_rq_time_bucket{envoy_cluster_name=~".*llm-x7k2p-serve-svc.*"}[30s])))'],
  ])('%s', (template, query) => {
    expect(renderAnalysisQuery({ template: template as never, quantile: 0.9 }, ctx)).toBe(query);
  });

  test('every template is covered above, and a custom query gets its placeholders', () => {
    expect(ANALYSIS_TEMPLATE_NAMES).toHaveLength(6);
    expect(renderAnalysisQuery({ query: 'up{namespace="{{namespace}}", svc="{{ service }}", cluster="{{cluster}}"}[{{window}}]' }, ctx)).toBe('up{namespace="ml", svc="llm", cluster="llm-x7k2p"}[30s]');
  });
});

describe('in a RayService', () => {
  function withAnalysis(analysis: unknown, apiVersion = 'rayshift.dev/v1alpha1'): any {
    const m = rayService();
    m.apiVersion = apiVersion;
    m.spec.rayshift = { analysis };
    return m;
  }

  test('its problems carry the spec path, and a clean one resolves into the upgrade options', () => {
    expect(validateRayService(withAnalysis({ ...GOOD, onFailure: 'x' })).errors.map((e) => e.path)).toEqual(['spec.rayshift.analysis.onFailure']);
    const m = withAnalysis(GOOD);
    expect(validateRayService(m).errors).toEqual([]);
    expect(resolveUpgradeOptions(m.spec).analysis?.metrics[0].name).toBe('errors');
  });

  test('it needs the incremental strategy', () => {
    const m = withAnalysis(GOOD);
    m.spec.upgradeStrategy = { type: 'NewCluster' };
    expect(validateRayService(m).errors.map((e) => e.path)).toEqual(['spec.rayshift.analysis']);
  });
});
