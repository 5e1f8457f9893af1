/**
 * The RoleBasedGroupWarmup (RBG v0.8) a rayshift executor runs before a coordinated rollout, as the
 * API server sees it: its resource type, the object created for it and what is read of its status.
 * Which warmup is needed, the gate and the holds are the engine's (lib/engine/rbg-warmup.ts); the
 * reconciler does the reads and writes.
 */
import type { PlannedWarmup, WarmupObservation } from '../../engine/rbg-warmup';
import { WARMUP_GROUP_LABEL, WARMUP_TYPE } from '../../spec/object-names';
import { EXECUTOR_LABEL } from '../../spec/rbg';
import { asArray, asObject } from '../../spec/read';
import { KubeObject } from '../kube/types';

/** The object to create: owned by the group (deleted with it), labelled with its executor and the group's name. */
export function warmupObject(group: KubeObject, planned: PlannedWarmup): KubeObject {
  const executor = group.metadata.labels?.[EXECUTOR_LABEL];
  return {
    apiVersion: WARMUP_TYPE.apiVersion,
    kind: WARMUP_TYPE.kind,
    metadata: {
      name: planned.name,
      namespace: group.metadata.namespace,
      labels: { [WARMUP_GROUP_LABEL]: String(group.metadata.name), ...(executor ? { [EXECUTOR_LABEL]: executor } : {}) },
      ...(group.metadata.uid ? { ownerReferences: [{ apiVersion: group.apiVersion, kind: group.kind, name: String(group.metadata.name), uid: group.metadata.uid }] } : {}),
    },
    spec: planned.spec,
  };
}

/** What the gate reads of a warmup: RBG's phase and node counts, and its Failed or Complete condition's message. */
export function observeWarmup(obj: KubeObject): WarmupObservation {
  const status = asObject(obj.status);
  const count = (v: unknown) => (typeof v === 'number' && v >= 0 ? v : 0);
  const condition = asArray(status.conditions)
    .map(asObject)
    .find((c) => (c.type === 'Failed' || c.type === 'Complete') && c.status === 'True');
  return {
    phase: typeof status.phase === 'string' ? status.phase : '',
    desired: count(status.desired),
    succeeded: count(status.succeeded),
    failed: count(status.failed),
    active: count(status.active),
    ...(typeof condition?.message === 'string' ? { message: condition.message } : {}),
  };
}
