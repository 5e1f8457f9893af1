/** `coordinationStep`: the executor's decision for one coordination, pure (no API server). */
import { coordinationStep } from '../../lib/engine/rbg-coordination';
import type { CoordinationStep, ExecutorRule, ObservedRole } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { nextRbgRound } from '../../lib/engine/rbg-rollout';
import { needsRbgSurgeScheduling, ruleSurgeScheduling } from '../../lib/engine/rbg-surge-scheduling';
import type { SurgeScheduling } from '../../lib/engine/surge-scheduling';

const T0 = Date.parse('2026-11-21T10:00:00Z');

function rule(overrides: Partial<ExecutorRule> = {}): ExecutorRule {
  return {
    name: 'pd',
    maxSkewPercent: 10,
    roles: [
      { name: 'prefill', replicas: 40, partition: 0, maxUnavailable: 4 },
      { name: 'decode', replicas: 20, partition: 0, maxUnavailable: 2 },
    ],
    progressDeadlineSeconds: 60,
    rollbackOnDeadline: false,
    capacityPolicy: 'wait',
    surgeUnschedulableSeconds: 120,
    ...overrides,
  };
}

interface RoleSetup {
  desired: number;
  updated: number;
  ready?: number;
  partition?: number;
  maxUnavailable?: number;
  paused?: boolean;
  revision?: string;
}

function roles(setup: Record<string, RoleSetup>): Map<string, ObservedRole> {
  return new Map(
    Object.entries(setup).map(([name, r], index) => [
      name,
      {
        name,
        index,
        desired: r.desired,
        ...(r.partition !== undefined ? { partition: r.partition } : {}),
        ...(r.maxUnavailable !== undefined ? { maxUnavailable: r.maxUnavailable } : {}),
        paused: r.paused ?? false,
        revision: r.revision ?? 'v1',
        progress: { updatedReplicas: r.updated, readyReplicas: r.ready ?? r.desired, source: 'group' as const },
      },
    ]),
  );
}

/** The group right after a template change: both roles armed (paused), nothing updated yet. */
const armedAtV2 = roles({
  prefill: { desired: 40, updated: 0, partition: 0, maxUnavailable: 4, paused: true, revision: 'v2' },
  decode: { desired: 20, updated: 0, partition: 0, maxUnavailable: 2, paused: true, revision: 'v2' },
});

function step(observed: Map<string, ObservedRole>, previous?: CoordinationStatus, now = T0, r = rule(), controllerCaughtUp = true): CoordinationStep {
  return coordinationStep({ rule: r, roles: observed, controllerCaughtUp, previous, now });
}

test('a fully rolled group seen for the first time is Complete and armed: every role paused, no Event', () => {
  const s = step(roles({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } }));
  expect(s.status).toMatchObject({ phase: 'Complete', reason: 'RolloutComplete', rounds: 0 });
  expect(s.writes).toEqual([
    { name: 'prefill', index: 0, partition: 0, maxUnavailable: 4, paused: true },
    { name: 'decode', index: 1, partition: 0, maxUnavailable: 2, paused: true },
  ]);
  expect(s.events).toEqual([]);
  expect(s.wakeAt).toBeUndefined();
});

test('a new revision on armed roles: the first round unpauses them with the engine\'s partitions and records an Event', () => {
  const armed = step(roles({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } })).status;
  const s = step(armedAtV2, armed, T0 + 1000);
  const engine = nextRbgRound(10, [
    { name: 'prefill', desired: 40, updatedReplicas: 0, readyReplicas: 40, maxUnavailable: 4, partition: 0, currentPartition: 40 },
    { name: 'decode', desired: 20, updatedReplicas: 0, readyReplicas: 20, maxUnavailable: 2, partition: 0, currentPartition: 20 },
  ]);
  expect(s.writes.map((w) => [w.name, w.partition, w.paused])).toEqual(engine.roles.map((r) => [r.name, r.partition, false]));
  expect(s.writes[0].partition).toBeLessThan(40);
  expect(s.status).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1 });
  expect(s.status.revision).not.toBe(armed.revision);
  expect(s.events.map((e) => e.reason)).toEqual(['RolloutRound']);
  expect(s.events[0].message).toMatch(/prefill partition 40→\d+ \(0\/40 updated\)/);
  expect(s.wakeAt).toBe(T0 + 1000 + 60_000);
  expect(s.status.roles.map((r) => [r.name, r.phase, r.partition])).toEqual(engine.roles.map((r) => [r.name, 'Updating', r.partition]));
});

test('the same observation again (workloads not caught up yet) writes nothing and counts no round', () => {
  const first = step(armedAtV2, step(roles({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } })).status);
  const written = roles({
    prefill: { desired: 40, updated: 0, partition: first.writes[0].partition, maxUnavailable: 4, revision: 'v2' },
    decode: { desired: 20, updated: 0, partition: first.writes[1].partition, maxUnavailable: 2, revision: 'v2' },
  });
  const again = step(written, first.status, T0 + 500);
  expect(again.writes).toEqual([]);
  expect(again.events).toEqual([]);
  expect(again.status).toMatchObject({ rounds: 1, reason: 'WaitingForRoles', lastProgressAt: first.status.lastProgressAt });
});

test('nothing is decided while the RBG controller has not observed the latest generation', () => {
  const previous = step(armedAtV2, step(roles({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } })).status).status;
  const s = step(armedAtV2, previous, T0 + 2000, rule(), false);
  expect(s.writes).toEqual([]);
  expect(s.status).toMatchObject({ phase: 'Progressing', reason: 'WaitingForController', rounds: 1 });
  expect(s.wakeAt).toBe(Date.parse(previous.lastProgressAt) + 60_000);
});

describe('a workload still on the previous rollout\'s template counts as unobserved (RBG v0.7.0 marks the group observed before it writes the workloads)', () => {
  /** `setup` read from workloads: `[updated, workload revision]` per role. */
  const fromWorkloads = (setup: Record<'prefill' | 'decode', [number, string]>, roleRevision: string, paused = true) =>
    new Map(
      [...roles({ prefill: { desired: 40, updated: 0, partition: 0, maxUnavailable: 4, paused, revision: roleRevision }, decode: { desired: 20, updated: 0, partition: 0, maxUnavailable: 2, paused, revision: roleRevision } })].map(([name, r]) => {
        const [updated, workloadRevision] = setup[name as 'prefill' | 'decode'];
        return [name, { ...r, progress: { updatedReplicas: updated, readyReplicas: r.desired, source: 'workload' as const, workloadRevision } }];
      }),
    );
  const armedAtV1 = () => step(fromWorkloads({ prefill: [40, 'p-1'], decode: [20, 'd-1'] }, 'v1')).status;

  test('the first pass of a new revision with decode\'s workload still at the old template (20/20 "updated") releases nothing', () => {
    const armed = armedAtV1();
    expect(armed.roles.map((r) => r.workloadRevision)).toEqual(['p-1', 'd-1']);
    const s = step(fromWorkloads({ prefill: [0, 'p-2'], decode: [20, 'd-1'] }, 'v2'), armed, T0 + 1000);
    expect(s.writes).toEqual([]);
    expect(s.status).toMatchObject({ phase: 'Progressing', reason: 'WaitingForController', rounds: 0 });
    expect(s.status.roles.map((r) => [r.name, r.workloadRevision, r.fromWorkloadRevision])).toEqual([
      ['prefill', 'p-2', 'p-1'],
      ['decode', undefined, 'd-1'],
    ]);
  });

  test('a Complete rollout whose workload has not observed the re-arming write stays as reported (no unknown counts shown as 0)', () => {
    const armed = armedAtV1();
    const catchingUp = new Map([...fromWorkloads({ prefill: [40, 'p-1'], decode: [20, 'd-1'] }, 'v1')].map(([name, r]) => [name, name === 'decode' ? { ...r, progress: undefined } : r]));
    const s = step(catchingUp, armed, T0 + 1000);
    expect(s.writes).toEqual([]);
    expect(s.status).toEqual(armed);
  });

  test('between rounds a role whose workload has not observed the round keeps the counts last reported', () => {
    const waiting = step(fromWorkloads({ prefill: [0, 'p-2'], decode: [20, 'd-1'] }, 'v2'), armedAtV1(), T0 + 1000).status;
    const round = step(fromWorkloads({ prefill: [0, 'p-2'], decode: [0, 'd-2'] }, 'v2'), waiting, T0 + 2000);
    const moving = fromWorkloads({ prefill: [4, 'p-2'], decode: [2, 'd-2'] }, 'v2', false);
    const reported = step(moving, round.status, T0 + 3000).status;
    expect(reported.roles.map((r) => r.updated)).toEqual([4, 2]);
    const catchingUp = new Map([...moving].map(([name, r]) => [name, name === 'decode' ? { ...r, progress: undefined } : r]));
    const s = step(catchingUp, reported, T0 + 4000);
    expect(s.writes).toEqual([]);
    expect(s.status).toMatchObject({ reason: 'WaitingForController', skewPercent: reported.skewPercent });
    expect(s.status.roles.map((r) => [r.name, r.updated])).toEqual([['prefill', 4], ['decode', 2]]);
  });

  test('once every workload reports the new template the round is the engine\'s from the true counts; a pass reading the old template again (after a restart) waits', () => {
    const waiting = step(fromWorkloads({ prefill: [0, 'p-2'], decode: [20, 'd-1'] }, 'v2'), armedAtV1(), T0 + 1000).status;
    const s = step(fromWorkloads({ prefill: [0, 'p-2'], decode: [0, 'd-2'] }, 'v2'), waiting, T0 + 2000);
    const engine = nextRbgRound(10, [
      { name: 'prefill', desired: 40, updatedReplicas: 0, readyReplicas: 40, maxUnavailable: 4, partition: 0, currentPartition: 40 },
      { name: 'decode', desired: 20, updatedReplicas: 0, readyReplicas: 20, maxUnavailable: 2, partition: 0, currentPartition: 20 },
    ]);
    expect(s.writes.map((w) => [w.name, w.partition, w.paused])).toEqual(engine.roles.map((r) => [r.name, r.partition, false]));
    expect(s.status.roles.map((r) => [r.workloadRevision, r.fromWorkloadRevision])).toEqual([['p-2', 'p-1'], ['d-2', 'd-1']]);
    const again = step(fromWorkloads({ prefill: [0, 'p-2'], decode: [20, 'd-1'] }, 'v2', false), s.status, T0 + 3000);
    expect(again.writes).toEqual([]);
    expect(again.status.reason).toBe('WaitingForController');
  });
});

test('a partition already written lower is never raised, whatever the counts say', () => {
  const previous = step(armedAtV2, step(roles({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } })).status).status;
  // Someone (a previous operator) wrote prefill further than the skew bound would now allow.
  const s = step(
    roles({
      prefill: { desired: 40, updated: 2, partition: 10, maxUnavailable: 4, revision: 'v2' },
      decode: { desired: 20, updated: 0, partition: 17, maxUnavailable: 2, revision: 'v2' },
    }),
    previous,
    T0 + 3000,
  );
  expect(s.writes.filter((w) => w.name === 'prefill')).toEqual([]);
  for (const w of s.writes) expect(w.partition).toBeLessThanOrEqual(w.name === 'prefill' ? 10 : 17);
});

/**
 * A rollout stuck on decode: its two updated replicas never become ready, so its workload stays at
 * 2 of the 8 its partition allows; prefill is at its skew bound against decode's 2 (10 of 40).
 */
function stuck(prefillReady: number): Map<string, ObservedRole> {
  return roles({
    prefill: { desired: 40, updated: 10, ready: prefillReady, partition: 30, maxUnavailable: 4, revision: 'v2' },
    decode: { desired: 20, updated: 2, ready: 18, partition: 12, maxUnavailable: 2, revision: 'v2' },
  });
}

function progressingAt(at: number, r = rule()): CoordinationStatus {
  const first = step(armedAtV2, step(roles({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } })).status, at, r);
  return step(stuck(40), first.status, at, r).status;
}

test('no progress for progressDeadlineSeconds: Failed, every role paused at its partition, decode named as the blocking role', () => {
  const previous = progressingAt(T0);
  expect(previous.phase).toBe('Progressing');
  const early = step(stuck(40), previous, T0 + 59_000);
  expect(early.status.phase).toBe('Progressing');
  expect(early.wakeAt).toBe(T0 + 60_000);
  const s = step(stuck(40), previous, T0 + 60_000);
  expect(s.status).toMatchObject({ phase: 'Failed', reason: 'ProgressDeadlineExceeded', blockingRole: 'decode' });
  expect(s.status.message).toMatch(/blocked by decode \(2\/20 updated, 18\/20 ready, partition 12\).*stopped prefill at partition 30, decode at partition 12/);
  expect(s.status.deadlineAt).toBeUndefined();
  expect(s.writes).toEqual([
    { name: 'prefill', index: 0, partition: 30, maxUnavailable: 4, paused: true },
    { name: 'decode', index: 1, partition: 12, maxUnavailable: 2, paused: true },
  ]);
  expect(s.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'ProgressDeadlineExceeded']]);
  expect(s.status.roles.map((r) => r.phase)).toEqual(['Stopped', 'Stopped']);
});

test('readiness that drops and comes back is not progress: the deadline still fires', () => {
  const previous = progressingAt(T0);
  const dipped = step(stuck(38), previous, T0 + 30_000).status;
  const s = step(stuck(40), dipped, T0 + 60_000);
  expect(s.status.phase).toBe('Failed');
});

test('a stopped coordination stays stopped until the template changes again', () => {
  const failed = step(stuck(40), progressingAt(T0), T0 + 60_000).status;
  const paused = roles({
    prefill: { desired: 40, updated: 10, partition: 30, maxUnavailable: 4, paused: true, revision: 'v2' },
    decode: { desired: 20, updated: 2, ready: 18, partition: 12, maxUnavailable: 2, paused: true, revision: 'v2' },
  });
  const later = step(paused, failed, T0 + 120_000);
  expect(later.writes).toEqual([]);
  expect(later.status.phase).toBe('Failed');
  const fixed = roles({
    prefill: { desired: 40, updated: 0, partition: 30, maxUnavailable: 4, paused: true, revision: 'v3' },
    decode: { desired: 20, updated: 0, partition: 12, maxUnavailable: 2, paused: true, revision: 'v3' },
  });
  const next = step(fixed, failed, T0 + 130_000);
  expect(next.status).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1 });
  expect(next.writes.every((w) => !w.paused)).toBe(true);
});

test('rollbackOnDeadline starts the way back: each role\'s partition raised (paused) by the first rollback round, within maxUnavailable', () => {
  const r = rule({ rollbackOnDeadline: true });
  const s = step(stuck(40), progressingAt(T0, r), T0 + 60_000, r);
  expect(s.status).toMatchObject({ phase: 'RollingBack', reason: 'ProgressDeadlineExceeded', blockingRole: 'decode', rollback: { rounds: 1 } });
  // prefill returns its maxUnavailable (4) of its 10 abandoned replicas (ordinals 30–33); decode, 2 of
  // 20 down (its whole budget), returns none: its partition rises only over the ordinals already on
  // the previous revision (12–17), below its 2 abandoned ones.
  expect(s.writes.map((w) => [w.name, w.partition, w.paused])).toEqual([
    ['prefill', 34, true],
    ['decode', 18, true],
  ]);
  expect(s.status.roles.map((r) => [r.name, r.phase, r.replicasByRevision])).toEqual([
    ['prefill', 'RollingBack', { abandoned: 10, previous: 30 }],
    ['decode', 'RollingBack', { abandoned: 2, previous: 18 }],
  ]);
  expect(s.events.map((e) => e.reason)).toEqual(['ProgressDeadlineExceeded', 'RollbackRound']);
  expect(s.status.conditions).toEqual([expect.objectContaining({ type: 'RolledBack', status: 'False', reason: 'RollbackRound' })]);
});

describe('a partition at replicas is written only by a rollback round (RBG v0.8\'s webhook refuses partition ≥ replicas)', () => {
  // Five decode replicas are down when the new revision lands: the round releases prefill and holds decode at all 20.
  const decodeDown = (decode: Partial<RoleSetup>) =>
    roles({
      prefill: { desired: 40, updated: 0, partition: 0, maxUnavailable: 4, paused: true, revision: 'v2' },
      decode: { desired: 20, updated: 0, ready: 15, partition: 0, maxUnavailable: 2, paused: true, revision: 'v2', ...decode },
    });
  const armed = () => step(roles({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } })).status;

  test('an armed role the round holds at every replica stays armed: no write for it', () => {
    const s = step(decodeDown({}), armed(), T0 + 1000);
    expect(s.writes.map((w) => [w.name, w.partition, w.paused])).toEqual([['prefill', 34, false]]);
    expect(s.status.roles.find((r) => r.name === 'decode')).toMatchObject({ partition: 20, phase: 'Unavailable' });
  });

  test('a role written at partition = replicas (unpaused) is moved to paused with partition replicas − 1', () => {
    const s = step(decodeDown({ partition: 20, paused: false }), armed(), T0 + 1000);
    expect(s.writes.map((w) => [w.name, w.partition, w.paused])).toEqual([
      ['prefill', 34, false],
      ['decode', 19, true],
    ]);
  });

  test('no write of a forward pass has a partition ≥ replicas', () => {
    const r = rule({ rollbackOnDeadline: true });
    const first = step(decodeDown({}), armed(), T0 + 1000, r);
    expect(first.writes.every((w) => w.partition < (w.name === 'prefill' ? 40 : 20))).toBe(true);
  });
});

test('a role over its maxUnavailable budget is held, named, and warned about once', () => {
  const previous = progressingAt(T0);
  // Five decode replicas down (its budget is 2): decode is held at 2 updated, and prefill is at its bound against that.
  const unavailable = roles({
    prefill: { desired: 40, updated: 10, ready: 40, partition: 30, maxUnavailable: 4, revision: 'v2' },
    decode: { desired: 20, updated: 2, ready: 15, partition: 12, maxUnavailable: 2, revision: 'v2' },
  });
  const s = step(unavailable, previous, T0 + 1000);
  expect(s.status).toMatchObject({ reason: 'RoleUnavailable', blockingRole: 'decode' });
  expect(s.status.roles.find((r) => r.name === 'decode')!.phase).toBe('Unavailable');
  expect(s.events.filter((e) => e.reason === 'RoleUnavailable')).toHaveLength(1);
  expect(step(unavailable, s.status, T0 + 2000).events.filter((e) => e.reason === 'RoleUnavailable')).toEqual([]);
});

test('reaching every final partition after rounds records RolloutComplete and re-arms the roles', () => {
  const previous = progressingAt(T0);
  const done = roles({
    prefill: { desired: 40, updated: 40, partition: 0, maxUnavailable: 4, revision: 'v2' },
    decode: { desired: 20, updated: 20, partition: 0, maxUnavailable: 2, revision: 'v2' },
  });
  const s = step(done, previous, T0 + 5000);
  expect(s.status).toMatchObject({ phase: 'Complete', reason: 'RolloutComplete' });
  expect(s.events.map((e) => e.reason)).toEqual(['RolloutComplete']);
  expect(s.writes.map((w) => w.paused)).toEqual([true, true]);
});

test('a role whose workload has not yet taken the new revision as its current one keeps the rollout from completing, and is not armed', () => {
  const previous = progressingAt(T0);
  const counted = (current: string) =>
    new Map(
      [...roles({
        prefill: { desired: 40, updated: 40, partition: 0, maxUnavailable: 4, revision: 'v2' },
        decode: { desired: 20, updated: 20, partition: 0, maxUnavailable: 2, revision: 'v2' },
      })].map(([name, r]) => [
        name,
        { ...r, progress: { ...r.progress!, source: 'workload' as const, workloadRevision: `${name}-new`, workloadCurrentRevision: name === 'prefill' ? current : `${name}-new` } },
      ]),
    );
  // RBG v0.7.0's RoleInstanceSet advances its current revision a sync after its last replica is
  // ready; paused before that, it never does, and a rollout back to the old template moves nothing.
  const lagging = step(counted('prefill-old'), previous, T0 + 5000);
  expect(lagging.status).toMatchObject({ phase: 'Progressing', reason: 'WaitingForRoles', blockingRole: 'prefill' });
  expect(lagging.status.message).toContain('prefill');
  expect(lagging.status.roles.find((r) => r.name === 'prefill')!.reason).toContain('prefill-old');
  expect(lagging.writes.filter((w) => w.paused)).toEqual([]);
  expect(lagging.events).toEqual([]);

  const recorded = step(counted('prefill-new'), lagging.status, T0 + 6000);
  expect(recorded.status).toMatchObject({ phase: 'Complete', reason: 'RolloutComplete' });
  expect(recorded.writes.map((w) => w.paused)).toEqual([true, true]);
  expect(recorded.events.map((e) => e.reason)).toEqual(['RolloutComplete']);
});

test('a user partition is the floor: the rollout completes with that many replicas on the old revision', () => {
  const r = rule({ roles: [{ name: 'prefill', replicas: 40, partition: 8, maxUnavailable: 4 }, { name: 'decode', replicas: 20, partition: 4, maxUnavailable: 2 }] });
  const s = step(
    roles({
      prefill: { desired: 40, updated: 32, partition: 8, maxUnavailable: 4, revision: 'v2' },
      decode: { desired: 20, updated: 16, partition: 4, maxUnavailable: 2, revision: 'v2' },
    }),
    progressingAt(T0, r),
    T0 + 1000,
    r,
  );
  expect(s.status.phase).toBe('Complete');
  expect(s.writes.map((w) => w.partition)).toEqual([8, 4]);
});

describe('AffinityScheduling waves', () => {
  const batched = rule({
    maxSkewPercent: 50,
    roles: [
      { name: 'prefill-b0', replicas: 2, partition: 0, maxUnavailable: 1 },
      { name: 'decode-b0', replicas: 1, partition: 0, maxUnavailable: 1 },
      { name: 'prefill-b1', replicas: 2, partition: 0, maxUnavailable: 1 },
      { name: 'decode-b1', replicas: 1, partition: 0, maxUnavailable: 1 },
    ],
    waves: [
      ['prefill-b0', 'decode-b0'],
      ['prefill-b1', 'decode-b1'],
    ],
  });
  const at = (b0: { p: number; d: number; dReady?: number }, b1 = { p: 0, d: 0 }, paused1 = true, revision = 'v2') =>
    roles({
      // Paused roles carry the partition 0 they were armed with, as the executor writes it.
      'prefill-b0': { desired: 2, updated: b0.p, partition: b0.p === 0 ? 0 : 2 - b0.p, maxUnavailable: 1, paused: b0.p === 0, revision },
      'decode-b0': { desired: 1, updated: b0.d, ready: b0.dReady ?? 1, partition: b0.d === 0 ? 0 : 1 - b0.d, maxUnavailable: 1, paused: b0.d === 0, revision },
      'prefill-b1': { desired: 2, updated: b1.p, partition: paused1 ? 0 : 2 - b1.p, maxUnavailable: 1, paused: paused1, revision },
      'decode-b1': { desired: 1, updated: b1.d, partition: paused1 ? 0 : 1 - b1.d, maxUnavailable: 1, paused: paused1, revision },
    });
  const armed = () => step(at({ p: 2, d: 1 }, { p: 2, d: 1 }, true, 'v1'), undefined, T0, batched).status;

  test('Sequential: the first round releases batch 0 only; batch 1 stays paused and waits', () => {
    const s = step(at({ p: 0, d: 0 }), armed(), T0 + 1000, batched);
    expect(s.writes.map((w) => [w.name, w.paused])).toEqual([
      ['prefill-b0', false],
      ['decode-b0', false],
    ]);
    expect(s.status.wave).toEqual({ current: 1, total: 2 });
    expect(s.status.roles.filter((r) => r.phase === 'WaitingForBatch').map((r) => r.name)).toEqual(['prefill-b1', 'decode-b1']);
  });

  test('batch 0 updated but its decode not ready: batch 1 is not released, and decode-b0 is named', () => {
    const previous = step(at({ p: 0, d: 0 }), armed(), T0 + 1000, batched).status;
    const s = step(at({ p: 2, d: 1, dReady: 0 }), previous, T0 + 2000, batched);
    expect(s.writes).toEqual([]);
    expect(s.status).toMatchObject({ phase: 'Progressing', reason: 'WaitingForBatch', blockingRole: 'decode-b0', wave: { current: 1, total: 2 } });
  });

  test('batch 0 updated and ready: the next round releases batch 1', () => {
    const previous = step(at({ p: 0, d: 0 }), armed(), T0 + 1000, batched).status;
    const s = step(at({ p: 2, d: 1 }), previous, T0 + 2000, batched);
    expect(s.writes.map((w) => [w.name, w.paused])).toEqual([
      ['prefill-b1', false],
      ['decode-b1', false],
    ]);
    expect(s.status.wave).toEqual({ current: 2, total: 2 });
  });

  test('one wave (Parallel): every batch is released by the first round', () => {
    const parallel = { ...batched, waves: [batched.roles.map((r) => r.name)] };
    const s = step(at({ p: 0, d: 0 }), step(at({ p: 2, d: 1 }, { p: 2, d: 1 }, true, 'v1'), undefined, T0, parallel).status, T0 + 1000, parallel);
    expect(s.writes.map((w) => w.name)).toEqual(['prefill-b0', 'decode-b0', 'prefill-b1', 'decode-b1']);
    expect(s.status.wave).toBeUndefined();
  });
});

describe('with a rollback possible, no role updates its last replica before every role can (a workload that does makes the new revision current: nothing of it could be returned)', () => {
  // maxSkew 40% lets prefill go to 6/6 while decode stands at 1/3 (held: 2 of 3 down, more than its maxUnavailable 1).
  const small = (rollbackOnDeadline: boolean) => rule({ maxSkewPercent: 40, rollbackOnDeadline, roles: [{ name: 'prefill', replicas: 6, partition: 0, maxUnavailable: 1 }, { name: 'decode', replicas: 3, partition: 0, maxUnavailable: 1 }] });
  const at = (prefill: number, decode: number, partitions: [number, number], decodeReady = 3) =>
    roles({
      prefill: { desired: 6, updated: prefill, partition: partitions[0], maxUnavailable: 1, revision: 'v2' },
      decode: { desired: 3, updated: decode, ready: decodeReady, partition: partitions[1], maxUnavailable: 1, revision: 'v2' },
    });
  const armed = (r: ExecutorRule) => step(roles({ prefill: { desired: 6, updated: 6 }, decode: { desired: 3, updated: 3 } }), undefined, T0, r).status;

  test('without: prefill is released to partition 0 while decode is at 1/3', () => {
    const r = small(false);
    const s = step(at(4, 1, [2, 2], 1), step(at(0, 0, [6, 3]), armed(r), T0 + 1, r).status, T0 + 2, r);
    expect(s.writes.find((w) => w.name === 'prefill')!.partition).toBe(0);
  });

  test('with capacityPolicy fail (a surge Unschedulable past its bound rolls back): prefill keeps its last replica too', () => {
    const r = { ...small(false), capacityPolicy: 'fail' as const };
    const held = step(at(4, 1, [2, 2], 1), step(at(0, 0, [6, 3]), armed(r), T0 + 1, r).status, T0 + 2, r);
    expect(held.writes.find((w) => w.name === 'prefill')!.partition).toBe(1);
  });

  test('with rollbackOnDeadline: prefill keeps its last replica (partition 1) until decode has all but its last updated and every replica ready; then both go in one round', () => {
    const r = small(true);
    const first = step(at(0, 0, [6, 3]), armed(r), T0 + 1, r);
    const held = step(at(4, 1, [2, 2], 1), first.status, T0 + 2, r);
    expect(held.writes.find((w) => w.name === 'prefill')!.partition).toBe(1);
    // Decode ready again but still at 1/3: its bound would release both roles' last replicas; both keep them.
    const notYet = step(at(5, 1, [1, 2]), held.status, T0 + 3, r);
    expect(notYet.writes.map((w) => [w.name, w.partition])).toEqual([['decode', 1]]);
    const last = step(at(5, 2, [1, 1]), notYet.status, T0 + 4, r);
    expect(last.writes.map((w) => [w.name, w.partition])).toEqual([['prefill', 0], ['decode', 0]]);
  });
});

describe('a role whose workload ignores paused (RBG v0.6.0\'s StatefulSets) is held by its partition', () => {
  const statefulSets = (setup: Record<string, RoleSetup>) => new Map([...roles(setup)].map(([n, r]) => [n, { ...r, holdsByPartition: true }]));

  test('a fully rolled group is armed at partition = replicas (a template change then rolls nothing)', () => {
    const s = step(statefulSets({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } }));
    expect(s.status).toMatchObject({ phase: 'Complete', rounds: 0 });
    expect(s.writes.map((w) => [w.name, w.partition, w.paused])).toEqual([
      ['prefill', 40, true],
      ['decode', 20, true],
    ]);
  });

  test('armed at partition = replicas, it stays Complete and writes nothing: no round is counted for the arming', () => {
    const armed = step(statefulSets({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } })).status;
    const again = step(statefulSets({ prefill: { desired: 40, updated: 40, partition: 40, maxUnavailable: 4, paused: true }, decode: { desired: 20, updated: 20, partition: 20, maxUnavailable: 2, paused: true } }), armed, T0 + 1000);
    expect(again.writes).toEqual([]);
    expect(again.status).toEqual(armed);
  });

  test('the first round of a new revision lowers the partitions from replicas, as from an armed paused role', () => {
    const armed = step(statefulSets({ prefill: { desired: 40, updated: 40 }, decode: { desired: 20, updated: 20 } })).status;
    const s = step(statefulSets({ prefill: { desired: 40, updated: 0, partition: 40, paused: true, revision: 'v2' }, decode: { desired: 20, updated: 0, partition: 20, paused: true, revision: 'v2' } }), armed, T0 + 1000);
    const pausable = step(armedAtV2, armed, T0 + 1000);
    expect(s.writes).toEqual(pausable.writes);
  });

  test('a stop mid-rollout holds each role at its written partition (below replicas)', () => {
    const s = step(statefulSets({ prefill: { desired: 40, updated: 8, partition: 32, maxUnavailable: 4, revision: 'v2' }, decode: { desired: 20, updated: 4, partition: 16, maxUnavailable: 2, revision: 'v2' } }), { ...progressingAt(T0), phase: 'Failed', reason: 'ProgressDeadlineExceeded' }, T0 + 1000);
    expect(s.writes.map((w) => [w.name, w.partition, w.paused])).toEqual([
      ['prefill', 32, true],
      ['decode', 16, true],
    ]);
  });
});

describe('the scheduler watch (surgeUnschedulableSeconds, capacityPolicy)', () => {
  const MSG = '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.';
  const decodeStuck: SurgeScheduling = { unschedulablePods: 2, since: T0 + 500, message: MSG, roles: ['decode'] };
  /** One step that read the Pods: `unschedulable` those the scheduler could not place (undefined: none). */
  const watched = (observed: Map<string, ObservedRole>, previous: CoordinationStatus, now: number, r: ExecutorRule, unschedulable?: SurgeScheduling) =>
    coordinationStep({ rule: r, roles: observed, controllerCaughtUp: true, previous, now, scheduling: { unschedulable } });

  test('wait: recorded at once, the executor woken at the bound, one Event once past it, then none; cleared when none is Unschedulable, and a new episode warns again', () => {
    const r = rule({ progressDeadlineSeconds: 600, surgeUnschedulableSeconds: 30 });
    const previous = progressingAt(T0, r);
    const seen = watched(stuck(40), previous, T0 + 1_000, r, decodeStuck);
    expect(seen.status).toMatchObject({ phase: 'Progressing', surgeUnschedulable: { pods: 2, roles: ['decode'], since: '2026-11-21T10:00:00.500Z', message: MSG, boundExceeded: false } });
    expect(seen.wakeAt).toBe(T0 + 30_500);
    expect(seen.events).toEqual([]);
    expect(watched(stuck(40), seen.status, T0 + 30_499, r, decodeStuck).status.surgeUnschedulable!.boundExceeded).toBe(false);
    const past = watched(stuck(40), seen.status, T0 + 30_500, r, decodeStuck);
    expect(past.status).toMatchObject({ phase: 'Progressing', surgeUnschedulable: { boundExceeded: true } });
    expect(past.events).toEqual([
      { type: 'Warning', reason: 'SurgeUnschedulable', action: 'SurgeScheduling', message: `pd: 2 Pods of role decode Unschedulable for 30 s (surgeUnschedulableSeconds 30); the rollout waits for capacity (capacityPolicy wait): ${MSG}` },
    ]);
    // Past the bound the wake is the progress deadline's again; the rollout is held as before (decode has 2 of 20 down).
    expect(past.wakeAt).toBe(T0 + 600_000);
    expect(past.writes).toEqual([]);
    const later = watched(stuck(40), past.status, T0 + 40_000, r, decodeStuck);
    expect(later.events).toEqual([]);
    expect(later.status.surgeUnschedulable!.boundExceeded).toBe(true);
    // Placed: the record goes; decode still has replicas down, so the executor looks again after SURGE_RECHECK_MS.
    const placed = watched(stuck(40), later.status, T0 + 41_000, r);
    expect(placed.status.surgeUnschedulable).toBeUndefined();
    expect(placed.wakeAt).toBe(T0 + 41_000 + 5_000);
    const again = { ...decodeStuck, unschedulablePods: 1, since: T0 + 42_000 };
    const second = watched(stuck(40), watched(stuck(40), placed.status, T0 + 42_000, r, again).status, T0 + 72_000, r, again);
    expect(second.events.map((e) => [e.reason, e.message])).toEqual([['SurgeUnschedulable', `pd: 1 Pod of role decode Unschedulable for 30 s (surgeUnschedulableSeconds 30); the rollout waits for capacity (capacityPolicy wait): ${MSG}`]]);
  });

  test('fail: past the bound the way back starts in tandem (reason SurgeUnschedulable), exactly once', () => {
    const r = rule({ progressDeadlineSeconds: 600, surgeUnschedulableSeconds: 30, capacityPolicy: 'fail' });
    const seen = watched(stuck(40), progressingAt(T0, r), T0 + 1_000, r, decodeStuck);
    expect(seen.status.phase).toBe('Progressing');
    const failed = watched(stuck(40), seen.status, T0 + 30_500, r, decodeStuck);
    const cause = `2 Pods of role decode Unschedulable for 30 s (surgeUnschedulableSeconds 30); rolled back (capacityPolicy fail): ${MSG}`;
    expect(failed.status).toMatchObject({ phase: 'RollingBack', reason: 'SurgeUnschedulable', rollback: { cause, rounds: 1, startedAt: '2026-11-21T10:00:30.500Z' }, surgeUnschedulable: { pods: 2, boundExceeded: true } });
    // The same first rollback round as at the deadline with rollbackOnDeadline (prefill returns its maxUnavailable, decode none).
    expect(failed.writes.map((w) => [w.name, w.partition, w.paused])).toEqual([
      ['prefill', 34, true],
      ['decode', 18, true],
    ]);
    expect(failed.events.map((e) => e.reason)).toEqual(['SurgeUnschedulable', 'RollbackRound']);
    expect(failed.events[0].message).toBe(`pd: 2 Pods of role decode Unschedulable for 30 s (surgeUnschedulableSeconds 30); returning every role to the revision before the rollout (capacityPolicy fail): ${MSG}`);
    // Rolling back, the Pods still Unschedulable: no second start, no second Event, the record gone (the cause keeps it).
    const next = watched(stuck(40), failed.status, T0 + 31_000, r, decodeStuck);
    expect(next.status).toMatchObject({ phase: 'RollingBack', reason: 'SurgeUnschedulable', rollback: { cause, startedAt: '2026-11-21T10:00:30.500Z' } });
    expect(next.status.surgeUnschedulable).toBeUndefined();
    expect(next.events.map((e) => e.reason)).not.toContain('SurgeUnschedulable');
  });

  test('the Pods not read: nothing judged, no look again; read with none down: no look again either', () => {
    const r = rule({ progressDeadlineSeconds: 600 });
    const previous = progressingAt(T0, r);
    const unread = step(stuck(40), previous, T0 + 1_000, r);
    expect(unread.wakeAt).toBe(T0 + 600_000);
    expect(unread.status.surgeUnschedulable).toBeUndefined();
    const allReady = roles({
      prefill: { desired: 40, updated: 10, ready: 40, partition: 30, maxUnavailable: 4, revision: 'v2' },
      decode: { desired: 20, updated: 2, ready: 20, partition: 12, maxUnavailable: 2, revision: 'v2' },
    });
    const read = watched(allReady, previous, T0 + 1_000, r);
    expect(read.status.phase).toBe('Progressing');
    expect(read.wakeAt).toBe(T0 + 1_000 + 600_000);
  });

  test('the progress deadline comes first when both have passed', () => {
    const r = rule({ surgeUnschedulableSeconds: 30, capacityPolicy: 'fail' });
    const s = watched(stuck(40), progressingAt(T0, r), T0 + 60_000, r, decodeStuck);
    expect(s.status).toMatchObject({ phase: 'Failed', reason: 'ProgressDeadlineExceeded' });
    expect(s.events.map((e) => e.reason)).toEqual(['ProgressDeadlineExceeded']);
  });
});

test('ruleSurgeScheduling: the rule\'s roles\' Pods Unschedulable since the rollout started, as one (count, earliest time and its message, the roles); needsRbgSurgeScheduling: only while Progressing', () => {
  /** A Pod whose PodScheduled condition is False/Unschedulable since `at` (whole seconds, as Kubernetes writes condition times). */
  const pod = (at: number, message: string) => ({ status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z'), message }] } });
  const scheduled = { status: { conditions: [{ type: 'PodScheduled', status: 'True' }] } };
  const started = T0 + 500;
  const byRole = new Map<string, unknown[]>([
    ['prefill', [pod(T0 + 2_000, 'later'), scheduled]],
    // The rollout's first second: the condition reads T0, before `started`, and still counts.
    ['decode', [pod(T0 + 700, 'first'), pod(T0 + 3_000, 'third'), pod(T0 + 4_000, 'fourth')]],
    ['router', [pod(T0 + 1_000, 'not the rule\'s')]],
  ]);
  expect(ruleSurgeScheduling(byRole, ['prefill', 'decode'], started, T0 + 10_000)).toEqual({ unschedulablePods: 4, since: T0, message: 'first', roles: ['prefill', 'decode'] });
  expect(ruleSurgeScheduling(byRole, ['other'], started, T0 + 10_000)).toBeUndefined();
  // An old replica the scheduler could not place since before the rollout is not the rollout's: not counted.
  const before = new Map<string, unknown[]>([['decode', [pod(T0 - 3_600_000, 'stuck for an hour'), pod(T0 + 3_000, 'the round\'s')]]]);
  expect(ruleSurgeScheduling(before, ['decode'], started, T0 + 10_000)).toEqual({ unschedulablePods: 1, since: T0 + 3_000, message: 'the round\'s', roles: ['decode'] });
  expect(ruleSurgeScheduling(new Map([['decode', [pod(T0 - 3_600_000, 'stuck for an hour')]]]), ['decode'], started, T0 + 10_000)).toBeUndefined();
  const at = (phase: CoordinationStatus['phase']) => ({ phase }) as CoordinationStatus;
  expect(needsRbgSurgeScheduling(undefined)).toBe(false);
  expect(needsRbgSurgeScheduling([at('Complete'), at('RollingBack'), at('Failed'), at('RolledBack')])).toBe(false);
  expect(needsRbgSurgeScheduling([at('Complete'), at('Progressing')])).toBe(true);
});
