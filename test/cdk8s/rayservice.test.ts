import { ApiObject, Chart, JsonPatch, Testing } from 'cdk8s';
import { parse } from 'yaml';
import { Gateway, HttpRoute, RayClusterSpecBuilder, RayClusterSpecBuilderProps, RayService, RayServiceProps } from '../../lib/cdk8s';
import { RayServiceUpgradeStrategy, ServeConfig, validateRayService } from '../../lib/spec';
import { captureStderr, single, synthError } from './helpers';

const SERVE: ServeConfig = { applications: [{ name: 'llm', importPath: 'ray.serve.llm:build_openai_app', routePrefix: '/' }] };
const OPTS = 'spec.upgradeStrategy.clusterUpgradeOptions';

const INCREMENTAL: RayServiceUpgradeStrategy = {
  type: 'NewClusterWithIncrementalUpgrade',
  clusterUpgradeOptions: { maxSurgePercent: 25, stepSizePercent: 5, intervalSeconds: 30, gatewayClassName: 'istio' },
};

/** 8 workers × 1 GPU (so the smallest safe surge is 13%), autoscaler off unless the strategy needs it. */
function builder(extra: Partial<RayClusterSpecBuilderProps> = {}): RayClusterSpecBuilder {
  return new RayClusterSpecBuilder({
    image: 'rayproject/ray:2.52.0-py311-gpu',
    rayVersion: '2.52.0',
    head: { resources: { cpu: '2', memory: '8Gi' } },
    workerGroups: [{ groupName: 'gpu', minReplicas: 1, maxReplicas: 8, resources: { cpu: '8', memory: '64Gi', accelerators: 1 } }],
    enableAutoscaler: false,
    ...extra,
  });
}

function service(chart: Chart, props: Partial<RayServiceProps> = {}, id = 'llm'): RayService {
  return new RayService(chart, id, {
    metadata: { name: 'llm' },
    rayClusterConfig: builder(),
    serveConfig: SERVE,
    upgradeStrategy: INCREMENTAL,
    ...props,
  });
}

function namespacedChart(namespace = 'serving'): Chart {
  return new Chart(Testing.app(), 'test', { namespace });
}

describe('RayService construct', () => {
  test('synthesizes a ray.io/v1 RayService by default, with the Serve config as YAML', () => {
    const chart = namespacedChart();
    service(chart);
    const { result: manifests, stderr } = captureStderr(() => Testing.synth(chart));
    expect(stderr).toBe('');
    expect(manifests).toHaveLength(1);
    const rs = single(manifests, 'RayService');
    expect(rs.apiVersion).toBe('ray.io/v1');
    expect(rs.metadata).toEqual({ name: 'llm', namespace: 'serving' });
    expect(typeof rs.spec.serveConfigV2).toBe('string');
    expect(parse(rs.spec.serveConfigV2)).toEqual({ applications: [{ name: 'llm', route_prefix: '/', import_path: 'ray.serve.llm:build_openai_app' }] });
    expect(rs.spec.upgradeStrategy).toEqual(INCREMENTAL);
    expect(rs.spec.rayshift).toBeUndefined();
    // the synthesized manifest passes the model's validator unchanged
    expect(validateRayService(rs)).toEqual({ errors: [], warnings: [] });
  });

  test('executor "operator" synthesizes rayshift.dev/v1alpha1 with the rayshift extensions', () => {
    const chart = namespacedChart();
    const rayshift = { gatewayRef: { name: 'shared', namespace: 'gateways' }, progressDeadlineSeconds: 900, routeKind: 'GRPC' as const };
    const rs = service(chart, { executor: 'operator', rayshift });
    expect(rs.executor).toBe('operator');
    const m = single(Testing.synth(chart), 'RayService');
    expect(m.apiVersion).toBe('rayshift.dev/v1alpha1');
    expect(m.spec.rayshift).toEqual(rayshift);
    expect(m.spec.upgradeStrategy).toEqual(INCREMENTAL);
  });

  test('a string serveConfig is passed through unchanged', () => {
    const chart = namespacedChart();
    const yaml = 'applications:\n  - name: llm\n    import_path: app.main:app\n';
    service(chart, { serveConfig: yaml });
    expect(single(Testing.synth(chart), 'RayService').spec.serveConfigV2).toBe(yaml);
  });

  test('a typed serveConfig is written in Ray’s names; httpDisabled writes route_prefix: null, and with a routePrefix fails naming the prop', () => {
    const chart = namespacedChart();
    service(chart, { serveConfig: { applications: [{ name: 'embed', importPath: 'embed.app:app', httpDisabled: true }] } });
    expect(parse(single(Testing.synth(chart), 'RayService').spec.serveConfigV2)).toEqual({ applications: [{ name: 'embed', route_prefix: null, import_path: 'embed.app:app' }] });

    const bad = namespacedChart();
    service(bad, { serveConfig: { applications: [{ name: 'embed', importPath: 'embed.app:app', httpDisabled: true, routePrefix: '/e' }] } });
    expect(synthError(bad)).toContain('RayService/llm: serveConfig.applications[0].routePrefix: must be unset when httpDisabled is true');
  });

  test('without metadata the name is generated, DNS-1035-safe and valid', () => {
    const chart = Testing.chart();
    const rs = new RayService(chart, 'llm', { rayClusterConfig: builder(), serveConfig: SERVE, upgradeStrategy: INCREMENTAL });
    const m = single(Testing.synth(chart), 'RayService');
    expect(m.metadata.name).toBe(rs.name);
    expect(m.metadata.name).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
    expect(rs.findings().errors).toEqual([]);
  });
});

describe('RayClusterSpecBuilder', () => {
  test('turns the autoscaler on for an incremental strategy even when enableAutoscaler is false', () => {
    const chart = namespacedChart();
    service(chart, { rayClusterConfig: builder({ enableAutoscaler: false }) });
    const cluster = single(Testing.synth(chart), 'RayService').spec.rayClusterConfig;
    expect(cluster.enableInTreeAutoscaling).toBe(true);
    expect(cluster.autoscalerOptions).toEqual({ upscalingMode: 'Default', idleTimeoutSeconds: 60 });
  });

  test('leaves the autoscaler off for blue/green when enableAutoscaler is false', () => {
    const chart = namespacedChart();
    service(chart, { upgradeStrategy: { type: 'NewCluster' } });
    const cluster = single(Testing.synth(chart), 'RayService').spec.rayClusterConfig;
    expect(cluster.enableInTreeAutoscaling).toBe(false);
    expect(cluster.autoscalerOptions).toBeUndefined();
  });

  test('build(): ports, GPUs, replicas and pod-spec extras', () => {
    const spec = builder({ serveGrpcPort: 9000, workerGroups: [{ groupName: 'gpu', minReplicas: 2, maxReplicas: 4, resources: { cpu: '8', memory: '64Gi', accelerators: 2 }, podSpec: { serviceAccountName: 'ray' } }] }).toRayClusterConfig();
    const head = spec.headGroupSpec.template.spec.containers[0] as any;
    expect(head.ports).toEqual(expect.arrayContaining([{ name: 'serve', containerPort: 8000 }, { name: 'serve-grpc', containerPort: 9000 }, { name: 'dashboard', containerPort: 8265 }]));
    expect(spec.headGroupSpec.rayStartParams).toEqual({ 'num-cpus': '0' });
    const worker = spec.workerGroupSpecs![0];
    expect(worker.replicas).toBe(2);
    expect(worker.template.spec.serviceAccountName).toBe('ray');
    expect((worker.template.spec.containers[0] as any).resources.limits['nvidia.com/gpu']).toBe('2');
    expect(worker.template.spec.containers).toHaveLength(1);
  });
});

describe('validation at synthesis', () => {
  test('invalid options make synth throw, listing every error in one message', () => {
    const chart = namespacedChart();
    service(chart, {
      rayClusterDeletionDelaySeconds: -5,
      upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { maxSurgePercent: 0, stepSizePercent: 150, intervalSeconds: 0, gatewayClassName: 'Bad_Class' } },
    });
    const message = synthError(chart);
    for (const path of [
      `${OPTS}.maxSurgePercent`,
      `${OPTS}.stepSizePercent`,
      `${OPTS}.intervalSeconds`,
      `${OPTS}.gatewayClassName`,
      'spec.rayClusterDeletionDelaySeconds',
    ]) {
      expect(message).toContain(`RayService/llm: ${path}: `);
    }
    expect(message).toContain('stall forever');
  });

  test('a raw cluster spec without the autoscaler is rejected for incremental upgrades', () => {
    const chart = namespacedChart();
    service(chart, { rayClusterConfig: builder().toRayClusterConfig(false) });
    expect(synthError(chart)).toContain('RayService/llm: spec.rayClusterConfig.enableInTreeAutoscaling: must be true');
  });

  test('errors of several constructs are reported together', () => {
    const chart = namespacedChart();
    service(chart, { metadata: { name: 'Bad_Name' } }, 'a');
    service(chart, { metadata: { name: 'b' }, rayshift: { paused: true } }, 'b');
    const message = synthError(chart);
    expect(message).toContain('RayService/Bad_Name: metadata.name');
    expect(message).toContain('RayService/b: spec.rayshift: rayshift extensions need apiVersion rayshift.dev/v1alpha1');
  });

  test('warnings go to stderr and synthesis succeeds', () => {
    const chart = namespacedChart();
    service(chart, {
      upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { maxSurgePercent: 10, stepSizePercent: 3, intervalSeconds: 30, gatewayClassName: 'istio' } },
    });
    const { result, stderr } = captureStderr(() => Testing.synth(chart));
    expect(single(result, 'RayService').spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent).toBe(10);
    expect(stderr).toContain(`warning: RayService/llm: ${OPTS}.maxSurgePercent: 10 is below 13`);
    expect(stderr).toContain(`warning: RayService/llm: ${OPTS}.stepSizePercent: 3 does not divide maxSurgePercent 10`);
  });

  test('without serveConfig (KubeRay admits it) synthesis warns and writes no serveConfigV2', () => {
    const chart = namespacedChart();
    service(chart, { serveConfig: undefined });
    const { result, stderr } = captureStderr(() => Testing.synth(chart));
    expect(single(result, 'RayService').spec).not.toHaveProperty('serveConfigV2');
    expect(stderr).toContain('warning: RayService/llm: spec.serveConfigV2: is unset');
  });
});

describe("KubeRay's own Gateway and HTTPRoute names", () => {
  test('a Gateway named <name>-gateway in the same namespace fails synthesis', () => {
    const chart = namespacedChart();
    service(chart);
    new Gateway(chart, 'gw', { metadata: { name: 'llm-gateway' }, gatewayClass: 'istio' });
    const message = synthError(chart);
    expect(message).toContain('RayService/llm: Gateway/llm-gateway collides with the Gateway KubeRay creates for this incremental upgrade');
    expect(message).toContain('executor "operator" with rayshift.gatewayRef');
  });

  test('an HTTPRoute named <name>-httproute in the same namespace fails synthesis; both are listed together', () => {
    const chart = namespacedChart();
    service(chart);
    new Gateway(chart, 'gw', { metadata: { name: 'llm-gateway' }, gatewayClass: 'istio' });
    new HttpRoute(chart, 'route', { metadata: { name: 'llm-httproute' }, parents: [{ name: 'x' }], rules: [{ backendRefs: [{ name: 'svc', port: 8000 }] }] });
    const message = synthError(chart);
    expect(message).toContain('HTTPRoute/llm-httproute collides with the HTTPRoute KubeRay creates');
    expect(message).toContain('Gateway/llm-gateway collides');
  });

  test('a colliding Gateway in another chart of the same app and namespace fails synthesis too', () => {
    const app = Testing.app();
    const first = new Chart(app, 'services', { namespace: 'serving' });
    service(first);
    const second = new Chart(app, 'gateways', { namespace: 'serving' });
    new Gateway(second, 'gw', { metadata: { name: 'llm-gateway' }, gatewayClass: 'istio' });
    expect(() => app.synth()).toThrow(/Gateway\/llm-gateway collides with the Gateway KubeRay creates/);
  });

  test('the same names in another namespace pass', () => {
    const chart = namespacedChart();
    service(chart);
    new Gateway(chart, 'gw', { metadata: { name: 'llm-gateway', namespace: 'gateways' }, gatewayClass: 'istio' });
    new HttpRoute(chart, 'route', { metadata: { name: 'llm-httproute', namespace: 'gateways' }, parents: [{ name: 'x' }], rules: [{ backendRefs: [{ name: 'svc', port: 8000 }] }] });
    expect(Testing.synth(chart).map((m) => m.kind).sort()).toEqual(['Gateway', 'HTTPRoute', 'RayService']);
  });

  test('the same names with the NewCluster strategy pass', () => {
    const chart = namespacedChart();
    service(chart, { upgradeStrategy: { type: 'NewCluster' } });
    new Gateway(chart, 'gw', { metadata: { name: 'llm-gateway' }, gatewayClass: 'istio' });
    new HttpRoute(chart, 'route', { metadata: { name: 'llm-httproute' }, parents: [{ name: 'x' }], rules: [{ backendRefs: [{ name: 'svc', port: 8000 }] }] });
    expect(Testing.synth(chart)).toHaveLength(3);
  });

  test('the same names with executor "operator" pass (rayshift does not create them under those names for KubeRay)', () => {
    const chart = namespacedChart();
    service(chart, { executor: 'operator' });
    new Gateway(chart, 'gw', { metadata: { name: 'llm-gateway' }, gatewayClass: 'istio' });
    expect(Testing.synth(chart)).toHaveLength(2);
  });

  test('other names in the same namespace pass', () => {
    const chart = namespacedChart();
    service(chart);
    new Gateway(chart, 'gw', { metadata: { name: 'llm-gw' }, gatewayClass: 'istio' });
    expect(Testing.synth(chart)).toHaveLength(2);
  });
});

describe('escape hatch', () => {
  test('ApiObject.of(construct) is the underlying ApiObject, and JSON patches reach the output', () => {
    const chart = namespacedChart();
    const rs = service(chart);
    const obj = ApiObject.of(rs);
    expect(obj).toBe(rs.apiObject);
    expect(obj.kind).toBe('RayService');
    obj.addJsonPatch(JsonPatch.add('/spec/excludeHeadPodFromServeSvc', true));
    obj.metadata.addLabel('team', 'inference');
    const m = single(Testing.synth(chart), 'RayService');
    expect(m.spec.excludeHeadPodFromServeSvc).toBe(true);
    expect(m.metadata.labels).toEqual({ team: 'inference' });
    // the patch does not disturb the rest of the spec
    expect(m.spec.upgradeStrategy).toEqual(INCREMENTAL);
  });
});
