// The names, ports and types of the objects a RayService owns: the literals here are KubeRay's
// (ray-operator v1.7.0), the specification the module must keep on the wire.
import {
  GATEWAY,
  GATEWAY_HTTP_LISTENER,
  GRPCROUTE,
  HTTPROUTE,
  KUBERAY_RAYSERVICE,
  RAYCLUSTER,
  RAYSHIFT_RAYSERVICE,
  RAY_PORTS,
  SERVICE,
  clusterOfServeService,
  headService,
  isClusterServeServiceOf,
  perClusterServeService,
  routeTypeOfKind,
  serveLabelValue,
  servePortOf,
  serviceGatewayName,
  serviceOfRoute,
  serviceRouteName,
  stableServeService,
} from '../../lib/spec/object-names';

describe('object names', () => {
  it('names the objects of a RayService as KubeRay does', () => {
    expect(perClusterServeService('llm-ab12c')).toBe('llm-ab12c-serve-svc');
    expect(headService('llm')).toBe('llm-head-svc');
    expect(stableServeService('llm')).toBe('llm-serve-svc');
    expect(serviceRouteName('llm')).toBe('llm-httproute');
    expect(serviceRouteName('llm', 'GRPC')).toBe('llm-grpcroute');
    expect(serviceGatewayName('llm')).toBe('llm-gateway');
    expect(serveLabelValue('llm')).toBe('llm-serve');
  });

  it('reads a service back from its route name, only for the kind asked', () => {
    expect(serviceOfRoute('llm-httproute', 'HTTP')).toBe('llm');
    expect(serviceOfRoute('llm-grpcroute', 'GRPC')).toBe('llm');
    expect(serviceOfRoute('llm-grpcroute', 'HTTP')).toBeUndefined();
    expect(serviceOfRoute('other', 'HTTP')).toBeUndefined();
  });

  it('recognises the per-cluster serve Services of a service and their clusters', () => {
    expect(isClusterServeServiceOf('llm', 'llm-ab12c-serve-svc')).toBe(true);
    expect(isClusterServeServiceOf('llm', 'llm-serve-svc')).toBe(false);
    expect(isClusterServeServiceOf('llm', 'llm-ab12cd-serve-svc')).toBe(false);
    expect(isClusterServeServiceOf('llm', 'other-ab12c-serve-svc')).toBe(false);
    expect(clusterOfServeService('llm-ab12c-serve-svc')).toBe('llm-ab12c');
    expect(clusterOfServeService('external')).toBe('external');
  });

  it('keeps KubeRay\'s port names and numbers', () => {
    expect(RAY_PORTS).toEqual({
      gcs: { name: 'gcs', port: 6379 },
      client: { name: 'client', port: 10001 },
      dashboard: { name: 'dashboard', port: 8265 },
      metrics: { name: 'metrics', port: 8080 },
      serve: { name: 'serve', port: 8000 },
      serveGrpc: { name: 'serve-grpc', port: 9000 },
    });
    expect(servePortOf()).toEqual({ name: 'serve', port: 8000 });
    expect(servePortOf('GRPC')).toEqual({ name: 'serve-grpc', port: 9000 });
    expect(GATEWAY_HTTP_LISTENER).toEqual({ name: 'http', protocol: 'HTTP', port: 80 });
  });

  it('maps each resource type to its REST resource', () => {
    const rest = (t: { apiVersion: string; plural: string }) => `${t.apiVersion}/${t.plural}`;
    expect([RAYSHIFT_RAYSERVICE, KUBERAY_RAYSERVICE, RAYCLUSTER, SERVICE, GATEWAY, HTTPROUTE, GRPCROUTE].map(rest)).toEqual([
      'rayshift.dev/v1alpha1/rayservices',
      'ray.io/v1/rayservices',
      'ray.io/v1/rayclusters',
      'v1/services',
      'gateway.networking.k8s.io/v1/gateways',
      'gateway.networking.k8s.io/v1/httproutes',
      'gateway.networking.k8s.io/v1/grpcroutes',
    ]);
    expect(routeTypeOfKind()).toBe(HTTPROUTE);
    expect(routeTypeOfKind('GRPC')).toBe(GRPCROUTE);
  });
});
