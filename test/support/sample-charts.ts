/** Charts that exercise every construct and option shape, shared by the schema and CLI tests. */
import { App, Chart } from 'cdk8s';
import { buildExamples } from '../../examples/main';
import { GitOpsServiceChart } from '../../examples/gitops';
import { Gateway, GatewayClass, HttpRoute, RayClusterSpecBuilder, RayService, RoleBasedGroup, RoleBasedGroupWarmup } from '../../lib';

const cluster = () =>
  new RayClusterSpecBuilder({
    image: 'rayproject/ray:2.52.0',
    head: { resources: { cpu: '1', memory: '2Gi' }, podSpec: { serviceAccountName: 'ray' } },
    workerGroups: [{ groupName: 'small', minReplicas: 1, maxReplicas: 2, resources: { cpu: '2', memory: '2Gi' } }],
  });
const serve = { applications: [{ name: 'fruit', importPath: 'fruit.app:deployment', routePrefix: '/fruit' }] };

/** The examples plus variants: every strategy and executor, both RBG API versions, RBG v0.8 fields, shared Gateway routes. */
export function sampleApp(): App {
  const app = buildExamples(new App({ outdir: '/tmp/rayshift-sample-unused' }));
  new GitOpsServiceChart(app, 'gitops-service', { namespace: 'chat' });
  const chart = new Chart(app, 'variants', { namespace: 'variants' });
  new RayService(chart, 'bluegreen', { metadata: { name: 'bluegreen' }, rayClusterConfig: cluster(), serveConfig: serve, upgradeStrategy: { type: 'NewCluster' }, rayClusterDeletionDelaySeconds: 0 });
  new RayService(chart, 'none', { metadata: { name: 'none' }, rayClusterConfig: cluster(), serveConfig: serve, upgradeStrategy: { type: 'None' }, excludeHeadPodFromServeSvc: true });
  new RayService(chart, 'operated', {
    metadata: { name: 'operated' },
    executor: 'operator',
    rayClusterConfig: cluster(),
    serveConfig: serve,
    upgradeStrategy: {
      type: 'NewClusterWithIncrementalUpgrade',
      clusterUpgradeOptions: { maxSurgePercent: 25, stepSizePercent: 5, intervalSeconds: 10, gatewayClassName: 'traefik' },
    },
    rayshift: { gatewayRef: { name: 'shared', namespace: 'gateways', sectionName: 'http' }, progressDeadlineSeconds: 300, paused: false, routeKind: 'HTTP' },
  });
  const cls = new GatewayClass(chart, 'class', { metadata: { name: 'traefik' }, controllerName: 'traefik.io/gateway-controller', description: 'Traefik' });
  const gw = new Gateway(chart, 'shared', {
    metadata: { name: 'shared' },
    gatewayClass: cls,
    listeners: [
      { name: 'http', protocol: 'HTTP', port: 80, allowedRoutes: { namespaces: { from: 'All' } } },
      { name: 'grpc', protocol: 'HTTP', port: 9000, hostname: 'grpc.example.com' },
    ],
  });
  new HttpRoute(chart, 'route', {
    metadata: { name: 'fruit' },
    parents: [gw, { name: 'other', namespace: 'gateways', sectionName: 'http', port: 80 }],
    hostnames: ['fruit.example.com'],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/fruit' }, headers: [{ name: 'x-canary', value: 'yes' }], method: 'POST' }],
        filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'x-via', value: 'rayshift' }] } }],
        backendRefs: [
          { name: 'blue-serve-svc', port: 8000, weight: 90 },
          { name: 'green-serve-svc', port: 8000, weight: 10 },
        ],
      },
    ],
  });
  const template = { spec: { containers: [{ name: 'engine', image: 'lmsysorg/sglang:v0.5.5' }] } };
  new RoleBasedGroup(chart, 'legacy', {
    metadata: { name: 'legacy' },
    version: 'v1alpha1',
    roles: [
      { name: 'prefill', replicas: 7, template },
      { name: 'decode', replicas: 3, template, leaderWorkerSize: 2 },
      { name: 'router', replicas: 1, template, dependencies: ['prefill', 'decode'], rollingUpdate: { maxUnavailable: 1, partition: 0 } },
    ],
    coordination: [
      { name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '1%', maxUnavailable: '10%', partition: '0%' }, scaling: { maxSkew: '10%', progression: 'OrderReady' } },
    ],
  });
  new RoleBasedGroup(chart, 'lws', {
    metadata: { name: 'lws' },
    roles: [
      { name: 'prefill', replicas: 4, template, leaderWorkerSize: 2, labels: { tier: 'gpu' }, annotations: { note: 'x' } },
      { name: 'decode', replicas: 2, template },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '5%', maxUnavailable: 2, partition: 1 } }],
  });
  // RBG v0.8 fields, valid against v0.8.0-alpha.5 only: the namespace tells the schema test.
  const v08 = new Chart(app, 'rbg-v08', { namespace: RBG_V08_NAMESPACE });
  new RoleBasedGroup(v08, 'pd-v08', {
    metadata: { name: 'pd-v08' },
    rbgVersion: 'v0.8',
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: 4, template, leaderWorkerSize: 2, restartPolicyConfig: { type: 'RecreateRoleInstanceOnPodRestart', baseDelaySeconds: 10, maxDelaySeconds: 300 } },
      { name: 'decode', replicas: 2, template, leaderWorkerSize: 2, restartPolicyConfig: { type: 'None' } },
      { name: 'router', replicas: 2, template, workload: 'RoleInstanceSet', rollingUpdate: { maxUnavailable: 0, maxSurge: 1, partition: 1 } },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%', maxUnavailable: 1 }, progressDeadlineSeconds: 300 }],
  });
  new RoleBasedGroup(v08, 'legacy-v08', {
    metadata: { name: 'legacy-v08' },
    version: 'v1alpha1',
    rbgVersion: 'v0.8',
    roles: [
      { name: 'prefill', replicas: 2, template },
      { name: 'decode', replicas: 2, template, leaderWorkerSize: 2 },
    ],
  });
  // RBG v0.8's RoleBasedGroupWarmup: the child of a group whose rollout RBG runs, and one on nodes.
  new RoleBasedGroup(v08, 'warm-v08', {
    metadata: { name: 'warm-v08' },
    rbgVersion: 'v0.8',
    roles: [
      { name: 'prefill', replicas: 2, template },
      { name: 'decode', replicas: 2, template },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%' } }],
    warmup: { parallelism: 4, pullSecrets: ['regcred'], tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] },
  });
  new RoleBasedGroupWarmup(v08, 'gpu-nodes', {
    metadata: { name: 'gpu-nodes' },
    nodes: { selector: { pool: 'gpu' }, actions: { imagePreload: { images: ['lmsysorg/sglang:v0.5.5'] }, customizedAction: { containers: [{ name: 'model', image: 'busybox:1.36', command: ['sh', '-c', 'true'] }] } } },
    policies: { parallelism: 2, backoffLimitPerNode: 1, maxFailedNodes: 1, globalTimeoutSeconds: 600, ttlSecondsAfterFinished: 3600 },
    paused: false,
  });
  return app;
}

/** Namespace of the sample objects that use RBG v0.8 fields (valid against v0.8.0-alpha.5 only). */
export const RBG_V08_NAMESPACE = 'rbg-v08';

/** Every manifest of the sample app. */
export function sampleManifests(): { [key: string]: unknown }[] {
  return sampleApp()
    .charts.flatMap((c) => c.toJson())
    .filter((m): m is { [key: string]: unknown } => typeof m === 'object' && m !== null);
}
