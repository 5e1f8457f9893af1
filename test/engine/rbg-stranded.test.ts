/**
 * Replicas a RoleInstanceSet will never update (lib/engine/rbg-stranded.ts): a template applied
 * again mid-rollout leaves the set's update revision equal to its current one, and the replicas
 * already on the abandoned revision stay there (measured on RBG v0.7.0). The coordination names
 * them for the runtime to replace, within the role's maxUnavailable. Pure: observed roles in, the
 * step's `replaces` out.
 */
import { coordinationStep } from '../../lib/engine/rbg-coordination';
import type { ObservedRole, ReplicaState } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { membersOf } from '../../lib/engine/rbg-members';
import { strandedReplace } from '../../lib/engine/rbg-stranded';
import { prefillDecodeRule } from '../support/rbg-rules';

const T0 = Date.parse('2026-11-30T07:00:00Z');
const V1 = 'pd-prefill-5455';

const rule = prefillDecodeRule({ maxSkewPercent: 50, progressDeadlineSeconds: 120 });

/** Ordinals on the set's one revision (`current`) or another (`other`), each ready unless listed in `down`. */
function replicas(others: readonly number[], desired: number, down: readonly number[] = []): ReplicaState[] {
  return Array.from({ length: desired }, (_, ordinal) => ({ ordinal, revision: others.includes(ordinal) ? ('other' as const) : ('current' as const), ready: !down.includes(ordinal), terminating: false }));
}

/** prefill's set on V1 alone with `others` stranded on the abandoned revision; decode fully on its revision. */
function observed(others: readonly number[], opts: { down?: number[]; current?: string; partition?: number; list?: boolean } = {}): Map<string, ObservedRole> {
  const list = replicas(others, 4, opts.down);
  const ready = list.filter((r) => r.ready).length;
  return new Map<string, ObservedRole>([
    ['prefill', {
      name: 'prefill', index: 0, desired: 4, partition: opts.partition ?? 0, maxUnavailable: 1, paused: false, revision: 'r1',
      progress: { updatedReplicas: 4 - others.length, readyReplicas: ready, source: 'workload', workloadRevision: V1, workloadCurrentRevision: opts.current ?? V1, ...(opts.list === false ? {} : { replicas: list }) },
    }],
    ['decode', {
      name: 'decode', index: 1, desired: 2, partition: 0, maxUnavailable: 1, paused: false, revision: 'r1',
      progress: { updatedReplicas: 2, readyReplicas: 2, source: 'workload', workloadRevision: 'pd-decode-1', workloadCurrentRevision: 'pd-decode-1' },
    }],
  ]);
}

function prefill(roles: Map<string, ObservedRole>) {
  return membersOf({ rule, roles, controllerCaughtUp: true, now: T0 })[0];
}

describe('strandedReplace', () => {
  test('a set on one revision with replicas on another: the ready ones go one at a time (maxUnavailable 1), highest ordinal first', () => {
    expect(strandedReplace(prefill(observed([2, 3])), 0)).toEqual({ name: 'prefill', index: 0, revision: V1, ordinals: [3] });
  });

  test('one replica already down: no ready stranded replica goes; a stranded one that is down goes at no cost', () => {
    expect(strandedReplace(prefill(observed([3], { down: [1] })), 0)).toBeUndefined();
    expect(strandedReplace(prefill(observed([2, 3], { down: [2] })), 0)).toEqual({ name: 'prefill', index: 0, revision: V1, ordinals: [2] });
  });

  test('only ordinals the partition releases: below it a replica stays where it is', () => {
    expect(strandedReplace(prefill(observed([1], { partition: 2 })), 2)).toBeUndefined();
    expect(strandedReplace(prefill(observed([1, 3], { partition: 2 })), 2)).toEqual({ name: 'prefill', index: 0, revision: V1, ordinals: [3] });
  });

  test('nothing while the set is rolling (update revision not its current one) or no list of its replicas was read', () => {
    expect(strandedReplace(prefill(observed([3], { current: 'pd-prefill-7c2a' })), 0)).toBeUndefined();
    expect(strandedReplace(prefill(observed([3], { list: false })), 0)).toBeUndefined();
    expect(strandedReplace(prefill(observed([])), 0)).toBeUndefined();
  });
});

test('a coordination with a stranded replica names it for replacement, says so in the role and an Event, and does not complete', () => {
  const previous: CoordinationStatus = {
    name: 'pd', revision: 'x', maxSkewPercent: 50, skewPercent: 0, startedAt: new Date(T0 - 5000).toISOString(), progressMark: 0,
    phase: 'Progressing', reason: 'RoundWritten', message: 'round 1 written', rounds: 1, lastProgressAt: new Date(T0 - 5000).toISOString(), roles: [],
  };
  const step = coordinationStep({ rule, roles: observed([3]), controllerCaughtUp: true, previous, now: T0 });
  expect(step.status.phase).toBe('Progressing');
  expect(step.replaces).toEqual([{ name: 'prefill', index: 0, revision: V1, ordinals: [3] }]);
  expect(step.status.roles.find((r) => r.name === 'prefill')!.reason).toContain('replacing 1 replica(s)');
  expect(step.events.map((e) => e.reason)).toContain('StrandedReplicasReplaced');
  // Once replaced and back on the set's revision, nothing is left to replace and the rollout completes.
  const done = coordinationStep({ rule, roles: observed([]), controllerCaughtUp: true, previous: step.status, now: T0 + 5000 });
  expect(done.replaces).toBeUndefined();
  expect(done.status.phase).toBe('Complete');
  // No partition round was written (the set's revision is the one armed), yet the rollout that ran ends with an Event.
  expect(done.status.rounds).toBe(0);
  expect(done.events.map((e) => e.reason)).toEqual(['RolloutComplete']);
  expect(done.events[0].message).toContain('with no partition round');
});
