/**
 * The rollout status the executor writes on a RoleBasedGroup, as JSON in the annotation
 * `rayshift.dev/rollout-status` (RBG's status subresource belongs to the RBG controller, and its
 * schema would prune foreign fields). One entry per coordination, with one entry per role.
 */
import type { WarmupGateStatus } from '../../engine/rbg-warmup';
import { asArray, asObject, isObject } from '../../spec/read';
import { STATUS_ANNOTATION } from './names';

/** Where a coordination stands. */
export type CoordinationPhase = 'Progressing' | 'Complete' | 'Failed' | 'RolledBack';

/** Where one role stands. */
export type RolePhase =
  /** Reached its final partition. */
  | 'Complete'
  /** Its workload is moving replicas up to the written partition. */
  | 'Updating'
  /** Waiting for another role before its partition may move (maxSkew). */
  | 'WaitingForSkew'
  /** More replicas unavailable than maxUnavailable: held, and it holds the others. */
  | 'Unavailable'
  /** An AffinityScheduling batch role waiting for the waves before it to be updated and ready. */
  | 'WaitingForBatch'
  /** Stopped by the progress deadline. */
  | 'Stopped'
  /** Returned to the old revision by the progress deadline. */
  | 'RolledBack';

/** One role of a coordination. */
export interface RoleRolloutStatus {
  readonly name: string;
  readonly desired: number;
  readonly updated: number;
  readonly ready: number;
  /** Partition written (replicas kept on the old revision). */
  readonly partition: number;
  /** Progress ahead of the coordination's slowest role, percent. */
  readonly skewPercent: number;
  readonly phase: RolePhase;
  /** Why the role is where it is, in words. */
  readonly reason: string;
}

/** One coordination (rolling-update rule). */
export interface CoordinationStatus {
  readonly name: string;
  readonly phase: CoordinationPhase;
  /** CamelCase reason (`RoundWritten`, `WaitingForRoles`, `WaitingForBatch`, `WaitingForController`, `RoleUnavailable`, `RolloutComplete`, `ProgressDeadlineExceeded`; before the first round of a warmed revision `WarmingImages`, `WarmupFailed`, `WarmupTimedOut`). */
  readonly reason: string;
  readonly message: string;
  /** Hash of the coordinated roles' templates this rollout moves them to. */
  readonly revision: string;
  /** Rounds written for this revision (a round lowers at least one partition). */
  readonly rounds: number;
  /** Largest minus smallest progress of the roles now, percent. */
  readonly skewPercent: number;
  readonly maxSkewPercent: number;
  /** The role holding the others back, when one does. */
  readonly blockingRole?: string;
  /** AffinityScheduling batch release: the wave being rolled (1-based) of how many. */
  readonly wave?: { readonly current: number; readonly total: number };
  /** When this revision's rollout was first seen (ISO time). */
  readonly startedAt: string;
  /** Last time a replica became updated or ready, or a partition was lowered (ISO time). */
  readonly lastProgressAt: string;
  /** When the progress deadline passes without further progress (ISO time); absent once finished. */
  readonly deadlineAt?: string;
  /** High-water mark of Σ(updated + ready) over the roles, to tell progress from flapping readiness. */
  readonly progressMark: number;
  readonly roles: readonly RoleRolloutStatus[];
}

/** The whole annotation. */
export interface RolloutStatusDocument {
  /** Group generation the statuses describe: the one read, plus one when the same patch wrote role partitions. */
  readonly observedGeneration: number;
  /** Set when the coordination annotation cannot be read; no coordination runs then. */
  readonly invalid?: string;
  readonly coordinations: readonly CoordinationStatus[];
  /** The warmup of the latest warmed revision (RBG v0.8, the coordination's `warmup` option). */
  readonly warmup?: WarmupGateStatus;
}

/** The status document on a group, if it carries a readable one. */
export function readRolloutStatus(group: { metadata?: { annotations?: Record<string, string> } }): RolloutStatusDocument | undefined {
  const text = group.metadata?.annotations?.[STATUS_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    const doc = JSON.parse(text) as unknown;
    if (!isObject(doc) || !Array.isArray(doc.coordinations)) return undefined;
    return {
      observedGeneration: Number(doc.observedGeneration ?? 0),
      ...(typeof doc.invalid === 'string' ? { invalid: doc.invalid } : {}),
      coordinations: asArray(doc.coordinations).map(asObject) as unknown as CoordinationStatus[],
      ...(isObject(doc.warmup) ? { warmup: doc.warmup as unknown as WarmupGateStatus } : {}),
    };
  } catch {
    return undefined;
  }
}

/** One line per coordination, for logs and the CLI: `pd-rollout Progressing (round 3): prefill 12/40, decode 6/20 updated; skew 0.0% ≤ 10%`. */
export function describeCoordination(s: CoordinationStatus): string {
  const roles = s.roles.map((r) => `${r.name} ${r.updated}/${r.desired}`).join(', ');
  const blocking = s.blockingRole !== undefined ? `; blocked by ${s.blockingRole}` : '';
  return `${s.name} ${s.phase} (round ${s.rounds}): ${roles} updated; skew ${s.skewPercent.toFixed(1)}% ≤ ${s.maxSkewPercent}%${blocking}`;
}

/** One line for the warmup: `warmup pd-warmup-1a2b3c4d Warming: warming images: 3/8 nodes`. */
export function describeWarmup(w: WarmupGateStatus): string {
  return `warmup ${w.name} ${w.phase}: ${w.message}`;
}
