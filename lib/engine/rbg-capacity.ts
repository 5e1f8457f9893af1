/**
 * The capacity preflight of a RoleBasedGroup rollout (pure): the round that starts a rollout (the
 * first to lower a partition for the new revision) is placed, before it is released, on the
 * cluster the executor listed (`rbgRoundPreflight`, capacity-demand.ts, on `capacityPreflight`
 * shared with the RayService). The round's own old Pods go first (a coordinated role has no
 * surge), so a round that fits once they are gone fits. When it does not fit, the rule's
 * `capacityPolicy` decides: `wait` releases the round as without the preflight, with the verdict
 * in the coordination's `capacity` and one Warning Event `InsufficientCapacity`; `fail` releases
 * nothing (every role stays paused where it stands), phase `Failed`, reason `InsufficientCapacity`,
 * one Event, and the rollout is judged again only once the template changes again. The executor
 * lists the capacity only for a pass that releases a first round (`releasesFirstRound`,
 * rbg-coordination-pass.ts), decided again with it; without it the round is released unchecked.
 * Rollouts of several rules that start in one pass are placed together, in the rules' order: each
 * rule's preflight places the first rounds the rules before it release (`releasedInPass`) with its
 * own, so the later rule is the one refused (or recorded) when together they do not fit.
 * When the executor could not list the cluster (`unread`), `wait` releases the round with one
 * Warning Event `CapacityUnknown`, and `fail` holds it: nothing is released, phase `Progressing`,
 * reason `CapacityUnknown`, one Event per hold, and the pass asks for the capacity again after
 * `CAPACITY_REREAD_MS`. A held round is no progress, so a hold that outlasts the progress deadline
 * ends as any stall does (`ProgressDeadlineExceeded`, the record kept).
 */
import { rbgRoundPreflight } from './capacity-demand';
import { isUnread } from './capacity-preflight';
import { CAPACITY_EVENT_ACTION, CAPACITY_EVENT_REASON, CAPACITY_REREAD_MS, CAPACITY_UNKNOWN_REASON, REREAD_NOTE, holdsWhenUnread, unreadMessage } from './capacity-policy';
import type { CoordinationStep, CoordinationStepInput, RolloutEvent } from './rbg-coordination-types';
import type { CoordinationCapacityStatus } from './rbg-coordination-status';
import { changed, roleStatus, type Member } from './rbg-members';

/**
 * `step`, the one that releases a rollout's first round (each role `partitions` names lowered to
 * its partition there), under the preflight when the executor listed the capacity (see the file comment).
 */
export function preflightFirstRound(input: CoordinationStepInput, members: readonly Member[], step: CoordinationStep, partitions: ReadonlyMap<string, number>): CoordinationStep {
  const { rule, now, capacity } = input;
  if (capacity && isUnread(capacity)) return unreadFirstRound(input, members, step, capacity.unread);
  const verdict = capacity && rbgRoundPreflight(capacity.group, new Map([...(capacity.releasedInPass ?? []), ...partitions]), capacity.listed);
  if (verdict?.outcome !== 'doesNotFit') return step;
  const record: CoordinationCapacityStatus = { outcome: 'doesNotFit', message: verdict.message ?? '', at: new Date(now).toISOString() };
  const fail = rule.capacityPolicy === 'fail';
  const what = fail ? 'rollout not started (capacityPolicy fail)' : "rollout started; its first round's new Pods wait for the scheduler until capacity is free (capacityPolicy wait)";
  const event: RolloutEvent = { type: 'Warning', reason: CAPACITY_EVENT_REASON, action: CAPACITY_EVENT_ACTION, message: `${rule.name}: ${what}: ${record.message}` };
  if (!fail) return { ...step, status: { ...step.status, capacity: record }, events: [...step.events, event] };
  const { deadlineAt: _none, blockingRole: _who, ...rest } = step.status;
  return {
    status: {
      ...rest,
      phase: 'Failed',
      reason: CAPACITY_EVENT_REASON,
      message: `${what}: ${record.message}`,
      rounds: 0,
      capacity: record,
      roles: members.map((m) => roleStatus(m, members, m.observed.partition ?? 0, 'Stopped', 'not started: the first round does not fit')),
    },
    writes: members.flatMap((m) => changed(m, m.observed.partition ?? 0, true)),
    events: [event],
  };
}

/** `preflightFirstRound` when the cluster could not be read: `wait` releases the round, `fail` holds it (see the file comment). */
function unreadFirstRound(input: CoordinationStepInput, members: readonly Member[], step: CoordinationStep, why: string): CoordinationStep {
  const { rule, now, previous } = input;
  const heldBefore = previous?.revision === step.status.revision && previous.reason === CAPACITY_UNKNOWN_REASON;
  const message = unreadMessage(why);
  const record: CoordinationCapacityStatus = { outcome: 'unknown', message, at: heldBefore && previous.capacity ? previous.capacity.at : new Date(now).toISOString() };
  const fail = holdsWhenUnread(rule.capacityPolicy);
  const what = fail
    ? `rollout held (capacityPolicy fail releases no round it has not placed; ${REREAD_NOTE})`
    : 'rollout started without a capacity preflight (capacityPolicy wait)';
  const events: RolloutEvent[] = heldBefore ? [] : [{ type: 'Warning', reason: CAPACITY_UNKNOWN_REASON, action: CAPACITY_EVENT_ACTION, message: `${rule.name}: ${what}: ${message}` }];
  if (!fail) return { ...step, status: { ...step.status, capacity: record }, events: [...step.events, ...events] };
  // A held round is no progress (coordination's `releasesHeld`): the deadline counts from the rollout's start.
  const deadlineAt = Date.parse(step.status.lastProgressAt) + rule.progressDeadlineSeconds * 1000;
  const { blockingRole: _who, ...rest } = step.status;
  return {
    status: {
      ...rest,
      reason: CAPACITY_UNKNOWN_REASON,
      message: `${what}: ${message}`,
      rounds: 0,
      capacity: record,
      roles: members.map((m) => roleStatus(m, members, m.observed.partition ?? 0, 'WaitingForCapacity', 'held before the first round: the cluster could not be read for its capacity preflight')),
    },
    writes: members.flatMap((m) => changed(m, m.observed.partition ?? 0, true)),
    events,
    wakeAt: Math.min(deadlineAt, now + CAPACITY_REREAD_MS),
  };
}
