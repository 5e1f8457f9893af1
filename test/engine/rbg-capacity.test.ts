/**
 * The capacity preflight of a RoleBasedGroup rollout's first round (pure, fixed times): the demand
 * of the round and the Pods it frees (`rbgRoundPreflight`), the policy in the coordination step
 * (`preflightFirstRound` through `coordinationStep`), and when the executor lists the capacity
 * (`releasesFirstRound`).
 */
import type { ListedCapacity } from '../../lib/engine/capacity-demand';
import { rbgRoundPreflight } from '../../lib/engine/capacity-demand';
import { coordinationStep } from '../../lib/engine/rbg-coordination';
import { coordinationPass, releasesFirstRound } from '../../lib/engine/rbg-coordination-pass';
import type { CoordinationStep, ExecutorRule, ObservedRole, RbgCapacityReading } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { warmupGate, type WarmupGateDecision } from '../../lib/engine/rbg-warmup';

const T0 = Date.parse('2026-11-30T10:00:00Z');
const GROUP = 'rbg.workloads.x-k8s.io/group-name';
const ROLE = 'rbg.workloads.x-k8s.io/role-name';
const MISFIT = 'decode: needs 4 nvidia.com/gpu on nodes matching {}, 1 free';

function rule(capacityPolicy: 'wait' | 'fail' = 'wait'): ExecutorRule {
  return {
    name: 'pd',
    maxSkewPercent: 100,
    roles: [
      { name: 'prefill', replicas: 1, partition: 0, maxUnavailable: 1 },
      { name: 'decode', replicas: 1, partition: 0, maxUnavailable: 1 },
    ],
    progressDeadlineSeconds: 600,
    rollbackOnDeadline: false,
    capacityPolicy,
    surgeUnschedulableSeconds: 120,
  };
}

/** Both roles at `revision`, one replica each: `armed` (paused, nothing updated) or every replica on it. */
function roles(revision: string, armed: boolean): Map<string, ObservedRole> {
  return new Map(
    ['prefill', 'decode'].map((name, index) => [
      name,
      { name, index, desired: 1, partition: 0, maxUnavailable: 1, paused: true, revision, progress: { updatedReplicas: armed ? 0 : 1, readyReplicas: 1, source: 'group' as const } },
    ]),
  );
}

const gpuTemplate = (image: string, gpus: number) => ({ spec: { containers: [{ name: 'decode', image, resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] } });
const cpuTemplate = (image: string) => ({ spec: { containers: [{ name: 'prefill', image, resources: { requests: { cpu: '1' } } }] } });

/** The group as read after the template change: decode's new replica asks 4 GPUs. */
const group = {
  apiVersion: 'workloads.x-k8s.io/v1alpha2',
  kind: 'RoleBasedGroup',
  metadata: { name: 'pd', namespace: 'ns' },
  spec: {
    roles: [
      { name: 'prefill', replicas: 1, standalonePattern: { template: cpuTemplate('v2') } },
      { name: 'decode', replicas: 1, standalonePattern: { template: gpuTemplate('v2', 4) } },
    ],
  },
};

const node = (name: string, gpus: number) => ({ metadata: { name, labels: {} }, status: { allocatable: { cpu: '32', 'nvidia.com/gpu': String(gpus), pods: '110' } } });
const pod = (name: string, namespace: string, labels: Record<string, string>, template: { spec: object }, nodeName = 'gpu-0') => ({
  metadata: { name, namespace, labels },
  spec: { ...template.spec, nodeName },
  status: { phase: 'Running' },
});
const ofGroup = (role: string) => ({ [GROUP]: 'pd', [ROLE]: role });

/**
 * One 8-GPU Node with 1 GPU free: another namespace's filler holds the rest beside the group's own
 * Pods, whose old decode replica holds `oldDecodeGpus` (freed by the round before its successor is created).
 */
function listed(oldDecodeGpus: number, nodes = [node('gpu-0', 8)]): ListedCapacity {
  return {
    nodes,
    pods: [
      pod('filler', 'other', {}, gpuTemplate('pause', 7 - oldDecodeGpus)),
      pod('pd-prefill-0', 'ns', ofGroup('prefill'), cpuTemplate('v1')),
      pod('pd-decode-0', 'ns', ofGroup('decode'), gpuTemplate('v1', oldDecodeGpus)),
    ],
    quotas: [],
    limitRanges: [],
  };
}

/** The rollout of v1 complete: what the step sees before the template change. */
const complete = (r: ExecutorRule) => coordinationStep({ rule: r, roles: roles('v1', false), controllerCaughtUp: true, now: T0 - 60_000 }).status;

function step(r: ExecutorRule, previous: CoordinationStatus, observed: Map<string, ObservedRole>, now: number, capacity?: RbgCapacityReading): CoordinationStep {
  return coordinationStep({ rule: r, roles: observed, controllerCaughtUp: true, previous, now, ...(capacity ? { capacity } : {}) });
}

describe('the first round of a rollout, preflighted', () => {
  test('fits once the Pods it replaces are gone (RBG takes a replica down before its successor): the round as without the preflight, nothing recorded', () => {
    const r = rule();
    const unchecked = step(r, complete(r), roles('v2', true), T0);
    const checked = step(r, complete(r), roles('v2', true), T0, { group, listed: listed(3) });
    expect(checked).toEqual(unchecked);
    expect(checked.status).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1 });
    expect(checked.status.capacity).toBeUndefined();
  });

  test('wait: a round needing 4 GPUs with 1 free (2 once its old Pod is gone) is released, recorded, and reported by one Event; the record stays until the rollout completes', () => {
    const r = rule('wait');
    const unchecked = step(r, complete(r), roles('v2', true), T0);
    const s = step(r, complete(r), roles('v2', true), T0, { group, listed: listed(1) });
    expect(s.writes).toEqual(unchecked.writes);
    expect(s.writes.map((w) => [w.name, w.partition, w.paused])).toEqual([
      ['prefill', 0, false],
      ['decode', 0, false],
    ]);
    expect(s.status).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1, capacity: { outcome: 'doesNotFit', message: MISFIT, at: '2026-11-30T10:00:00.000Z' } });
    expect(s.events).toEqual([
      unchecked.events[0],
      { type: 'Warning', reason: 'InsufficientCapacity', action: 'CapacityPreflight', message: `pd: rollout started; its first round's new Pods wait for the scheduler until capacity is free (capacityPolicy wait): ${MISFIT}` },
    ]);
    // The next pass (round 1 written, its replicas not placed yet): the record is kept, no second Event, no second judgement.
    const written = new Map([...roles('v2', true)].map(([n, o]) => [n, { ...o, paused: false }]));
    const next = step(r, s.status, written, T0 + 1_000, { group, listed: listed(1) });
    expect(next.status.capacity).toEqual(s.status.capacity);
    expect(next.events).toEqual([]);
    // Both roles on v2: Complete, and the record is gone.
    const done = step(r, next.status, roles('v2', false), T0 + 2_000);
    expect(done.status.phase).toBe('Complete');
    expect(done.status.capacity).toBeUndefined();
  });

  test('fail: nothing released (both roles stay armed), Failed with reason InsufficientCapacity, one Event; the next pass neither judges nor warns again; a later template change is judged again', () => {
    const r = rule('fail');
    const s = step(r, complete(r), roles('v2', true), T0, { group, listed: listed(1) });
    expect(s.writes).toEqual([]);
    expect(s.status).toMatchObject({
      phase: 'Failed',
      reason: 'InsufficientCapacity',
      message: `rollout not started (capacityPolicy fail): ${MISFIT}`,
      rounds: 0,
      capacity: { outcome: 'doesNotFit', message: MISFIT, at: '2026-11-30T10:00:00.000Z' },
    });
    expect(s.status.deadlineAt).toBeUndefined();
    expect(s.status.roles.map((x) => [x.name, x.phase, x.partition, x.updated])).toEqual([
      ['prefill', 'Stopped', 0, 0],
      ['decode', 'Stopped', 0, 0],
    ]);
    expect(s.events).toEqual([{ type: 'Warning', reason: 'InsufficientCapacity', action: 'CapacityPreflight', message: `pd: rollout not started (capacityPolicy fail): ${MISFIT}` }]);

    const again = step(r, s.status, roles('v2', true), T0 + 30_000, { group, listed: listed(1) });
    expect(again.writes).toEqual([]);
    expect(again.events).toEqual([]);
    expect(again.status).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity', capacity: s.status.capacity });
    // Decided without the capacity, the refused rollout releases nothing: the executor lists nothing.
    expect(releasesFirstRound(coordinationPass({ rules: [r], roles: roles('v2', true), controllerCaughtUp: true, previous: [again.status], now: T0 + 40_000 }))).toBe(false);

    // A new template (v3): its first round would be released, so the executor lists, and it is judged again.
    expect(releasesFirstRound(coordinationPass({ rules: [r], roles: roles('v3', true), controllerCaughtUp: true, previous: [again.status], now: T0 + 60_000 }))).toBe(true);
    const v3 = step(r, again.status, roles('v3', true), T0 + 60_000, { group, listed: listed(1) });
    expect(v3.status).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity', capacity: { at: '2026-11-30T10:01:00.000Z' } });
    expect(v3.events.map((e) => e.reason)).toEqual(['InsufficientCapacity']);
    // Once it fits (GPUs freed elsewhere), the next template change starts the rollout, and nothing is recorded.
    const v4 = step(r, v3.status, roles('v4', true), T0 + 90_000, { group, listed: listed(3) });
    expect(v4.status).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1 });
    expect(v4.status.capacity).toBeUndefined();
  });

  test('no Node visible, or the capacity not listed: no verdict, the round is released unchecked', () => {
    const r = rule('fail');
    const unchecked = step(r, complete(r), roles('v2', true), T0);
    expect(step(r, complete(r), roles('v2', true), T0, { group, listed: listed(1, []) })).toEqual(unchecked);
    expect(unchecked.status.phase).toBe('Progressing');
  });

  test('the cluster could not be read, wait: the round is released as unchecked, with an unknown record and one CapacityUnknown Event', () => {
    const r = rule('wait');
    const unchecked = step(r, complete(r), roles('v2', true), T0);
    const s = step(r, complete(r), roles('v2', true), T0, { unread: 'nodes is forbidden' });
    expect(s.writes).toEqual(unchecked.writes);
    expect(s.status).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1, capacity: { outcome: 'unknown', message: 'the cluster could not be read: nodes is forbidden', at: '2026-11-30T10:00:00.000Z' } });
    expect(s.events).toEqual([
      unchecked.events[0],
      { type: 'Warning', reason: 'CapacityUnknown', action: 'CapacityPreflight', message: 'pd: rollout started without a capacity preflight (capacityPolicy wait): the cluster could not be read: nodes is forbidden' },
    ]);
  });

  test('the cluster could not be read, fail: nothing released, held (Progressing, CapacityUnknown) with one Event, read again in 10 s; a read that fits releases the round; the hold is no progress, so the deadline ends it', () => {
    const r = rule('fail');
    const held = step(r, complete(r), roles('v2', true), T0, { unread: 'nodes is forbidden' });
    // Both roles stay armed where they stand (paused at partition 0): no write changes a partition or unpauses one.
    expect(held.writes).toEqual([]);
    expect(held.status).toMatchObject({
      phase: 'Progressing',
      reason: 'CapacityUnknown',
      message: 'rollout held (capacityPolicy fail releases no round it has not placed; the preflight reads the cluster again every 10 s): the cluster could not be read: nodes is forbidden',
      rounds: 0,
      lastProgressAt: '2026-11-30T10:00:00.000Z',
      deadlineAt: '2026-11-30T10:10:00.000Z',
      capacity: { outcome: 'unknown', message: 'the cluster could not be read: nodes is forbidden', at: '2026-11-30T10:00:00.000Z' },
    });
    expect(held.status.roles.map((x) => [x.name, x.phase, x.partition])).toEqual([
      ['prefill', 'WaitingForCapacity', 0],
      ['decode', 'WaitingForCapacity', 0],
    ]);
    expect(held.events).toEqual([{ type: 'Warning', reason: 'CapacityUnknown', action: 'CapacityPreflight', message: `pd: ${held.status.message}` }]);
    expect(held.wakeAt).toBe(T0 + 10_000);
    // The executor is asked for the capacity again.
    expect(releasesFirstRound(coordinationPass({ rules: [r], roles: roles('v2', true), controllerCaughtUp: true, previous: [held.status], now: T0 + 10_000 }))).toBe(true);

    // Still unreadable: held, no second Event, the record and the deadline as they were.
    const again = step(r, held.status, roles('v2', true), T0 + 10_000, { unread: 'nodes is forbidden' });
    expect(again.events).toEqual([]);
    expect(again.writes).toEqual([]);
    expect(again.status).toMatchObject({ reason: 'CapacityUnknown', lastProgressAt: '2026-11-30T10:00:00.000Z', deadlineAt: '2026-11-30T10:10:00.000Z', capacity: held.status.capacity });
    expect(again.wakeAt).toBe(T0 + 20_000);

    // A read that fits releases round 1.
    const released = step(r, again.status, roles('v2', true), T0 + 20_000, { group, listed: listed(3) });
    expect(released.status).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1 });
    expect(released.writes.map((w) => [w.name, w.partition, w.paused])).toEqual([
      ['prefill', 0, false],
      ['decode', 0, false],
    ]);

    // Unreadable until the progress deadline: it ends as any stall does, nothing released.
    const late = step(r, again.status, roles('v2', true), T0 + 600_000, { unread: 'nodes is forbidden' });
    expect(late.status).toMatchObject({ phase: 'Failed', reason: 'ProgressDeadlineExceeded', capacity: held.status.capacity });
    expect(late.writes).toEqual([]);
  });

  test('only the round that starts the rollout is judged: a later round is not, whatever the capacity', () => {
    const r: ExecutorRule = { ...rule('fail'), roles: [{ name: 'prefill', replicas: 2, partition: 0, maxUnavailable: 1 }, { name: 'decode', replicas: 2, partition: 0, maxUnavailable: 1 }] };
    const two = (updated: number, partition: number, paused: boolean, revision = 'v2') =>
      new Map(['prefill', 'decode'].map((name, index) => [name, { name, index, desired: 2, partition, maxUnavailable: 1, paused, revision, progress: { updatedReplicas: updated, readyReplicas: 2, source: 'group' as const } }]));
    const first = step(r, coordinationStep({ rule: r, roles: two(2, 0, true, 'v1'), controllerCaughtUp: true, now: T0 - 60_000 }).status, two(0, 0, true), T0);
    expect(first.status.rounds).toBe(1);
    const second = step(r, first.status, two(1, 1, false), T0 + 1_000, { group, listed: listed(1) });
    expect(second.status).toMatchObject({ phase: 'Progressing', rounds: 2 });
    expect(second.events.map((e) => e.reason)).toEqual(['RolloutRound']);
  });
});

describe('rbgRoundPreflight: what a round asks and frees', () => {
  test('LimitRange defaults apply to the new template', () => {
    const limitRange = { spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '2' } }] } };
    const bare = { ...group, spec: { roles: [{ name: 'prefill', replicas: 1, standalonePattern: { template: { spec: { containers: [{ name: 'prefill', image: 'v2' }] } } } }] } };
    const small = { metadata: { name: 'cpu-0' }, status: { allocatable: { cpu: '1', pods: '110' } } };
    expect(rbgRoundPreflight(bare, new Map([['prefill', 0]]), { nodes: [small], pods: [], quotas: [], limitRanges: [limitRange] })).toEqual({
      outcome: 'doesNotFit',
      message: 'prefill: a Pod needs 2 cpu, more than any of the nodes matching {} has (largest: 1 allocatable)',
    });
  });

  test('a ResourceQuota on requests.nvidia.com/gpu decides where the nodes have room: the old replica\'s GPUs count as given back, others\' do not', () => {
    // One 16-GPU Node, so only the quota can refuse; the old decode replica holds 1 GPU of it.
    const withQuota = (used: number): ListedCapacity => ({
      nodes: [node('gpu-0', 16)],
      pods: [pod('pd-prefill-0', 'ns', ofGroup('prefill'), cpuTemplate('v1')), pod('pd-decode-0', 'ns', ofGroup('decode'), gpuTemplate('v1', 1))],
      quotas: [{ metadata: { name: 'gpus', namespace: 'ns' }, spec: { hard: { 'requests.nvidia.com/gpu': '4' } }, status: { hard: { 'requests.nvidia.com/gpu': '4' }, used: { 'requests.nvidia.com/gpu': String(used) } } }],
      limitRanges: [],
    });
    const moves = new Map([['decode', 0]]);
    // Used 1, the old replica's own: 4 more fit once it goes.
    expect(rbgRoundPreflight(group, moves, withQuota(1))).toEqual({ outcome: 'fitsAfterOldShrinks', message: 'needs 4 requests.nvidia.com/gpu in ResourceQuota gpus, 3 free (hard 4, used 1)' });
    // Used 2, one of them another Pod's: 1 + 4 > 4 even after the old replica goes.
    const misfit = 'needs 4 requests.nvidia.com/gpu in ResourceQuota gpus, 2 free (hard 4, used 2)';
    expect(rbgRoundPreflight(group, moves, withQuota(2))).toEqual({ outcome: 'doesNotFit', message: misfit });
    // Under fail the rollout is refused naming the quota, as for a node misfit.
    const r = rule('fail');
    const refused = step(r, complete(r), roles('v2', true), T0, { group, listed: withQuota(2) });
    expect(refused.writes).toEqual([]);
    expect(refused.status).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity', message: `rollout not started (capacityPolicy fail): ${misfit}` });
  });

  test('a leader/worker replica: each of its Pods is asked for, and the Pods at the moved ordinals (by name, group and role label, in the group\'s namespace) are freed, unless the role surges', () => {
    const lws = { ...group, spec: { roles: [{ name: 'decode', replicas: 2, leaderWorkerPattern: { size: 2, template: gpuTemplate('v2', 2) } }] } };
    const full = (ordinal1Namespace: string) => ({
      nodes: [node('gpu-0', 8)],
      pods: [
        pod('pd-decode-0', 'ns', ofGroup('decode'), gpuTemplate('v1', 2)),
        pod('pd-decode-0-1', 'ns', ofGroup('decode'), gpuTemplate('v1', 2)),
        pod('pd-decode-1', ordinal1Namespace, ofGroup('decode'), gpuTemplate('v1', 2)),
        pod('pd-decode-1-1', ordinal1Namespace, ofGroup('decode'), gpuTemplate('v1', 2)),
      ],
      quotas: [],
      limitRanges: [],
    });
    const now = 'decode: needs 4 nvidia.com/gpu on nodes matching {}, 0 free';
    // Partition 1 moves ordinal 1: its leader and worker go first, and their 4 GPUs hold the 2 new Pods.
    expect(rbgRoundPreflight(lws, new Map([['decode', 1]]), full('ns'))).toEqual({ outcome: 'fitsAfterOldShrinks', message: now });
    // The same names in another namespace are not the group's: nothing is freed.
    expect(rbgRoundPreflight(lws, new Map([['decode', 1]]), full('elsewhere'))).toEqual({ outcome: 'doesNotFit', message: now });
    // A role with its own maxSurge (a hand-written group): RBG may create the surge first, so nothing is freed either.
    const surging = { ...lws, spec: { roles: [{ ...lws.spec.roles[0], rolloutStrategy: { rollingUpdate: { maxSurge: 1 } } }] } };
    expect(rbgRoundPreflight(surging, new Map([['decode', 1]]), full('ns'))).toEqual({ outcome: 'doesNotFit', message: now });
  });

  test('a Stateless RoleInstanceSet (a routed role): its replicas have no ordinals, so as many of its live Pods as the round moves are freed, the first by name', () => {
    const stateless = { rolloutStrategy: { rollingUpdate: { type: 'RecreatePod' } }, annotations: { 'rbg.workloads.x-k8s.io/role-instance-pattern': 'Stateless' } };
    const routed = { ...group, spec: { roles: [{ name: 'decode', replicas: 3, ...stateless, standalonePattern: { template: gpuTemplate('v2', 2) } }] } };
    const terminating = { ...pod('pd-decode-aaaaa', 'ns', ofGroup('decode'), gpuTemplate('v1', 2)), metadata: { name: 'pd-decode-aaaaa', namespace: 'ns', labels: ofGroup('decode'), deletionTimestamp: '2026-11-30T09:59:00Z' } };
    const full = {
      // Two 4-GPU Nodes, full: three 2-GPU replicas and another namespace's 2-GPU filler; one replica is already going.
      nodes: [node('gpu-0', 4), node('gpu-1', 4)],
      pods: [
        terminating,
        pod('pd-decode-qx7rt', 'ns', ofGroup('decode'), gpuTemplate('v1', 2), 'gpu-0'),
        pod('pd-decode-bk2zl', 'ns', ofGroup('decode'), gpuTemplate('v1', 2), 'gpu-1'),
        pod('pd-decode-m4n8p', 'ns', ofGroup('decode'), gpuTemplate('v1', 2), 'gpu-1'),
        pod('filler', 'other', {}, gpuTemplate('pause', 2), 'gpu-0'),
      ],
      quotas: [],
      limitRanges: [],
    };
    // Partition 1 moves 2 replicas: 2 live Pods are freed (bk2zl and m4n8p, the first by name; not the terminating one), 4 GPUs of gpu-1 for 2 new Pods of 2.
    expect(rbgRoundPreflight(routed, new Map([['decode', 1]]), full)).toMatchObject({ outcome: 'fitsAfterOldShrinks' });
    // Without the Stateless pattern, the same names have no ordinals and nothing is freed.
    const ordered = { ...routed, spec: { roles: [{ ...routed.spec.roles[0], annotations: {} }] } };
    expect(rbgRoundPreflight(ordered, new Map([['decode', 1]]), full)).toMatchObject({ outcome: 'doesNotFit' });
  });
});

test('releasesFirstRound: only a pass whose step writes a rollout\'s round 1, with the RBG controller caught up and no warmup holding it', () => {
  const r = rule();
  const done = complete(r);
  const v2 = roles('v2', true);
  const pass = (previous: CoordinationStatus[], roleStates = v2, caughtUp = true, gate?: { decision: WarmupGateDecision; pending: ExecutorRule[] }) =>
    coordinationPass({ rules: [r], roles: roleStates, controllerCaughtUp: caughtUp, previous, ...(gate ? { gate } : {}), now: T0 });
  expect(releasesFirstRound(pass([done]))).toBe(true);
  // RBG's controller has not caught up with the new template: no round yet.
  expect(releasesFirstRound(pass([done], v2, false))).toBe(false);
  // A group seen for the first time, every replica on its revision, is armed, not rolled.
  expect(releasesFirstRound(pass([], roles('v1', false)))).toBe(false);
  // Round 1 written: the next pass releases no first round.
  const started = step(r, done, v2, T0).status;
  const written = new Map([...v2].map(([n, o]) => [n, { ...o, paused: false }]));
  expect(releasesFirstRound(pass([started], written))).toBe(false);
  // A warmup still running holds the rule; once it succeeded, the round goes.
  const warmup = (phase: string) => ({ decision: warmupGate({ name: 'pd-warmup-x', revision: 'x', onFailure: 'Fail', timeoutSeconds: 900, now: T0, observed: { phase, desired: 2, succeeded: phase === 'Completed' ? 2 : 0, failed: 0, active: phase === 'Completed' ? 0 : 2 } }), pending: [r] });
  expect(releasesFirstRound(pass([done], v2, true, warmup('Running')))).toBe(false);
  expect(releasesFirstRound(pass([done], v2, true, warmup('Completed')))).toBe(true);
});

describe('two rules whose rollouts start in one pass: placed together, in the rules\' order', () => {
  const ruleOf = (name: string, role: string, capacityPolicy: 'wait' | 'fail'): ExecutorRule => ({ ...rule(capacityPolicy), name, roles: [{ name: role, replicas: 1, partition: 0, maxUnavailable: 1 }] });
  const observed = (revision: string, armed: boolean) =>
    new Map(
      ['a', 'b'].map((name, index) => [
        name,
        { name, index, desired: 1, partition: 0, maxUnavailable: 1, paused: true, revision, progress: { updatedReplicas: armed ? 0 : 1, readyReplicas: 1, source: 'group' as const } },
      ]),
    );
  /** Roles a and b, one replica each; the new revision asks 2 GPUs for each, the old one none. */
  const twoRoles = {
    ...group,
    spec: { roles: ['a', 'b'].map((name) => ({ name, replicas: 1, standalonePattern: { template: gpuTemplate('v2', 2) } })) },
  };
  /** One 8-GPU Node, 3 GPUs free: either rollout's first round fits alone, not both. */
  const shared: ListedCapacity = {
    nodes: [node('gpu-0', 8)],
    pods: [pod('filler', 'other', {}, gpuTemplate('pause', 5)), pod('pd-a-0', 'ns', ofGroup('a'), cpuTemplate('v1')), pod('pd-b-0', 'ns', ofGroup('b'), cpuTemplate('v1'))],
    quotas: [],
    limitRanges: [],
  };
  const pass = (rules: ExecutorRule[]) =>
    coordinationPass({
      rules,
      roles: observed('v2', true),
      controllerCaughtUp: true,
      previous: rules.map((r) => coordinationStep({ rule: r, roles: observed('v1', false), controllerCaughtUp: true, now: T0 - 60_000 }).status),
      capacity: { group: twoRoles, listed: shared },
      now: T0,
    });

  test('each alone fits', () => {
    expect(pass([ruleOf('rb', 'b', 'fail')]).steps.map((s) => [s.status.phase, s.status.rounds, s.status.capacity])).toEqual([['Progressing', 1, undefined]]);
    expect(pass([ruleOf('ra', 'a', 'fail')]).steps.map((s) => [s.status.phase, s.status.rounds, s.status.capacity])).toEqual([['Progressing', 1, undefined]]);
  });

  test('fail: the first rule\'s round is released; the second, which does not fit beside it, is refused naming what does not fit', () => {
    const p = pass([ruleOf('ra', 'a', 'fail'), ruleOf('rb', 'b', 'fail')]);
    expect(p.steps.map((s) => [s.status.name, s.status.phase, s.status.rounds])).toEqual([
      ['ra', 'Progressing', 1],
      ['rb', 'Failed', 0],
    ]);
    expect(p.steps[1].status).toMatchObject({ reason: 'InsufficientCapacity', capacity: { outcome: 'doesNotFit', message: 'b: needs 2 nvidia.com/gpu on nodes matching {}, 1 free' } });
    expect(p.steps[1].writes).toEqual([]);
    expect(p.rounds).toBe(1);
  });

  test('wait: both are released and only the second is recorded, with one Event', () => {
    const p = pass([ruleOf('ra', 'a', 'wait'), ruleOf('rb', 'b', 'wait')]);
    expect(p.steps.map((s) => [s.status.name, s.status.phase, s.status.rounds, s.status.capacity?.message])).toEqual([
      ['ra', 'Progressing', 1, undefined],
      ['rb', 'Progressing', 1, 'b: needs 2 nvidia.com/gpu on nodes matching {}, 1 free'],
    ]);
    expect(p.steps.flatMap((s) => s.events).filter((e) => e.reason === 'InsufficientCapacity')).toHaveLength(1);
  });
});
