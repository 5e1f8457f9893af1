/**
 * Reads RBG's coordinated rolling rounds out of the RoleInstanceSet states a `WorkloadRecorder`
 * kept (test/integration/cluster-rbg-coordinated.test.ts): the partitions RBG wrote, the engine's
 * port of RBG's step from each state, the writes only stale counts explain, and where a state
 * breaks RBG's skew bound, the release that let it. Test support, not the package's API.
 */
import { upstreamPartition, upstreamRollingTargets, type RbgRoleState } from '../../lib/engine';
import { rbgSkewCheck, type RbgSkewVerdict } from './rbg-skew-check';
import { GroupState } from './rbg-workload-recorder';

/** One group of the cluster test: its roles' replicas and its coordinated rolling-update rule. */
export interface CoordinatedCase {
  readonly name: string;
  readonly replicas: Record<string, number>;
  readonly maxSkewPercent: number;
  readonly maxUnavailable: number;
  readonly partition?: number;
}

/** Each change of a role's partition: the role, its new value and the index of the state showing it. */
export interface PartitionWrite {
  readonly role: string;
  readonly partition: number;
  readonly at: number;
}

/** The partitions RBG wrote, one entry per change of one role's (RBG writes the roles' workloads one after the other). */
export function partitionWrites(states: readonly GroupState[], roles: readonly string[]): PartitionWrite[] {
  const writes: PartitionWrite[] = [];
  states.forEach((s, at) => {
    for (const role of roles) {
      if (at === 0 || s[role].partition !== states[at - 1][role].partition) writes.push({ role, partition: s[role].partition, at });
    }
  });
  return writes;
}

/** Each role's partitions in order, repeats dropped. */
export function sequences(rounds: readonly Readonly<Record<string, number>>[], roles: readonly string[]): Record<string, number[]> {
  return Object.fromEntries(roles.map((r) => [r, rounds.map((p) => p[r]).filter((v, i, all) => i === 0 || v !== all[i - 1])]));
}

/** Each role's revision before the new template: its `updateRevision` in the first state. */
export function oldRevisions(states: readonly GroupState[], roles: readonly string[]): Record<string, string> {
  return Object.fromEntries(roles.map((r) => [r, states[0][r].updateRevision]));
}

/** A role's replicas on the new revision in state `s` (`v1Revision` names the old one). */
export function updatedOnNew(s: GroupState, role: string, v1Revision: Record<string, string>): number {
  return s[role].updateRevision === v1Revision[role] ? 0 : s[role].updated;
}

/**
 * The partitions the engine's port of RBG's step (`upstreamRollingTargets`, `upstreamPartition`)
 * writes from one observed state. `rbg`: as RBG reads it — a workload's counts as it reports them
 * (before it observes the new template, its old replicas count as updated), or, while it has not
 * observed its latest spec, the role's entry in the group's status (RBG's
 * `ConstructWorkloadRoleStatus`). `true`: the replicas really on the new revision.
 */
export function stepFrom(state: GroupState, c: CoordinatedCase, reading: 'rbg' | 'true', v1Revision: Record<string, string> = {}): Record<string, number> {
  const roles: RbgRoleState[] = Object.keys(c.replicas).map((name) => {
    const w = state[name];
    const read = reading === 'rbg' ? (!w.observed && w.reported ? w.reported : w) : { updated: updatedOnNew(state, name, v1Revision), ready: w.ready };
    return { name, desired: c.replicas[name], updatedReplicas: read.updated, readyReplicas: read.ready, maxUnavailable: c.maxUnavailable, partition: Math.min(c.partition ?? 0, c.replicas[name]) };
  });
  // The test cluster runs RBG v0.7.0: its step's rules.
  const targets = upstreamRollingTargets(c.maxSkewPercent, roles, 'v0.7');
  return Object.fromEntries(roles.map((r) => [r.name, upstreamPartition(r, targets?.get(r.name) ?? r.desired)]));
}

/**
 * The states RBG may have read for `write`: those since its previous write of the same role (one
 * before it, as RBG's cache may lag its own write), which its reconciles follow one at a time.
 */
export function readWindow(states: readonly GroupState[], writes: readonly PartitionWrite[], write: PartitionWrite): GroupState[] {
  const previous = writes.slice(0, writes.indexOf(write)).filter((w) => w.role === write.role).pop();
  return states.slice(Math.max(0, (previous?.at ?? 0) - 1), write.at);
}

/**
 * RBG's writes after its first that follow only from counts that were not the replicas on the new
 * revision: no state it may have read gives the written partition from the true counts, one does
 * as RBG reads them.
 */
export function staleOnlyWrites(states: readonly GroupState[], writes: readonly PartitionWrite[], c: CoordinatedCase): PartitionWrite[] {
  const v1Revision = oldRevisions(states, Object.keys(c.replicas));
  return writes.filter((w) => {
    if (w.at === 0) return false;
    const window = readWindow(states, writes, w);
    return !window.some((s) => stepFrom(s, c, 'true', v1Revision)[w.role] === w.partition) && window.some((s) => stepFrom(s, c, 'rbg')[w.role] === w.partition);
  });
}

/** A state over RBG's skew bound and the release that let its fastest role get there. */
export interface SkewExcess {
  readonly at: number;
  readonly verdict: RbgSkewVerdict;
  readonly role: string;
  readonly updated: number;
  /**
   * The release under which the role's replicas were updated: the write in force at the latest
   * state, at or before the first one showing this many updated, whose partition let the role have
   * them (the workload's status reports updates later than they happen).
   */
  readonly release: PartitionWrite;
}

/** Every state that breaks RBG's own skew check, counting replicas on the new revision. */
export function skewExcesses(states: readonly GroupState[], writes: readonly PartitionWrite[], c: CoordinatedCase): SkewExcess[] {
  const roles = Object.keys(c.replicas);
  const v1Revision = oldRevisions(states, roles);
  const excesses: SkewExcess[] = [];
  states.forEach((s, at) => {
    const onNew = roles.map((r) => ({ name: r, desired: c.replicas[r], updatedReplicas: updatedOnNew(s, r, v1Revision) }));
    const verdict = rbgSkewCheck(c.maxSkewPercent, onNew);
    if (verdict.ok) return;
    const fastest = [...onNew].sort((x, y) => y.updatedReplicas / y.desired - x.updatedReplicas / x.desired)[0];
    // Replicas stay updated once updated, so they were updated by the first state of the stretch
    // that already shows this many: a later write of the same or a lower partition released none of them.
    let reached = at;
    while (reached > 0 && updatedOnNew(states[reached - 1], fastest.name, v1Revision) >= fastest.updatedReplicas) reached--;
    let permitting = reached;
    while (permitting > 0 && c.replicas[fastest.name] - states[permitting][fastest.name].partition < fastest.updatedReplicas) permitting--;
    const release = writes.filter((w) => w.role === fastest.name && w.at <= permitting).pop()!;
    excesses.push({ at, verdict, role: fastest.name, updated: fastest.updatedReplicas, release });
  });
  return excesses;
}

/**
 * RBG's writes after its first that it computed from a state read mid-round: the states it may have
 * read that give the written partition as RBG reads it are all states where some role still had
 * fewer replicas on the new revision than the partition in force releases, or fewer ready than
 * desired (no settled state gives it). The plan's
 * rounds read only settled states (every released replica updated and ready); RBG's reconciles
 * also wake while a release's Pods are still updating, and a step from such a state (true counts,
 * not stale ones) can write a round the plan does not have (seen: 4p/2d at 50%, prefill 0 → 3
 * from prefill 1/4 and decode 1/2 updated, where the plan goes 0 → 2).
 */
export function midRoundWrites(states: readonly GroupState[], writes: readonly PartitionWrite[], c: CoordinatedCase): PartitionWrite[] {
  const roles = Object.keys(c.replicas);
  const v1Revision = oldRevisions(states, roles);
  const inFlight = (s: GroupState) => roles.some((r) => updatedOnNew(s, r, v1Revision) < c.replicas[r] - s[r].partition || s[r].ready < c.replicas[r]);
  return writes.filter((w) => {
    if (w.at === 0) return false;
    const explaining = readWindow(states, writes, w).filter((s) => stepFrom(s, c, 'rbg')[w.role] === w.partition);
    return explaining.length > 0 && explaining.every(inFlight);
  });
}
