/**
 * The rollout status the executor writes on a RoleBasedGroup, as JSON in the annotation
 * `rayshift.dev/rollout-status` (RBG's status subresource belongs to the RBG controller, and its
 * schema would prune foreign fields). One entry per coordination (`CoordinationStatus`, the
 * engine's), with one entry per role.
 */
import type { CoordinationCapacityStatus, CoordinationStatus, CoordinationSurgeStatus } from '../../engine/rbg-coordination-status';
import type { WarmupGateStatus } from '../../engine/rbg-warmup';
import type { RouterStatus } from '../../engine/rbg-router-step';
import { storedOwner, type ObjectOwner } from '../../engine/shards';
import { asArray, asObject, isObject } from '../../spec/read';
import { STATUS_ANNOTATION } from '../../spec/object-names';
import { podsInWords } from '../../engine/surge-scheduling';

// The type's home is the engine; re-exported for readers of the status document.
export type { CoordinationStatus } from '../../engine/rbg-coordination-status';

/** The whole annotation. */
export interface RolloutStatusDocument {
  /** Group generation the statuses describe: the one read, plus one when the same patch wrote role partitions. */
  readonly observedGeneration: number;
  /** Set when the coordination annotation cannot be read; no coordination runs then. */
  readonly invalid?: string;
  readonly coordinations: readonly CoordinationStatus[];
  /** The warmup of the latest warmed revision (RBG v0.8, the coordination's `warmup` option). */
  readonly warmup?: WarmupGateStatus;
  /** The operator replica that wrote the document (and the group's shard, sharded). */
  readonly owner?: ObjectOwner;
}

/** The status document on a group, if it carries a readable one. */
export function readRolloutStatus(group: { metadata?: { annotations?: Record<string, string> } }): RolloutStatusDocument | undefined {
  const text = group.metadata?.annotations?.[STATUS_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    const doc = JSON.parse(text) as unknown;
    if (!isObject(doc) || !Array.isArray(doc.coordinations)) return undefined;
    const owner = storedOwner(doc.owner);
    return {
      observedGeneration: Number(doc.observedGeneration ?? 0),
      ...(typeof doc.invalid === 'string' ? { invalid: doc.invalid } : {}),
      coordinations: asArray(doc.coordinations).map(asObject) as unknown as CoordinationStatus[],
      ...(isObject(doc.warmup) ? { warmup: doc.warmup as unknown as WarmupGateStatus } : {}),
      ...(owner ? { owner } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * One line per coordination, for logs and the CLI: `pd-rollout Progressing (round 3): prefill 12/40,
 * decode 6/20 updated; skew 0.0% ≤ 10%` (and the first round's preflight, `describeCapacity`, and
 * the scheduler watch's record, `describeSurge`, when it has them); during and after a rollback, its rounds and each role's
 * replicas on the abandoned revision: `pd-rollout RollingBack (round 2, rollback round 1): prefill
 * 1/4, decode 1/2 on the abandoned revision; …`.
 */
export function describeCoordination(s: CoordinationStatus): string {
  if (s.rollback !== undefined) {
    const back = s.roles.map((r) => `${r.name} ${r.replicasByRevision?.abandoned ?? r.updated}/${r.desired}`).join(', ');
    return `${s.name} ${s.phase} (round ${s.rounds}, rollback round ${s.rollback.rounds}): ${back} on the abandoned revision; skew ${s.skewPercent.toFixed(1)}% ≤ ${s.maxSkewPercent}%`;
  }
  const roles = s.roles.map((r) => `${r.name} ${r.updated}/${r.desired}`).join(', ');
  const blocking = s.blockingRole !== undefined ? `; blocked by ${s.blockingRole}` : '';
  const router = s.router ? `; ${describeRouter(s.router)}` : '';
  const surge = s.surgeUnschedulable ? `; ${describeSurge(s.surgeUnschedulable)}` : '';
  const capacity = s.capacity ? `; ${describeCapacity(s.capacity)}` : '';
  return `${s.name} ${s.phase} (round ${s.rounds}): ${roles} updated; skew ${s.skewPercent.toFixed(1)}% ≤ ${s.maxSkewPercent}%${blocking}${router}${capacity}${surge}`;
}

/** The first round's preflight when it did not fit (`first round did not fit (2026-11-30T10:00:01.000Z): decode: needs 4 nvidia.com/gpu on nodes matching {}, 1 free`) or could not read the cluster (`first round not placed (…): the cluster could not be read: …`). */
export function describeCapacity(c: CoordinationCapacityStatus): string {
  return c.outcome === 'unknown' ? `first round not placed (${c.at}): ${c.message}` : `first round did not fit (${c.at}): ${c.message}`;
}

/** The scheduler watch's record: `2 Pods of decode Unschedulable since 2026-11-30T10:00:02.000Z (past surgeUnschedulableSeconds)`. */
export function describeSurge(u: CoordinationSurgeStatus): string {
  return `${podsInWords(u.pods)} of ${u.roles.join(', ') || 'the coordinated roles'} Unschedulable since ${u.since}${u.boundExceeded ? ' (past surgeUnschedulableSeconds)' : ''}`;
}

/**
 * The router route's split, per release: `route pd-pd-router: old 1a2b3c4d5e 75%, new 6f7a8b9c0d 25%`,
 * with `(old router may go)` once it carries nothing for good, the router Deployments scaled to 0
 * and those the route waits for, or why no weight is written.
 */
export function describeRouter(r: RouterStatus): string {
  if (r.problem !== undefined) return `route ${r.route}: no weights written: ${r.problem}`;
  const split = r.releases.map((x) => `${x.current ? 'new' : 'old'} ${x.revision} ${x.weight}%`).join(', ');
  const down = r.scaledDown && r.scaledDown.length > 0 ? `; scaled to 0: ${r.scaledDown.map((d) => `${d.deployment} (was ${d.replicas})`).join(', ')}` : '';
  const waiting = r.waitingForRouter && r.waitingForRouter.length > 0 ? `; held until ready: ${r.waitingForRouter.join(', ')}` : '';
  return `route ${r.route}: ${split}${r.removeOld ? ' (old router may go)' : ''}${down}${waiting}`;
}

/** One line for the warmup: `warmup pd-warmup-1a2b3c4d Warming: warming images: 3/8 nodes`. */
export function describeWarmup(w: WarmupGateStatus): string {
  return `warmup ${w.name} ${w.phase}: ${w.message}`;
}
