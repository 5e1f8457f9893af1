/**
 * KubeRay v1.7.0 `ray-operator/controllers/ray/utils/validation_test.go`, part 1: the RayService
 * validators and the RayCluster-spec rules on containers, worker counts, resources, labels,
 * token authentication and the cluster's own upgrade strategy. Each row ports one case of the
 * Go test it names (same inputs, KubeRay's expected outcome).
 */
import { INITIALIZING_TIMEOUT_ANNOTATION } from '../../lib/spec';
import { DIFFERENCES } from './ledger';
import { cluster, pod, podOf, service, worker, type ValidationCase } from './kuberay-manifests';

const INCREMENTAL = 'NewClusterWithIncrementalUpgrade';
const TIMEOUT_PATH = `metadata.annotations["${INITIALIZING_TIMEOUT_ANNOTATION}"]`;

/** TestValidateClusterUpgradeOptions: options as given, autoscaler on or off, on `createBasicRayClusterSpec()`. */
function upgradeOptions(o: { maxSurgePercent?: number; stepSizePercent?: number; intervalSeconds?: number; gatewayClassName?: string }, autoscaling: boolean): unknown {
  const set = Object.keys(o).length > 0;
  return service({
    rayClusterConfig: cluster({ enableInTreeAutoscaling: autoscaling }),
    upgradeStrategy: set ? { type: INCREMENTAL, clusterUpgradeOptions: o } : { type: INCREMENTAL },
  });
}

/** TestValidateRayClusterSpecRayVersionForAuth: mode token, enableK8sTokenAuth as given. */
function versionForAuth(rayVersion: string, enableK8sTokenAuth: boolean): unknown {
  return { rayVersion, headGroupSpec: { template: pod() }, authOptions: { mode: 'token', enableK8sTokenAuth } };
}

/** TestValidateRayClusterSpec_Auth: Ray 2.55.0, one worker group of 1. */
function auth(authOptions: object): unknown {
  return { rayVersion: '2.55.0', authOptions, headGroupSpec: { template: pod() }, workerGroupSpecs: [worker('worker-group', pod(), { minReplicas: 1, maxReplicas: 1 })] };
}

/** TestValidateRayClusterSpec_WorkerGroupReplicaValidation: autoscaler off unless `autoscaling`. */
function replicas(group: Record<string, unknown>, autoscaling = false): unknown {
  return { enableInTreeAutoscaling: autoscaling, headGroupSpec: { template: pod() }, workerGroupSpecs: [worker('worker-group-3', pod(), group)] };
}

/** TestValidateRayClusterSpec_Resources / _Labels: `createSpec()` with one worker group of 0–5, changed by `edit`. */
function groups(edit: (head: Record<string, unknown>, group: Record<string, unknown>) => void): unknown {
  const head: Record<string, unknown> = { template: pod() };
  const group: Record<string, unknown> = worker('worker-group', pod(), { minReplicas: 0, maxReplicas: 5 });
  edit(head, group);
  return { headGroupSpec: head, workerGroupSpecs: [group] };
}

const { workerGroups, passedThrough } = DIFFERENCES;

/** The cases, in the Go file's order. */
export const KUBERAY_SERVICE_CASES: readonly ValidationCase[] = [
  // TestValidateRayServiceSpec
  ...([
    ['spec.rayClusterConfig.headGroupSpec.headService.metadata.name should not be set', { rayClusterConfig: { headGroupSpec: { headService: { metadata: { name: 'my-head-service' } } } } }, 'rejected', 'spec.rayClusterConfig.headGroupSpec.headService.metadata.name'],
    ['The RayService spec is valid.', { rayClusterConfig: cluster() }, 'accepted'],
    ['spec.UpgradeSpec.Type is invalid', { rayClusterConfig: cluster(), upgradeStrategy: { type: 'invalidStrategy' } }, 'rejected', 'spec.upgradeStrategy.type'],
    ['headGroupSpec should have at least one container', {}, 'rejected', 'spec.rayClusterConfig'],
    ['Spec.RayClusterDeletionDelaySeconds is negative', { rayClusterConfig: cluster(), rayClusterDeletionDelaySeconds: -1 }, 'rejected', 'spec.rayClusterDeletionDelaySeconds'],
    ['RayService does not support K8s token auth mode', { rayClusterConfig: { authOptions: { mode: 'token', enableK8sTokenAuth: true } } }, 'rejected', 'spec.rayClusterConfig.authOptions.enableK8sTokenAuth', ['not supported for RayService']],
  ] as const).map(([name, spec, upstream, path, words]): ValidationCase => ({ test: 'TestValidateRayServiceSpec', name, service: service(spec), upstream, path, words })),

  // TestValidateRayServiceMetadata (MaxRayServiceNameLength = 47; then the ray.io/initializing-timeout annotation)
  ...([
    ['name of MaxRayServiceNameLength+1 characters', { name: 'j'.repeat(48) }, 'rejected', 'metadata.name', ['48 characters', 'at most 47']],
    ['name of MaxRayServiceNameLength digits (not a DNS-1035 label)', { name: '1'.repeat(47) }, 'rejected', 'metadata.name', ['DNS-1035 label']],
    ['name of MaxRayServiceNameLength characters', { name: 'j'.repeat(47) }, 'accepted'],
    ['initializing timeout "5m"', { name: 'valid-service', annotations: { [INITIALIZING_TIMEOUT_ANNOTATION]: '5m' } }, 'accepted'],
    ['initializing timeout "300"', { name: 'valid-service', annotations: { [INITIALIZING_TIMEOUT_ANNOTATION]: '300' } }, 'accepted'],
    ['initializing timeout "0"', { name: 'invalid-service', annotations: { [INITIALIZING_TIMEOUT_ANNOTATION]: '0' } }, 'rejected', TIMEOUT_PATH, ['must be a positive', 'got "0"']],
    ['initializing timeout "-100"', { name: 'invalid-service', annotations: { [INITIALIZING_TIMEOUT_ANNOTATION]: '-100' } }, 'rejected', TIMEOUT_PATH, ['must be a positive', 'got "-100"']],
    ['initializing timeout "-5m"', { name: 'invalid-service', annotations: { [INITIALIZING_TIMEOUT_ANNOTATION]: '-5m' } }, 'rejected', TIMEOUT_PATH, ['must be a positive duration']],
    ['initializing timeout "invalid"', { name: 'invalid-service', annotations: { [INITIALIZING_TIMEOUT_ANNOTATION]: 'invalid' } }, 'rejected', TIMEOUT_PATH, ['invalid format']],
  ] as const).map(([name, metadata, upstream, path, words]): ValidationCase => ({ test: 'TestValidateRayServiceMetadata', name, service: service({ rayClusterConfig: cluster() }, metadata), upstream, path, words })),

  // TestValidateClusterUpgradeOptions
  ...([
    ['valid config', { maxSurgePercent: 50, stepSizePercent: 50, intervalSeconds: 10, gatewayClassName: 'istio' }, true, 'accepted'],
    ['missing autoscaler', { maxSurgePercent: 50, stepSizePercent: 50, intervalSeconds: 10, gatewayClassName: 'istio' }, false, 'rejected', 'spec.rayClusterConfig.enableInTreeAutoscaling'],
    ['missing options', {}, true, 'rejected', 'spec.upgradeStrategy.clusterUpgradeOptions'],
    ['invalid MaxSurgePercent', { maxSurgePercent: 200, stepSizePercent: 50, intervalSeconds: 10, gatewayClassName: 'istio' }, true, 'rejected', 'spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent'],
    ['missing StepSizePercent', { maxSurgePercent: 50, intervalSeconds: 10, gatewayClassName: 'istio' }, true, 'rejected', 'spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent'],
    ['invalid StepSizePercent (greater than MaxSurgePercent)', { maxSurgePercent: 50, stepSizePercent: 75, intervalSeconds: 10, gatewayClassName: 'istio' }, true, 'rejected', 'spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent'],
    ['invalid IntervalSeconds', { maxSurgePercent: 50, stepSizePercent: 50, intervalSeconds: 0, gatewayClassName: 'istio' }, true, 'rejected', 'spec.upgradeStrategy.clusterUpgradeOptions.intervalSeconds'],
    ['missing GatewayClassName', { maxSurgePercent: 50, stepSizePercent: 50, intervalSeconds: 10 }, true, 'rejected', 'spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName'],
  ] as const).map(([name, options, autoscaling, upstream, path]): ValidationCase => ({ test: 'TestValidateClusterUpgradeOptions', name, service: upgradeOptions(options, autoscaling), upstream, path })),

  // TestValidateRayClusterSpecRayVersionForAuth (KubeRay's messages name no path; rayshift's name rayVersion)
  ...([
    ['Valid Ray version 2.52.0', '2.52.0', false, 'accepted'],
    ['Invalid Ray version 2.52.0 with k8s token auth', '2.52.0', true, 'rejected', ['"2.52.0" is too old', '2.55.0']],
    ['Valid Ray version 2.55.0 with k8s token auth', '2.55.0', true, 'accepted'],
    ['Valid Ray version 3.0.0', '3.0.0', false, 'accepted'],
    ['Valid Ray version 3.0.0 with k8s token auth', '3.0.0', true, 'accepted'],
    ['Invalid Ray version 2.50.0', '2.50.0', false, 'rejected', ['"2.50.0" is too old', '2.52.0 or later']],
    ['Invalid Ray version format', 'invalid-version', false, 'rejected', ['could not parse "invalid-version" as version']],
    ['Empty Ray version', '', false, 'rejected', ['is required when authOptions.mode is "token"', '2.52.0 or later']],
  ] as const).map(([name, version, k8s, upstream, words]): ValidationCase => ({
    test: 'TestValidateRayClusterSpecRayVersionForAuth', name, cluster: versionForAuth(version, k8s), upstream, path: words && 'rayVersion', words,
  })),

  // TestValidateRayClusterUpgradeOptions: only the cases a RayService's cluster can be (created by a RayService, or with no strategy)
  { test: 'TestValidateRayClusterUpgradeOptions', name: 'No upgrade strategy', cluster: { headGroupSpec: { template: podOf([{ name: 'ray-head', image: 'rayproject/ray:latest' }]) } }, upstream: 'accepted' },
  {
    test: 'TestValidateRayClusterUpgradeOptions', name: 'Upgrade strategy set Recreate for RayCluster created by RayService',
    cluster: { upgradeStrategy: { type: 'Recreate' }, headGroupSpec: { template: podOf([{ name: 'ray-head', image: 'rayproject/ray:latest' }]) } },
    upstream: 'rejected', path: 'upgradeStrategy.type', words: ['KubeRay refuses every RayCluster a RayService creates'],
  },

  // TestValidateRayClusterSpec_WorkerGroupReplicaValidation
  ...([
    ['minReplicas greater than maxReplicas', { minReplicas: 5, maxReplicas: 3 }, false, 'rejected', 'workerGroupSpecs[0].maxReplicas'],
    // Agreed since rayshift validates after the CRD's defaulting: a group without `replicas` has 0, below any minReplicas.
    ['replicas smaller than minReplicas when autoscaling disabled', { replicas: 1, minReplicas: 2, maxReplicas: 5 }, false, 'accepted', undefined, undefined],
    ['minReplicas are nil when autoscaling disabled', { maxReplicas: 5 }, false, 'rejected', 'workerGroupSpecs[0].minReplicas'],
    ['maxReplicas are nil when autoscaling disabled', { minReplicas: 1 }, false, 'rejected', 'workerGroupSpecs[0].maxReplicas'],
    ['minReplicas and maxReplicas both are nil when autoscaling disabled', {}, false, 'rejected', 'workerGroupSpecs[0].minReplicas'],
    ['minReplicas is negative', { minReplicas: -1 }, true, 'rejected', 'workerGroupSpecs[0].minReplicas'],
    ['maxReplicas is negative', { maxReplicas: -1 }, true, 'rejected', 'workerGroupSpecs[0].maxReplicas'],
    ['valid when autoscaling enabled', {}, true, 'accepted'],
  ] as const).map(([name, group, autoscaling, upstream, path, difference]): ValidationCase => ({
    test: 'TestValidateRayClusterSpec_WorkerGroupReplicaValidation', name, cluster: replicas(group, autoscaling), upstream, path, difference,
  })),

  // TestValidateRayClusterSpec_Auth
  ...([
    ['enableK8sTokenAuth=true and secretName set', { mode: 'token', enableK8sTokenAuth: true, secretName: 'my-secret' }, 'rejected', 'authOptions.secretName'],
    ['enableK8sTokenAuth=true and secretName unset', { mode: 'token', enableK8sTokenAuth: true }, 'accepted'],
    ['enableK8sTokenAuth=false and secretName set', { mode: 'token', secretName: 'my-secret' }, 'accepted'],
  ] as const).map(([name, options, upstream, path]): ValidationCase => ({ test: 'TestValidateRayClusterSpec_Auth', name, cluster: auth(options), upstream, path })),

  // TestValidateRayClusterSpecEmptyContainers (its worker group has no groupName)
  { test: 'TestValidateRayClusterSpecEmptyContainers', name: 'headGroupSpec has no containers', cluster: { headGroupSpec: { template: podOf([]) } }, upstream: 'rejected', path: 'headGroupSpec.template.spec.containers' },
  {
    test: 'TestValidateRayClusterSpecEmptyContainers', name: 'workerGroupSpec has no containers',
    cluster: cluster({ workerGroupSpecs: [worker(undefined, podOf([]), { minReplicas: 0, maxReplicas: 5 })] }), upstream: 'rejected', path: 'workerGroupSpecs[0].template.spec.containers',
  },
  {
    test: 'TestValidateRayClusterSpecEmptyContainers', name: 'valid cluster with containers in both head and worker groups',
    cluster: cluster({ workerGroupSpecs: [worker(undefined, pod(), { minReplicas: 0, maxReplicas: 5 })] }), upstream: 'accepted', difference: workerGroups,
  },

  // TestValidateRayClusterSpec_Resources
  { test: 'TestValidateRayClusterSpec_Resources', name: 'Invalid: Head group has resources in both rayStartParams and top-level Resources', cluster: groups((h) => Object.assign(h, { rayStartParams: { 'num-cpus': '1' }, resources: { CPU: '1' } })), upstream: 'rejected', difference: passedThrough },
  { test: 'TestValidateRayClusterSpec_Resources', name: 'Invalid: Worker group has resources in both rayStartParams and .Resources', cluster: groups((_, g) => Object.assign(g, { rayStartParams: { 'num-gpus': '1' }, resources: { GPU: '1' } })), upstream: 'rejected', difference: passedThrough },
  { test: 'TestValidateRayClusterSpec_Resources', name: 'Valid: Only rayStartParams resources are set for head', cluster: groups((h) => Object.assign(h, { rayStartParams: { 'num-cpus': '2', memory: '4G', resources: '{"TPU": "8"}' } })), upstream: 'accepted' },
  { test: 'TestValidateRayClusterSpec_Resources', name: 'Valid: Only .Resources field is set for worker', cluster: groups((_, g) => Object.assign(g, { resources: { CPU: '2', memory: '4G', TPU: '8' } })), upstream: 'accepted' },

  // TestValidateRayClusterSpec_Labels
  { test: 'TestValidateRayClusterSpec_Labels', name: "Invalid: Head group has 'labels' in rayStartParams", cluster: groups((h) => Object.assign(h, { rayStartParams: { labels: 'ray.io/node-group=worker-group-1' } })), upstream: 'rejected', difference: passedThrough },
  { test: 'TestValidateRayClusterSpec_Labels', name: "Invalid: Worker group has 'labels' in rayStartParams", cluster: groups((_, g) => Object.assign(g, { rayStartParams: { labels: 'ray.io/node-group=worker-group-1' } })), upstream: 'rejected', difference: passedThrough },
  {
    test: 'TestValidateRayClusterSpec_Labels', name: 'Valid: Only .Labels field is set',
    cluster: groups((h, g) => { h.labels = { 'ray.io/market-type': 'on-demand' }; g.labels = { 'ray.io/accelerator-type': 'TPU-V6E' }; }), upstream: 'accepted',
  },
  { test: 'TestValidateRayClusterSpec_Labels', name: 'Invalid: Label key does not follow Kubernetes syntax', cluster: groups((_, g) => Object.assign(g, { labels: { 'invalid_key!': 'value' } })), upstream: 'rejected', difference: passedThrough },
  { test: 'TestValidateRayClusterSpec_Labels', name: 'Invalid: Label value does not follow Kubernetes syntax', cluster: groups((h) => Object.assign(h, { labels: { 'valid-key': 'invalid/value' } })), upstream: 'rejected', difference: passedThrough },
];
