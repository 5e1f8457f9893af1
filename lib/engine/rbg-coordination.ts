/**
 * One executor pass over one coordination (pure): from the observed roles and the coordination's
 * previous status, decide the rolling-update fields to write on each role, the new status, the
 * Events to record and when to look again. `nextRbgRound` decides the partitions; this adds what
 * an executor needs around it:
 *
 * - a new template revision is detected by hashing the coordinated roles' templates;
 * - between rollouts every coordinated role is *armed* with `paused: true`, so a template change
 *   releases nothing until the first round unpauses it with coordinated partitions (a paused role
 *   has released exactly its updated replicas, so the engine's never-raise bound is
 *   `desired − updated` for it); a role a round holds at every replica stays paused the same way,
 *   since RBG v0.8's webhook refuses a partition ≥ replicas (only a rollback's last round writes one);
 * - nothing is decided while the RBG controller has not observed the latest generation, since
 *   its counts may belong to the previous revision or partitions;
 * - the progress deadline: when no replica became updated or ready and no partition was lowered
 *   for `progressDeadlineSeconds`, every coordinated role is paused where it stands (or, with
 *   `rollbackOnDeadline`, returned to the revision before the rollout in rollback rounds,
 *   `rbg-rollback.ts`) and the blocking role is named;
 * - the capacity preflight of the round that starts a rollout (`preflightFirstRound`,
 *   `rbg-capacity.ts`), when the executor listed the cluster's capacity: on a misfit the round is
 *   released and reported (`capacityPolicy: wait`) or not released at all (`fail`); the record
 *   stays on the rollout's statuses until it completes;
 * - the scheduler watch (`surgeOr`): Pods of the rule's roles Unschedulable are recorded, reported
 *   once past `surgeUnschedulableSeconds`, and under `capacityPolicy: fail` rolled back like the
 *   deadline with `rollbackOnDeadline` (which is also why that policy keeps each role's last replica);
 * - AffinityScheduling release waves: a wave's roles are released (unpaused, coordinated among the
 *   released roles) once every role of the waves before it is updated and ready;
 * - a closed analysis gate (`analysisHold`, decided by `rbg-analysis.ts`) lowers no partition and
 *   keeps the rollout from completing; a counted measurement is progress;
 * - with a router, each routed role keeps its last old replica while the route, as read, still
 *   sends the old release a share (`routeHold`, `rbg-router-hold.ts`; reason `WaitingForRoute`).
 *
 * The roles as members (read, written and reported) are `rbg-members.ts`'s.
 */
import { createHash } from 'node:crypto';
import { ROUND_EVENT, STRANDED_EVENT, type CoordinationStep, type CoordinationStepInput, type ExecutorRule, type ObservedRole, type RoleWrite, type RolloutEvent } from './rbg-coordination-types';
import type { CoordinationStatus, CoordinationSurgeStatus, RoleRolloutStatus } from './rbg-coordination-status';
import { blockingRole, changed, describeRole, membersOf, phaseOf, reasonOf, revisionRecorded, roleStatus, settled, skewOf, summary, type Member } from './rbg-members';
import { preflightFirstRound } from './rbg-capacity';
import { CAPACITY_UNKNOWN_REASON } from './capacity-policy';
import { rollbackStep } from './rbg-rollback';
import { holdLastForRoute, routeHoldReason } from './rbg-router-hold';
import { nextRbgRound } from './rbg-rollout';
import { strandedReplace } from './rbg-stranded';
import { SURGE_EVENT_ACTION, SURGE_EVENT_REASON, SURGE_RECHECK_MS, judgeSurge, surgeEventMessage } from './surge-scheduling';

/** The revision a coordination of `rule` over `roles` rolls to (the `revision` of its status). */
export function ruleRevision(rule: ExecutorRule, roles: ReadonlyMap<string, ObservedRole>): string {
  return revisionOf(membersOf({ rule, roles, controllerCaughtUp: true, now: 0 }));
}

/** The writes that hold every role of `rule` where it stands (paused at its written partition), e.g. while a warmup runs. */
export function holdWrites(rule: ExecutorRule, roles: ReadonlyMap<string, ObservedRole>): RoleWrite[] {
  return membersOf({ rule, roles, controllerCaughtUp: true, now: 0 }).flatMap((m) => changed(m, m.observed.partition ?? 0, true));
}

/**
 * The step that starts returning every role to the revision before the rollout (`rbg-rollback.ts`),
 * from `from`, the status of the failure (its reason, and its message as the rollback's cause).
 */
export function startRollback(input: CoordinationStepInput, from: CoordinationStatus): CoordinationStep {
  const { rollback: _none, ...failure } = from;
  return coordinationStep({ ...input, previous: { ...failure, phase: 'RollingBack' } });
}

/**
 * See the file comment. A role whose workload still reports the previous rollout's template
 * revision (`fromWorkloadRevision`) counts as unobserved: RBG marks the group observed before it
 * writes the new template into the workloads, and until then the workload counts every old replica
 * as updated, which would release the other roles' partitions (observed with RBG v0.7.0:
 * decode 6/6 "updated" a moment after the template change, so both roles were released at once).
 * Each role's status records the revisions, so a restarted executor keeps telling them apart.
 */
export function coordinationStep(input: CoordinationStepInput): CoordinationStep {
  const newRollout = input.previous === undefined || input.previous.revision !== ruleRevision(input.rule, input.roles);
  const before = new Map((input.previous?.roles ?? []).map((r) => [r.name, r]));
  const revisions = new Map<string, Pick<RoleRolloutStatus, 'workloadRevision' | 'fromWorkloadRevision'>>();
  const roles = new Map(input.roles);
  for (const { name } of input.rule.roles) {
    const observed = roles.get(name);
    const was = before.get(name);
    const from = newRollout ? was?.workloadRevision : was?.fromWorkloadRevision;
    const current = observed?.progress?.source === 'workload' ? observed.progress.workloadRevision : undefined;
    const stale = from !== undefined && current === from;
    if (observed && stale) roles.set(name, { ...observed, progress: undefined });
    const workloadRevision = (stale ? undefined : current) ?? (newRollout ? undefined : was?.workloadRevision);
    revisions.set(name, { ...(workloadRevision !== undefined ? { workloadRevision } : {}), ...(from !== undefined ? { fromWorkloadRevision: from } : {}) });
  }
  const step = decideStep({ ...input, roles });
  return { ...step, status: { ...step.status, roles: step.status.roles.map((r) => ({ ...r, ...revisions.get(r.name) })) } };
}

function decideStep(input: CoordinationStepInput): CoordinationStep {
  const { rule, previous, now } = input;
  const members = membersOf(input);
  const revision = revisionOf(members);
  const newRollout = previous === undefined || previous.revision !== revision;
  const prior = newRollout ? undefined : previous;
  const deadlineMs = rule.progressDeadlineSeconds * 1000;
  const mark = members.reduce((sum, m) => sum + m.state.updatedReplicas + m.state.readyReplicas, 0);
  const base = {
    name: rule.name,
    revision,
    maxSkewPercent: rule.maxSkewPercent,
    skewPercent: skewOf(members),
    startedAt: prior?.startedAt ?? iso(now),
    progressMark: Math.max(mark, prior?.progressMark ?? -1),
  };
  // The first round's preflight, when it did not fit: kept while the rollout runs (a Failed one keeps it as it ended).
  const preflighted = prior?.capacity ? { capacity: prior.capacity } : {};

  // The scheduler watch describes a Progressing rollout: once it ended, its cause (the message) says what the watch saw.
  const ended = prior && withoutSurge(prior);
  if (ended && (ended.phase === 'RollingBack' || ended.phase === 'RolledBack')) return rollbackStep(input, { ...ended, skewPercent: base.skewPercent, progressMark: base.progressMark });
  if (ended && ended.phase === 'Failed') {
    const writes = members.flatMap((m) => changed(m, m.observed.partition ?? 0, true));
    const stopped = ended.reason === 'ProgressDeadlineExceeded' ? 'stopped by the progress deadline' : `stopped (${ended.reason})`;
    const roles = members.map((m) => roleStatus(m, members, m.observed.partition ?? 0, 'Stopped', stopped));
    return { status: { ...ended, ...base, roles }, writes, events: [] };
  }

  if (!input.controllerCaughtUp || members.some((m) => m.observed.progress === undefined)) {
    // A completed rollout stays as reported: a workload catching up with the re-arming write (RBG
    // v0.7.0 bumps its generation) says nothing new, and its unknown counts must not read as 0.
    if (prior?.phase === 'Complete') return { status: prior, writes: [], events: [] };
    const lastProgressAt = prior?.lastProgressAt ?? iso(now);
    // A role whose counts are unknown for now (its workload catching up with a round) keeps the
    // counts last reported, so the status does not flicker to 0 updated between rounds.
    const reported = new Map((prior?.roles ?? []).map((r) => [r.name, r]));
    const unknown = members.filter((m) => m.observed.progress === undefined && reported.has(m.state.name));
    const waiting: CoordinationStatus = {
      ...base,
      ...preflighted,
      skewPercent: unknown.length > 0 ? prior!.skewPercent : base.skewPercent,
      phase: 'Progressing',
      reason: 'WaitingForController',
      message: 'waiting for the RBG controller to carry the latest generation of the group into its workloads',
      rounds: prior?.rounds ?? 0,
      lastProgressAt,
      progressMark: prior?.progressMark ?? -1,
      roles: members.map((m) =>
        unknown.includes(m)
          ? { ...reported.get(m.state.name)!, reason: 'waiting for the RBG controller' }
          : roleStatus(m, members, m.observed.partition ?? 0, m.observed.progress === undefined ? 'Updating' : phaseOf(m, undefined), 'waiting for the RBG controller'),
      ),
    };
    // The roles whose written partition already releases their last old replica (the route hold let
    // them go): the weight rule must not take the route back from 100 while the controller catches up.
    const written0 = members.filter((m) => m.observed.partition === 0 && m.observed.progress !== undefined).map((m) => m.state.name);
    const lastRound = written0.length > 0 ? { lastRound: written0 } : {};
    return deadlineOr(input, members, { members, readiness: false }, waiting, Date.parse(lastProgressAt) + deadlineMs, () => ({ status: { ...waiting, deadlineAt: iso(Date.parse(lastProgressAt) + deadlineMs) }, writes: [], events: [], wakeAt: Date.parse(lastProgressAt) + deadlineMs, ...lastRound }));
  }

  const waves = wavesOf(rule, members);
  const active = waves.findIndex((w) => w.some((m) => !settled(m)));
  const released = active < 0 || active === waves.length - 1 ? members : waves.slice(0, active + 1).flat();
  const unreleased = members.filter((m) => !released.includes(m));
  const wave = waves.length > 1 ? { wave: { current: active < 0 ? waves.length : active + 1, total: waves.length } } : {};
  const round = nextRbgRound(rule.maxSkewPercent, released.map((m) => m.state));
  const hold = input.analysisHold;
  // A closed analysis gate keeps every partition where it is written.
  const decided = new Map(
    round.roles.map((r) => {
      const s = released.find((m) => m.state.name === r.name)!.state;
      const partition = hold ? Math.max(r.partition, s.currentPartition ?? s.desired) : r.partition;
      return [r.name, { ...r, partition, target: s.desired - partition }];
    }),
  );
  const lastRound = released.filter((m) => decided.get(m.state.name)!.partition === 0).map((m) => m.state.name);
  if (input.rollbackPossible || rule.rollbackOnDeadline || rule.capacityPolicy === 'fail') holdLastReplicas(decided, released);
  const routeHeld = holdLastForRoute(decided, released, input.routeHold);
  const lowered = released.filter((m) => decided.get(m.state.name)!.partition < (m.state.currentPartition ?? m.state.desired));
  // A first round held because the cluster could not be read for its preflight was not released: lowering it again is no progress.
  const releasesHeld = prior?.reason === CAPACITY_UNKNOWN_REASON;
  const progressed = newRollout || mark > (prior?.progressMark ?? -1) || (lowered.length > 0 && !releasesHeld) || hold?.measured === true;
  const lastProgressAt = progressed ? iso(now) : prior!.lastProgressAt;
  const rounds = (prior?.rounds ?? 0) + (lowered.length > 0 ? 1 : 0);
  const holdUnreleased = unreleased.flatMap((m) => changed(m, m.observed.partition ?? 0, true));
  const unreleasedStatus = (m: Member) => roleStatus(m, members, m.observed.partition ?? 0, 'WaitingForBatch', `released once wave ${active + 1} of ${waves.length} is updated and ready`);

  // A role at partition 0 is done once its workload took the new revision as its current one: the
  // arming write pauses it, and a paused RoleInstanceSet never does (RBG v0.7.0: a later rollout back
  // to the old revision then moved no replica).
  const unrecorded = released.filter((m) => decided.get(m.state.name)!.partition === 0 && !revisionRecorded(m));
  if (round.complete && unreleased.length === 0 && !hold && unrecorded.length === 0) {
    const status: CoordinationStatus = {
      ...base,
      ...wave,
      phase: 'Complete',
      reason: 'RolloutComplete',
      message: `every role reached its final partition in ${rounds} round(s)`,
      rounds,
      lastProgressAt,
      roles: members.map((m) => roleStatus(m, members, decided.get(m.state.name)!.partition, 'Complete', 'at its final partition')),
    };
    // Any rollout seen Progressing ends with an Event, also one that needed no round (a template
    // applied again mid-rollout, whose stranded replicas were replaced); a group first seen complete does not.
    const finished = prior?.phase === 'Progressing';
    const after = rounds > 0 ? `after ${rounds} round(s)` : 'with no partition round';
    return {
      status,
      writes: members.flatMap((m) => changed(m, decided.get(m.state.name)!.partition, true)),
      events: finished ? [{ type: 'Normal', reason: 'RolloutComplete', message: `${rule.name}: ${summary(members)} ${after}` }] : [],
    };
  }

  const replaces = released.flatMap((m) => strandedReplace(m, decided.get(m.state.name)!.partition) ?? []);
  const recording = round.complete && lowered.length === 0 && unrecorded.length > 0;
  const blocking = recording ? unrecorded[0] : blockingRole(released, round, unreleased.length > 0);
  const held = round.roles.find((r) => r.held);
  // Only the route holds the rollout: every released role has what its written partition releases.
  const waitsForRoute = routeHeld.length > 0 && released.every((m) => m.state.updatedReplicas >= decided.get(m.state.name)!.target);
  const status: CoordinationStatus = {
    ...base,
    ...preflighted,
    ...wave,
    phase: 'Progressing',
    reason: hold ? 'WaitingForAnalysis' : lowered.length > 0 ? 'RoundWritten' : held ? 'RoleUnavailable' : waitsForRoute ? 'WaitingForRoute' : recording ? 'WaitingForRoles' : round.complete ? 'WaitingForBatch' : 'WaitingForRoles',
    message: hold
      ? hold.message
      : lowered.length > 0
        ? `round ${rounds} written`
        : waitsForRoute
          ? `waiting for route ${input.routeHold!.route} to send the old release nothing (${routeHeld.join(', ')} keep their last old replica)`
          : recording
            ? `waiting for the workload of ${unrecorded.map((m) => m.state.name).join(', ')} to take the new revision as its current one`
            : `waiting for ${blocking?.observed.name ?? 'the workloads'} (${describeRole(blocking)})`,
    rounds,
    lastProgressAt,
    deadlineAt: iso(Date.parse(lastProgressAt) + deadlineMs),
    ...(blocking ? { blockingRole: blocking.observed.name } : {}),
    roles: members.map((m) => {
      const d = decided.get(m.state.name);
      if (!d) return unreleasedStatus(m);
      const replacing = replaces.find((r) => r.name === m.state.name);
      const why = replacing
        ? `replacing ${replacing.ordinals.length} replica(s) its workload will not update (on a revision its template no longer names)`
        : routeHeld.includes(m.state.name) && m.state.updatedReplicas >= d.target
          ? routeHoldReason(input.routeHold!)
          : unrecorded.includes(m) && phaseOf(m, d) === 'Complete'
            ? currentRevisionReason(m)
            : reasonOf(m, d);
      return roleStatus(m, members, d.partition, phaseOf(m, d), why);
    }),
  };
  return deadlineOr(input, members, { members: released, readiness: unreleased.length > 0 }, status, Date.parse(lastProgressAt) + deadlineMs, () => {
    const events: RolloutEvent[] = [];
    if (lowered.length > 0) {
      const moves = lowered.map((m) => `${m.state.name} partition ${m.state.currentPartition}→${decided.get(m.state.name)!.partition} (${m.state.updatedReplicas}/${m.state.desired} updated)`);
      events.push({ type: 'Normal', reason: ROUND_EVENT, message: `${rule.name} round ${rounds}: ${moves.join(', ')}` });
    }
    if (held && blocking && !(previous?.reason === 'RoleUnavailable' && previous.blockingRole === blocking.observed.name)) {
      events.push({ type: 'Warning', reason: 'RoleUnavailable', message: `${rule.name}: ${blocking.observed.name} has more than maxUnavailable replicas down and holds the other roles (${describeRole(blocking)})` });
    }
    if (replaces.length > 0) {
      const which = replaces.map((r) => `${r.name} ${r.ordinals.map((o) => `#${o}`).join(', ')}`);
      events.push({ type: 'Normal', reason: STRANDED_EVENT, message: `${rule.name}: replacing replicas their workload will not update (on a revision its template no longer names): ${which.join('; ')}` });
    }
    const writes = [...released.flatMap((m) => changed(m, decided.get(m.state.name)!.partition, false)), ...holdUnreleased];
    const step = { status, writes, events, wakeAt: Date.parse(lastProgressAt) + deadlineMs, ...(lastRound.length > 0 ? { lastRound } : {}), ...(replaces.length > 0 ? { replaces } : {}) };
    // The round that starts the rollout: preflighted against the capacity the executor listed.
    return lowered.length > 0 && rounds === 1 ? preflightFirstRound(input, members, step, new Map(lowered.map((m) => [m.state.name, decided.get(m.state.name)!.partition]))) : step;
  });
}

/**
 * A workload that updates its last replica (partition 0, every replica updated) makes the new
 * revision its current one (RBG's RoleInstanceSet, a StatefulSet), and from then on recreates any
 * replica from it: none of that role can be returned by a rollback (rbg-rollback.ts). So while a
 * rollback is possible, each role keeps its last replica (partition at least 1, unless 0 is written
 * already) until every role has all its other replicas updated and every replica ready; then the
 * last replicas of all roles go in one round. This only slows a role down, so the skew bound holds.
 */
function holdLastReplicas(decided: Map<string, { partition: number; target: number }>, released: readonly Member[]): void {
  const lastLeft = released.every((m) => m.state.desired === 0 || m.state.partition > 0 || (m.state.updatedReplicas >= m.state.desired - 1 && m.state.readyReplicas >= m.state.desired));
  if (lastLeft) return;
  for (const m of released) {
    const d = decided.get(m.state.name)!;
    if (d.partition === 0 && m.state.desired > 0 && (m.state.currentPartition ?? m.state.desired) > 0) decided.set(m.state.name, { ...d, partition: 1, target: m.state.desired - 1 });
  }
}

/** A role row's words while its workload has not taken the new revision as its current one. */
function currentRevisionReason(m: Member): string {
  const p = m.observed.progress!;
  return `every replica updated; its workload's current revision is ${p.workloadCurrentRevision}, not yet ${p.workloadRevision}`;
}

/** The rule's members by release wave (one wave of every member without `waves`; members no wave names join the first). */
function wavesOf(rule: ExecutorRule, members: readonly Member[]): Member[][] {
  if (!rule.waves || rule.waves.length === 0) return [[...members]];
  const waves = rule.waves.map((names) => members.filter((m) => names.includes(m.state.name)));
  const listed = new Set(rule.waves.flat());
  waves[0] = [...waves[0], ...members.filter((m) => !listed.has(m.state.name))];
  return waves.filter((w) => w.length > 0);
}

/**
 * The status and writes when the deadline has passed — every member stopped (or rolled back), the
 * blocking role picked among `candidates` (the released roles) — else `otherwise()`.
 */
function deadlineOr(
  input: CoordinationStepInput,
  members: readonly Member[],
  candidates: { members: readonly Member[]; readiness: boolean },
  status: CoordinationStatus,
  deadlineAt: number,
  otherwise: () => CoordinationStep,
): CoordinationStep {
  if (input.now < deadlineAt) return surgeOr(input, members, status, otherwise);
  const { rule } = input;
  const blocking = blockingRole(candidates.members, undefined, candidates.readiness);
  const who = blocking ? `${blocking.observed.name} (${describeRole(blocking)})` : 'the RBG controller';
  const where = members.map((m) => `${m.state.name} at partition ${m.observed.partition ?? 0}`).join(', ');
  const message = `no progress for ${rule.progressDeadlineSeconds}s; blocked by ${who}; ${rule.rollbackOnDeadline ? 'returning every role to the revision before the rollout' : `stopped ${where}`}`;
  const { deadlineAt: _passed, ...rest } = status;
  const failed: CoordinationStatus = {
    ...rest,
    phase: 'Failed',
    reason: 'ProgressDeadlineExceeded',
    message,
    ...(blocking ? { blockingRole: blocking.observed.name } : {}),
    roles: members.map((m) => roleStatus(m, members, m.observed.partition ?? 0, 'Stopped', 'stopped by the progress deadline')),
  };
  const events: RolloutEvent[] = [{ type: 'Warning', reason: 'ProgressDeadlineExceeded', message: `${rule.name}: ${message}` }];
  if (rule.rollbackOnDeadline) {
    const back = rollbackStep(input, { ...failed, message: `no progress for ${rule.progressDeadlineSeconds}s, blocked by ${who}` });
    return { ...back, events: [...events, ...back.events] };
  }
  return { status: failed, writes: members.flatMap((m) => changed(m, m.observed.partition ?? 0, true)), events };
}

/**
 * Before the deadline, the scheduler watch (when the executor read the Pods, `input.scheduling`):
 * Pods of the rule's roles Unschedulable are recorded in `surgeUnschedulable` and the executor wakes
 * when the bound passes; past it, one `SurgeUnschedulable` Event per episode, and under
 * `capacityPolicy: fail` every role stops and returns to the revision before the rollout, as at
 * the deadline with `rollbackOnDeadline`. With none Unschedulable the record is gone, and while a
 * role has a replica down (a new Pod may be waiting for the scheduler, which no watched object
 * tells) the executor looks again after `SURGE_RECHECK_MS`.
 */
function surgeOr(input: CoordinationStepInput, members: readonly Member[], status: CoordinationStatus, otherwise: () => CoordinationStep): CoordinationStep {
  const { rule, now, scheduling } = input;
  if (scheduling === undefined) return otherwise();
  const seen = scheduling.unschedulable;
  if (seen === undefined) {
    const step = otherwise();
    return members.some((m) => m.state.readyReplicas < m.state.desired) ? { ...step, wakeAt: Math.min(step.wakeAt ?? Infinity, now + SURGE_RECHECK_MS) } : step;
  }
  const reported = input.previous?.revision === status.revision && input.previous.surgeUnschedulable?.boundExceeded === true;
  const verdict = judgeSurge(seen, reported, rule.surgeUnschedulableSeconds, rule.capacityPolicy, now);
  const record: CoordinationSurgeStatus = { pods: seen.unschedulablePods, roles: seen.roles ?? [], since: iso(seen.since), message: seen.message, boundExceeded: verdict.boundExceeded };
  const roles = seen.roles === undefined || seen.roles.length === 0 ? 'the coordinated roles' : `${seen.roles.length === 1 ? 'role' : 'roles'} ${seen.roles.join(', ')}`;
  const words = (then: string) => surgeEventMessage(seen, roles, rule.surgeUnschedulableSeconds, then, now);
  const then = verdict.fail ? 'returning every role to the revision before the rollout (capacityPolicy fail)' : `the rollout waits for capacity (capacityPolicy ${rule.capacityPolicy})`;
  const event: RolloutEvent = { type: 'Warning', reason: SURGE_EVENT_REASON, action: SURGE_EVENT_ACTION, message: `${rule.name}: ${words(then)}` };
  if (verdict.fail) {
    const { deadlineAt: _none, ...rest } = status;
    const failed: CoordinationStatus = {
      ...rest,
      phase: 'Failed',
      reason: SURGE_EVENT_REASON,
      // The rollback's cause.
      message: words('rolled back (capacityPolicy fail)'),
      surgeUnschedulable: record,
      roles: members.map((m) => roleStatus(m, members, m.observed.partition ?? 0, 'Stopped', 'stopped: Pods of the rollout Unschedulable')),
    };
    const back = rollbackStep(input, failed);
    return { ...back, events: [event, ...back.events] };
  }
  const step = otherwise();
  return {
    ...step,
    status: { ...step.status, surgeUnschedulable: record },
    events: verdict.report ? [...step.events, event] : step.events,
    ...(verdict.wakeAt !== undefined ? { wakeAt: Math.min(step.wakeAt ?? Infinity, verdict.wakeAt) } : {}),
  };
}

function withoutSurge(s: CoordinationStatus): CoordinationStatus {
  const { surgeUnschedulable: _watched, ...rest } = s;
  return rest;
}

function revisionOf(members: readonly Member[]): string {
  return createHash('sha256')
    .update(members.map((m) => `${m.observed.name}=${m.observed.revision}`).join(','))
    .digest('hex')
    .slice(0, 16);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
