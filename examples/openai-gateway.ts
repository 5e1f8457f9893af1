import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { Gateway, HttpRoute, RayClusterSpecBuilder, RayService } from '../lib';

/** Props of `OpenAiGatewayChart`. */
export interface OpenAiGatewayChartProps extends ChartProps {
  /**
   * Percent of `/v1` traffic sent to the green service; each step of the cut-over is a commit that
   * changes it (10, 25, 50, 100), and 0 rolls back. @default 10
   */
  readonly greenWeightPercent?: number;
}

/**
 * A blue/green cut-over of an OpenAI-compatible endpoint between two models behind one shared
 * Gateway. A new model is not an upgrade of the old cluster but a second service: `chat-blue` and
 * `chat-green` each keep their own cluster (`upgradeStrategy: None`, so neither is ever replaced
 * under the route), both serve their model as `chat` so clients change nothing, and the HTTPRoute
 * splits `/v1` between their `<name>-serve-svc` Services by weight. Requests with the header
 * `x-rayshift-color: green` reach green whatever the weights, so an evaluation job can test it
 * before it takes any user traffic.
 */
export class OpenAiGatewayChart extends Chart {
  constructor(scope: Construct, id: string, props: OpenAiGatewayChartProps = {}) {
    super(scope, id, props);
    const green = props.greenWeightPercent ?? 10;
    // Weights are percents here so that a reviewer reads the split off the diff; the route itself
    // accepts any integer weights, so the chart checks the range it documents.
    if (!Number.isInteger(green) || green < 0 || green > 100) {
      throw new Error(`${id}: greenWeightPercent must be an integer from 0 to 100; got ${green}`);
    }
    const blueService = chatService(this, 'chat-blue', 'Qwen/Qwen2.5-7B-Instruct');
    const greenService = chatService(this, 'chat-green', 'Qwen/Qwen3-8B');
    // The GatewayClass is named, not declared: it is cluster-scoped and the platform team's (the
    // gRPC example declares `traefik`), so a second declaration here would fight over one object.
    const gateway = new Gateway(this, 'gateway', {
      metadata: { name: 'openai' },
      gatewayClass: 'traefik',
      listeners: [{ name: 'http', protocol: 'HTTP', port: 80, hostname: 'llm.example.com' }],
    });
    const v1 = { path: { type: 'PathPrefix', value: '/v1' } } as const;
    new HttpRoute(this, 'route', {
      metadata: { name: 'chat' },
      parents: [gateway],
      hostnames: ['llm.example.com'],
      rules: [
        {
          matches: [{ ...v1, headers: [{ name: 'x-rayshift-color', value: 'green' }] }],
          backendRefs: [{ name: `${greenService.name}-serve-svc`, port: 8000 }],
        },
        {
          matches: [v1],
          backendRefs: [
            { name: `${blueService.name}-serve-svc`, port: 8000, weight: 100 - green },
            { name: `${greenService.name}-serve-svc`, port: 8000, weight: green },
          ],
        },
      ],
    });
  }
}

/** One side of the cut-over: `model` served as `chat` by Ray Serve's OpenAI app on one-GPU workers. */
function chatService(scope: Construct, name: string, model: string): RayService {
  return new RayService(scope, name, {
    metadata: { name },
    rayClusterConfig: new RayClusterSpecBuilder({
      image: 'rayproject/ray-llm:2.52.0-py311-cu128',
      rayVersion: '2.52.0',
      head: { resources: { cpu: '4', memory: '16Gi' } },
      // Serve scales the model from 1 to 4 replicas; the Ray autoscaler adds the GPU workers they need.
      enableAutoscaler: true,
      workerGroups: [{ groupName: 'gpu', minReplicas: 1, maxReplicas: 4, resources: { cpu: '8', memory: '64Gi', accelerators: 1 } }],
    }),
    serveConfig: {
      applications: [
        {
          name: 'chat',
          importPath: 'ray.serve.llm:build_openai_app',
          routePrefix: '/',
          args: {
            llm_configs: [
              {
                model_loading_config: { model_id: 'chat', model_source: model },
                deployment_config: { autoscaling_config: { min_replicas: 1, max_replicas: 4 } },
              },
            ],
          },
        },
      ],
    },
    upgradeStrategy: { type: 'None' },
  });
}
