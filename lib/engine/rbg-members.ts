/**
 * The coordinated roles of one pass over an RBG coordination, as members: built from what was
 * observed, the write that brings one to a partition, and how each is reported (phase, reason,
 * status row, skew, the role that blocks the others). `rbg-coordination.ts` decides with them.
 */
import type { CoordinationStepInput, ExecutorRule, ObservedRole, RoleWrite } from './rbg-coordination-types';
import type { RolePhase, RoleRolloutStatus } from './rbg-coordination-status';
import { progressOf, type RbgRoleState } from './rbg-roles';
import type { RbgRound } from './rbg-rollout';

/** One coordinated role in one pass: its rule entry, what was observed of it, and the engine's counts. */
export interface Member {
  readonly rule: ExecutorRule['roles'][number];
  readonly observed: ObservedRole;
  readonly state: RbgRoleState;
}

/** Updated up to its final partition and every replica ready: the next wave may start. */
export function settled(m: Member): boolean {
  return m.state.updatedReplicas >= m.state.desired - m.state.partition && m.state.readyReplicas >= m.state.desired;
}

/**
 * Whether the role's workload has made the revision it updates to its current one, as RBG's
 * RoleInstanceSet and a StatefulSet do in a sync after their last replica is updated and ready;
 * true when the workload reports no such revisions (the group's counts, a LeaderWorkerSet). A
 * RoleInstanceSet paused before that keeps the old revision as current: a later return to that
 * revision makes its update revision equal its current one, and it then moves no replica.
 */
export function revisionRecorded(m: Member): boolean {
  const p = m.observed.progress;
  return p?.workloadRevision === undefined || p.workloadCurrentRevision === undefined || p.workloadCurrentRevision === p.workloadRevision;
}

/** The members of the rule that were observed (a role not observed is left out), in the rule's order. */
export function membersOf(input: CoordinationStepInput): Member[] {
  return input.rule.roles.flatMap((rule) => {
    const observed = input.roles.get(rule.name);
    if (!observed) return [];
    const updated = Math.min(observed.progress?.updatedReplicas ?? 0, observed.desired);
    const state: RbgRoleState = {
      name: rule.name,
      desired: observed.desired,
      updatedReplicas: updated,
      readyReplicas: Math.min(observed.progress?.readyReplicas ?? 0, observed.desired),
      maxUnavailable: rule.maxUnavailable,
      partition: Math.min(rule.partition, observed.desired),
      // Paused, a role has released exactly its updated replicas; one whose workload ignores
      // `paused` has released what its partition allows, unless armed (every replica updated).
      currentPartition: observed.paused && (!observed.holdsByPartition || updated >= observed.desired) ? observed.desired - updated : Math.min(observed.partition ?? 0, observed.desired),
    };
    return [{ rule, observed, state }];
  });
}

/**
 * The write that brings a role to `partition`/`paused` with the rule's maxUnavailable, or none when
 * it is there already. A role to be held at every replica is held by `paused` with a partition
 * below replicas instead (its current one when below, else replicas − 1): RBG v0.8's webhook
 * refuses a partition ≥ replicas, and a paused role releases exactly its updated replicas — none,
 * since a partition at replicas was never lowered. A role whose workload ignores `paused`
 * (`holdsByPartition`, no webhook refuses it there) is held by partition = replicas instead.
 */
export function changed(m: Member, partition: number, paused: boolean): RoleWrite[] {
  const o = m.observed;
  if (o.holdsByPartition) {
    // Its workload ignores `paused`: a hold at every replica, or an armed role (every replica
    // updated, so the next template change would roll each), is held by partition = replicas.
    if (paused && (partition >= o.desired || m.state.updatedReplicas >= o.desired)) partition = o.desired;
  } else if (o.desired > 0 && partition >= o.desired) {
    paused = true;
    partition = o.partition !== undefined && o.partition < o.desired ? o.partition : o.desired - 1;
  }
  if (o.partition === partition && o.paused === paused && o.maxUnavailable === m.rule.maxUnavailable) return [];
  return [{ name: o.name, index: o.index, partition, maxUnavailable: m.rule.maxUnavailable, paused }];
}

/** The spread between the most and the least progressed role with replicas, percent (one decimal). */
export function skewOf(members: readonly Member[]): number {
  const progress = members.filter((m) => m.state.desired > 0).map((m) => progressOf(m.state));
  return progress.length < 2 ? 0 : round1((Math.max(...progress) - Math.min(...progress)) * 100);
}

/**
 * The role holding the others: a role over its maxUnavailable budget, else the least-progressed
 * unfinished role (ties: the larger role, as upstream orders them). With `readiness`, an updated
 * role whose replicas are not all ready is unfinished too (it holds the next release wave).
 */
export function blockingRole(members: readonly Member[], round: RbgRound | undefined, readiness = false): Member | undefined {
  const unfinished = members.filter((m) => m.state.desired > 0 && (readiness ? !settled(m) : m.state.updatedReplicas < m.state.desired - m.state.partition));
  const overBudget = unfinished.find((m) => m.state.desired - m.state.readyReplicas > m.state.maxUnavailable || round?.roles.find((r) => r.name === m.state.name)?.held);
  if (overBudget) return overBudget;
  return [...unfinished].sort((a, b) => progressOf(a.state) - progressOf(b.state) || b.state.desired - a.state.desired)[0];
}

/** Where a role stands in the round `decided` for it (unset: from the partition it has). */
export function phaseOf(m: Member, decided: RbgRound['roles'][number] | undefined): RolePhase {
  const s = m.state;
  if (s.updatedReplicas >= s.desired - s.partition) return 'Complete';
  if (s.desired - s.readyReplicas > s.maxUnavailable) return 'Unavailable';
  const target = decided ? decided.target : s.desired - (s.currentPartition ?? s.desired);
  return target > s.updatedReplicas ? 'Updating' : 'WaitingForSkew';
}

/** The status's words for why a role is in its phase. */
export function reasonOf(m: Member, decided: RbgRound['roles'][number]): string {
  switch (phaseOf(m, decided)) {
    case 'Complete':
      return 'at its final partition';
    case 'Unavailable':
      return `${m.state.desired - m.state.readyReplicas} replicas unavailable, more than maxUnavailable ${m.state.maxUnavailable}`;
    case 'Updating':
      return `workload moving to ${decided.target} updated replicas`;
    default:
      return 'within maxSkew of the slowest role; waits for it';
  }
}

/** A role's row of the coordination status, its skew measured against the slowest of `members`. */
export function roleStatus(m: Member, members: readonly Member[], partition: number, phase: RolePhase, reason: string): RoleRolloutStatus {
  const progress = members.filter((x) => x.state.desired > 0).map((x) => progressOf(x.state));
  const slowest = progress.length > 0 ? Math.min(...progress) : 0;
  const s = m.state;
  return {
    name: s.name,
    desired: s.desired,
    updated: s.updatedReplicas,
    ready: s.readyReplicas,
    partition,
    skewPercent: s.desired > 0 ? round1((progressOf(s) - slowest) * 100) : 0,
    phase,
    reason,
  };
}

/** A role's counts and partition, as messages and Events name the blocking role. */
export function describeRole(m: Member | undefined): string {
  if (!m) return 'no role';
  const s = m.state;
  return `${s.updatedReplicas}/${s.desired} updated, ${s.readyReplicas}/${s.desired} ready, partition ${m.observed.partition ?? 0}`;
}

/** Every member's updated count, for the RolloutComplete Event. */
export function summary(members: readonly Member[]): string {
  return members.map((m) => `${m.state.name} ${m.state.updatedReplicas}/${m.state.desired}`).join(', ');
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
