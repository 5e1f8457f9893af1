import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { RayClusterSpecBuilder, RayService } from '../lib';

/**
 * An LLM service on a GPU pool with no accelerator to spare: the rayshift operator upgrades it
 * with `capacityPolicy: shrinkFirst` (docs/capacity.md), a zero-surge incremental upgrade. Each
 * step the old cluster gives back 25% of its Serve capacity first, its idle GPU workers are freed
 * by name (`workersToDelete`), and only then does the new cluster take the step, so no new worker
 * waits Pending for a GPU; the service runs at 75% during each step (validation warns so). The Ray
 * autoscaler (on with the builder) brings up the new cluster's workers as its capacity rises.
 */
export class ShrinkFirstServiceChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new RayService(this, 'llm', {
      metadata: { name: 'llm' },
      executor: 'operator',
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
            args: { llm_configs: [{ model_loading_config: { model_id: 'qwen-0.5b', model_source: 'Qwen/Qwen2.5-0.5B-Instruct' }, deployment_config: { num_replicas: 8 } }] },
          },
        ],
      },
      upgradeStrategy: {
        type: 'NewClusterWithIncrementalUpgrade',
        clusterUpgradeOptions: { maxSurgePercent: 25, stepSizePercent: 25, intervalSeconds: 60, gatewayClassName: 'traefik' },
      },
      rayshift: { gatewayRef: { name: 'inference', namespace: 'gateways' }, capacityPolicy: 'shrinkFirst' },
    });
  }
}
