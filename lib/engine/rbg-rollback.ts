/**
 * The way back of a coordinated rollout (pure): a failed analysis gate (`onFailure: rollback`), the
 * progress deadline with `rollbackOnDeadline`, or a person's `rollback` return every coordinated
 * role to the revision it ran before the rollout, in tandem, round by round.
 *
 * What RBG's workloads offer (read in v0.7.0's source, seen on its real controller): a
 * RoleInstanceSet (stateful pattern, RBG's default) or a StatefulSet updates the ordinals at and
 * above its partition to the template's revision and never rolls a replica back: a raised partition
 * only stops further updates, and a reverted template makes the update revision the current one
 * again, after which the set is no longer "in rollout" and leaves the updated replicas where they
 * are. What it does do is create a missing ordinal below the partition from its *current* revision
 * (the one before the rollout, as long as the rollout did not finish). So a rollback round
 *
 * 1. raises each role's partition (paused, so the workload starts nothing of its own) by as many
 *    ordinals as the round returns — the rollout's own round, mirrored: the share of replicas on the
 *    previous revision plays the part of the share updated, so the roles' old-version ratios stay
 *    within `maxSkew` (plus one replica of the smallest role) of each other, and no role returns
 *    more replicas at once than its `maxUnavailable` leaves room for;
 * 2. once the workload carries that partition, replaces the replicas below it that still run the
 *    abandoned revision (`returns`: the runtime deletes them; the workload recreates them from its
 *    current revision), a Ready one only while the role's replicas down stay within its
 *    `maxUnavailable` (rbg-return-budget.ts). A RoleInstanceSet in RBG's Stateless pattern (routed roles) has no
 *    ordinals but counts its partition the same way: at most `desired − partition` of its instances
 *    stay on the abandoned revision, the others are returned, not-ready first (rbg-unordered-return.ts).
 *
 * RBG v0.8's webhook admits no partition ≥ replicas (`partitionBelowReplicas`), and its
 * RoleInstanceSet recreates a missing ordinal at or above the partition from the *new* revision,
 * paused or not. So there a round that returns a role's last ordinals writes replicas − 1, the
 * status keeping the round's own partition, and those ordinals are reverted in place instead: the
 * runtime writes the current revision's template (the RoleInstanceSet's ControllerRevision) and
 * revision label into the RoleInstance, which is the RoleInstanceSet's own in-place update, run
 * backwards; a paused RoleInstanceSet leaves an existing instance at its revision.
 *
 * With a router, no round is written and no replica returned while the route, as read, still sends
 * the abandoned release a share (`routeHold`): the route's 0 lands first.
 *
 * The phase is `RollingBack` until no replica of a coordinated role runs the abandoned revision,
 * then `RolledBack`. Each round that raises a partition is a `RollbackRound` Event and the
 * coordination's `RolledBack` condition (False while rounds go on, True at the end).
 */
import { ROLLBACK_ROUND_EVENT, type CoordinationStep, type CoordinationStepInput, type ObservedRole, type ReplicaState, type RoleProgress, type RoleReturn, type RoleWrite, type RolloutEvent } from './rbg-coordination-types';
import type { CoordinationCondition, CoordinationStatus, RoleRolloutStatus, RollbackStatus } from './rbg-coordination-status';
import { nextRbgRound } from './rbg-rollout';
import { progressOf } from './rbg-roles';

interface Returning {
  readonly rule: CoordinationStepInput['rule']['roles'][number];
  readonly observed: ObservedRole;
  /** Replicas on the abandoned revision (`rollbackCounts`); undefined while unknown. */
  readonly abandoned?: number;
  readonly ready: number;
  /** Replicas on the abandoned revision that are not ready. */
  readonly abandonedDown: number;
  /** The round's partition: the ordinals below it are (or are being) returned. */
  readonly partition: number;
}

/**
 * One pass of the way back. `from` is the coordination's status to go on from: the previous pass's
 * while it rolls back, or the status of the failure that starts it (its `reason` and `message` name
 * why; the message becomes the rollback's `cause`). The input's roles are as `coordinationStep` sees them (a workload that has not carried the
 * latest spec into its counts has no progress).
 */
export function rollbackStep(input: CoordinationStepInput, from: CoordinationStatus): CoordinationStep {
  const { rule, now } = input;
  const members: Returning[] = rule.roles.flatMap((r) => {
    const observed = input.roles.get(r.name);
    if (!observed) return [];
    const counts = observed.progress && rollbackCounts(observed.progress, observed.desired);
    return [{ rule: r, observed, ...(counts ?? { abandonedDown: 0, ready: 0 }), partition: roundPartition(observed, from) }];
  });
  const known = members.every((m) => m.abandoned !== undefined) && input.controllerCaughtUp;
  const starting = from.rollback === undefined;
  const rollback: RollbackStatus = from.rollback ?? { cause: from.message, rounds: 0, startedAt: new Date(now).toISOString() };
  const rounds = rollback.rounds;
  const base: CoordinationStatus = { ...withoutDeadline(from), rollback };

  if (known && members.every((m) => m.abandoned === 0)) {
    const done = from.phase === 'RolledBack' && !starting;
    const message = `every replica is back on the previous revision after ${rounds} rollback round(s)`;
    const status: CoordinationStatus = {
      ...base,
      phase: 'RolledBack',
      message: done ? from.message : `${rollback.cause}; ${message}`,
      roles: members.map((m) => roleStatus(m, members, m.partition, 'RolledBack', 'every replica on the previous revision')),
      conditions: done ? (from.conditions ?? []) : [condition('True', 'RolledBack', message, now)],
    };
    const events: RolloutEvent[] = done ? [] : [{ type: 'Warning', reason: 'RolledBack', message: `${rule.name}: ${message} (${members.map((m) => m.observed.name).join(', ')})` }];
    return { status, writes: members.flatMap((m) => write(m, m.partition)), events };
  }

  if (!known) {
    const status: CoordinationStatus = {
      ...base,
      phase: 'RollingBack',
      message: `${rollback.cause}; waiting for the RBG controller before the next rollback round`,
      roles: members.map((m) => (m.abandoned === undefined ? { ...(from.roles.find((r) => r.name === m.observed.name) ?? roleStatus(m, members, m.partition, 'RollingBack', '')), reason: 'waiting for the RBG controller' } : roleStatus(m, members, m.partition, 'RollingBack', 'waiting for the RBG controller'))),
      conditions: from.conditions ?? [],
    };
    return { status, writes: starting ? members.flatMap((m) => write(m, m.partition)) : [], events: [] };
  }

  // With a router, nothing returns to the previous release while the route, as read, still sends the
  // abandoned one a share (rbg-router-hold.ts): the pass that wrote its 0 lets the next one go on.
  const routeHold = input.routeHold?.new === true;
  const targets = routeHold
    ? new Map(members.map((m) => [m.observed.name, m.partition]))
    : nextRollbackPartitions(
        rule.maxSkewPercent,
        members.map((m) => ({ name: m.observed.name, desired: m.observed.desired, abandoned: m.abandoned!, ready: m.ready, partition: m.partition, maxUnavailable: m.rule.maxUnavailable, abandonedDown: m.abandonedDown })),
      );
  const raised = members.filter((m) => targets.get(m.observed.name)! > m.partition);
  const returns: RoleReturn[] = routeHold ? [] : members.flatMap((m) => {
    const carried = m.observed.progress?.workloadPartition ?? -1;
    // A round whose partition the webhook caps to the one the role is paused at, and its workload
    // carries, writes nothing the workload would react to: its ordinals are returned in the same pass.
    const target = targets.get(m.observed.name)!;
    const unchanged = m.observed.paused && m.observed.partition === written(m.observed, target);
    const upTo = m.observed.partitionBelowReplicas && unchanged && carried >= written(m.observed, target) ? target : m.partition;
    const below = written(m.observed, upTo);
    if (m.observed.desired - m.abandoned! >= upTo || carried < below) return [];
    return [{ name: m.observed.name, index: m.observed.index, below, ...(upTo > below ? { revertBelow: upTo } : {}), maxUnavailable: m.rule.maxUnavailable }];
  });
  const next = rounds + (raised.length > 0 ? 1 : 0);
  const moves = raised.map((m) => `${m.observed.name} partition ${m.partition}→${targets.get(m.observed.name)} (${m.abandoned}/${m.observed.desired} on the abandoned revision)`);
  const roundMessage = `rollback round ${next}: ${moves.join(', ')}`;
  const status: CoordinationStatus = {
    ...base,
    phase: 'RollingBack',
    message: `${rollback.cause}; ${raised.length > 0 ? roundMessage : routeHold ? `waiting for route ${input.routeHold!.route} to send the abandoned release nothing` : `returning the replicas of rollback round ${rounds}`}`,
    rollback: { ...rollback, rounds: next },
    roles: members.map((m) => roleStatus(m, members, targets.get(m.observed.name)!, 'RollingBack', describe(m, targets.get(m.observed.name)!))),
    conditions: raised.length > 0 ? [condition('False', 'RollbackRound', roundMessage, now)] : (from.conditions ?? []),
  };
  const events: RolloutEvent[] = raised.length > 0 ? [{ type: 'Warning', reason: ROLLBACK_ROUND_EVENT, message: `${rule.name} ${roundMessage}` }] : [];
  return { status, writes: members.flatMap((m) => write(m, targets.get(m.observed.name)!)), events, ...(returns.length > 0 ? { returns } : {}) };
}

/** What the way back counts of one role: replicas on the abandoned revision, ready, and both abandoned and down. */
export interface RollbackCounts {
  readonly abandoned: number;
  readonly ready: number;
  readonly abandonedDown: number;
}

/**
 * The counts of one role on the way back, at most `desired` each. From `progress.replicas` when the
 * runtime read them (one list of a StatefulSet's Pods), and then from nothing else: a count of that
 * list mixed with the StatefulSet's status read a moment earlier took a returned Pod already replaced
 * for an abandoned replica down and returned one more (cluster-rbg-rollback-faults, RBG v0.6.0). A
 * replica being deleted is down but no abandoned one down: it is on its way back (a round returned
 * it), so returning another for it would take two down; it still counts on its revision until gone.
 * Otherwise from the workload's counts, where a role without `updatedReadyReplicas` has its replicas
 * down taken for abandoned ones, as when the release itself fails.
 */
export function rollbackCounts(progress: RoleProgress, desired: number): RollbackCounts {
  const cap = (n: number) => Math.min(n, desired);
  if (progress.replicas !== undefined) {
    const mine = progress.replicas.filter((x) => x.ordinal < desired);
    const abandoned = mine.filter((x) => x.revision === 'update');
    const up = (x: ReplicaState) => x.ready && !x.terminating;
    return { abandoned: cap(abandoned.length), ready: cap(mine.filter(up).length), abandonedDown: cap(abandoned.filter((x) => !x.ready && !x.terminating).length) };
  }
  const abandoned = cap(progress.updatedReplicas);
  const ready = cap(progress.readyReplicas);
  const abandonedDown = progress.updatedReadyReplicas !== undefined ? Math.max(0, abandoned - progress.updatedReadyReplicas) : Math.min(abandoned, desired - ready);
  return { abandoned, ready, abandonedDown };
}

/** One role on the way back, as `nextRollbackPartitions` reads it. */
export interface RollbackRoleState {
  readonly name: string;
  readonly desired: number;
  /** Replicas on the abandoned revision. */
  readonly abandoned: number;
  readonly ready: number;
  /** Partition written: the ordinals below it are (or are being) returned. */
  readonly partition: number;
  /** Replicas allowed unavailable at once (count; 0 is read as 1, as RBG's workloads read it). */
  readonly maxUnavailable: number;
  /** Replicas on the abandoned revision that are not ready; returning them costs no availability. @default 0 */
  readonly abandonedDown?: number;
}

/**
 * Each role's next partition on the way back: the rollout's round (`nextRbgRound`) over the replicas
 * on the previous revision, never lowering a written partition, then at most the role's room under
 * maxUnavailable beyond the replicas already back. A replica of the abandoned revision that is not
 * ready (the failure itself, e.g. an image that cannot be pulled) is down already: returning it takes
 * none of that room, as RBG's workloads update an unhealthy replica for free. Also what `plan` shows
 * as rollback rounds.
 */
export function nextRollbackPartitions(maxSkewPercent: number, roles: readonly RollbackRoleState[]): Map<string, number> {
  const round = nextRbgRound(
    maxSkewPercent,
    roles.map((r) => ({ name: r.name, desired: r.desired, updatedReplicas: r.desired - r.abandoned, readyReplicas: r.ready, maxUnavailable: r.maxUnavailable, partition: 0, currentPartition: r.desired - r.partition })),
  );
  return new Map(
    roles.map((r, i) => {
      const room = Math.max(0, Math.max(1, r.maxUnavailable) - (r.desired - r.ready) + (r.abandonedDown ?? 0));
      const back = r.desired - r.abandoned;
      return [r.name, Math.min(r.desired, Math.max(r.partition, Math.min(r.desired - round.roles[i].partition, back + room)))];
    }),
  );
}

/** The write holding a role paused at the round's `partition` with the rule's maxUnavailable, or none when it is so. */
function write(m: Returning, partition: number): RoleWrite[] {
  const o = m.observed;
  const p = written(o, partition);
  if (o.partition === p && o.paused && o.maxUnavailable === m.rule.maxUnavailable) return [];
  return [{ name: o.name, index: o.index, partition: p, maxUnavailable: m.rule.maxUnavailable, paused: true }];
}

/** The partition written for a round's `partition`: below replicas where the webhook refuses more. */
function written(o: ObservedRole, partition: number): number {
  return o.partitionBelowReplicas ? Math.min(partition, Math.max(0, o.desired - 1)) : partition;
}

/**
 * The round's partition of a role on the way back: the one written, or, where the webhook caps the
 * written one (`partitionBelowReplicas`) and the previous pass's status names a higher one that
 * caps to it, that one (the ordinals above the cap are being reverted).
 */
function roundPartition(o: ObservedRole, from: CoordinationStatus): number {
  const w = Math.min(o.partition ?? 0, o.desired);
  const stated = from.rollback === undefined ? undefined : from.roles.find((r) => r.name === o.name)?.partition;
  return stated !== undefined && stated > w && stated <= o.desired && written(o, stated) === w ? stated : w;
}

function roleStatus(m: Returning, members: readonly Returning[], partition: number, phase: RoleRolloutStatus['phase'], reason: string): RoleRolloutStatus {
  const d = m.observed.desired;
  const abandoned = m.abandoned ?? 0;
  const shares = members.filter((x) => x.observed.desired > 0).map((x) => progressOf({ desired: x.observed.desired, updatedReplicas: x.abandoned ?? 0 }));
  const slowest = shares.length > 0 ? Math.min(...shares) : 0;
  return {
    name: m.observed.name,
    desired: d,
    updated: abandoned,
    ready: m.ready,
    partition,
    skewPercent: d > 0 ? Math.round((abandoned / d - slowest) * 1000) / 10 : 0,
    phase,
    reason,
    replicasByRevision: { abandoned, previous: d - abandoned },
  };
}

function describe(m: Returning, partition: number): string {
  const back = m.observed.desired - m.abandoned!;
  if (back >= partition) return `${back}/${m.observed.desired} on the previous revision; waits for the others (maxSkew) or its ready replicas (maxUnavailable)`;
  return `returning ordinals ${back}–${partition - 1} to the previous revision (${m.abandoned}/${m.observed.desired} still on the abandoned one)`;
}

function condition(status: 'True' | 'False', reason: string, message: string, now: number): CoordinationCondition {
  return { type: 'RolledBack', status, reason, message, lastTransitionTime: new Date(now).toISOString() };
}

function withoutDeadline(s: CoordinationStatus): CoordinationStatus {
  const { deadlineAt: _none, ...rest } = s;
  return rest;
}
