/**
 * The warmup gate of a coordinated rollout (pure): before the first round of a new revision,
 * rayshift's executors warm the new images on the roles' nodes with an RBG v0.8
 * RoleBasedGroupWarmup and move no partition until it is over. From the warmup observed (or its
 * absence), the verdict recorded by earlier passes and the clock, this decides whether to create
 * the warmup, whether the gate is open, the status to report and the Events to record.
 *
 * - RBG counts nodes (`desired`, `succeeded`, `failed`, `active`) and ends in `Completed` or
 *   `Failed` (its maxFailedNodes or global timeout); rayshift reports `warming images: S/D nodes`.
 * - rayshift bounds the wait itself too, `globalTimeoutSeconds` from when it first asked for the
 *   warmup: RBG's clock starts only at its first warmup Pod, which never comes when no RBG v0.8
 *   controller runs, and a rollout must not wait forever.
 * - A verdict is kept for its revision (the warmup may be deleted by its TTL afterwards); a failed
 *   warmup with `onFailure: Fail` holds the rollout until the images change or the failed warmup is
 *   deleted (then it is created and run again).
 *
 * `plannedWarmup` is the warmup a group's current templates need, `warmupPendingRules` the rules
 * that wait for it and `heldForWarmup` their step while they wait; `planWarmupStage` is the same
 * warmup as `rayshift plan` shows it, the stage before the rounds.
 */

import { ResolvedRolloutWarmup, roleImages, rolloutWarmupSpec, warmupHash } from '../spec/rbg-warmup';
import { JsonObject, asArray, asObject } from '../spec/read';
import { holdWrites, ruleRevision } from './rbg-coordination';
import type { CoordinationStep, ExecutorRule, ObservedRole } from './rbg-coordination-types';
import type { CoordinationStatus } from './rbg-coordination-status';

/** What the executor read of the revision's RoleBasedGroupWarmup (`status`). */
export interface WarmupObservation {
  /** `status.phase`: `""`, `Running`, `Paused`, `Completed` or `Failed`. */
  readonly phase: string;
  readonly desired: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly active: number;
  /** Message of RBG's `Failed` or `Complete` condition, when set. */
  readonly message?: string;
}

/** Where a rollout's warmup stands. */
export type WarmupGatePhase =
  /** The warmup runs; no partition moves. */
  | 'Warming'
  /** Every node is warm (or the failures are within maxFailedNodes); the rollout runs. */
  | 'Complete'
  /** The warmup failed and `onFailure` is `Fail`: the rollout is held on the old revision. */
  | 'Failed'
  /** The warmup failed and `onFailure` is `Proceed`: the rollout runs on cold nodes. */
  | 'Proceeded';

/** The warmup entry of the rollout-status document. */
export interface WarmupGateStatus {
  /** Name of the RoleBasedGroupWarmup. */
  readonly name: string;
  /** Hash of what it warms (images per role, policies); a new one starts a new warmup. */
  readonly revision: string;
  readonly phase: WarmupGatePhase;
  /** `WarmupCreated`, `WarmingImages`, `WarmupComplete`, `WarmupFailed`, `WarmupTimedOut`. */
  readonly reason: string;
  /** In words, e.g. `warming images: 3/8 nodes`. */
  readonly message: string;
  readonly desired: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly active: number;
  /** When rayshift first asked for this warmup (ISO time). */
  readonly startedAt: string;
  /** When rayshift counts it failed if it has not finished (ISO time). */
  readonly deadlineAt: string;
}

/** What one pass of the gate sees. */
export interface WarmupGateInput {
  readonly name: string;
  readonly revision: string;
  /** The entry of the previous pass, if any. */
  readonly previous?: WarmupGateStatus;
  /** The warmup as read; undefined when it does not exist. */
  readonly observed?: WarmupObservation;
  readonly onFailure: 'Fail' | 'Proceed';
  readonly timeoutSeconds: number;
  /** Epoch ms. */
  readonly now: number;
}

/** What one pass of the gate decides. */
export interface WarmupGateDecision {
  readonly status: WarmupGateStatus;
  /** Create the warmup (it does not exist). */
  readonly create: boolean;
  /** The rollout may move partitions. */
  readonly open: boolean;
  readonly events: readonly { readonly type: 'Normal' | 'Warning'; readonly reason: string; readonly message: string }[];
  /** Look again at this time (epoch ms) even if nothing changes: rayshift's own timeout. */
  readonly wakeAt?: number;
}

/** See the file comment. */
export function warmupGate(input: WarmupGateInput): WarmupGateDecision {
  let prior = input.previous?.revision === input.revision ? input.previous : undefined;
  // A failed warmup that is gone (deleted by hand or by its TTL) is tried again.
  if (prior?.phase === 'Failed' && input.observed === undefined) prior = undefined;
  if (prior && prior.phase !== 'Warming') return { status: prior, create: false, open: prior.phase !== 'Failed', events: [] };
  const startedAt = prior?.startedAt ?? new Date(input.now).toISOString();
  const deadline = Date.parse(startedAt) + input.timeoutSeconds * 1000;
  const o = input.observed;
  const counts = { desired: o?.desired ?? 0, succeeded: o?.succeeded ?? 0, failed: o?.failed ?? 0, active: o?.active ?? 0 };
  const base = { name: input.name, revision: input.revision, ...counts, startedAt, deadlineAt: new Date(deadline).toISOString() };
  const nodes = `${counts.succeeded}/${counts.desired} nodes${counts.failed > 0 ? `, ${counts.failed} failed` : ''}`;

  if (o?.phase === 'Completed') {
    const message = `images warm on ${nodes}`;
    return { status: { ...base, phase: 'Complete', reason: 'WarmupComplete', message }, create: false, open: true, events: [{ type: 'Normal', reason: 'WarmupComplete', message: `${input.name}: ${message}; the rollout starts` }] };
  }
  const timedOut = input.now >= deadline;
  if (o?.phase === 'Failed' || timedOut) {
    const why = o?.phase === 'Failed' ? `RBG failed the warmup${o.message ? ` (${o.message})` : ''}: warm on ${nodes}` : `not finished ${input.timeoutSeconds}s after it was created (globalTimeoutSeconds): warm on ${nodes}`;
    const reason = o?.phase === 'Failed' ? 'WarmupFailed' : 'WarmupTimedOut';
    const proceed = input.onFailure === 'Proceed';
    const message = `${why}; ${proceed ? 'rolling out on cold nodes (onFailure Proceed)' : 'the rollout is held before any partition moved (onFailure Fail); change the images or delete the warmup to try again'}`;
    return { status: { ...base, phase: proceed ? 'Proceeded' : 'Failed', reason, message }, create: false, open: proceed, events: [{ type: 'Warning', reason, message: `${input.name}: ${message}` }] };
  }
  if (o === undefined) {
    const message = `warming images: creating RoleBasedGroupWarmup ${input.name}`;
    const events = prior ? [] : [{ type: 'Normal' as const, reason: 'WarmupStarted', message: `${input.name}: warming the new images on the roles' nodes before the rollout` }];
    return { status: { ...base, phase: 'Warming', reason: 'WarmupCreated', message }, create: true, open: false, events, wakeAt: deadline };
  }
  const message = o.phase === '' && counts.desired === 0 ? 'warming images: waiting for RBG to list the nodes' : `warming images: ${nodes}${o.phase === 'Paused' ? ' (warmup paused)' : ''}`;
  return { status: { ...base, phase: 'Warming', reason: 'WarmingImages', message }, create: false, open: false, events: [], wakeAt: deadline };
}

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

/**
 * The rules that wait for the warmup of `w`: those with a warmed role whose revision changed since
 * the last status. None on a group's first pass (no prior status), whose Pods are created, not updated.
 */
export function warmupPendingRules(rules: readonly ExecutorRule[], w: ResolvedRolloutWarmup, roles: ReadonlyMap<string, ObservedRole>, previous: readonly CoordinationStatus[]): ExecutorRule[] {
  return rules.filter((rule) => {
    const prior = previous.find((c) => c.name === rule.name);
    return rule.roles.some((r) => w.roles.includes(r.name)) && prior !== undefined && prior.revision !== ruleRevision(rule, roles);
  });
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
  // The previous rollout's first-round preflight and scheduler watch say nothing of the revision being warmed.
  const { deadlineAt: _deadline, blockingRole: _blocking, capacity: _judged, surgeUnschedulable: _watched, ...rest } = prior;
  const failed = warmup.phase === 'Failed';
  return { status: { ...rest, phase: failed ? 'Failed' : 'Progressing', reason: failed ? warmup.reason : 'WarmingImages', message: warmup.message }, writes: holdWrites(rule, roles), events: [] };
}

/** The warmup stage of a RoleBasedGroup plan: what runs before the first round. */
export interface RbgWarmupStage {
  /** Images preloaded per warmed role (its template's). */
  readonly images: Readonly<Record<string, readonly string[]>>;
  /** Nodes warmed at once; undefined: every node at once. */
  readonly parallelism?: number;
  readonly backoffLimitPerNode: number;
  readonly maxFailedNodes: number;
  readonly timeoutSeconds: number;
  readonly onFailure: 'Fail' | 'Proceed';
  /** The first round waits for the warmup (rayshift's executors); false: RBG runs it alongside the rollout. */
  readonly gated: boolean;
}

/** The warmup stage of a group with the option `w` (resolved), for `rayshift plan`. */
export function planWarmupStage(group: JsonObject, w: ResolvedRolloutWarmup, gated: boolean): RbgWarmupStage {
  const roles = new Map(asArray(asObject(group.spec).roles).map((r) => [String(asObject(r).name), asObject(r)]));
  const images = Object.fromEntries(w.roles.filter((r) => roles.has(r)).map((r) => [r, roleImages(roles.get(r)!)]));
  return {
    images,
    ...(w.parallelism !== undefined ? { parallelism: w.parallelism } : {}),
    backoffLimitPerNode: w.backoffLimitPerNode,
    maxFailedNodes: w.maxFailedNodes,
    timeoutSeconds: w.globalTimeoutSeconds,
    onFailure: w.onFailure,
    gated,
  };
}
