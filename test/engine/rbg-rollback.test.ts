/**
 * The way back of a coordinated rollout (lib/engine/rbg-rollback.ts), against a TEST-ONLY model of
 * what RBG v0.7.0's RoleInstanceSet (stateful pattern) does, as read in its source and seen on its
 * real controller (test/integration/cluster-rbg-analysis.test.ts): a raised partition rolls nothing
 * back; a deleted replica below the partition the workload carries comes back on the revision before
 * the rollout, not ready for one pass; the workload carries a partition written on the group one pass
 * later.
 */
import { coordinationStep, startRollback } from '../../lib/engine/rbg-coordination';
import type { CoordinationStep, ExecutorRule, ObservedRole } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { planRoleBasedGroup } from '../../lib/engine/plan-rbg';

const T0 = Date.parse('2026-11-29T02:00:00Z');

interface ModelRole {
  readonly desired: number;
  readonly maxUnavailable: number;
  /** Per ordinal: on the abandoned revision. */
  bad: boolean[];
  /** Per ordinal: ready. */
  ready: boolean[];
  partition: number;
  paused: boolean;
  /** The partition the workload carries (the group's, one pass late). */
  carried: number;
}

function model(sizes: Record<string, { desired: number; bad: number; maxUnavailable: number }>): Map<string, ModelRole> {
  return new Map(Object.entries(sizes).map(([name, s]) => [name, {
    desired: s.desired,
    maxUnavailable: s.maxUnavailable,
    bad: Array.from({ length: s.desired }, (_, i) => i >= s.desired - s.bad),
    ready: Array(s.desired).fill(true),
    partition: s.desired - s.bad,
    paused: false,
    carried: s.desired - s.bad,
  }]));
}

function observe(m: Map<string, ModelRole>, v08 = false): Map<string, ObservedRole> {
  return new Map([...m].map(([name, r], index) => [name, {
    name,
    index,
    ...(v08 ? { partitionBelowReplicas: true } : {}),
    desired: r.desired,
    partition: r.partition,
    maxUnavailable: r.maxUnavailable,
    paused: r.paused,
    revision: 'v2',
    progress: {
      updatedReplicas: r.bad.filter(Boolean).length,
      readyReplicas: r.ready.filter(Boolean).length,
      updatedReadyReplicas: r.bad.filter((bad, i) => bad && r.ready[i]).length,
      source: 'workload' as const,
      workloadRevision: 'rev-v2',
      workloadPartition: r.carried,
    },
  }]));
}

/** One pass of the model's workloads after `step`'s writes and returns landed. */
function apply(m: Map<string, ModelRole>, step: CoordinationStep): void {
  for (const r of m.values()) {
    r.carried = r.partition;
    r.ready = r.ready.map(() => true);
  }
  for (const w of step.writes) Object.assign(m.get(w.name)!, { partition: w.partition, paused: w.paused });
  for (const ret of step.returns ?? []) {
    const r = m.get(ret.name)!;
    expect(r.carried).toBeGreaterThanOrEqual(ret.below);
    for (let i = 0; i < ret.below; i++) if (r.bad[i]) [r.bad[i], r.ready[i]] = [false, false];
    // RBG v0.8: the ordinals the webhook's partition cannot reach, reverted in place (restarting).
    for (let i = ret.below; i < (ret.revertBelow ?? 0); i++) if (r.bad[i]) [r.bad[i], r.ready[i]] = [false, false];
  }
}

/** The status of a rollout whose gate failed where the model stands. */
function failedGate(r: ExecutorRule, m: Map<string, ModelRole>): CoordinationStatus {
  const at = coordinationStep({ rule: r, roles: observe(m), controllerCaughtUp: true, now: T0 }).status;
  return { ...at, phase: 'Failed', reason: 'AnalysisFailed', message: 'the analysis of run step@50:1 failed' };
}

function rule(sizes: Record<string, { desired: number; maxUnavailable: number }>, maxSkewPercent: number): ExecutorRule {
  return {
    name: 'pd',
    maxSkewPercent,
    roles: Object.entries(sizes).map(([name, s]) => ({ name, replicas: s.desired, partition: 0, maxUnavailable: s.maxUnavailable })),
    progressDeadlineSeconds: 60,
    rollbackOnDeadline: true,
    capacityPolicy: 'wait',
    surgeUnschedulableSeconds: 120,
  };
}

describe.each([
  { name: '4 prefill / 2 decode at 1%, one replica at a time, half of each on the bad revision', sizes: { prefill: { desired: 4, bad: 2, maxUnavailable: 1 }, decode: { desired: 2, bad: 1, maxUnavailable: 1 } }, maxSkew: 1 },
  { name: '40 prefill / 20 decode at 10%, maxUnavailable 4 / 2, 12 / 6 on the bad revision', sizes: { prefill: { desired: 40, bad: 12, maxUnavailable: 4 }, decode: { desired: 20, bad: 6, maxUnavailable: 2 } }, maxSkew: 10 },
  { name: '7 prefill / 3 decode at 1%, maxUnavailable 0 (read as 1), uneven shares', sizes: { prefill: { desired: 7, bad: 4, maxUnavailable: 0 }, decode: { desired: 3, bad: 1, maxUnavailable: 0 } }, maxSkew: 1 },
])('a failed gate: $name', ({ sizes, maxSkew }) => {
  const m = model(sizes);
  const r = rule(sizes, maxSkew);
  const smallest = Math.min(...Object.values(sizes).map((s) => s.desired));
  const passes: CoordinationStep[] = [];
  const skews: number[] = [];
  const down: number[] = [];
  let previous: CoordinationStatus;
  beforeAll(() => {
    previous = failedGate(r, m);
    for (let i = 1; i <= 200 && previous.phase !== 'RolledBack'; i++) {
      const input = { rule: r, roles: observe(m), controllerCaughtUp: true, now: T0 + i };
      const step = i === 1 ? startRollback(input, previous) : coordinationStep({ ...input, previous });
      passes.push(step);
      apply(m, step);
      previous = step.status;
      const bad = [...m.values()].map((x) => x.bad.filter(Boolean).length / x.desired);
      skews.push((Math.max(...bad) - Math.min(...bad)) * 100);
      down.push(Math.max(...[...m.values()].map((x) => x.ready.filter((ok) => !ok).length - Math.max(1, x.maxUnavailable))));
    }
  });

  test('every state is in tandem (shares on the abandoned revision within maxSkew plus one replica of the smallest role) and within maxUnavailable', () => {
    expect(Math.max(...skews)).toBeLessThanOrEqual(maxSkew + 100 / smallest + 1e-9);
    expect(Math.max(...down)).toBeLessThanOrEqual(0);
  });

  test('ends RolledBack with no replica on the abandoned revision, and only then', () => {
    expect(previous.phase).toBe('RolledBack');
    expect([...m.values()].map((x) => x.bad.filter(Boolean).length)).toEqual([0, 0]);
    const early = passes.slice(0, -1).map((p) => p.status.phase);
    expect(early.every((p) => p === 'RollingBack')).toBe(true);
    for (const p of passes.filter((x) => x.status.phase === 'RollingBack')) expect(p.status.roles.some((x) => x.replicasByRevision!.abandoned > 0)).toBe(true);
  });

  test('an Event and a condition per rollback round; the rounds counted in the status', () => {
    const rounds = passes.filter((p) => p.events.some((e) => e.reason === 'RollbackRound'));
    expect(rounds.length).toBe(previous.rollback!.rounds);
    expect(rounds.length).toBeGreaterThan(0);
    for (const [i, p] of rounds.entries()) {
      expect(p.status.conditions).toEqual([expect.objectContaining({ type: 'RolledBack', status: 'False', reason: 'RollbackRound', message: expect.stringContaining(`rollback round ${i + 1}:`) })]);
    }
    expect(previous.conditions).toEqual([expect.objectContaining({ type: 'RolledBack', status: 'True' })]);
    expect(passes.flatMap((p) => p.events.map((e) => e.reason)).filter((e) => e === 'RolledBack')).toHaveLength(1);
  });

  test('partitions only rise, every write pauses the role, and a replica is returned only below a partition its workload carries', () => {
    const written = new Map<string, number[]>();
    for (const p of passes) for (const w of p.writes) written.set(w.name, [...(written.get(w.name) ?? []), w.partition]);
    for (const ps of written.values()) expect(ps).toEqual([...ps].sort((a, b) => a - b));
    expect(passes.flatMap((p) => p.writes).every((w) => w.paused)).toBe(true);
  });
});

test('a failure before any replica was updated is RolledBack at once, with no round', () => {
  const sizes = { prefill: { desired: 4, bad: 0, maxUnavailable: 1 }, decode: { desired: 2, bad: 0, maxUnavailable: 1 } };
  const m = model(sizes);
  const r = rule(sizes, 1);
  const s = startRollback({ rule: r, roles: observe(m), controllerCaughtUp: true, now: T0 }, failedGate(r, m));
  expect(s.status).toMatchObject({ phase: 'RolledBack', reason: 'AnalysisFailed', rollback: { rounds: 0, cause: 'the analysis of run step@50:1 failed' } });
  expect(s.events.map((e) => e.reason)).toEqual(['RolledBack']);
});

test('while a workload has not carried the group\'s latest spec, the way back waits and writes nothing more', () => {
  const sizes = { prefill: { desired: 4, bad: 2, maxUnavailable: 1 }, decode: { desired: 2, bad: 1, maxUnavailable: 1 } };
  const m = model(sizes);
  const r = rule(sizes, 1);
  const first = startRollback({ rule: r, roles: observe(m), controllerCaughtUp: true, now: T0 }, failedGate(r, m));
  expect(first.status).toMatchObject({ phase: 'RollingBack', rollback: { rounds: 1 } });
  apply(m, first);
  const waiting = coordinationStep({ rule: r, roles: observe(m), controllerCaughtUp: false, previous: first.status, now: T0 + 1 });
  expect(waiting.status).toMatchObject({ phase: 'RollingBack', rollback: { rounds: 1 } });
  expect(waiting.writes).toEqual([]);
  expect(waiting.returns).toBeUndefined();
});

test('plan shows the rollback rounds of a failure at a given round: each returns at most maxUnavailable per role, in tandem, down to none', () => {
  const roles = [
    { name: 'prefill', replicas: 40, partition: 0, maxUnavailable: 4 },
    { name: 'decode', replicas: 20, partition: 0, maxUnavailable: 2 },
  ];
  const plan = planRoleBasedGroup({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent: 10, roles, coordination: 'parallel', failAtRound: 3 });
  const from = plan.rounds[2].updated;
  expect(plan.rollback!.afterRound).toBe(3);
  let before = from;
  for (const round of plan.rollback!.rounds) {
    for (const r of roles) {
      expect(before[r.name] - round.updated[r.name]).toBeGreaterThanOrEqual(0);
      expect(before[r.name] - round.updated[r.name]).toBeLessThanOrEqual(r.maxUnavailable);
      expect(round.partition[r.name]).toBe(r.replicas - round.updated[r.name]);
    }
    expect(Math.abs(round.updated.prefill / 40 - round.updated.decode / 20) * 100).toBeLessThanOrEqual(10 + 100 / 20);
    before = round.updated;
  }
  expect(before).toEqual({ prefill: 0, decode: 0 });
  // 17 prefill and 8 decode on the abandoned revision, 4 and 2 returned per round: prefill paces it.
  expect(from).toEqual({ prefill: 17, decode: 8 });
  expect(plan.rollback!.rounds).toHaveLength(Math.ceil(17 / 4));
});

test('an executor that dies between a round\'s patch and its returns goes on where it stopped: the next pass asks for the same returns, no round skipped or repeated', () => {
  const sizes = { prefill: { desired: 40, bad: 12, maxUnavailable: 4 }, decode: { desired: 20, bad: 6, maxUnavailable: 2 } };
  const run = (crashAt: number | undefined) => {
    const m = model(sizes);
    const r = rule(sizes, 10);
    let previous = failedGate(r, m);
    const partitions: string[] = [];
    for (let i = 1; i <= 200 && previous.phase !== 'RolledBack'; i++) {
      const input = { rule: r, roles: observe(m), controllerCaughtUp: true, now: T0 + i };
      const step = i === 1 ? startRollback(input, previous) : coordinationStep({ ...input, previous });
      // The crash: the patch (partitions, status) landed, the deletes did not.
      apply(m, i === crashAt ? { ...step, returns: [] } : step);
      previous = step.status;
      partitions.push(step.status.roles.map((x) => x.partition).join('/'));
    }
    return { rounds: previous.rollback!.rounds, partitions: [...new Set(partitions)], left: [...m.values()].map((x) => x.bad.filter(Boolean).length) };
  };
  const clean = run(undefined);
  for (const crashAt of [2, 3, 5]) {
    const crashed = run(crashAt);
    expect(crashed.left).toEqual([0, 0]);
    expect(crashed.rounds).toBe(clean.rounds);
    expect(crashed.partitions).toEqual(clean.partitions);
  }
});

describe('RBG v0.8: its webhook admits no partition ≥ replicas', () => {
  /** The rollback of `sizes` on the model with `partitionBelowReplicas`; each pass's writes and returns, literally. */
  function rollBackV08(sizes: Record<string, { desired: number; bad: number; maxUnavailable: number }>, maxSkew: number) {
    const m = model(sizes);
    const r = rule(sizes, maxSkew);
    let previous = failedGate(r, m);
    const passes: string[] = [];
    for (let i = 1; i <= 50 && previous.phase !== 'RolledBack'; i++) {
      const input = { rule: r, roles: observe(m, true), controllerCaughtUp: true, now: T0 + i };
      const step = i === 1 ? startRollback(input, previous) : coordinationStep({ ...input, previous });
      apply(m, step);
      previous = step.status;
      const writes = step.writes.map((w) => `${w.name}=${w.partition}`).join(' ');
      const returns = (step.returns ?? []).map((x) => `${x.name}<${x.below}${x.revertBelow !== undefined ? ` revert<${x.revertBelow}` : ''}`).join(' ');
      passes.push(`${step.status.phase} ${step.status.rollback!.rounds} [${step.status.roles.map((x) => x.partition).join('/')}] w:${writes} r:${returns}`);
    }
    return { passes, left: [...m.values()].map((x) => x.bad.filter(Boolean).length), m };
  }

  test('4 prefill / 2 decode at 1%, half of each on the bad revision: decode\'s last ordinal is reverted in place after round 1, prefill\'s in round 2; no write reaches replicas', () => {
    const { passes, left } = rollBackV08({ prefill: { desired: 4, bad: 2, maxUnavailable: 1 }, decode: { desired: 2, bad: 1, maxUnavailable: 1 } }, 1);
    expect(passes).toEqual([
      // Round 1 returns one replica of each (50 % of each back after it): decode's round partition 2 is written as 1,
      // and pauses it (it was not): its ordinal 1 is reverted once the workload carries both, the next pass.
      'RollingBack 1 [3/2] w:prefill=3 decode=1 r:',
      'RollingBack 1 [3/2] w: r:decode<1 revert<2',
      // The model's workloads carry a partition one pass late.
      'RollingBack 1 [3/2] w: r:prefill<3',
      // The returned replicas restart (not ready) for one pass: maxUnavailable holds round 2.
      'RollingBack 1 [3/2] w: r:',
      // Round 2: prefill's round partition 4 is written as 3, where it stands paused: ordinal 3 reverted in the same pass.
      'RollingBack 2 [4/2] w: r:prefill<3 revert<4',
      'RolledBack 2 [4/2] w: r:',
    ]);
    expect(left).toEqual([0, 0]);
  });

  test('3 of 4 prefill and 1 of 2 decode on the bad revision (a gate failed after round 2): 4 rounds; a round the cap leaves unwritten returns its last ordinal in the same pass', () => {
    const { passes, left } = rollBackV08({ prefill: { desired: 4, bad: 3, maxUnavailable: 1 }, decode: { desired: 2, bad: 1, maxUnavailable: 1 } }, 1);
    expect(passes).toEqual([
      'RollingBack 1 [2/1] w:prefill=2 decode=1 r:',
      'RollingBack 1 [2/1] w: r:',
      'RollingBack 1 [2/1] w: r:prefill<2',
      // Decode's round partition 2 is written as 1, where it is paused already: its ordinal 1 is reverted at once.
      'RollingBack 2 [2/2] w: r:decode<1 revert<2',
      'RollingBack 3 [3/2] w:prefill=3 r:',
      'RollingBack 3 [3/2] w: r:',
      'RollingBack 3 [3/2] w: r:prefill<3',
      'RollingBack 3 [3/2] w: r:',
      'RollingBack 4 [4/2] w: r:prefill<3 revert<4',
      'RolledBack 4 [4/2] w: r:',
    ]);
    expect(left).toEqual([0, 0]);
  });

  test('40 prefill / 20 decode at 10%, maxUnavailable 4 / 2, 12 / 6 on the bad revision: 3 rounds of 4 and 2, the last written 39 / 19 with ordinals 39 and 19 reverted in place', () => {
    const sizes = { prefill: { desired: 40, bad: 12, maxUnavailable: 4 }, decode: { desired: 20, bad: 6, maxUnavailable: 2 } };
    const { passes, left } = rollBackV08(sizes, 10);
    expect(passes).toEqual([
      'RollingBack 1 [32/16] w:prefill=32 decode=16 r:',
      'RollingBack 1 [32/16] w: r:',
      'RollingBack 1 [32/16] w: r:prefill<32 decode<16',
      'RollingBack 1 [32/16] w: r:',
      'RollingBack 2 [36/18] w:prefill=36 decode=18 r:',
      'RollingBack 2 [36/18] w: r:',
      'RollingBack 2 [36/18] w: r:prefill<36 decode<18',
      'RollingBack 2 [36/18] w: r:',
      'RollingBack 3 [40/20] w:prefill=39 decode=19 r:',
      'RollingBack 3 [40/20] w: r:',
      'RollingBack 3 [40/20] w: r:prefill<39 revert<40 decode<19 revert<20',
      'RolledBack 3 [40/20] w: r:',
    ]);
    expect(left).toEqual([0, 0]);
  });
});
