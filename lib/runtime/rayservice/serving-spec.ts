/**
 * The serving spec: the operator's record, in the RayService's own status (`status.servingSpec`), of
 * the spec its serving cluster runs, i.e. what a rollback restores. It lives in the status because
 * only the status subresource's writers (the operator's ServiceAccount) can change it: a RayCluster's
 * spec and annotations, which anyone who may edit RayClusters can change, are never a rollback
 * source. Its content is always a copy of the RayService's own spec, taken when that spec was the
 * serving cluster's with no upgrade in flight; between such moments the stored record is kept.
 */
import type { ObservedCluster } from '../../engine/observation';
import type { RayServiceStatus } from '../../engine/status';
import type { RayServiceSpec } from '../../spec/rayservice';
import { asObject, isObject } from '../../spec/read';

/** The `status` key of the record. */
export const SERVING_SPEC_FIELD = 'servingSpec';

/** What the serving cluster runs, as the operator recorded it. */
export interface ServingSpec {
  /** The cluster that served when the record was taken. */
  readonly rayClusterName: string;
  /** `clusterSpecHash()` of `rayClusterConfig` (the cluster's spec hash). */
  readonly specHash: string;
  /** `spec.rayClusterConfig` of the RayService as it was stored then. */
  readonly rayClusterConfig: Record<string, unknown>;
  /** `spec.serveConfigV2` then; absent when the spec had none. */
  readonly serveConfigV2?: string;
}

/** The record in a status object (`status` of a RayService), or undefined when there is none or it is malformed. */
export function servingSpecIn(status: unknown): ServingSpec | undefined {
  const r = asObject(asObject(status)[SERVING_SPEC_FIELD]);
  if (typeof r.rayClusterName !== 'string' || typeof r.specHash !== 'string' || !isObject(r.rayClusterConfig)) return undefined;
  if (r.serveConfigV2 !== undefined && typeof r.serveConfigV2 !== 'string') return undefined;
  return {
    rayClusterName: r.rayClusterName,
    specHash: r.specHash,
    rayClusterConfig: r.rayClusterConfig,
    ...(r.serveConfigV2 !== undefined ? { serveConfigV2: r.serveConfigV2 } : {}),
  };
}

/**
 * The record to write with a pass's status. When the engine leaves a serving cluster with no
 * upgrade in flight and that cluster was made from the goal spec, the goal spec is the serving one:
 * a new record (the Serve config included, which the pass applies in place if it changed). Otherwise
 * (an upgrade or rollback in flight, a spec the operator does not roll out) the stored record stands.
 */
export function nextServingSpec(
  stored: unknown,
  spec: RayServiceSpec,
  engine: RayServiceStatus,
  goalSpecHash: string,
  clusters: readonly ObservedCluster[],
): ServingSpec | undefined {
  const previous = servingSpecIn(stored);
  const active = engine.activeClusterName;
  if (active === undefined || engine.pendingClusterName !== undefined || !isObject(spec.rayClusterConfig)) return previous;
  // A spec the engine rejected (aborted, timed out) never becomes the record, whatever a cluster claims.
  if (engine.rejectedSpecHash === goalSpecHash) return previous;
  if (clusters.find((c) => c.name === active)?.specHash !== goalSpecHash) return previous;
  return {
    rayClusterName: active,
    specHash: goalSpecHash,
    rayClusterConfig: spec.rayClusterConfig as unknown as Record<string, unknown>,
    ...(typeof spec.serveConfigV2 === 'string' ? { serveConfigV2: spec.serveConfigV2 } : {}),
  };
}
