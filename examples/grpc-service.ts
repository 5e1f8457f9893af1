import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { Gateway, GatewayClass, GrpcRoute, RayClusterSpecBuilder, RayService } from '../lib';

/**
 * A gRPC Serve application behind a user-owned GRPCRoute on a shared Gateway. The RayService
 * upgrades blue/green, so KubeRay keeps `<name>-serve-svc` (with the `serve-grpc` port) pointed
 * at the serving cluster and the route never changes.
 */
export class GrpcServiceChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    const service = new RayService(this, 'embedder', {
      metadata: { name: 'embedder' },
      rayClusterConfig: new RayClusterSpecBuilder({
        image: 'rayproject/ray:2.52.0-py311',
        head: { resources: { cpu: '2', memory: '8Gi' } },
        workerGroups: [{ groupName: 'cpu', minReplicas: 1, maxReplicas: 4, resources: { cpu: '4', memory: '8Gi' } }],
        serveGrpcPort: 9000,
      }),
      serveConfig: {
        grpcOptions: { port: 9000, grpcServicerFunctions: ['embedder_pb2_grpc.add_EmbedderServicer_to_server'] },
        applications: [{ name: 'embedder', importPath: 'embedder.app:app', httpDisabled: true }],
      },
      upgradeStrategy: { type: 'NewCluster' },
    });
    const gatewayClass = new GatewayClass(this, 'class', {
      metadata: { name: 'traefik' },
      controllerName: 'traefik.io/gateway-controller',
    });
    const gateway = new Gateway(this, 'gateway', {
      metadata: { name: 'inference' },
      gatewayClass,
      listeners: [{ name: 'grpc', protocol: 'HTTP', port: 9000 }],
    });
    new GrpcRoute(this, 'route', {
      metadata: { name: 'embedder' },
      parents: [gateway],
      rules: [
        {
          matches: [{ method: { type: 'Exact', service: 'embedder.Embedder' } }],
          backendRefs: [{ name: `${service.name}-serve-svc`, port: 9000 }],
        },
      ],
    });
  }
}
