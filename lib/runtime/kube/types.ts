/** Object, list and resource-type shapes shared by the client and the informer. */
import { ENDPOINT_SLICE, GATEWAY, GRPCROUTE, HTTPROUTE, KUBERAY_RAYSERVICE, POD, RAYCLUSTER, SERVICE } from '../../spec/object-names';

/** Pass as the namespace of `list`/`watch` to cover every namespace. */
export const ALL_NAMESPACES = '*';

/** `metadata.managedFields[]` entry. */
export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: 'Apply' | 'Update' | string;
  readonly apiVersion?: string;
  readonly time?: string;
  readonly fieldsType?: string;
  readonly fieldsV1?: unknown;
  readonly subresource?: string;
}

/** `metadata.ownerReferences[]` entry. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Object metadata (the fields rayshift reads; others pass through). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
  [key: string]: unknown;
}

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** One page (or all pages) of a list. */
export interface KubeList<T extends KubeObject = KubeObject> {
  /** The items, each with `apiVersion` and `kind` filled in. */
  items: T[];
  /** The list's resourceVersion (start a watch from it). */
  resourceVersion: string;
  /** Continue token of the next page; undefined on the last page. */
  continue?: string;
  /** `metadata.remainingItemCount` when the server sent it. */
  remainingItemCount?: number;
}

/**
 * A resource type: `apiVersion` (`v1`, `ray.io/v1`) and `kind`. `plural` and `namespaced` may be given
 * to skip discovery (needed when the caller may not read discovery, or to save a round trip).
 */
export interface ResourceType {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural?: string;
  readonly namespaced?: boolean;
}

/** A resource type with its REST mapping known. */
export interface ResolvedResource {
  readonly apiVersion: string;
  readonly kind: string;
  /** `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** Well-known resource types (no discovery round trip); those a RayService owns are lib/spec/object-names.ts's. */
export const KnownTypes = {
  Namespace: { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
  ConfigMap: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
  Secret: { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  Service: SERVICE,
  Pod: POD,
  Node: { apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false },
  ResourceQuota: { apiVersion: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', namespaced: true },
  LimitRange: { apiVersion: 'v1', kind: 'LimitRange', plural: 'limitranges', namespaced: true },
  EndpointSlice: ENDPOINT_SLICE,
  ServiceAccount: { apiVersion: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true },
  Event: { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true },
  Lease: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', plural: 'leases', namespaced: true },
  RayService: KUBERAY_RAYSERVICE,
  RayCluster: RAYCLUSTER,
  Gateway: GATEWAY,
  HTTPRoute: HTTPROUTE,
  GRPCRoute: GRPCROUTE,
  SelfSubjectReview: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', plural: 'selfsubjectreviews', namespaced: false },
} as const satisfies Record<string, Required<ResourceType>>;

/** Splits `apiVersion` into group and version (`v1` → `['', 'v1']`). */
export function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const i = apiVersion.indexOf('/');
  return i < 0 ? ['', apiVersion] : [apiVersion.slice(0, i), apiVersion.slice(i + 1)];
}

/** The cache key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: { metadata?: { name?: string; namespace?: string } }): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name}` : String(m.name);
}

/** The collection path of a resource, e.g. `/apis/ray.io/v1/namespaces/ns/rayservices` or `/api/v1/namespaces`. */
export function collectionPath(r: ResolvedResource, namespace?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  if (r.namespaced && namespace) return `${base}/namespaces/${encodeURIComponent(namespace)}/${r.plural}`;
  return `${base}/${r.plural}`;
}

/** The path of one object, optionally of a subresource (`status`). */
export function objectPath(r: ResolvedResource, name: string, namespace?: string, subresource?: string): string {
  if (!name) throw new Error(`${r.kind}: a name is required`);
  if (r.namespaced && !namespace) throw new Error(`${r.kind} ${name}: a namespace is required (the kind is namespaced)`);
  const p = `${collectionPath(r, r.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}`;
  return subresource ? `${p}/${subresource}` : p;
}

/** Builds a query string from the defined values (`?a=1&b=x`), or `''`. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
