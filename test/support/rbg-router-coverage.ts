/**
 * The new-release weight the version-matched routing rule allows for one recorded state of a routed
 * group's workloads, computed here from the recorded counts (not by the engine), and the check of
 * every suite that watches an executor move a router route (the operator's, `pulumi up`'s). Test
 * support, not the package's API.
 */
import type { GroupState } from './rbg-workload-recorder';

/**
 * The new-release weight allowed in state `s` of a group of `replicas` by role, whose roles'
 * revisions before the rollout were `v1`: the slowest role's share of replicas surely both new and
 * ready, rounded down; 100 once no replica is left on the old release (its router has no worker
 * then), or once some role has no ready replica left on it (its router can make no pair then).
 */
function allowedNewWeight(s: GroupState, v1: Readonly<Record<string, string>>, replicas: Readonly<Record<string, number>>): number {
  const roles = Object.entries(replicas);
  const onNew = (role: string) => (s[role].updateRevision === v1[role] ? 0 : s[role].updated);
  if (roles.every(([role, desired]) => onNew(role) >= desired)) return 100;
  const readyNew = (role: string, desired: number) => Math.max(0, Math.min(onNew(role), s[role].ready - (desired - onNew(role))));
  // Replicas surely old and ready: ready ones beyond every new replica (the counts name no ready-new figure).
  const readyOld = (role: string, desired: number) => Math.max(0, Math.min(s[role].ready - onNew(role), desired - onNew(role)));
  if (roles.some(([role, desired]) => readyOld(role, desired) === 0)) return 100;
  // The route hold: a role down to its last old replica (held for the route) with every other one new
  // and ready, and a ready new replica in each role: the old release may get 0 before its last go.
  const atLast = roles.some(([role, desired]) => onNew(role) >= desired - 1 && readyNew(role, desired) >= desired - 1);
  if (atLast && roles.every(([role, desired]) => readyNew(role, desired) >= 1)) return 100;
  return Math.min(...roles.map(([role, desired]) => Math.floor((100 * readyNew(role, desired)) / desired)));
}

/**
 * Checks the new-release weights a route's watch saw, each with the count of workload states
 * recorded when it arrived (`mark`): from 0 to 100, never falling from 100 (no replica is left on
 * the old release for a share of its router to reach), and each covered by new-release replicas of
 * a state recorded ready since `from`, before it arrived. Returns the weights in order.
 */
export function expectRouteWeightsCovered(
  weights: readonly { readonly weight: number; readonly mark: number }[],
  history: readonly GroupState[],
  from: number,
  v1: Readonly<Record<string, string>>,
  replicas: Readonly<Record<string, number>>,
): number[] {
  const seq = weights.map((w) => w.weight);
  expect(seq[0]).toBe(0);
  expect(seq[seq.length - 1]).toBe(100);
  expect(seq.slice(seq.indexOf(100))).toEqual([100]);
  for (const { weight, mark } of weights) {
    const best = Math.max(0, ...history.slice(from, mark).map((s) => allowedNewWeight(s, v1, replicas)));
    expect({ weight, coveredBy: best >= weight }).toEqual({ weight, coveredBy: true });
  }
  return seq;
}
