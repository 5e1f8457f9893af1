/**
 * Writes the `ray.io/serve` label of a cluster's head Pods (the value is the engine's,
 * `headServeLabel` through a `setHeadServeLabel` step): the one Pod write of the RayService
 * executors. KubeRay creates a RayService's head Pods with the label `false` and leaves it to its
 * RayService controller, which does not act on rayshift's RayServices, so without this no head Pod
 * would ever be a serve endpoint (a head-only cluster's serve Services would have none at all).
 */
import type { HeadServeLabel } from '../../engine/head-serve-label';
import { CLUSTER_LABEL, NODE_TYPE_LABEL, POD, SERVE_LABEL } from '../../spec/object-names';
import { isStatus } from '../kube/errors';
import { ObjectReader } from '../kube/object-reader';
import type { RayServiceKube } from './ports';

/**
 * Gives every head Pod of `cluster` (by `ray.io/cluster` and `ray.io/node-type=head`) that does not
 * carry `value` that label (a merge patch of the one label); returns the writes made. A Pod deleted
 * meanwhile, or terminating, is left alone.
 */
export async function labelHeadPods(client: Pick<RayServiceKube, 'patchMerge'>, reader: ObjectReader, namespace: string, cluster: string, value: HeadServeLabel): Promise<number> {
  let writes = 0;
  for (const pod of await reader.list(POD, namespace, { [CLUSTER_LABEL]: cluster, [NODE_TYPE_LABEL]: 'head' })) {
    if (pod.metadata.deletionTimestamp || pod.metadata.labels?.[SERVE_LABEL] === value) continue;
    try {
      reader.wrote(await client.patchMerge(POD, String(pod.metadata.name), namespace, { metadata: { labels: { [SERVE_LABEL]: value } } }));
      writes++;
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }
  return writes;
}
