/**
 * The TypeScript apps whose Python twins are test/python/apps/app.py: the same props, written in
 * TypeScript's order (the Python bindings pass struct fields in their own order).
 */
import { App, Chart, YamlOutputType } from 'cdk8s';
import { Gateway, GatewayClass, GrpcRoute, HttpRoute, RayClusterSpecBuilder, RayService, RoleBasedGroup } from '../../lib/cdk8s';
import { PodTemplateJson, RoleSpec } from '../../lib/spec';

function sglang(role: string, gpus: number): PodTemplateJson {
  const limits = gpus > 0 ? { 'nvidia.com/gpu': String(gpus) } : { cpu: '2', memory: '4Gi' };
  return { metadata: { labels: { app: role } }, spec: { containers: [{ name: role, image: 'lmsysorg/sglang:v0.5.5', resources: { limits } }] } };
}

/** `build_app` of app.py. */
export function buildApp(outdir: string): App {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_APP });
  const llm = new Chart(app, 'llm', { namespace: 'serving' });
  new RayService(llm, 'llm', {
    metadata: { name: 'llm' },
    executor: 'operator',
    rayClusterConfig: new RayClusterSpecBuilder({
      image: 'rayproject/ray-llm:2.52.0-py311-cu128',
      rayVersion: '2.52.0',
      head: { resources: { cpu: '4', memory: '16Gi' }, podSpec: { serviceAccountName: 'ray', nodeSelector: { pool: 'cpu' } } },
      workerGroups: [{ groupName: 'gpu', minReplicas: 1, maxReplicas: 8, resources: { cpu: '8', memory: '64Gi', accelerators: 1 } }],
    }),
    serveConfig: {
      applications: [
        {
          name: 'chat',
          importPath: 'ray.serve.llm:build_openai_app',
          routePrefix: '/',
          args: { llm_configs: [{ model_loading_config: { model_id: 'qwen-0.5b', model_source: 'Qwen/Qwen2.5-0.5B-Instruct' } }] },
          deployments: [{ name: 'LLMServer', numReplicas: 'auto', rayActorOptions: { num_gpus: 1 } }],
        },
        { name: 'embed', importPath: 'embedder.app:app', httpDisabled: true },
      ],
      httpOptions: { request_timeout_s: 60 },
    },
    upgradeStrategy: {
      type: 'NewClusterWithIncrementalUpgrade',
      clusterUpgradeOptions: { maxSurgePercent: 20, stepSizePercent: 5, intervalSeconds: 60, gatewayClassName: 'traefik' },
    },
    rayshift: { gatewayRef: { name: 'shared' }, progressDeadlineSeconds: 900 },
  });
  const gwc = new GatewayClass(llm, 'gwc', { metadata: { name: 'traefik' }, controllerName: 'traefik.io/gateway-controller' });
  const gw = new Gateway(llm, 'gw', {
    metadata: { name: 'shared' },
    gatewayClass: gwc,
    listeners: [
      { name: 'http', protocol: 'HTTP', port: 80 },
      { name: 'grpc', protocol: 'HTTP', port: 9000 },
    ],
  });
  new HttpRoute(llm, 'route', {
    metadata: { name: 'chat' },
    parents: [gw],
    hostnames: ['chat.example.com'],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/v1' }, headers: [{ name: 'x-tenant', value: 'a' }] }],
        backendRefs: [
          { name: 'llm-a-serve-svc', port: 8000, weight: 90 },
          { name: 'llm-b-serve-svc', port: 8000, weight: 10 },
        ],
      },
    ],
  });
  new GrpcRoute(llm, 'grpc', {
    metadata: { name: 'embed' },
    parents: [{ name: 'shared', sectionName: 'grpc' }],
    rules: [{ matches: [{ method: { service: 'embedder.Embedder' } }], backendRefs: [{ name: 'llm-a-serve-svc', port: 9000, weight: 100 }] }],
  });

  const pd = new Chart(app, 'pd', { namespace: 'pd' });
  const roles: RoleSpec[] = [
    { name: 'router', replicas: 2, template: sglang('router', 0) },
    { name: 'prefill', replicas: 40, template: sglang('prefill', 1) },
    { name: 'decode', replicas: 20, template: sglang('decode', 1) },
  ];
  new RoleBasedGroup(pd, 'pd', {
    metadata: { name: 'pd-inference' },
    roles,
    coordination: [{ name: 'pd-rollout', roles: ['prefill', 'decode'], rollingUpdate: { partition: '20%', maxUnavailable: '10%', maxSkew: '10%' } }],
  });
  new RoleBasedGroup(pd, 'operated', {
    metadata: { name: 'pd-operated' },
    roles,
    executor: 'operator',
    rbgVersion: 'v0.8',
    coordination: [{ name: 'pd-rollout', roles: ['prefill', 'decode'], rollingUpdate: { maxUnavailable: 2, maxSkew: '10%' }, progressDeadlineSeconds: 600 }],
    warmup: { pullSecrets: ['regcred'], parallelism: 2 },
  });
  return app;
}

/** `build_bad_app` of app.py: every option below is out of range. */
export function buildBadApp(outdir: string): App {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_APP });
  const chart = new Chart(app, 'bad', { namespace: 'serving' });
  new RayService(chart, 'llm', {
    metadata: { name: 'llm' },
    rayClusterConfig: new RayClusterSpecBuilder({
      image: 'rayproject/ray:2.52.0',
      head: { resources: { cpu: '1', memory: '2Gi' } },
      workerGroups: [{ groupName: 'w', maxReplicas: 2, resources: { cpu: '1', memory: '2Gi' } }],
    }),
    serveConfig: { applications: [{ name: 'a', importPath: 'not a path', httpDisabled: true, routePrefix: '/a' }] },
    upgradeStrategy: {
      type: 'NewClusterWithIncrementalUpgrade',
      clusterUpgradeOptions: { maxSurgePercent: 0, stepSizePercent: 150, intervalSeconds: 0, gatewayClassName: 'traefik' },
    },
  });
  new RoleBasedGroup(chart, 'pd', {
    metadata: { name: 'pd' },
    roles: [
      { name: 'prefill', replicas: 2, template: sglang('prefill', 1) },
      { name: 'decode', replicas: 1, template: sglang('decode', 1) },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'missing'], rollingUpdate: { maxSkew: '150%' } }],
  });
  return app;
}
