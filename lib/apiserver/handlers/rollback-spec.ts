/**
 * The goal spec that rolls a RayService back to its serving cluster. `:rollback` takes it from the
 * operator's record in the service's own status (`status.servingSpec`, which only the status
 * subresource's writers can change), never from the RayCluster, whose spec and annotations anyone
 * who may edit RayClusters can change. Worker-group scaling (`replicas`, `minReplicas`,
 * `maxReplicas`, outside the hash) is taken from the current goal either way.
 *
 * `revertingClusterConfig` derives the same from a RayCluster (for revisions no record describes):
 * its spec, accepted only when its hash equals the cluster's recorded spec hash, so the operator sees
 * the goal "reverted" rather than a third spec. The API server fills CRD defaults (e.g. container
 * port `protocol: TCP`) into RayClusters that the RayService's own spec may lack; when the spec as
 * stored does not hash equal, the same spec without fields the current goal does not have is tried.
 * A pending cluster starts without `replicas`.
 */
import { clusterSpecHash, type JsonValue } from '../../engine/cluster-hash';
import type { KubeObject } from '../../runtime/kube/types';
import { SPEC_HASH_ANNOTATION } from '../../spec/object-names';
import { servingSpecIn } from '../../runtime/rayservice/serving-spec';
import { asArray, asObject, isObject } from '../../spec/read';

/** `value` without the object keys that `shape` lacks at the same place (arrays are matched by index). */
function withoutKeysAbsentFrom(value: unknown, shape: unknown): unknown {
  if (Array.isArray(value)) return value.map((v, i) => withoutKeysAbsentFrom(v, Array.isArray(shape) ? shape[i] : undefined));
  if (!isObject(value)) return value;
  if (!isObject(shape)) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k in shape).map(([k, v]) => [k, withoutKeysAbsentFrom(v, shape[k])]));
}

const SCALING = ['replicas', 'minReplicas', 'maxReplicas'] as const;

/** `config` with each worker group's scaling fields as the goal's group of the same name has them. */
function withGoalScaling(config: Record<string, unknown>, goalClusterConfig: unknown): Record<string, unknown> {
  const goalGroups = asArray(asObject(goalClusterConfig).workerGroupSpecs).map(asObject);
  const workerGroupSpecs = asArray(config.workerGroupSpecs).map((raw) => {
    const group = { ...asObject(raw) };
    const goal = goalGroups.find((g) => g.groupName === group.groupName);
    for (const key of SCALING) {
      if (goal?.[key] !== undefined) group[key] = goal[key];
      else delete group[key];
    }
    return group;
  });
  return { ...config, workerGroupSpecs };
}

/** The rayClusterConfig that reverts to `serving`, or undefined when none hashes like it. */
export function revertingClusterConfig(serving: KubeObject, goalClusterConfig: unknown): Record<string, unknown> | undefined {
  const recorded = serving.metadata.annotations?.[SPEC_HASH_ANNOTATION];
  for (const candidate of [serving.spec, withoutKeysAbsentFrom(serving.spec, goalClusterConfig)]) {
    if (isObject(candidate) && clusterSpecHash(candidate as JsonValue) === recorded) return withGoalScaling(candidate, goalClusterConfig);
  }
  return undefined;
}

/** The spec fields a rollback writes: the cluster config, and the Serve config (`null` removes it, as the serving spec had none). */
export interface RevertingSpec {
  readonly rayClusterConfig: Record<string, unknown>;
  readonly serveConfigV2: string | null;
}

/**
 * The spec that reverts `svc` to its serving cluster `serving`, from the operator's record in
 * `svc.status`; undefined when there is no record of that cluster or it no longer hashes like it.
 */
export function recordedRevertingSpec(svc: KubeObject, serving: string): RevertingSpec | undefined {
  const record = servingSpecIn(svc.status);
  if (!record || record.rayClusterName !== serving) return undefined;
  if (clusterSpecHash(record.rayClusterConfig as JsonValue) !== record.specHash) return undefined;
  return { rayClusterConfig: withGoalScaling(record.rayClusterConfig, asObject(svc.spec).rayClusterConfig), serveConfigV2: record.serveConfigV2 ?? null };
}
