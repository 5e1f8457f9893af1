/**
 * Whether a cluster's head Pod serves: the value of its `ray.io/serve` label, which the per-cluster
 * and stable serve Services select on. KubeRay starts a RayService's head Pods at `false` and leaves
 * the label to the RayService controller, which rayshift replaces for its own RayServices; this is
 * that controller's rule (KubeRay v1.7.0 `updateHeadPodServeLabel`), read from what Serve reports of
 * the head's proxy instead of a second health probe of the Pod.
 */
import { ObservedCluster } from './observation';

/** The `ray.io/serve` label value of a head Pod. */
export type HeadServeLabel = 'true' | 'false';

/**
 * `"true"` while Serve reports the head node's proxy HEALTHY, unless the spec keeps the head out of
 * the serve Service (`excludeHeadPodFromServeSvc`); `"false"` otherwise (a head whose proxy is
 * starting, unhealthy or unobserved gets no traffic, as with KubeRay).
 */
export function headServeLabel(cluster: Pick<ObservedCluster, 'headReady' | 'headProxyHealthy'>, excludeHeadPodFromServeSvc: boolean): HeadServeLabel {
  return !excludeHeadPodFromServeSvc && cluster.headReady && cluster.headProxyHealthy === true ? 'true' : 'false';
}
