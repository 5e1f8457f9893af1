/**
 * Shapes shared by the route helpers. Routes are read as untrusted JSON (whatever the API server
 * returned), so these are the few fields the helpers look at, never a full Gateway API type.
 */
import { GATEWAY_API_VERSION } from '../../spec/gateway';
import { RAY_PORTS } from '../../spec/object-names';

/** The two route kinds rayshift writes weights to. */
export type RouteObjectKind = 'HTTPRoute' | 'GRPCRoute';

/** Identifies a Service backend of a route: its name and, when not the route's, its namespace. */
export interface BackendKey {
  /** Service name. */
  readonly name: string;
  /** Service namespace. @default the route's namespace */
  readonly namespace?: string;
}

/** A backend rayshift manages, with the weight it should carry. */
export interface ManagedBackend extends BackendKey {
  /** Service port, used only when the backend has to be added. @default `PlanOptions.defaultPort` (8000) */
  readonly port?: number;
  /** Gateway API weight, 0–1,000,000 (rayshift uses percentages that sum to 100). */
  readonly weight: number;
}

// One home for JSON patch operations: the Kubernetes client's.
export type { JsonPatchOp } from '../kube/request-options';

/** API group of the Gateway API. */
export const GATEWAY_API_GROUP = GATEWAY_API_VERSION.slice(0, GATEWAY_API_VERSION.indexOf('/'));

/** Default Serve port of a per-cluster serve Service (KubeRay's `serve` port). */
export const DEFAULT_SERVE_PORT: number = RAY_PORTS.serve.port;
