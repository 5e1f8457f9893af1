/**
 * The RoleBasedGroupWarmup (RBG v0.8) a rayshift executor runs before a coordinated rollout: which
 * warmup the group's current templates need (pure), the object created for it, what is read of its
 * status, and the holds that keep the coordinated roles where they stand while it runs. The gate's
 * decision is the engine's (`warmupGate`); the reconciler does the reads and writes.
 */
import type { WarmupGateStatus, WarmupObservation } from '../../engine/rbg-warmup';
import { EXECUTOR_LABEL } from '../../spec/rbg';
import { ResolvedRolloutWarmup, roleImages, rolloutWarmupSpec, warmupHash } from '../../spec/rbg-warmup';
import { JsonObject, asArray, asObject } from '../../spec/read';
import { KubeObject } from '../kube/types';
import type { ExecutorRule } from './coordination';
import type { ObservedRole } from './observe';
import type { CoordinationStatus } from './status';
import { CoordinationStep, holdWrites } from './step';

/** RoleBasedGroupWarmup (RBG v0.8.0-alpha.5). */
export const WARMUP_TYPE = { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleBasedGroupWarmup', plural: 'rolebasedgroupwarmups', namespaced: true } as const;
/** Label on an executor's warmup naming its group, so a warmup's status change wakes the group. */
export const WARMUP_GROUP_LABEL = 'rayshift.dev/warmup-for';

/** The warmup a group's current templates need. */
export interface PlannedWarmup {
  /** `<group>-warmup-<revision>`. */
  readonly name: string;
  /** Hash of the spec: the same images and policies are the same warmup. */
  readonly revision: string;
  readonly spec: JsonObject;
}

/** The warmup of `group` (wire form) for the option `w`: the images of each warmed role's current template, on the nodes its Pods run on. */
export function plannedWarmup(group: JsonObject, w: ResolvedRolloutWarmup): PlannedWarmup {
  const name = String(asObject(group.metadata).name);
  const roles = new Map(asArray(asObject(group.spec).roles).map((r) => [String(asObject(r).name), asObject(r)]));
  const images = new Map(w.roles.filter((r) => roles.has(r)).map((r) => [r, roleImages(roles.get(r)!)] as const).filter(([, list]) => list.length > 0));
  const spec = rolloutWarmupSpec(name, images, w);
  const revision = warmupHash(spec);
  return { name: `${name}-warmup-${revision}`, revision, spec };
}

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

/** Reasons of a coordination held by its warmup (before its first round). */
const HELD_REASONS: ReadonlySet<string> = new Set(['WarmingImages', 'WarmupFailed', 'WarmupTimedOut']);

/** True for a coordination status written while its warmup held it: the next step starts the rollout afresh. */
export function heldByWarmup(status: CoordinationStatus): boolean {
  return HELD_REASONS.has(status.reason);
}

/**
 * The step of a coordination whose warmup is not over: every role held where it stands (paused at
 * its partition), the last status kept with the warmup's phase, reason and message (`Failed` when
 * the warmup failed and `onFailure` is `Fail`).
 */
export function heldForWarmup(rule: ExecutorRule, roles: ReadonlyMap<string, ObservedRole>, prior: CoordinationStatus, warmup: WarmupGateStatus): CoordinationStep {
  const { deadlineAt: _deadline, blockingRole: _blocking, ...rest } = prior;
  const failed = warmup.phase === 'Failed';
  return { status: { ...rest, phase: failed ? 'Failed' : 'Progressing', reason: failed ? warmup.reason : 'WarmingImages', message: warmup.message }, writes: holdWrites(rule, roles), events: [] };
}
