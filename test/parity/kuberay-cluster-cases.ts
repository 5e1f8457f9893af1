/**
 * KubeRay v1.7.0 `ray-operator/controllers/ray/utils/validation_test.go`, part 2: the
 * RayCluster-spec rules on Ray features rayshift passes through unchanged (GCS fault tolerance and
 * Redis, autoscaler options, idle timeouts, priorities, suspension, network policies, TLS, the
 * history server), several behind KubeRay feature gates. Each row ports one case of the Go test
 * it names. `TestValidateNetworkPolicy` and `TestValidateTLSOptions` call their helper on a bare
 * spec; here each case gets the rest of a spec `ValidateRayClusterSpec` accepts (a head and, for
 * worker groups, a template with `minReplicas`/`maxReplicas`), with the feature gate on.
 */
import { DIFFERENCES } from './ledger';
import { cluster, env, pod, podOf, worker, type EnvVar, type ValidationCase } from './kuberay-manifests';

const { passedThrough, featureGated } = DIFFERENCES;
type Outcome = 'accepted' | 'rejected';

/** The difference a case shows: none when KubeRay accepts it (rayshift does too), else `why`. */
const unless = (upstream: Outcome, why: string): string | undefined => (upstream === 'rejected' ? why : undefined);

/** TestValidateRayClusterSpecGcsFaultToleranceOptions and the Redis tests: the head as given, no worker. */
function gcs(options: object | undefined, headEnv?: readonly EnvVar[], rayStartParams?: Record<string, string>): unknown {
  return { ...(options === undefined ? {} : { gcsFaultToleranceOptions: options }), headGroupSpec: { ...(rayStartParams ? { rayStartParams } : {}), template: pod(headEnv) } };
}

const GCS: readonly [string, object | undefined, Record<string, string> | undefined, readonly EnvVar[] | undefined, Outcome][] = [
  ['ray.io/ft-enabled is set to false and GcsFaultToleranceOptions is set', {}, { 'ray.io/ft-enabled': 'false' }, undefined, 'rejected'],
  ['ray.io/ft-enabled is set to true and GcsFaultToleranceOptions is set', {}, { 'ray.io/ft-enabled': 'true' }, undefined, 'rejected'],
  ['ray.io/ft-enabled is not set and GcsFaultToleranceOptions is set', { redisAddress: 'redis:6379' }, undefined, undefined, 'accepted'],
  ['ray.io/ft-enabled is not set and GcsFaultToleranceOptions is not set', undefined, undefined, undefined, 'accepted'],
  ['ray.io/ft-enabled is set to false and RAY_REDIS_ADDRESS is set', undefined, { 'ray.io/ft-enabled': 'false' }, [env('RAY_REDIS_ADDRESS', 'redis:6379')], 'rejected'],
  ['gcsFaultToleranceOptions is set and RAY_REDIS_ADDRESS is set', {}, undefined, [env('RAY_REDIS_ADDRESS', 'redis:6379')], 'rejected'],
  ['FT is disabled and RAY_REDIS_ADDRESS is set', undefined, undefined, [env('RAY_REDIS_ADDRESS', 'redis:6379')], 'rejected'],
  ['ray.io/ft-enabled is set to true and RAY_REDIS_ADDRESS is set', undefined, { 'ray.io/ft-enabled': 'true' }, [env('RAY_REDIS_ADDRESS', 'redis:6379')], 'accepted'],
  ['gcsFaultToleranceOptions is set and ray.io/external-storage-namespace is set', { redisAddress: 'redis:6379' }, { 'ray.io/external-storage-namespace': 'myns' }, undefined, 'rejected'],
  ['redis backend without RedisAddress is accepted', { backend: 'redis' }, undefined, undefined, 'accepted'],
  ['redis backend rejects rocksdb-only storage field', { backend: 'redis', storage: { size: '1Gi' } }, undefined, undefined, 'rejected'],
  ['rocksdb backend is valid with no redis fields', { backend: 'rocksdb' }, undefined, undefined, 'accepted'],
  ['rocksdb backend with operator-managed storage is valid', { backend: 'rocksdb', storage: { size: '2Gi' } }, undefined, undefined, 'accepted'],
  ['rocksdb backend rejects RedisAddress', { backend: 'rocksdb', redisAddress: 'redis:6379' }, undefined, undefined, 'rejected'],
  ['rocksdb backend rejects ExternalStorageNamespace', { backend: 'rocksdb', externalStorageNamespace: 'ns' }, undefined, undefined, 'rejected'],
  ['rocksdb backend rejects claimName combined with size', { backend: 'rocksdb', storage: { claimName: 'my-pvc', size: '1Gi' } }, undefined, undefined, 'rejected'],
  ['rocksdb backend rejects user-set RAY_gcs_storage env', { backend: 'rocksdb' }, undefined, [env('RAY_gcs_storage', 'rocksdb')], 'rejected'],
];

/** TestValidateGcsFaultToleranceEmbeddedReservedVolume: rocksdb backend, head mounts and volumes as given. */
const reserved = (mounts?: object[], volumes?: object[]): unknown => ({ gcsFaultToleranceOptions: { backend: 'rocksdb' }, headGroupSpec: { template: podOf([mounts ? { volumeMounts: mounts } : {}], volumes) } });

/** A worker group of 0–10 with `extra` fields. */
const group10 = (extra: Record<string, unknown> = {}) => worker('worker-group-1', pod(), { minReplicas: 0, maxReplicas: 10, ...extra });
const V2 = { version: 'v2' };

/** TestValidateRayClusterSpec_IdleTimeoutSeconds: `createSpec()` (autoscaler on) with `extra`. */
const idle = (extra: Record<string, unknown>): unknown => ({ enableInTreeAutoscaling: true, headGroupSpec: { template: pod() }, ...extra });
/** TestValidateRayClusterSpec_Priority: `createSpec()` (Ray 2.56.0, autoscaler on) with `extra`. */
const priority = (extra: Record<string, unknown>): unknown => ({ rayVersion: '2.56.0', enableInTreeAutoscaling: true, headGroupSpec: { template: pod() }, ...extra });

/** TestValidateNetworkPolicy: `networkPolicy` on a valid spec with the given worker group names. */
const netpol = (networkPolicy: object | undefined, groupNames: string[] = []): unknown =>
  cluster({ ...(networkPolicy ? { networkPolicy } : {}), workerGroupSpecs: groupNames.map((n) => worker(n, pod(), { minReplicas: 1, maxReplicas: 1 })) });
const rules = { ingressRules: [{}], egressRules: [{}] };

/** A change of TestValidateTLSOptions' `baseSpec()`. */
type TlsEdit = (spec: Record<string, any>) => void;

/** TestValidateTLSOptions: `baseSpec()` (head container ray-head) changed by `edit`. */
function tls(edit: TlsEdit): unknown {
  const spec: Record<string, any> = { headGroupSpec: { template: podOf([{ name: 'ray-head', image: 'rayproject/ray:latest' }]) } };
  edit(spec);
  return spec;
}
const tlsOn = (s: Record<string, any>) => (s.tlsOptions = { enabled: true });
const tlsWorker = (container: object) => [worker('wg', podOf([{ name: 'ray-worker', image: 'rayproject/ray:latest', ...container }]), { minReplicas: 1, maxReplicas: 1 })];

/** TestValidateCollectorOptions: history server with `collector`, the default head unless given. */
const collector = (collectorOptions: object | undefined, extra: Record<string, unknown> = {}): unknown =>
  cluster({ historyServerOptions: collectorOptions === undefined ? {} : { collectorOptions }, ...extra });
const image = 'quay.io/kuberay/collector:latest';
const gcsEnv = [env('STORAGE_BACKEND', 'GCS'), env('GCS_BUCKET', 'my-bucket')];

/** The cases, grouped by Go test in the Go file's order. */
export const KUBERAY_CLUSTER_CASES: readonly ValidationCase[] = [
  ...GCS.map(([name, options, annotations, headEnv, upstream]): ValidationCase => ({
    test: 'TestValidateRayClusterSpecGcsFaultToleranceOptions', name, cluster: gcs(options, headEnv), annotations, upstream, difference: unless(upstream, passedThrough),
  })),
  { test: 'TestValidateRayClusterSpecEmbeddedGCSFeatureGate', name: 'rocksdb backend, GCSFaultToleranceEmbeddedStorage gate off', cluster: gcs({ backend: 'rocksdb' }), upstream: 'rejected', difference: featureGated },
  { test: 'TestValidateRayClusterSpecEmbeddedGCSFeatureGate', name: 'rocksdb backend, GCSFaultToleranceEmbeddedStorage gate on', cluster: gcs({ backend: 'rocksdb' }), upstream: 'accepted' },
  ...([
    ['no reserved volume is valid', reserved(), 'accepted'],
    ['reserved mount path is rejected', reserved([{ name: 'user-vol', mountPath: '/data/gcs' }]), 'rejected'],
    ['reserved volume mount name is rejected', reserved([{ name: 'gcs-storage', mountPath: '/somewhere/else' }]), 'rejected'],
    ['reserved volume name is rejected', reserved(undefined, [{ name: 'gcs-storage' }]), 'rejected'],
  ] as const).map(([name, spec, upstream]): ValidationCase => ({ test: 'TestValidateGcsFaultToleranceEmbeddedReservedVolume', name, cluster: spec, upstream, difference: unless(upstream, passedThrough) })),
  ...([
    ['GcsFaultToleranceOptions is set and `redis-password` is also set in rayStartParams', gcs({}, undefined, { 'redis-password': 'password' }), 'rejected'],
    ['GcsFaultToleranceOptions is set and `REDIS_PASSWORD` env var is also set in the head Pod', gcs({}, [env('REDIS_PASSWORD', 'password')]), 'rejected'],
    ['GcsFaultToleranceOptions.RedisPassword is set', gcs({ redisAddress: 'redis:6379', redisPassword: { value: 'password' } }), 'accepted'],
  ] as const).map(([name, spec, upstream]): ValidationCase => ({ test: 'TestValidateRayClusterSpecRedisPassword', name, cluster: spec, upstream, difference: unless(upstream, passedThrough) })),
  ...([
    ['`redis-username` is set in rayStartParams of the Head Pod', gcs(undefined, undefined, { 'redis-username': 'username' }), 'rejected'],
    ['`REDIS_USERNAME` env var is set in the Head Pod', gcs(undefined, [env('REDIS_USERNAME', 'username')]), 'rejected'],
    ['GcsFaultToleranceOptions.RedisUsername is set', gcs({ redisAddress: 'redis:6379', redisUsername: { value: 'username' } }), 'accepted'],
  ] as const).map(([name, spec, upstream]): ValidationCase => ({ test: 'TestValidateRayClusterSpecRedisUsername', name, cluster: spec, upstream, difference: unless(upstream, passedThrough) })),

  // TestValidateRayClusterSpecSuspendingWorkerGroup (RayJobDeletionPolicy gate off in the first case, on in the others)
  ...([
    ['suspend without autoscaler and the feature gate', {}, 'rejected', featureGated],
    ['suspend without autoscaler', {}, 'accepted'],
    ['suspend with autoscaler', { enableInTreeAutoscaling: true }, 'rejected', passedThrough],
  ] as const).map(([name, extra, upstream, difference]): ValidationCase => ({
    test: 'TestValidateRayClusterSpecSuspendingWorkerGroup', name, cluster: cluster({ ...extra, workerGroupSpecs: [worker('worker-group-1', pod(), { minReplicas: 0, maxReplicas: 5, suspend: true })] }), upstream, difference,
  })),

  // TestValidateRayClusterSpecAutoscaler (RayJobDeletionPolicy gate on)
  ...([
    ['should return error if autoscaler is enabled and any worker group is suspended', { enableInTreeAutoscaling: true, workerGroupSpecs: [worker('worker-group-1', pod(), { suspend: true })] }, 'rejected'],
    ["should return error if RAY_enable_autoscaler_v2 env var is set to '1' when autoscaler is disabled", { enableInTreeAutoscaling: false, headGroupSpec: { template: pod([env('RAY_enable_autoscaler_v2', '1')]) } }, 'rejected'],
    ["should return error if RAY_enable_autoscaler_v2 env var is set to 'true' when autoscaler is disabled", { enableInTreeAutoscaling: false, headGroupSpec: { template: pod([env('RAY_enable_autoscaler_v2', 'true')]) } }, 'rejected'],
    ['should return error if autoscaler v2 is enabled and head Pod has env var RAY_enable_autoscaler_v2', { enableInTreeAutoscaling: true, autoscalerOptions: V2, headGroupSpec: { template: pod([env('RAY_enable_autoscaler_v2', 'true')]) } }, 'rejected'],
    ['should return error if autoscaler v2 is enabled and head Pod has a restartPolicy other than Never or unset', { enableInTreeAutoscaling: true, autoscalerOptions: V2, headGroupSpec: { template: pod(undefined, 'Always') } }, 'rejected'],
    [
      'should not return error if autoscaler v1 is enabled and a worker group has a restartPolicy other than Never or unset (warning only)',
      { enableInTreeAutoscaling: true, autoscalerOptions: { version: 'v1' }, workerGroupSpecs: [worker('worker-group-1', pod(undefined, 'Never')), worker('worker-group-2', pod(undefined, 'Always'))] }, 'accepted',
    ],
    [
      'should not return error if autoscaler v1 is enabled and all worker groups have restartPolicy Never or unset',
      { enableInTreeAutoscaling: true, autoscalerOptions: { version: 'v1' }, workerGroupSpecs: [worker('worker-group-1', pod()), worker('worker-group-2', pod(undefined, 'Never'))] }, 'accepted',
    ],
    [
      'should return error if autoscaler v2 is enabled and a worker group has a restartPolicy other than Never or unset',
      { enableInTreeAutoscaling: true, autoscalerOptions: V2, headGroupSpec: { template: pod(undefined, 'Never') }, workerGroupSpecs: [worker('worker-group-1', pod(undefined, 'Never')), worker('worker-group-2', pod(undefined, 'Always'))] }, 'rejected',
    ],
    ['should not return error if autoscaler configs are valid', { enableInTreeAutoscaling: true, autoscalerOptions: V2, workerGroupSpecs: [worker('worker-group-1', pod()), worker('worker-group-2', pod(undefined, 'Never'))] }, 'accepted'],
    [
      'should return error if KUBERAY_GEN_AUTOSCALER_START_CMD is set in autoscalerOptions.env (args also set)',
      { enableInTreeAutoscaling: true, autoscalerOptions: { args: ['my-custom-autoscaler-cmd'], env: [env('KUBERAY_GEN_AUTOSCALER_START_CMD', 'ray kuberay-autoscaler --cluster-name foo --cluster-namespace bar')] } }, 'rejected',
    ],
    [
      'should return error if KUBERAY_GEN_AUTOSCALER_START_CMD is set in autoscalerOptions.env even when autoscalerOptions.args is absent',
      { enableInTreeAutoscaling: true, autoscalerOptions: { env: [env('KUBERAY_GEN_AUTOSCALER_START_CMD', 'ray kuberay-autoscaler --cluster-name foo --cluster-namespace bar')] } }, 'rejected',
    ],
  ] as const).map(([name, extra, upstream]): ValidationCase => ({ test: 'TestValidateRayClusterSpecAutoscaler', name, cluster: cluster(extra), upstream, difference: unless(upstream, passedThrough) })),

  // TestValidateRayClusterSpec_IdleTimeoutSeconds
  ...([
    ['Valid: Worker group with valid idleTimeoutSeconds and v2 spec field', { autoscalerOptions: V2, workerGroupSpecs: [group10({ idleTimeoutSeconds: 60 })] }, 'accepted'],
    ['Valid: Worker group with idleTimeoutSeconds and v2 env var', { headGroupSpec: { template: pod([env('RAY_enable_autoscaler_v2', '1')]) }, workerGroupSpecs: [group10({ idleTimeoutSeconds: 60 })] }, 'accepted'],
    ['Valid: Worker group with zero idleTimeoutSeconds', { autoscalerOptions: V2, workerGroupSpecs: [group10({ idleTimeoutSeconds: 0 })] }, 'accepted'],
    ['Invalid: Worker group with negative idleTimeoutSeconds', { autoscalerOptions: V2, workerGroupSpecs: [group10({ idleTimeoutSeconds: -10 })] }, 'rejected'],
    ['Invalid: Worker group idleTimeoutSeconds without v2', { workerGroupSpecs: [group10({ idleTimeoutSeconds: 60 })] }, 'rejected'],
    ['Invalid: Worker group idleTimeoutSeconds with invalid env var', { headGroupSpec: { template: pod([env('RAY_enable_autoscaler_v2', 'false')]) }, workerGroupSpecs: [group10({ idleTimeoutSeconds: 60 })] }, 'rejected'],
    ['Valid: Worker group without idleTimeoutSeconds', { workerGroupSpecs: [group10()] }, 'accepted'],
    ['Valid: AutoscalerOptions with idleTimeoutSeconds and v2', { autoscalerOptions: { version: 'v2', idleTimeoutSeconds: 120 } }, 'accepted'],
    ['Valid: AutoscalerOptions with idleTimeoutSeconds and v1', { autoscalerOptions: { version: 'v1', idleTimeoutSeconds: 120 } }, 'accepted'],
    ['Valid: AutoscalerOptions with idleTimeoutSeconds and no version', { autoscalerOptions: { idleTimeoutSeconds: 120 } }, 'accepted'],
    ['Valid: AutoscalerOptions with zero idleTimeoutSeconds', { autoscalerOptions: { idleTimeoutSeconds: 0 } }, 'accepted'],
    ['Invalid: AutoscalerOptions with negative idleTimeoutSeconds', { autoscalerOptions: { idleTimeoutSeconds: -10 } }, 'rejected'],
    ['Valid: AutoscalerOptions without idleTimeoutSeconds', { autoscalerOptions: { version: 'v1' } }, 'accepted'],
    ['Valid: AutoscalerOptions is nil', {}, 'accepted'],
  ] as const).map(([name, extra, upstream]): ValidationCase => ({ test: 'TestValidateRayClusterSpec_IdleTimeoutSeconds', name, cluster: idle(extra), upstream, difference: unless(upstream, passedThrough) })),

  // TestValidateRayClusterSpec_Priority
  ...([
    ['Valid: Worker group with priority and v2 spec field', { autoscalerOptions: V2, workerGroupSpecs: [group10({ priority: 1 })] }, 'accepted'],
    ['Valid: Worker group with priority and v2 env var', { headGroupSpec: { template: pod([env('RAY_enable_autoscaler_v2', '1')]) }, workerGroupSpecs: [group10({ priority: 1 })] }, 'accepted'],
    ['Valid: Worker group with zero priority and v2 disabled', { workerGroupSpecs: [group10({ priority: 0 })] }, 'accepted'],
    ['Valid: Worker group without priority and v2 disabled', { workerGroupSpecs: [group10()] }, 'accepted'],
    ['Invalid: Worker group priority without v2', { workerGroupSpecs: [group10({ priority: 1 })] }, 'rejected'],
    ['Invalid: Worker group priority with invalid env var', { headGroupSpec: { template: pod([env('RAY_enable_autoscaler_v2', 'false')]) }, workerGroupSpecs: [group10({ priority: 2 })] }, 'rejected'],
    ['Invalid: Worker group priority with empty Ray version', { rayVersion: '', autoscalerOptions: V2, workerGroupSpecs: [group10({ priority: 1 })] }, 'rejected'],
    ['Invalid: Worker group priority with invalid Ray version', { rayVersion: 'invalid', autoscalerOptions: V2, workerGroupSpecs: [group10({ priority: 1 })] }, 'rejected'],
    ['Invalid: Worker group priority with Ray version below 2.56.0', { rayVersion: '2.55.0', autoscalerOptions: V2, workerGroupSpecs: [group10({ priority: 1 })] }, 'rejected'],
  ] as const).map(([name, extra, upstream]): ValidationCase => ({ test: 'TestValidateRayClusterSpec_Priority', name, cluster: priority(extra), upstream, difference: unless(upstream, passedThrough) })),

  // TestValidateNetworkPolicy (RayClusterNetworkPolicy gate on)
  ...([
    ['DenyAllEgress with head IngressRules set returns error', netpol({ mode: 'DenyAllEgress', head: { ingressRules: [{}] } }), 'rejected'],
    ['DenyAllEgress with worker IngressRules set returns error', netpol({ mode: 'DenyAllEgress', worker: { ingressRules: [{}] } }), 'rejected'],
    ['DenyAllIngress with head EgressRules set returns error', netpol({ mode: 'DenyAllIngress', head: { egressRules: [{}] } }), 'rejected'],
    ['DenyAllIngress with worker EgressRules set returns error', netpol({ mode: 'DenyAllIngress', worker: { egressRules: [{}] } }), 'rejected'],
    ['DenyAll with both head and worker rules is valid', netpol({ mode: 'DenyAll', head: rules, worker: rules }), 'accepted'],
    ['DenyAllEgress with worker group IngressRules set returns error', netpol({ mode: 'DenyAllEgress', workerGroups: [{ groupName: 'small-group', ingressRules: [{}] }] }, ['small-group']), 'rejected'],
    ['DenyAllIngress with worker group EgressRules set returns error', netpol({ mode: 'DenyAllIngress', workerGroups: [{ groupName: 'small-group', egressRules: [{}] }] }, ['small-group']), 'rejected'],
    ['worker group entry not matching any workerGroupSpecs returns error', netpol({ mode: 'DenyAll', workerGroups: [{ groupName: 'samll-group', ingressRules: [{}] }] }, ['small-group']), 'rejected'],
    ['worker group entry matching workerGroupSpecs is valid', netpol({ mode: 'DenyAll', workerGroups: [{ groupName: 'small-group', ...rules }] }, ['small-group']), 'accepted'],
    ['nil NetworkPolicy is valid', netpol(undefined), 'accepted'],
    ['mode only with no head or worker rules is valid', netpol({ mode: 'DenyAll' }), 'accepted'],
  ] as const).map(([name, spec, upstream]): ValidationCase => ({ test: 'TestValidateNetworkPolicy', name, cluster: spec, upstream, difference: unless(upstream, passedThrough) })),
  // rayshift requires every groupName to be a DNS-1123 label, network policy or not.
  { test: 'TestValidateNetworkPolicy', name: 'worker group name that is not a valid DNS1123 label returns error', cluster: netpol({ mode: 'DenyAll' }, ['GPU-Group']), upstream: 'rejected', path: 'workerGroupSpecs[0].groupName' },
  { test: 'TestValidateRayClusterSpec_NetworkPolicyRequiresFeatureGate', name: 'networkPolicy with the RayClusterNetworkPolicy gate off', cluster: netpol({ mode: 'DenyAll' }, ['worker-group']), upstream: 'rejected', difference: featureGated },

  // TestValidateTLSOptions (RayClusterMTLS gate on)
  ...(<[string, TlsEdit, Outcome][]>[
    ['TLS disabled, no options - valid', () => undefined, 'accepted'],
    ['TLS enabled, no options (auto-generate) - valid', tlsOn, 'accepted'],
    ['tlsOptions set but enabled is false - valid (disables TLS)', (s) => (s.tlsOptions = { enabled: false }), 'accepted'],
    ['RAY_USE_TLS in head container - error', (s) => { tlsOn(s); s.headGroupSpec.template.spec.containers[0].env = [env('RAY_USE_TLS', '1')]; }, 'rejected'],
    ['RAY_TLS_SERVER_CERT in head container - error', (s) => { tlsOn(s); s.headGroupSpec.template.spec.containers[0].env = [env('RAY_TLS_SERVER_CERT', '/x')]; }, 'rejected'],
    ['RAY_TLS_SERVER_KEY in worker container - error', (s) => { tlsOn(s); s.workerGroupSpecs = tlsWorker({ env: [env('RAY_TLS_SERVER_KEY', '/x')] }); }, 'rejected'],
    ['RAY_TLS_CA_CERT in worker container - error', (s) => { tlsOn(s); s.workerGroupSpecs = tlsWorker({ env: [env('RAY_TLS_CA_CERT', '/x')] }); }, 'rejected'],
    ['conflicting TLS volume name in head container - error', (s) => { tlsOn(s); s.headGroupSpec.template.spec.containers[0].volumeMounts = [{ name: 'ray-tls', mountPath: '/some/path' }]; }, 'rejected'],
    ['conflicting TLS mount path in head container - error', (s) => { tlsOn(s); s.headGroupSpec.template.spec.containers[0].volumeMounts = [{ name: 'custom-tls', mountPath: '/etc/ray/tls' }]; }, 'rejected'],
    ['conflicting TLS volume name in worker container - error', (s) => { tlsOn(s); s.workerGroupSpecs = tlsWorker({ volumeMounts: [{ name: 'ray-tls', mountPath: '/some/path' }] }); }, 'rejected'],
    ['non-conflicting volume mount in head container - valid', (s) => { tlsOn(s); s.headGroupSpec.template.spec.containers[0].volumeMounts = [{ name: 'user-volume', mountPath: '/user/path' }]; }, 'accepted'],
    ['conflicting TLS volume name in autoscalerOptions - error', (s) => { tlsOn(s); s.autoscalerOptions = { volumeMounts: [{ name: 'ray-tls', mountPath: '/some/path' }] }; }, 'rejected'],
    ['conflicting TLS mount path in autoscalerOptions - error', (s) => { tlsOn(s); s.autoscalerOptions = { volumeMounts: [{ name: 'custom-tls', mountPath: '/etc/ray/tls' }] }; }, 'rejected'],
  ]).map(([name, edit, upstream]): ValidationCase => ({ test: 'TestValidateTLSOptions', name, cluster: tls(edit), upstream, difference: unless(upstream, passedThrough) })),
  { test: 'TestValidateRayClusterSpec_TLSOptionsRequiresFeatureGate', name: 'tlsOptions with the RayClusterMTLS gate off', cluster: cluster({ tlsOptions: { enabled: true } }), upstream: 'rejected', difference: featureGated },

  // TestValidateRayClusterSpec_HistoryServerRequiresFeatureGate, TestValidateCollectorOptions (RayClusterHistoryServer gate on)
  {
    test: 'TestValidateRayClusterSpec_HistoryServerRequiresFeatureGate', name: 'historyServerOptions with the RayClusterHistoryServer gate off',
    cluster: collector({ image, env: gcsEnv }, { workerGroupSpecs: [worker('worker-group', pod(), { minReplicas: 1, maxReplicas: 1 })] }), upstream: 'rejected', difference: featureGated,
  },
  ...([
    ['nil collector options', undefined, 'rejected'],
    ['missing image', { env: gcsEnv }, 'rejected'],
    ['missing STORAGE_BACKEND', { image }, 'rejected'],
    ['valid GCS', { image, env: gcsEnv }, 'accepted'],
    ['valid GCS with ValueFrom secret', { image, env: [env('STORAGE_BACKEND', 'GCS'), { name: 'GCS_BUCKET', valueFrom: { secretKeyRef: { name: 'my-gcs-secret', key: 'bucket' } } }] }, 'accepted'],
    ['missing GCS_BUCKET', { image, env: [env('STORAGE_BACKEND', 'GCS')] }, 'rejected'],
    ['valid S3 with all fields', { image, env: [env('STORAGE_BACKEND', 'S3'), env('S3_BUCKET', 'my-bucket'), env('S3_ENDPOINT', 's3.us-west-2.amazonaws.com'), env('S3_REGION', 'us-west-2')] }, 'accepted'],
    ['missing S3_REGION', { image, env: [env('STORAGE_BACKEND', 'S3'), env('S3_BUCKET', 'my-bucket'), env('S3_ENDPOINT', 's3.us-west-2.amazonaws.com')] }, 'rejected'],
    ['valid AZUREBLOB with connection string mode', { image, env: [env('STORAGE_BACKEND', 'AZUREBLOB'), env('AZURE_STORAGE_AUTH_MODE', 'connection_string'), env('AZURE_STORAGE_CONNECTION_STRING', 'connection-string')] }, 'accepted'],
    ['valid AZUREBLOB with workload identity mode', { image, env: [env('STORAGE_BACKEND', 'AZUREBLOB'), env('AZURE_STORAGE_AUTH_MODE', 'workload_identity'), env('AZURE_STORAGE_ACCOUNT_URL', 'https://myaccount.blob.core.windows.net')] }, 'accepted'],
    ['missing connection string in connection_string auth mode', { image, env: [env('STORAGE_BACKEND', 'AZUREBLOB'), env('AZURE_STORAGE_AUTH_MODE', 'connection_string')] }, 'rejected'],
    ['missing credentials in auto-detect auth mode', { image, env: [env('STORAGE_BACKEND', 'AZUREBLOB')] }, 'rejected'],
    ['valid ALIYUNOSS', { image, env: [env('STORAGE_BACKEND', 'ALIYUNOSS'), env('OSS_BUCKET', 'my-bucket'), env('OSS_ENDPOINT', 'oss-cn-hangzhou.aliyuncs.com'), env('OSS_REGION', 'cn-hangzhou')] }, 'accepted'],
    ['missing OSS_REGION', { image, env: [env('STORAGE_BACKEND', 'ALIYUNOSS'), env('OSS_BUCKET', 'my-bucket'), env('OSS_ENDPOINT', 'oss-cn-hangzhou.aliyuncs.com')] }, 'rejected'],
    ['unknown storage backend (skips validation)', { image, env: [env('STORAGE_BACKEND', 'CUSTOM_BACKEND')] }, 'accepted'],
    ['manually defined POD_IP in collector env', { image, env: [...gcsEnv, env('POD_IP', '10.244.0.5')] }, 'rejected'],
    ['manually defined EVENTS_PORT in collector env', { image, env: [...gcsEnv, env('EVENTS_PORT', '9000')] }, 'rejected'],
  ] as const).map(([name, options, upstream]): ValidationCase => ({ test: 'TestValidateCollectorOptions', name, cluster: collector(options), upstream, difference: unless(upstream, passedThrough) })),
  {
    test: 'TestValidateCollectorOptions', name: 'manually defined ray-history-collector container in head template',
    cluster: collector({ image, env: gcsEnv }, { headGroupSpec: { template: podOf([{ name: 'ray-history-collector', image: 'user-image' }]) } }), upstream: 'rejected', difference: passedThrough,
  },
  {
    test: 'TestValidateCollectorOptions', name: 'manually defined ray-history-collector container in worker template',
    cluster: collector({ image, env: gcsEnv }, { workerGroupSpecs: [worker('group-1', podOf([{ name: 'ray-history-collector', image: 'user-image' }]), { minReplicas: 1, maxReplicas: 1 })] }), upstream: 'rejected', difference: passedThrough,
  },
];
