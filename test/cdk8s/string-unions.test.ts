/**
 * Every string union of the constructs' props (RayService, RoleBasedGroup and the route match types), given a value outside it as a JavaScript or Python
 * caller can (TypeScript's types do not hold them; `as never` stands for such a caller): synthesis
 * fails naming the prop, the value and every allowed value, and writes nothing.
 */
import { Chart, Testing } from 'cdk8s';
import { GrpcRoute, GrpcRouteRule, HttpRoute, HttpRouteRule, RayService, RayServiceProps, RoleBasedGroup, RoleBasedGroupProps } from '../../lib/cdk8s';
import { PodTemplateJson, RoleSpec } from '../../lib/spec';
import { synthError } from './helpers';

const template = (name: string): PodTemplateJson => ({ spec: { containers: [{ name, image: 'lmsysorg/sglang:v0.5.5' }] } });
const cluster = {
  rayVersion: '2.52.0',
  enableInTreeAutoscaling: true,
  headGroupSpec: { template: template('ray-head') },
  workerGroupSpecs: [{ groupName: 'cpu', minReplicas: 1, maxReplicas: 4, template: template('ray-worker') }],
};
const analysis = { prometheusUrl: 'http://prometheus:9090', metrics: [{ name: 'errors', template: 'ray-serve-error-ratio' as const, successCondition: { maximum: 0.01 } }] };
const incremental = { type: 'NewClusterWithIncrementalUpgrade' as const, clusterUpgradeOptions: { stepSizePercent: 10, intervalSeconds: 30, gatewayClassName: 'istio' } };

function rayService(props: Partial<RayServiceProps>): Chart {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'serving' });
  new RayService(chart, 'llm', {
    metadata: { name: 'llm' },
    rayClusterConfig: cluster,
    serveConfig: { applications: [{ name: 'llm', importPath: 'app:app' }] },
    ...props,
  });
  return chart;
}

const roles: RoleSpec[] = [
  { name: 'prefill', replicas: 4, template: template('prefill') },
  { name: 'decode', replicas: 2, template: template('decode') },
];

function group(props: Partial<RoleBasedGroupProps>): Chart {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'pd' });
  new RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd' }, roles, ...props });
  return chart;
}

const backendRefs = [{ name: 'llm-serve-svc', port: 8000 }];

function httpRoute(matches: HttpRouteRule['matches']): Chart {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'serving' });
  new HttpRoute(chart, 'route', { metadata: { name: 'route' }, parents: [{ name: 'gw' }], rules: [{ backendRefs, matches }] });
  return chart;
}

function grpcRoute(matches: GrpcRouteRule['matches']): Chart {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'serving' });
  new GrpcRoute(chart, 'route', { metadata: { name: 'route' }, parents: [{ name: 'gw' }], rules: [{ backendRefs, matches }] });
  return chart;
}

test('the baselines synthesize: every failure below is the bad value alone', () => {
  expect(() => Testing.synth(rayService({ executor: 'operator', upgradeStrategy: incremental, rayshift: { routeKind: 'GRPC', analysis } }))).not.toThrow();
  expect(() => Testing.synth(group({ executor: 'operator', rbgVersion: 'v0.8', coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%' } }] }))).not.toThrow();
  const header = { type: 'RegularExpression' as const, name: 'x-canary', value: 'y.*' };
  expect(() => Testing.synth(httpRoute([{ path: { type: 'Exact', value: '/v1' }, headers: [header], queryParams: [header] }]))).not.toThrow();
  expect(() => Testing.synth(grpcRoute([{ method: { type: 'RegularExpression', service: 'llm.*' }, headers: [header] }]))).not.toThrow();
});

test.each<[string, () => Chart, string]>([
  ['RayService executor', () => rayService({ executor: 'Operator' as never }), 'RayService/llm: executor: "Operator" is not an executor; allowed: kuberay, operator'],
  ['RayService upgrade strategy', () => rayService({ upgradeStrategy: { type: 'Incremental' as never } }), 'spec.upgradeStrategy.type: "Incremental" is not a strategy; allowed: NewCluster, NewClusterWithIncrementalUpgrade, None'],
  ['RayService route kind', () => rayService({ executor: 'operator', rayshift: { routeKind: 'grpc' as never } }), 'spec.rayshift.routeKind: "grpc" is not a route kind; allowed: HTTP, GRPC'],
  [
    'analysis failure action',
    () => rayService({ executor: 'operator', upgradeStrategy: incremental, rayshift: { analysis: { ...analysis, onFailure: 'Rollback' as never } } }),
    'spec.rayshift.analysis.onFailure: "Rollback" is not a failure action; allowed: rollback, abort, pause',
  ],
  [
    'analysis template',
    () => rayService({ executor: 'operator', upgradeStrategy: incremental, rayshift: { analysis: { ...analysis, metrics: [{ ...analysis.metrics[0], template: 'errors' as never }] } } }),
    'spec.rayshift.analysis.metrics[0].template: "errors" is not a template; allowed: ray-serve-error-ratio, ray-serve-latency-ms, traefik-error-ratio, traefik-latency-ms, envoy-error-ratio, envoy-latency-ms',
  ],
  [
    'Serve proxy location',
    () => rayService({ serveConfig: { applications: [{ importPath: 'app:app' }], proxyLocation: 'everyNode' as never } }),
    'spec.serveConfigV2.proxy_location: "everyNode" is not a proxy location; allowed: EveryNode, HeadOnly, Disabled',
  ],
  [
    'Serve num_replicas',
    () => rayService({ serveConfig: { applications: [{ importPath: 'app:app', deployments: [{ name: 'D', numReplicas: 'Auto' as never }] }] } }),
    'spec.serveConfigV2.applications[0].deployments[0].num_replicas: must be an integer ≥ 0 or "auto"; got "Auto"',
  ],
  [
    'Ray authentication mode',
    () => rayService({ rayClusterConfig: { ...cluster, authOptions: { mode: 'Token' as never } } }),
    'spec.rayClusterConfig.authOptions.mode: "Token" is not an authentication mode; allowed: disabled, token',
  ],
  ['RoleBasedGroup executor', () => group({ executor: 'Operator' as never }), 'RoleBasedGroup/pd: executor: "Operator" is not an executor; allowed: operator, pulumi, rbg'],
  ['RoleBasedGroup version', () => group({ version: 'v1alpha3' as never }), 'RoleBasedGroup/pd: version: "v1alpha3" is not a RoleBasedGroup version; allowed: v1alpha1, v1alpha2'],
  ['RBG release', () => group({ rbgVersion: '0.8' as never }), 'rbgVersion: "0.8" is not an RBG release rayshift checks against; allowed: v0.6, v0.7, v0.8'],
  [
    'role workload kind',
    () => group({ roles: [{ ...roles[0], workload: 'toString' as never }, roles[1]] }),
    'spec.roles[0].workload: "toString" is not a workload kind; allowed: RoleInstanceSet, StatefulSet, Deployment, LeaderWorkerSet',
  ],
  [
    'restart policy type',
    () => group({ rbgVersion: 'v0.8', roles: [{ ...roles[0], leaderWorkerSize: 2, restartPolicyConfig: { type: 'Recreate' as never } }, roles[1]] }),
    'spec.roles[0].restartPolicyConfig.type: "Recreate" is not a restart policy; allowed: None, RecreateRoleInstanceOnPodRestart',
  ],
  [
    'scaling progression',
    () => group({ coordination: [{ name: 'pd', roles: ['prefill', 'decode'], scaling: { progression: 'Ready' as never } }] }),
    'spec.coordination[0].scaling.progression: "Ready" is not a progression; allowed: OrderScheduled, OrderReady',
  ],
  [
    'AffinityScheduling batch mode',
    () => group({ coordination: [{ name: 'pd', roles: ['prefill', 'decode'], affinityScheduling: { ratios: { prefill: 2, decode: 1 }, batchMode: 'sequential' as never } }] }),
    'spec.coordination[0].affinityScheduling.batchMode: "sequential" is not a batch mode; allowed: Sequential, Parallel',
  ],
  [
    'warmup failure action',
    () => group({ executor: 'operator', rbgVersion: 'v0.8', coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: {} }], warmup: { onFailure: 'fail' as never } }),
    'warmup.onFailure: "fail" is not a failure action; allowed: Fail, Proceed',
  ],
  [
    'RoleBasedGroup analysis failure action',
    () =>
      group({
        executor: 'operator',
        coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: {} }],
        analysis: { prometheusUrl: 'http://prometheus:9090', metrics: [{ name: 'errors', query: 'sum(up)', successCondition: { minimum: 1 } }], onFailure: 'Pause' as never },
      }),
    'analysis.onFailure: "Pause" is not a failure action; allowed: rollback, abort, pause',
  ],
  ['HTTP path match type', () => httpRoute([{ path: { type: 'Prefix' as never, value: '/v1' } }]), 'spec.rules[0].matches[0].path.type: "Prefix" is not a path match type; allowed: Exact, PathPrefix, RegularExpression'],
  [
    'HTTP header match type',
    () => httpRoute([{ headers: [{ type: 'exact' as never, name: 'x-canary', value: 'yes' }] }]),
    'spec.rules[0].matches[0].headers[0].type: "exact" is not a match type; allowed: Exact, RegularExpression',
  ],
  [
    'HTTP query parameter match type',
    () => httpRoute([{ queryParams: [{ type: 'Regex' as never, name: 'q', value: 'v' }] }]),
    'spec.rules[0].matches[0].queryParams[0].type: "Regex" is not a match type; allowed: Exact, RegularExpression',
  ],
  ['gRPC method match type', () => grpcRoute([{ method: { type: 'Prefix' as never, service: 'llm.Generator' } }]), 'spec.rules[0].matches[0].method.type: "Prefix" is not a match type; allowed: Exact, RegularExpression'],
  [
    'gRPC header match type',
    () => grpcRoute([{ headers: [{ type: 'PathPrefix' as never, name: 'x-canary', value: 'yes' }] }]),
    'spec.rules[0].matches[0].headers[0].type: "PathPrefix" is not a match type; allowed: Exact, RegularExpression',
  ],
])('%s outside its union fails synthesis, listing the allowed values', (_name, build, message) => {
  expect(synthError(build())).toContain(message);
});

test('an unknown RayService executor is one problem, reported beside the others', () => {
  const error = synthError(rayService({ executor: 'Operator' as never, rayClusterDeletionDelaySeconds: -1 }));
  expect(error.match(/executor: "Operator"/g)).toHaveLength(1);
  expect(error).toContain('spec.rayClusterDeletionDelaySeconds: must be an integer from 0');
});
