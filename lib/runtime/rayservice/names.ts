/** Names, labels and annotations of the objects the rayshift operator manages for a RayService. */
import type { RouteKind } from '../../spec/rayservice';

/** API version of rayshift's RayService. */
export const RAYSHIFT_RAYSERVICE = { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', plural: 'rayservices', namespaced: true } as const;
/** KubeRay's RayCluster. */
export const RAYCLUSTER = { apiVersion: 'ray.io/v1', kind: 'RayCluster', plural: 'rayclusters', namespaced: true } as const;
/** Core Service. */
export const SERVICE = { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true } as const;
/** Gateway API Gateway. */
export const GATEWAY = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', plural: 'gateways', namespaced: true } as const;
/** Gateway API HTTPRoute. */
export const HTTPROUTE = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true } as const;
/** Gateway API GRPCRoute. */
export const GRPCROUTE = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GRPCRoute', plural: 'grpcroutes', namespaced: true } as const;

/** KubeRay's label naming the custom resource a cluster originated from. */
export const ORIGINATED_FROM_NAME = 'ray.io/originated-from-cr-name';
/** KubeRay's label naming the kind of that resource. */
export const ORIGINATED_FROM_CRD = 'ray.io/originated-from-crd';
/** Label KubeRay puts on every pod of a cluster. */
export const CLUSTER_LABEL = 'ray.io/cluster';
/** Annotation holding the engine's spec hash of a cluster. */
export const SPEC_HASH_ANNOTATION = 'rayshift.dev/cluster-spec-hash';
/** Annotation holding the Serve config (YAML) last PUT to a cluster, so an old cluster keeps its own during an upgrade. */
export const SERVE_CONFIG_ANNOTATION = 'rayshift.dev/serve-config';
/** Finalizer that puts traffic in a safe state before a RayService goes away. */
export const FINALIZER = 'rayshift.dev/finalizer';
/** The steering annotations, whose home is the steering rules (lib/engine/steering.ts). */
export { ABORT_ANNOTATION, PAUSE_ANNOTATION, PROMOTE_ANNOTATION } from '../../engine/steering';

/** `<cluster>-serve-svc`, the per-cluster serve Service a route backend points at. */
export function perClusterServeService(cluster: string): string {
  return `${cluster}-serve-svc`;
}

/** `<service>-head-svc`, the stable head Service (selects the serving cluster). */
export function headService(service: string): string {
  return `${service}-head-svc`;
}

/** `<service>-serve-svc`, the stable serve Service (selects the serving cluster). */
export function stableServeService(service: string): string {
  return `${service}-serve-svc`;
}

/** `<service>-httproute` (KubeRay's) or `<service>-grpcroute`, the route of a RayService. */
export function serviceRouteName(service: string, kind: RouteKind = 'HTTP'): string {
  return `${service}-${kind === 'GRPC' ? 'grpcroute' : 'httproute'}`;
}

/** `<service>-gateway` (KubeRay's), the Gateway the operator creates when there is no `gatewayRef`. */
export function serviceGatewayName(service: string): string {
  return `${service}-gateway`;
}
