/**
 * Which RayService an event about a watched object wakes. The operator watches what its services
 * own, but two kinds of object reach their service only through a RayCluster: a head Pod (labelled
 * with its cluster) and the EndpointSlice of a per-cluster serve Service (labelled, as KubeRay
 * labels it, with the cluster's name in `ray.io/originated-from-cr-name`).
 */
import type { KubeObject } from '../lib/runtime/kube/types';
import { CLUSTER_LABEL, ORIGINATED_FROM_NAME, RAYSHIFT_RAYSERVICE } from '../lib/spec/object-names';

/** What routing reads: the operator's caches. */
export interface RoutingView {
  /** True when `namespace/name` is a rayshift RayService. */
  hasService(namespace: string, name: string): boolean;
  /** The RayCluster `namespace/name`, if it exists. */
  cluster(namespace: string, name: string): Promise<KubeObject | undefined>;
}

/** `namespace/name` of the rayshift RayService that is `obj`'s controller, if one is. */
export function controllingServiceKey(obj: KubeObject): string | undefined {
  const owner = (obj.metadata.ownerReferences ?? []).find((r) => r.controller && r.apiVersion === RAYSHIFT_RAYSERVICE.apiVersion && r.kind === RAYSHIFT_RAYSERVICE.kind);
  return owner ? `${obj.metadata.namespace}/${owner.name}` : undefined;
}

async function serviceOfCluster(view: RoutingView, namespace: string, cluster: string): Promise<string | undefined> {
  const c = await view.cluster(namespace, cluster);
  return c === undefined ? undefined : controllingServiceKey(c);
}

/** The service a head Pod's change wakes: the controller of the RayCluster the Pod is labelled with. */
export function serviceOfHeadPod(pod: KubeObject, view: RoutingView): Promise<string | undefined> {
  const cluster = pod.metadata.labels?.[CLUSTER_LABEL];
  return cluster === undefined ? Promise.resolve(undefined) : serviceOfCluster(view, String(pod.metadata.namespace), cluster);
}

/**
 * The service a serve EndpointSlice's change wakes. The slice carries its Service's labels: a
 * stable serve Service names its RayService, a per-cluster one its RayCluster.
 */
export function serviceOfServeEndpoints(slice: KubeObject, view: RoutingView): Promise<string | undefined> {
  const namespace = String(slice.metadata.namespace);
  const origin = slice.metadata.labels?.[ORIGINATED_FROM_NAME];
  if (origin === undefined) return Promise.resolve(undefined);
  if (view.hasService(namespace, origin)) return Promise.resolve(`${namespace}/${origin}`);
  return serviceOfCluster(view, namespace, origin);
}
