/**
 * Keeps the `ray.io/serve` label of a RayService's head Pods as `headServeLabel` (lib/engine) says:
 * the one Pod write of the RayService executors. KubeRay creates a RayService's head Pods with the
 * label `false` and leaves it to its RayService controller, which does not act on rayshift's
 * RayServices, so without this no head Pod would ever be a serve endpoint (a head-only cluster's
 * serve Services would have none at all).
 */
import { headServeLabel } from '../../engine/head-serve-label';
import { ObservedCluster } from '../../engine/observation';
import { CLUSTER_LABEL, NODE_TYPE_LABEL, POD, SERVE_LABEL } from '../../spec/object-names';
import { isStatus } from '../kube/errors';
import { ObjectReader } from '../kube/object-reader';
import type { RayServiceKube } from './ports';

/**
 * Writes the serve label of every head Pod of `clusters` (by `ray.io/cluster` and
 * `ray.io/node-type=head`) that does not carry the rule's value (a merge patch of that one label);
 * returns the writes made. A Pod deleted meanwhile is skipped.
 */
export async function syncHeadServeLabels(client: Pick<RayServiceKube, 'patchMerge'>, reader: ObjectReader, namespace: string, clusters: readonly ObservedCluster[], excludeHead: boolean): Promise<number> {
  let writes = 0;
  for (const cluster of clusters) {
    const label = headServeLabel(cluster, excludeHead);
    for (const pod of await reader.list(POD, namespace, { [CLUSTER_LABEL]: cluster.name, [NODE_TYPE_LABEL]: 'head' })) {
      if (pod.metadata.deletionTimestamp || pod.metadata.labels?.[SERVE_LABEL] === label) continue;
      try {
        reader.wrote(await client.patchMerge(POD, String(pod.metadata.name), namespace, { metadata: { labels: { [SERVE_LABEL]: label } } }));
        writes++;
      } catch (err) {
        if (!isStatus(err, 404)) throw err;
      }
    }
  }
  return writes;
}
