/**
 * The one home of the names of every object a RayService owns, and of what they carry: resource
 * types, object names, labels, annotations, ports and their names. It sits in `lib/spec` (pure, no
 * imports outside the layer) because the constructs, the runtime, the operator, the API server and
 * the CLI all need the same strings, and `lib/spec` is the one layer all of them may import. The
 * names follow KubeRay's (ray-operator v1.7.0) so objects rendered by either controller match.
 * RoleBasedGroups' resource types and what rayshift's RBG executor writes on them are here too.
 */
import { GATEWAY_API_VERSION } from './gateway';
import { GatewayReference, RAY_IO_API_VERSION, RAYSHIFT_API_VERSION, RouteKind } from './rayservice';
import { RBG_V1ALPHA1, RBG_V1ALPHA2 } from './rbg-releases';

// Resource types: `{apiVersion, kind, plural, namespaced}`, structurally the runtime's `ResourceType`
// with the REST mapping given, so no call needs a discovery round trip.

/** rayshift's RayService (executor `operator`). */
export const RAYSHIFT_RAYSERVICE = { apiVersion: RAYSHIFT_API_VERSION, kind: 'RayService', plural: 'rayservices', namespaced: true } as const;
/** KubeRay's RayService (executor `kuberay`). */
export const KUBERAY_RAYSERVICE = { apiVersion: RAY_IO_API_VERSION, kind: 'RayService', plural: 'rayservices', namespaced: true } as const;
/** KubeRay's RayCluster. */
export const RAYCLUSTER = { apiVersion: RAY_IO_API_VERSION, kind: 'RayCluster', plural: 'rayclusters', namespaced: true } as const;
/** Core Service. */
export const SERVICE = { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true } as const;
/** Core Pod (the head Pods whose serve label the operator keeps). */
export const POD = { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true } as const;
/** EndpointSlice (the serve Services' ready endpoints, which traffic waits for). */
export const ENDPOINT_SLICE = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', plural: 'endpointslices', namespaced: true } as const;
/** Gateway API GatewayClass (cluster-scoped). */
export const GATEWAY_CLASS = { apiVersion: GATEWAY_API_VERSION, kind: 'GatewayClass', plural: 'gatewayclasses', namespaced: false } as const;
/** Gateway API Gateway. */
export const GATEWAY = { apiVersion: GATEWAY_API_VERSION, kind: 'Gateway', plural: 'gateways', namespaced: true } as const;
/** Gateway API HTTPRoute. */
export const HTTPROUTE = { apiVersion: GATEWAY_API_VERSION, kind: 'HTTPRoute', plural: 'httproutes', namespaced: true } as const;
/** Gateway API GRPCRoute. */
export const GRPCROUTE = { apiVersion: GATEWAY_API_VERSION, kind: 'GRPCRoute', plural: 'grpcroutes', namespaced: true } as const;

/** The route type of a `spec.rayshift.routeKind`. */
export function routeTypeOfKind(kind: RouteKind = 'HTTP'): typeof HTTPROUTE | typeof GRPCROUTE {
  return kind === 'GRPC' ? GRPCROUTE : HTTPROUTE;
}

// Labels, annotations and the finalizer.

/** KubeRay's label naming the custom resource a cluster or Service originated from. */
export const ORIGINATED_FROM_NAME = 'ray.io/originated-from-cr-name';
/** KubeRay's label naming the kind of that resource (`ORIGINATED_FROM_RAYSERVICE` here). */
export const ORIGINATED_FROM_CRD = 'ray.io/originated-from-crd';
/** Value of `ORIGINATED_FROM_CRD` on everything a RayService owns; the operator watches by it. */
export const ORIGINATED_FROM_RAYSERVICE = 'RayService';
/** Label KubeRay puts on every pod of a cluster; Services select a cluster by it. */
export const CLUSTER_LABEL = 'ray.io/cluster';
/** KubeRay's label of a pod's node type; the head Service selects `head`. */
export const NODE_TYPE_LABEL = 'ray.io/node-type';
/** Label naming the Service an EndpointSlice belongs to (set by kube-controller-manager). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** KubeRay's serve label: `true` on pods ready to serve, `<owner>-serve` on serve Services. */
export const SERVE_LABEL = 'ray.io/serve';
/** Label every object the rayshift operator creates carries, for GitOps tools to key on. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Value of `MANAGED_BY_LABEL` on the operator's objects. */
export const MANAGED_BY_VALUE = 'rayshift-operator';
/** Label naming the RayService an object belongs to. */
export const RAYSERVICE_LABEL = 'rayshift.dev/rayservice';
/** Annotation holding the engine's spec hash of a cluster. */
export const SPEC_HASH_ANNOTATION = 'rayshift.dev/cluster-spec-hash';
/** Annotation holding the Serve config (YAML) last PUT to a cluster, so an old cluster keeps its own during an upgrade. */
export const SERVE_CONFIG_ANNOTATION = 'rayshift.dev/serve-config';
/** Annotation holding a cluster's original worker `minReplicas` per group (JSON), recorded by the first shrinkFirst freeing. */
export const WORKER_FLOORS_ANNOTATION = 'rayshift.dev/worker-floors';
/** KubeRay's label naming the worker group of a Pod. */
export const GROUP_LABEL = 'ray.io/group';
/** Finalizer that puts traffic in a safe state before a RayService goes away. */
export const FINALIZER = 'rayshift.dev/finalizer';

/** `SERVE_LABEL`'s value on a serve Service of `owner` (a cluster or a RayService): `<owner>-serve`. */
export function serveLabelValue(owner: string): string {
  return `${owner}-serve`;
}

// Ports: KubeRay's defaults of the head container's named ports. The name is what Services and
// `headPort` look up; the number is used when the head container does not declare the name.

/** A named port and its default number. */
export interface NamedPort {
  /** Port name on the head container and the Services. */
  readonly name: string;
  /** KubeRay's default number. */
  readonly port: number;
}

/** The head container's ports, by role. */
export const RAY_PORTS = {
  /** Ray's GCS server. */
  gcs: { name: 'gcs', port: 6379 },
  /** Ray client server. */
  client: { name: 'client', port: 10001 },
  /** Ray dashboard, which also serves the Serve REST API. */
  dashboard: { name: 'dashboard', port: 8265 },
  /** Ray's metrics export. */
  metrics: { name: 'metrics', port: 8080 },
  /** Serve HTTP proxy. */
  serve: { name: 'serve', port: 8000 },
  /** Serve gRPC proxy. */
  serveGrpc: { name: 'serve-grpc', port: 9000 },
} as const satisfies Record<string, NamedPort>;

/** The Serve port a route of `kind` points at: `serve` (8000) for HTTP, `serve-grpc` (9000) for gRPC. */
export function servePortOf(kind: RouteKind = 'HTTP'): NamedPort {
  return kind === 'GRPC' ? RAY_PORTS.serveGrpc : RAY_PORTS.serve;
}

/** The listener of the Gateway the operator creates: KubeRay's single HTTP listener on port 80. */
export const GATEWAY_HTTP_LISTENER = { name: 'http', protocol: 'HTTP', port: 80 } as const;

// Object names.

const SERVE_SVC = '-serve-svc';
const ROUTE_SUFFIX: Readonly<Record<RouteKind, string>> = { HTTP: '-httproute', GRPC: '-grpcroute' };

/** `<cluster>-serve-svc`, the per-cluster serve Service a route backend points at. */
export function perClusterServeService(cluster: string): string {
  return `${cluster}${SERVE_SVC}`;
}

/**
 * `<name>-head-svc`: KubeRay's head Service of the RayCluster `name` (where its dashboard is
 * reached), and, for a RayService `name`, the stable head Service that selects the serving cluster.
 */
export function headService(name: string): string {
  return `${name}-head-svc`;
}

/** `<service>-serve-svc`, the stable serve Service (selects the serving cluster). */
export function stableServeService(service: string): string {
  return `${service}${SERVE_SVC}`;
}

/** `<service>-httproute` (KubeRay's) or `<service>-grpcroute`, the route of a RayService. */
export function serviceRouteName(service: string, kind: RouteKind = 'HTTP'): string {
  return `${service}${ROUTE_SUFFIX[kind]}`;
}

/** The RayService whose route of `kind` is named `route`, or undefined when the name is not a service's route. */
export function serviceOfRoute(route: string, kind: RouteKind = 'HTTP'): string | undefined {
  const suffix = ROUTE_SUFFIX[kind];
  return route.endsWith(suffix) ? route.slice(0, -suffix.length) : undefined;
}

/** `<service>-gateway` (KubeRay's), the Gateway the operator creates when there is no `gatewayRef`. */
export function serviceGatewayName(service: string): string {
  return `${service}-gateway`;
}

/**
 * The Gateway a RayService's route attaches to: its `gatewayRef` (namespace defaulting to the
 * service's), else `<service>-gateway` in the service's namespace. The one rule of the operator's
 * watch, the observer and the route builder.
 */
export function serviceGateway(service: string, namespace: string, gatewayRef: GatewayReference | undefined): { readonly name: string; readonly namespace: string; readonly sectionName?: string } {
  if (!gatewayRef) return { name: serviceGatewayName(service), namespace };
  return { name: gatewayRef.name, namespace: gatewayRef.namespace ?? namespace, ...(gatewayRef.sectionName !== undefined ? { sectionName: gatewayRef.sectionName } : {}) };
}

/**
 * Whether `backend` is the per-cluster serve Service of some cluster of `service`: clusters are
 * `<service>-<5 characters>` (KubeRay's random suffix, or the engine's `newClusterName`), so this
 * recognises backends of clusters this operator no longer lists.
 */
export function isClusterServeServiceOf(service: string, backend: string): boolean {
  return new RegExp(`^${service}-[0-9a-z]{5}${SERVE_SVC}$`).test(backend);
}

/** The cluster a per-cluster serve Service `<cluster>-serve-svc` belongs to (the name itself when it has no such suffix). */
export function clusterOfServeService(backend: string): string {
  return backend.endsWith(SERVE_SVC) ? backend.slice(0, -SERVE_SVC.length) : backend;
}

// RoleBasedGroups (RBG): resource types, and what rayshift's executor writes on groups besides
// `EXECUTOR_LABEL` and `COORDINATION_ANNOTATION` (lib/spec/rbg), which the constructs write.

/** RoleBasedGroup v1alpha2 (RBG ≥ v0.7.0, storage version there). */
export const RBG_V1ALPHA2_TYPE = { apiVersion: RBG_V1ALPHA2, kind: 'RoleBasedGroup', plural: 'rolebasedgroups', namespaced: true } as const;
/** RoleBasedGroup v1alpha1 (RBG v0.6.0; deprecated but served by v0.7.0). */
export const RBG_V1ALPHA1_TYPE = { apiVersion: RBG_V1ALPHA1, kind: 'RoleBasedGroup', plural: 'rolebasedgroups', namespaced: true } as const;
/** Either RoleBasedGroup resource type. */
export type RbgResourceType = typeof RBG_V1ALPHA2_TYPE | typeof RBG_V1ALPHA1_TYPE;
/** RoleInstanceSet, RBG v1alpha2's default workload of a role (named `<group>-<role>`, owned by the group). */
export const ROLE_INSTANCE_SET_TYPE = { apiVersion: RBG_V1ALPHA2, kind: 'RoleInstanceSet', plural: 'roleinstancesets', namespaced: true } as const;
/** StatefulSet, RBG v1alpha1's default workload of a role (RBG v0.6.0; named `<group>-<role>`, owned by the group). */
export const STATEFUL_SET_TYPE = { apiVersion: 'apps/v1', kind: 'StatefulSet', plural: 'statefulsets', namespaced: true } as const;
/** Deployment (apps/v1): a routed rule's router per release (`RoleBasedGroupRouters`). */
export const DEPLOYMENT_TYPE = { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments', namespaced: true } as const;
/** RoleInstance, one replica of a RoleInstanceSet (named `<set>-<ordinal>` in its stateful pattern, labelled with its revision). */
export const ROLE_INSTANCE_TYPE = { apiVersion: RBG_V1ALPHA2, kind: 'RoleInstance', plural: 'roleinstances', namespaced: true } as const;
/** The label of a workload's replica naming the revision it runs (StatefulSet Pods, RoleInstances). */
export const CONTROLLER_REVISION_LABEL = 'controller-revision-hash';
/** RBG's CoordinatedPolicy (v1alpha2; named like the group it coordinates). */
export const COORDINATED_POLICY_TYPE = { apiVersion: RBG_V1ALPHA2, kind: 'CoordinatedPolicy', plural: 'coordinatedpolicies', namespaced: true } as const;
/** RoleBasedGroupWarmup (RBG v0.8.0-alpha.5). */
export const WARMUP_TYPE = { apiVersion: RBG_V1ALPHA2, kind: 'RoleBasedGroupWarmup', plural: 'rolebasedgroupwarmups', namespaced: true } as const;

/** `EXECUTOR_LABEL` (lib/spec/rbg) value of groups the operator rolls. */
export const OPERATOR_EXECUTOR = 'operator';
/** Annotation where the executor reports each coordination's progress, as JSON (lib/runtime/rbg/status.ts). */
export const STATUS_ANNOTATION = 'rayshift.dev/rollout-status';
/** Reporting component of the Events the executor records. */
export const EVENT_CONTROLLER = 'rayshift.dev/rbg-coordinator';
/** Reporting component of the Events the rayshift operator records on RayServices (analysis verdicts). */
export const RAYSERVICE_EVENT_CONTROLLER = 'rayshift.dev/rayservice-operator';
/** Label on an executor's warmup naming its group, so a warmup's status change wakes the group. */
export const WARMUP_GROUP_LABEL = 'rayshift.dev/warmup-for';

// Version-matched routing (a coordination rule's `router`, lib/spec/rbg-router.ts).

/** Label rayshift puts on a routed rule's prefill and decode pod templates: the release of the pair (`routerRevision`). */
export const ROUTER_REVISION_LABEL = 'rayshift.dev/router-revision';
/** Label of a router's own objects (Deployment, pods, Service) and of the rule's route: the group it routes (with `ROUTER_RULE_LABEL`, and `ROUTER_REVISION_LABEL` but on the route). */
export const ROUTER_FOR_LABEL = 'rayshift.dev/router-for';
/** Label of a router's own objects and of the rule's route: the coordination rule it routes. */
export const ROUTER_RULE_LABEL = 'rayshift.dev/router-rule';
/** RBG v1alpha2's labels on every pod of a role (`GetCommonLabelsFromRole`, RBG v0.7.0). */
export const RBG_V1ALPHA2_POD_LABELS = { group: 'rbg.workloads.x-k8s.io/group-name', role: 'rbg.workloads.x-k8s.io/role-name' } as const;
/** RBG v1alpha1's labels on every pod of a role (`GetCommonLabelsFromRole`, RBG v0.6.0/v0.7.0). */
export const RBG_V1ALPHA1_POD_LABELS = { group: 'rolebasedgroup.workloads.x-k8s.io/name', role: 'rolebasedgroup.workloads.x-k8s.io/role' } as const;
/** The labels RBG puts on every Pod of `group` (by its API version): its group's name and its role's. */
export function rbgPodLabels(group: { readonly apiVersion?: unknown }): { readonly group: string; readonly role: string } {
  return String(group.apiVersion).endsWith('/v1alpha1') ? RBG_V1ALPHA1_POD_LABELS : RBG_V1ALPHA2_POD_LABELS;
}
/** The name of a role's workload, whatever its kind: `<group>-<role>`. */
export function rbgWorkloadName(group: string, role: string): string {
  return `${group}-${role}`;
}
/**
 * The ordinal of a workload's replica named `<workload>-<ordinal>`, or undefined for any other name.
 * With `ofPod`, a replica's Pod named so with a suffix counts too (`<workload>-<ordinal>-<more>`: a
 * leader/worker instance's workers, a components instance's Pods, RBG v0.6.0–v0.8.0-alpha.5).
 */
export function ordinalOf(workload: string, name: unknown, ofPod = false): number | undefined {
  const text = String(name);
  const rest = text.startsWith(`${workload}-`) ? text.slice(workload.length + 1) : '';
  const digits = ofPod ? rest.split('-')[0] : rest;
  return /^\d{1,9}$/.test(digits) ? Number(digits) : undefined;
}
/** Pod annotation sglang-router's Kubernetes discovery reads a prefill's bootstrap port from (its `bootstrap_port_annotation` default, 0.3.2). */
export const SGLANG_BOOTSTRAP_PORT_ANNOTATION = 'sglang.ai/bootstrap-port';
/**
 * RBG v1alpha2's update type (`rolloutStrategy.rollingUpdate.type`, v0.7.0 and v0.8.0-alpha.5) that
 * replaces a role's Pods instead of updating them in place (the default, `InPlaceIfPossible`).
 */
export const RBG_RECREATE_POD_UPDATE = 'RecreatePod';
/**
 * RBG's role annotation choosing how a RoleInstanceSet keeps its instances (`role-instance-pattern`,
 * v0.7.0 and v0.8.0-alpha.5), and the value whose reconciler honors `RBG_RECREATE_POD_UPDATE` on
 * v0.7.0: its default, `Stateful`, updates in place whatever the type says (v0.8.0-alpha.5 honors it in both).
 */
export const RBG_INSTANCE_PATTERN_ANNOTATION = 'rbg.workloads.x-k8s.io/role-instance-pattern';
/** The `RBG_INSTANCE_PATTERN_ANNOTATION` value of a RoleInstanceSet whose instances are named without ordinals and replaced on update. */
export const RBG_STATELESS_PATTERN = 'Stateless';

/**
 * The `controller-revision-hash` label a Stateless RoleInstanceSet writes on its instances for the
 * ControllerRevision `revision`: only its last `-` segment (RBG v0.7.0 and v0.8.0-alpha.5,
 * statelessmode/utils/utils.go `WriteRevisionHash`, `GetShortHash`); the stateful pattern writes the name.
 */
export function statelessRevisionLabel(revision: string): string {
  return revision.slice(revision.lastIndexOf('-') + 1);
}

/** True when a replica's revision label names `revision`, whole or by its last segment, as RBG compares them (`EqualToRevisionHash`). */
export function sameRevision(label: string | undefined, revision: string): boolean {
  return label !== undefined && (label === revision || statelessRevisionLabel(label) === statelessRevisionLabel(revision));
}

/** RBG's condition of a ready RoleInstance (`RoleInstanceReady`, api/workloads/v1alpha2). */
export const RBG_ROLE_INSTANCE_READY = 'RoleInstanceReady';

// Sharding of the operator's replicas (lib/spec/sharding.ts, lib/runtime/kube/shard-leases.ts).

/** Label of every Lease of a sharded operator: the operator's Lease name (`RAYSHIFT_LEASE_NAME`), their names' prefix, so one list reads them all. */
export const LEASE_OF_LABEL = 'rayshift.dev/lease-of';
/** Label of a sharded operator's Leases: `member` (one per replica, its liveness) or `shard`. */
export const LEASE_ROLE_LABEL = 'rayshift.dev/lease-role';
/** Label of a shard Lease: the shard's number. */
export const SHARD_LABEL = 'rayshift.dev/shard';
/** The Lease whose holder works on shard `shard` of the operator `prefix`. */
export function shardLeaseName(prefix: string, shard: number): string {
  return `${prefix}-shard-${shard}`;
}
/** The Lease a replica `identity` of the operator `prefix` renews while alive. */
export function memberLeaseName(prefix: string, identity: string): string {
  return `${prefix}-member-${identity}`;
}
