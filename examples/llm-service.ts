import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { RayClusterSpecBuilder, RayService } from '../lib';

/**
 * The incremental-upgrade LLM service of KubeRay's guide: GPU workers under the Ray autoscaler,
 * upgraded 20% of capacity at a time with 5% traffic steps every 60 s. KubeRay executes it and
 * creates `llm-gateway` and `llm-httproute` itself.
 */
export class LlmServiceChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new RayService(this, 'llm', {
      metadata: { name: 'llm' },
      rayClusterConfig: new RayClusterSpecBuilder({
        image: 'rayproject/ray-llm:2.52.0-py311-cu128',
        rayVersion: '2.52.0',
        head: { resources: { cpu: '4', memory: '16Gi' } },
        workerGroups: [
          {
            groupName: 'gpu',
            minReplicas: 1,
            maxReplicas: 8,
            resources: { cpu: '8', memory: '64Gi', accelerators: 1 },
          },
        ],
      }),
      serveConfig: {
        applications: [
          {
            name: 'llm',
            importPath: 'ray.serve.llm:build_openai_app',
            routePrefix: '/',
            args: {
              llm_configs: [
                {
                  model_loading_config: { model_id: 'qwen-0.5b', model_source: 'Qwen/Qwen2.5-0.5B-Instruct' },
                  deployment_config: { autoscaling_config: { min_replicas: 1, max_replicas: 8 } },
                },
              ],
            },
          },
        ],
      },
      upgradeStrategy: {
        type: 'NewClusterWithIncrementalUpgrade',
        clusterUpgradeOptions: { maxSurgePercent: 20, stepSizePercent: 5, intervalSeconds: 60, gatewayClassName: 'istio' },
      },
    });
  }
}
