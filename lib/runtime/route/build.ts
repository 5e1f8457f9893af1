/**
 * The route the rayshift operator creates for a RayService that has none: KubeRay's HTTPRoute shape
 * (parentRefs to the Gateway, one rule, PathPrefix "/", backends `<cluster>-serve-svc`), or the
 * GRPCRoute equivalent (one rule without matches, i.e. every method) for `routeKind: GRPC`.
 */
import { GATEWAY_API_VERSION } from '../../spec/gateway';
import { GatewayReference, RouteKind } from '../../spec/rayservice';
import { JsonObject } from '../../spec/read';
import type { OwnerReference } from '../kube/types';
import {
  MANAGED_BY_LABEL, MANAGED_BY_VALUE, RAYSERVICE_LABEL, perClusterServeService, routeTypeOfKind, serviceGateway, serviceRouteName,
} from '../../spec/object-names';
import { DEFAULT_SERVE_PORT, ManagedBackend, RouteObjectKind } from './types';

/** The Gateway API kind of a `spec.rayshift.routeKind`. */
export function routeObjectKind(kind: RouteKind = 'HTTP'): RouteObjectKind {
  return routeTypeOfKind(kind).kind;
}

/** One cluster on the route and its weight. */
export interface ClusterWeight {
  /** RayCluster name; the backend is `<cluster>-serve-svc`. */
  readonly cluster: string;
  /** Gateway API weight (a percentage in rayshift). */
  readonly weight: number;
}

/** Inputs of `buildServiceRoute`. */
export interface ServiceRouteOptions {
  /** The RayService. */
  readonly rayServiceName: string;
  /** Its namespace (the route's and the backends'). */
  readonly namespace: string;
  /** Route kind. @default "HTTP" */
  readonly routeKind?: RouteKind;
  /** The Gateway to attach to (`spec.rayshift.gatewayRef`). @default `<name>-gateway` in `namespace` */
  readonly gatewayRef?: GatewayReference;
  /** The clusters, active first, with their weights. */
  readonly backends: readonly ClusterWeight[];
  /** Serve port of the per-cluster Services. @default 8000 */
  readonly port?: number;
  /** Extra labels (merged over the operator's). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Owner references (the object holding the RayService, so the route is garbage-collected with it). */
  readonly ownerReferences?: readonly OwnerReference[];
}

/** The managed backends of a route built for these clusters (for `planWeightPatch`). */
export function clusterBackends(namespace: string, backends: readonly ClusterWeight[], port = DEFAULT_SERVE_PORT): ManagedBackend[] {
  return backends.map((b) => ({ name: perClusterServeService(b.cluster), namespace, port, weight: b.weight }));
}

/**
 * A fresh route for a RayService, in KubeRay's shape: `parentRefs: [{name, namespace[, sectionName]}]`
 * and one rule — `matches: [{path: {type: PathPrefix, value: "/"}}]` for HTTP, no matches for gRPC —
 * whose `backendRefs` are `{name: <cluster>-serve-svc, namespace, port, weight}` in the order given.
 */
export function buildServiceRoute(opts: ServiceRouteOptions): JsonObject {
  const kind = opts.routeKind ?? 'HTTP';
  const parentRef = serviceGateway(opts.rayServiceName, opts.namespace, opts.gatewayRef);
  const backendRefs = clusterBackends(opts.namespace, opts.backends, opts.port).map((b) => ({
    name: b.name,
    namespace: b.namespace,
    port: b.port,
    weight: b.weight,
  }));
  const rule = kind === 'GRPC' ? { backendRefs } : { matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs };
  return {
    apiVersion: GATEWAY_API_VERSION,
    kind: routeObjectKind(kind),
    metadata: {
      name: serviceRouteName(opts.rayServiceName, kind),
      namespace: opts.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [RAYSERVICE_LABEL]: opts.rayServiceName, ...(opts.labels ?? {}) },
      ...(opts.ownerReferences !== undefined ? { ownerReferences: opts.ownerReferences.map((o) => ({ ...o })) } : {}),
    },
    spec: { parentRefs: [parentRef], rules: [rule] },
  };
}
