/**
 * The model's TypeScript types (and so the jsii and Pulumi schema types built from them) say what
 * its validators accept: props with only the fields a type requires validate, and each required
 * field left out, or a string union's value outside it, is both a type error (`@ts-expect-error`,
 * checked by `tsc -p tsconfig.test.json`) and a validation error naming that field. Rules between
 * fields that a type cannot carry (gatewayClassName unless gatewayRef, one of query and template)
 * are said in the TSDoc and checked last.
 */
import {
  AnalysisMetric,
  BackendReference,
  ClusterUpgradeOptions,
  CoordinationRule,
  GatewayListener,
  ParentReference,
  PodTemplateJson,
  RAYSHIFT_API_VERSION,
  RAY_IO_API_VERSION,
  RayClusterConfig,
  RayServiceSpec,
  RoleSpec,
  ServeConfig,
  UpgradeAnalysis,
  ValidationResult,
  toWireServeConfig,
  validateGateway,
  validateRayService,
  validateRoleBasedGroupModel,
  validateRoute,
  validateServeConfig,
} from '../../lib/spec';
import { errorPaths } from './fixtures';

const TEMPLATE: PodTemplateJson = { spec: { containers: [{ name: 'ray', image: 'rayproject/ray:2.52.0' }] } };
/** Only the required fields, and the autoscaler the incremental strategy needs. */
const CLUSTER: RayClusterConfig = { enableInTreeAutoscaling: true, headGroupSpec: { template: TEMPLATE } };
const OPTIONS: ClusterUpgradeOptions = { stepSizePercent: 10, intervalSeconds: 30, gatewayClassName: 'istio' };
const METRIC: AnalysisMetric = { name: 'errors', template: 'ray-serve-error-ratio', successCondition: { maximum: 0.01 } };
const ANALYSIS: UpgradeAnalysis = { prometheusUrl: 'http://prometheus:9090', metrics: [METRIC] };
const ROLES: RoleSpec[] = [
  { name: 'prefill', template: TEMPLATE },
  { name: 'decode', template: TEMPLATE },
];
const OPTS = 'spec.upgradeStrategy.clusterUpgradeOptions';

function service(spec: RayServiceSpec, apiVersion = RAYSHIFT_API_VERSION): ValidationResult {
  return validateRayService({ apiVersion, kind: 'RayService', metadata: { name: 'llm' }, spec });
}

function serve(config: ServeConfig): ValidationResult {
  return validateServeConfig(toWireServeConfig(config));
}

function route(parentRefs: ParentReference[], backendRefs: BackendReference[]): ValidationResult {
  return validateRoute({ metadata: { name: 'r' }, spec: { parentRefs, rules: [{ backendRefs }] } });
}

function gateway(listeners: GatewayListener[]): ValidationResult {
  return validateGateway({ metadata: { name: 'gw' }, spec: { gatewayClassName: 'istio', listeners } });
}

function groupModel(roles: RoleSpec[], rules: CoordinationRule[] = []): ValidationResult {
  return validateRoleBasedGroupModel(roles, rules, false, 'operator', 'v0.8');
}

describe('props with only the required fields type-check and validate', () => {
  test.each<[string, () => ValidationResult]>([
    ['a RayService spec: rayClusterConfig alone', () => service({ rayClusterConfig: CLUSTER })],
    ['a worker group: groupName and template', () => service({ rayClusterConfig: { ...CLUSTER, workerGroupSpecs: [{ groupName: 'cpu', template: TEMPLATE }] } })],
    ['an upgrade strategy with no field', () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: {} })],
    ['clusterUpgradeOptions: step, interval and class', () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: OPTIONS } }, RAY_IO_API_VERSION)],
    [
      'clusterUpgradeOptions without gatewayClassName, with gatewayRef (the type used to require a dummy class)',
      () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { stepSizePercent: 10, intervalSeconds: 30 } }, rayshift: { gatewayRef: { name: 'shared' } } }),
    ],
    ['rayshift extensions with no field', () => service({ rayClusterConfig: CLUSTER, rayshift: {} })],
    [
      'an analysis: prometheusUrl and metrics of name, template and condition; a hold',
      () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: OPTIONS }, rayshift: { analysis: { ...ANALYSIS, holds: [{ weightPercent: 50, seconds: 60 }] } } }),
    ],
    ['token authentication options with no field', () => service({ rayClusterConfig: { ...CLUSTER, authOptions: {} } })],
    ['a Serve config: applications of importPath alone, deployments of name alone', () => serve({ applications: [{ importPath: 'app:app', deployments: [{ name: 'D' }] }] })],
    ['roles: name and template; a rule: name, roles and an empty rolling update', () => groupModel(ROLES, [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: {} }])],
    ['scaling and AffinityScheduling (ratios alone)', () => groupModel(ROLES, [{ name: 'pd', roles: ['prefill', 'decode'], affinityScheduling: { ratios: { prefill: 1, decode: 1 } } }])],
    ['a leader/worker role with an empty restart policy', () => groupModel([{ name: 'lw', template: TEMPLATE, leaderWorkerSize: 2, restartPolicyConfig: {} }])],
    ['route parents and backends: name (and a Service port)', () => route([{ name: 'shared' }], [{ name: 'svc', port: 8000 }])],
    ['Gateway listeners: name, protocol and port', () => gateway([{ name: 'http', protocol: 'HTTP', port: 80 }])],
  ])('%s', (_name, validate) => {
    expect(validate().errors).toEqual([]);
  });
});

describe('a required field left out is a type error and a validation error naming it', () => {
  test.each<[string, () => ValidationResult, string]>([
    // @ts-expect-error rayClusterConfig is required
    ['RayServiceSpec.rayClusterConfig', () => service({ serveConfigV2: 'applications: []' }), 'spec.rayClusterConfig'],
    // @ts-expect-error headGroupSpec is required
    ['RayClusterConfig.headGroupSpec', () => service({ rayClusterConfig: { enableInTreeAutoscaling: true } }), 'spec.rayClusterConfig.headGroupSpec'],
    // @ts-expect-error template is required
    ['HeadGroupSpec.template', () => service({ rayClusterConfig: { headGroupSpec: {} } }), 'spec.rayClusterConfig.headGroupSpec.template.spec.containers'],
    // @ts-expect-error containers is required
    ['PodTemplateJson.spec.containers', () => service({ rayClusterConfig: { headGroupSpec: { template: { spec: {} } } } }), 'spec.rayClusterConfig.headGroupSpec.template.spec.containers'],
    // @ts-expect-error groupName is required
    ['WorkerGroupSpec.groupName', () => service({ rayClusterConfig: { ...CLUSTER, workerGroupSpecs: [{ template: TEMPLATE }] } }), 'spec.rayClusterConfig.workerGroupSpecs[0].groupName'],
    // @ts-expect-error template is required
    ['WorkerGroupSpec.template', () => service({ rayClusterConfig: { ...CLUSTER, workerGroupSpecs: [{ groupName: 'cpu' }] } }), 'spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers'],
    // @ts-expect-error stepSizePercent is required
    ['ClusterUpgradeOptions.stepSizePercent', () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { intervalSeconds: 30, gatewayClassName: 'istio' } } }), `${OPTS}.stepSizePercent`],
    // @ts-expect-error intervalSeconds is required
    ['ClusterUpgradeOptions.intervalSeconds', () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { stepSizePercent: 10, gatewayClassName: 'istio' } } }), `${OPTS}.intervalSeconds`],
    // @ts-expect-error name is required
    ['GatewayReference.name', () => service({ rayClusterConfig: CLUSTER, rayshift: { gatewayRef: { namespace: 'gateways' } } }), 'spec.rayshift.gatewayRef.name'],
    [
      'UpgradeAnalysis.prometheusUrl',
      // @ts-expect-error prometheusUrl is required
      () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: OPTIONS }, rayshift: { analysis: { metrics: [METRIC] } } }),
      'spec.rayshift.analysis.prometheusUrl',
    ],
    [
      'UpgradeAnalysis.metrics',
      // @ts-expect-error metrics is required
      () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: OPTIONS }, rayshift: { analysis: { prometheusUrl: 'http://prometheus:9090' } } }),
      'spec.rayshift.analysis.metrics',
    ],
    [
      'AnalysisMetric.name',
      // @ts-expect-error name is required
      () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: OPTIONS }, rayshift: { analysis: { ...ANALYSIS, metrics: [{ query: 'up{cluster="{{cluster}}"}', successCondition: { minimum: 1 } }] } } }),
      'spec.rayshift.analysis.metrics[0].name',
    ],
    [
      'AnalysisMetric.successCondition',
      // @ts-expect-error successCondition is required
      () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: OPTIONS }, rayshift: { analysis: { ...ANALYSIS, metrics: [{ name: 'errors', template: 'ray-serve-error-ratio' }] } } }),
      'spec.rayshift.analysis.metrics[0].successCondition',
    ],
    [
      'AnalysisHold.seconds',
      // @ts-expect-error seconds is required
      () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: OPTIONS }, rayshift: { analysis: { ...ANALYSIS, holds: [{ weightPercent: 50 }] } } }),
      'spec.rayshift.analysis.holds[0].seconds',
    ],
    // @ts-expect-error applications is required
    ['ServeConfig.applications', () => serve({}), 'applications'],
    // @ts-expect-error importPath is required
    ['ServeApplicationConfig.importPath', () => serve({ applications: [{ name: 'a' }] }), 'applications[0].import_path'],
    // @ts-expect-error name is required
    ['ServeDeploymentConfig.name', () => serve({ applications: [{ importPath: 'app:app', deployments: [{ numReplicas: 1 }] }] }), 'applications[0].deployments[0].name'],
    // @ts-expect-error name is required
    ['RoleSpec.name', () => groupModel([{ template: TEMPLATE }]), 'spec.roles[0].name'],
    // @ts-expect-error template is required (the validator did not require it before)
    ['RoleSpec.template', () => groupModel([{ name: 'prefill' }]), 'spec.roles[0].template.spec.containers'],
    // @ts-expect-error name is required
    ['CoordinationRule.name', () => groupModel(ROLES, [{ roles: ['prefill', 'decode'], rollingUpdate: {} }]), 'spec.coordination[0].name'],
    // @ts-expect-error roles is required
    ['CoordinationRule.roles', () => groupModel(ROLES, [{ name: 'pd', rollingUpdate: {} }]), 'spec.coordination[0].roles'],
    // @ts-expect-error ratios is required
    ['AffinitySchedulingCoordination.ratios', () => groupModel(ROLES, [{ name: 'pd', roles: ['prefill', 'decode'], affinityScheduling: {} }]), 'spec.coordination[0].affinityScheduling.ratios'],
    // @ts-expect-error name is required
    ['ParentReference.name', () => route([{ namespace: 'gateways' }], [{ name: 'svc', port: 8000 }]), 'spec.parentRefs[0].name'],
    // @ts-expect-error port is required
    ['BackendReference.port', () => route([{ name: 'shared' }], [{ name: 'svc' }]), 'spec.rules[0].backendRefs[0].port'],
    // @ts-expect-error name is required
    ['BackendReference.name', () => route([{ name: 'shared' }], [{ port: 8000 }]), 'spec.rules[0].backendRefs[0].name'],
    // @ts-expect-error port is required
    ['GatewayListener.port', () => gateway([{ name: 'http', protocol: 'HTTP' }]), 'spec.listeners[0].port'],
    // @ts-expect-error protocol is required
    ['GatewayListener.protocol', () => gateway([{ name: 'http', port: 80 }]), 'spec.listeners[0].protocol'],
  ])('%s', (_name, validate, path) => {
    expect(errorPaths(validate())).toContain(path);
  });
});

describe('a string union\'s value outside it is a type error and a validation error naming it', () => {
  test.each<[string, () => ValidationResult, string]>([
    // @ts-expect-error not an UpgradeStrategyType
    ['UpgradeStrategyType', () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'BlueGreen' } }), 'spec.upgradeStrategy.type'],
    // @ts-expect-error not a RouteKind
    ['RouteKind', () => service({ rayClusterConfig: CLUSTER, rayshift: { routeKind: 'TCP' } }), 'spec.rayshift.routeKind'],
    // @ts-expect-error not a CapacityPolicy
    ['CapacityPolicy', () => service({ rayClusterConfig: CLUSTER, rayshift: { capacityPolicy: 'shrinkLater' } }), 'spec.rayshift.capacityPolicy'],
    [
      'AnalysisFailureAction',
      // @ts-expect-error not an AnalysisFailureAction
      () => service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: OPTIONS }, rayshift: { analysis: { ...ANALYSIS, onFailure: 'explode' } } }),
      'spec.rayshift.analysis.onFailure',
    ],
    // @ts-expect-error not a ServeProxyLocation
    ['ServeProxyLocation', () => serve({ applications: [{ importPath: 'app:app' }], proxyLocation: 'All' }), 'proxy_location'],
    // @ts-expect-error numReplicas is a number or "auto"
    ['ServeDeploymentConfig.numReplicas', () => serve({ applications: [{ importPath: 'app:app', deployments: [{ name: 'D', numReplicas: 'many' }] }] }), 'applications[0].deployments[0].num_replicas'],
    // @ts-expect-error not an authentication mode
    ['RayAuthOptions.mode', () => service({ rayClusterConfig: { ...CLUSTER, authOptions: { mode: 'oauth' } } }), 'spec.rayClusterConfig.authOptions.mode'],
    // @ts-expect-error not an RbgWorkloadKind
    ['RbgWorkloadKind', () => groupModel([{ name: 'r', template: TEMPLATE, workload: 'Job' }]), 'spec.roles[0].workload'],
    // @ts-expect-error not a batch mode
    ['AffinitySchedulingCoordination.batchMode', () => groupModel(ROLES, [{ name: 'pd', roles: ['prefill', 'decode'], affinityScheduling: { ratios: { prefill: 1, decode: 1 }, batchMode: 'Serial' } }]), 'spec.coordination[0].affinityScheduling.batchMode'],
    // @ts-expect-error not a progression
    ['ScalingCoordination.progression', () => groupModel(ROLES, [{ name: 'pd', roles: ['prefill', 'decode'], scaling: { progression: 'OrderCreated' } }]), 'spec.coordination[0].scaling.progression'],
    // @ts-expect-error not an RbgExecutor
    ['RbgExecutor', () => validateRoleBasedGroupModel(ROLES, [], false, 'kuberay'), 'executor'],
    // @ts-expect-error not an RbgRelease
    ['RbgRelease', () => validateRoleBasedGroupModel(ROLES, [], false, 'rbg', 'v0.9'), 'rbgVersion'],
  ])('%s', (_name, validate, path) => {
    expect(errorPaths(validate())).toContain(path);
  });
});

describe('rules between fields, which the types leave to the TSDoc and the validator', () => {
  test('gatewayClassName may be left out only with gatewayRef, and only in the rayshift kind', () => {
    const options = { stepSizePercent: 10, intervalSeconds: 30 };
    const spec: RayServiceSpec = { rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: options } };
    expect(errorPaths(service(spec))).toEqual([`${OPTS}.gatewayClassName`]);
    expect(errorPaths(service({ ...spec, rayshift: { gatewayRef: { name: 'shared' } } }))).toEqual([]);
    // KubeRay's CRD requires the class: ray.io/v1 has no gatewayRef (and no rayshift extensions).
    expect(errorPaths(service(spec, RAY_IO_API_VERSION))).toEqual([`${OPTS}.gatewayClassName`]);
  });

  test('a metric needs exactly one of query and template', () => {
    const incremental = (metric: AnalysisMetric) =>
      service({ rayClusterConfig: CLUSTER, upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: OPTIONS }, rayshift: { analysis: { ...ANALYSIS, metrics: [metric] } } });
    expect(errorPaths(incremental({ name: 'm', successCondition: { maximum: 1 } }))).toEqual(['spec.rayshift.analysis.metrics[0]']);
    expect(errorPaths(incremental({ ...METRIC, query: 'up{cluster="{{cluster}}"}' }))).toEqual(['spec.rayshift.analysis.metrics[0]']);
  });
});
