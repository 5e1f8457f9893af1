/**
 * A Pulumi program with rayshift's components: the same LLM service three times, once per
 * executor. `kuberay`: KubeRay runs the incremental upgrade and `pulumi up` follows it.
 * `operator`: the rayshift operator runs it, attached to a shared Gateway. `pulumi`: `pulumi up`
 * runs it itself, printing one line per step, with no controller in the cluster.
 *
 * Not part of `npm run synth` (examples/main.ts builds the cdk8s charts); run it with
 * `pulumi up` from this folder (see README.md).
 */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { RayClusterSpecBuilder } from '../../lib/cdk8s/raycluster-builder';
import { Gateway, GatewayClass, RayService, RayServiceArgs, RoleBasedGroup } from '../../lib/pulumi';

const config = new pulumi.Config('rayshift');
const kubeconfig = config.getSecret('kubeconfig');
const provider = new k8s.Provider('cluster', kubeconfig ? { kubeconfig } : {});

/** The service every executor runs: GPU workers under the autoscaler, 20% capacity and 5% traffic per step. */
function llmService(namespace: string): Omit<RayServiceArgs, 'executor'> {
  return {
    metadata: { name: 'llm', namespace },
    rayClusterConfig: new RayClusterSpecBuilder({
      image: 'rayproject/ray-llm:2.52.0-py311-cu128',
      rayVersion: '2.52.0',
      head: { resources: { cpu: '4', memory: '16Gi' } },
      workerGroups: [{ groupName: 'gpu', minReplicas: 1, maxReplicas: 8, resources: { cpu: '8', memory: '64Gi', accelerators: 1 } }],
    }),
    serveConfig: {
      applications: [
        {
          name: 'llm',
          importPath: 'ray.serve.llm:build_openai_app',
          routePrefix: '/',
          args: { llm_configs: [{ model_loading_config: { model_id: 'qwen-0.5b', model_source: 'Qwen/Qwen2.5-0.5B-Instruct' } }] },
        },
      ],
    },
    upgradeStrategy: {
      type: 'NewClusterWithIncrementalUpgrade',
      clusterUpgradeOptions: { maxSurgePercent: 20, stepSizePercent: 5, intervalSeconds: 60, gatewayClassName: 'istio' },
    },
    deadlineSeconds: 3600,
  };
}

const opts = { providers: { kubernetes: provider } };

// KubeRay executes; `pulumi up` waits for Ready and follows each upgrade to its end.
const kuberay = new RayService('llm-kuberay', { ...llmService('llm-kuberay'), executor: 'kuberay' }, opts);

// The rayshift operator executes, attached to a shared Gateway.
const istio = new GatewayClass('istio', { controllerName: 'istio.io/gateway-controller' }, opts);
const shared = new Gateway('shared', { metadata: { namespace: 'gateways' }, gatewayClass: istio }, opts);
const operator = new RayService(
  'llm-operator',
  { ...llmService('llm-operator'), executor: 'operator', rayshift: shared.gatewayName.apply((name) => ({ gatewayRef: { name, namespace: 'gateways' } })) },
  { ...opts, dependsOn: [shared] },
);

// `pulumi up` executes: one line per step; on the deadline the upgrade is rolled back.
const executed = new RayService('llm-pulumi', { ...llmService('llm-pulumi'), executor: 'pulumi', kubeconfig, onDeadline: 'rollback' }, opts);

// A prefill/decode RoleBasedGroup whose rollout `pulumi up` runs with version-matched routing: one
// sglang-router per release behind the route `pd-pd-rollout-router` on the shared Gateway. For a new
// image, first `pulumi config set rayshift:pdPreviousRevision <the routedRelease output>`: the old
// release's router then stays while the rollout moves the route's weights; unset it once complete.
// A rollout that makes no progress for 10 minutes is rolled back in tandem inside `pulumi up`, as a
// failed gate or `rayshift rollback rbg/pd -n pd` would (the update then fails naming `RolledBack`);
// `deadlineSeconds` is this run's own limit, longer than that deadline plus the rollback rounds.
const pdImage = config.get('pdImage') ?? 'lmsysorg/sglang:v0.5.5';
const previousRevision = config.get('pdPreviousRevision');
const sglang = (role: string) => ({ spec: { containers: [{ name: role, image: pdImage }] } });
const pd = new RoleBasedGroup(
  'pd',
  {
    metadata: { name: 'pd', namespace: 'pd' },
    executor: 'pulumi',
    kubeconfig,
    deadlineSeconds: 3600,
    roles: [
      { name: 'prefill', replicas: 4, template: sglang('prefill') },
      { name: 'decode', replicas: 2, template: sglang('decode') },
    ],
    coordination: [
      {
        name: 'pd-rollout',
        roles: ['prefill', 'decode'],
        rollingUpdate: { maxSkew: '50%' },
        progressDeadlineSeconds: 600,
        rollbackOnDeadline: true,
        router: { kind: 'sglang', image: 'lmsysorg/sglang:v0.5.5', gateway: { name: 'shared', namespace: 'gateways' }, ...(previousRevision ? { previousRevision } : {}) },
      },
    ],
  },
  { ...opts, dependsOn: [shared] },
);

/** The release the prefill and decode templates make now: the next rollout's `pdPreviousRevision`. */
export const routedRelease = pd.routerRevisions.apply((r) => r['pd-rollout']);

/** The serving cluster of each service after this `pulumi up`. */
export const servingClusters = {
  kuberay: kuberay.activeClusterName,
  operator: operator.activeClusterName,
  pulumi: executed.activeClusterName,
};
