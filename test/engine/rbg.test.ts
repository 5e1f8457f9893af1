/**
 * RBG coordinated rolling update beyond upstream's own test tables (those are in
 * test/parity/rbg-rolling.test.ts): the exact port's traces, rayshift's parallel rounds and random
 * role sets, each round checked with RBG's own skew check as RBG computes it.
 */
import fc from 'fast-check';
import {
  affinityBatches,
  coordinationUpdatedReplicasBound,
  fastestAndSlowestRole,
  goRound,
  nextRbgRound,
  plan,
  upstreamRollingTargets,
  type RbgRoleState,
  type RoleBasedGroupPlan,
} from '../../lib/engine';
import { INT32_MAX } from '../../lib/spec/read';
import { RBG_PLAN_MAX_ROUNDS } from '../../lib/spec/rbg-rules';
import { rbgRoundStep, type RbgRoundPlanner } from '../support/rbg-round-step';
import { rbgSkewCheck } from '../support/rbg-skew-check';

const role = (name: string, desired: number, updated = 0, extra: Partial<RbgRoleState> = {}): RbgRoleState => ({
  name,
  desired,
  updatedReplicas: updated,
  readyReplicas: desired,
  maxUnavailable: 1,
  partition: 0,
  ...extra,
});

type Algorithm = RbgRoundPlanner;
const step = rbgRoundStep;

/** Rolls until done, checking the skew after every round as RBG's test does; returns the number of rounds. */
function rollOut(algorithm: Algorithm, maxSkew: number, start: RbgRoleState[], checkSkew = true): number {
  let roles: RbgRoleState[] = start.map((r) => ({ ...r, currentPartition: r.desired - r.updatedReplicas }));
  for (let rounds = 1; rounds < 10_000; rounds++) {
    const next = step(algorithm, maxSkew, roles);
    if (checkSkew && !rbgSkewCheck(maxSkew, next).ok) throw new Error(`${algorithm}: skew out of bounds at ${next.map((r) => `${r.updatedReplicas}/${r.desired}`).join(',')}`);
    if (next.every((r, i) => r.updatedReplicas === roles[i].updatedReplicas)) throw new Error(`${algorithm}: stalled at ${next.map((r) => r.updatedReplicas).join('/')}`);
    roles = next;
    if (roles.every((r) => r.updatedReplicas >= r.desired)) return rounds;
  }
  throw new Error('did not finish');
}

describe('calculateCoordinationUpdatedReplicasBound (exact port)', () => {
  it('rounds half away from zero like Go math.Round', () => {
    expect([goRound(2.5), goRound(-2.5), goRound(0.5), goRound(-0.5), goRound(0.49999999999999994), goRound(1.4)]).toEqual([3, -3, 1, -1, 0, 1]);
    // (10%, 1, 10, 10): upper = round(20/10 … ) and (1%, 3, 200, 100): lower = round(1.0) and upper = round(2.0); a half: (50%, 1, 4, 1) → upper = round(0.75)
    expect(coordinationUpdatedReplicasBound(50, 1, 2, 1)).toEqual([0, 1]); // lower 0, upper round(1.0)
    expect(coordinationUpdatedReplicasBound(0, 1, 2, 5)).toEqual([3, 3]); // 2.5 → 3, not 2 (banker's) nor floor
  });
});

describe('getFastestAndSlowestRole', () => {
  it('sorts by progress, ties put the larger role as slowest, fewer than two roles give none', () => {
    expect(fastestAndSlowestRole([role('p', 10, 5), role('d', 5, 1)])).toMatchObject({ fastest: { name: 'p' }, slowest: { name: 'd' } });
    expect(fastestAndSlowestRole([role('p', 10, 5), role('d', 20, 10)])).toMatchObject({ fastest: { name: 'p' }, slowest: { name: 'd' } });
    expect(fastestAndSlowestRole([role('p', 10, 1), role('d', 10, 5), role('e', 10, 9)])).toMatchObject({ fastest: { name: 'e' }, slowest: { name: 'p' } });
    expect(fastestAndSlowestRole([role('p', 10, 1)])).toBeUndefined();
    expect(fastestAndSlowestRole([])).toBeUndefined();
  });
});

describe('upstream traces (rbg.md §3.2)', () => {
  const trace = (maxSkew: number, roles: RbgRoleState[]): string[] => {
    const out = [roles.map((r) => r.updatedReplicas).join('/')];
    while (!roles.every((r) => r.updatedReplicas >= r.desired)) {
      roles = step('upstream', maxSkew, roles);
      out.push(roles.map((r) => r.updatedReplicas).join('/'));
    }
    return out;
  };
  it('7p/3d at 1%', () => {
    expect(trace(1, [role('prefill', 7), role('decode', 3)])).toEqual(['0/0', '1/0', '1/1', '2/1', '3/1', '3/2', '5/2', '5/3', '7/3']);
  });
  it('40p/20d at 10% (39 rounds)', () => {
    const t = trace(10, [role('prefill', 40), role('decode', 20)]);
    expect(t.slice(0, 6)).toEqual(['0/0', '2/0', '2/2', '4/2', '6/2', '6/3']);
    expect(t.length - 1).toBe(39);
  });
  it('10p/2d at 10%', () => {
    expect(trace(10, [role('prefill', 10), role('decode', 2)])).toEqual(['0/0', '1/0', '1/1', '5/1', '6/1', '6/2', '10/2']);
  });
  it("a step that works out to 0 advances the slowest role by one only from v0.8.0-alpha.5; v0.6.0's and v0.7.0's stays 0 while the fastest role is not all ready", () => {
    // Seen on v0.7.0's real controller (cluster-rbg-coordinated, 5p/3d at 20 %): prefill 3/5 updated, decode 2/3 updated and 2 ready.
    const roles = [role('prefill', 5, 3), role('decode', 3, 2, { readyReplicas: 2 })];
    expect(upstreamRollingTargets(20, roles, 'v0.7')!.get('prefill')).toBe(3);
    expect(upstreamRollingTargets(20, roles, 'v0.6')!.get('prefill')).toBe(3);
    expect(upstreamRollingTargets(20, roles, 'v0.8')!.get('prefill')).toBe(4);
    // Decode all ready: every release steps by one.
    const ready = [role('prefill', 5, 3), role('decode', 3, 2)];
    expect(upstreamRollingTargets(20, ready, 'v0.7')!.get('prefill')).toBe(4);
  });
  it('makes progress when no role is ready (1,1) at 10%', () => {
    const roles = [role('p', 1, 0, { readyReplicas: 0 }), role('d', 1, 0, { readyReplicas: 0 })];
    const targets = upstreamRollingTargets(10, roles)!;
    expect([...targets.values()].some((v) => v > 0)).toBe(true);
  });
});

describe('parallel rounds', () => {
  it('7p/3d at 1%: 5 rounds instead of 8, within 1 % plus one decode replica', () => {
    const roles = [{ name: 'prefill', replicas: 7, partition: 0, maxUnavailable: 1 }, { name: 'decode', replicas: 3, partition: 0, maxUnavailable: 1 }];
    const p = plan({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent: 1, coordination: 'parallel', roles });
    expect(p.rounds.map((r) => `${r.updated.prefill}/${r.updated.decode}`)).toEqual(['2/1', '4/1', '4/2', '7/2', '7/3']);
    expect(p.rounds[0].partition).toEqual({ prefill: 5, decode: 2 });
    expect(p.complete).toBe(true);
    expect(p.maxSkewPercentObserved).toBeLessThan(1 + 100 / 3);
    expect(plan({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent: 1, coordination: 'upstream', roles }).rounds).toHaveLength(8);
  });

  it('40p/20d at 10%: 8 rounds instead of 39, on RBG\'s exact bound only where its float64 check accepts it', () => {
    const roles = [{ name: 'prefill', replicas: 40, partition: 0, maxUnavailable: 1 }, { name: 'decode', replicas: 20, partition: 0, maxUnavailable: 1 }];
    const parallel = plan({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent: 10, coordination: 'parallel', roles });
    const upstream = plan({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent: 10, coordination: 'upstream', roles });
    // 0/0 → 6/3 may pass through 6/0: 15 % = 10 % + one decode replica, exactly RBG's bound, and
    // 0.15 × 10000 computes to 1500 ≤ 1500. 12/6 → 18/9 may not: 18/40 − 6/20 computes to
    // 0.15000000000000002, 1501 basis points, so prefill goes to 17 (and decode to 8) instead.
    expect(parallel.rounds.map((r) => `${r.updated.prefill}/${r.updated.decode}`)).toEqual(['6/3', '12/6', '17/8', '21/11', '28/13', '31/16', '38/18', '40/20']);
    expect(parallel.rounds[0]).toEqual({ updated: { prefill: 6, decode: 3 }, partition: { prefill: 34, decode: 17 } });
    expect(parallel.maxSkewPercentObserved).toBeCloseTo(5, 9);
    expect(upstream.rounds).toHaveLength(39);
    expect(upstream.maxSkewPercentObserved).toBeCloseTo(5, 9);
  });

  it('single-replica roles (1,1) update together in one round', () => {
    const round = nextRbgRound(10, [role('prefill', 1), role('decode', 1)]);
    expect(round.roles.map((r) => [r.target, r.partition])).toEqual([[1, 0], [1, 0]]);
    expect(rollOut('upstream', 10, [role('prefill', 1), role('decode', 1)])).toBe(2);
    expect(rollOut('parallel', 10, [role('prefill', 1), role('decode', 1)])).toBe(1);
  });

  it('holds a role over its maxUnavailable and keeps the others within maxSkew of it', () => {
    const roles = [role('prefill', 10, 5), role('decode', 10, 5, { readyReplicas: 7, maxUnavailable: 1 })];
    const first = nextRbgRound(10, roles);
    // prefill may lead decode by 10 % plus one replica (10 %): 7 of 10, and no further while decode is held.
    expect(first.roles).toEqual([
      { name: 'prefill', target: 7, partition: 3, held: false, complete: false },
      { name: 'decode', target: 5, partition: 5, held: true, complete: false },
    ]);
    const again = nextRbgRound(10, [role('prefill', 10, 7), roles[1]]);
    expect(again.advanced).toBe(false);
    expect(again.roles[0].target).toBe(7);
  });

  it('never raises a partition already written, and respects the user partition', () => {
    // decode lags behind its written partition (3 updated although partition 5 of 10 was written).
    const state = [role('p', 10, 2, { currentPartition: 8 }), role('d', 10, 3, { currentPartition: 5 })];
    expect(nextRbgRound(1, state).roles.map((r) => r.partition)).toEqual([6, 5]);
    expect(nextRbgRound(1, state.map((r) => ({ ...r, currentPartition: undefined }))).roles.map((r) => r.partition)).toEqual([6, 7]);
    const canary = plan({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent: 10, coordination: 'parallel', roles: [{ name: 'p', replicas: 10, partition: 2, maxUnavailable: 1 }, { name: 'd', replicas: 10, partition: 0, maxUnavailable: 1 }] });
    const last = canary.rounds[canary.rounds.length - 1];
    expect(last.updated).toEqual({ p: 8, d: 10 });
    expect(last.partition.p).toBe(2);
    expect(canary.complete).toBe(true); // every role reached desired − its user partition
  });

  it('200 random role sets: skew within maxSkew + one replica, never more rounds than one role at a time', () => {
    const roleSet = fc.record({
      maxSkew: fc.integer({ min: 0, max: 50 }),
      desired: fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 2, maxLength: 4 }),
    });
    let fewer = 0;
    fc.assert(
      fc.property(roleSet, ({ maxSkew, desired }) => {
        const roles = desired.map((d, i) => role(`r${i}`, d));
        const parallel = rollOut('parallel', maxSkew, roles);
        const upstream = rollOut('upstream', maxSkew, roles, false); // upstream can exceed the bound with 3+ roles (below)
        expect(parallel).toBeLessThanOrEqual(upstream);
        if (parallel < upstream) fewer++;
      }),
      { numRuns: 200 },
    );
    expect(fewer).toBeGreaterThan(150);
  });
});

describe('plan size', () => {
  const pd = (prefill: number, decode: number, maxSkewPercent: number, coordination: Algorithm) =>
    plan({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent, coordination, roles: [{ name: 'prefill', replicas: prefill, partition: 0, maxUnavailable: 1 }, { name: 'decode', replicas: decode, partition: 0, maxUnavailable: 1 }] });

  it('int32 roles at 1%: a few hundred rounds, whatever the replicas', () => {
    for (const coordination of ['parallel', 'upstream'] as const) expect(pd(INT32_MAX, INT32_MAX - 1, 1, coordination).rounds.length).toBeLessThan(1_000);
  });

  it('0% moves one replica a round: planned up to RBG_PLAN_MAX_ROUNDS rolled replicas, refused beyond at once', () => {
    const half = RBG_PLAN_MAX_ROUNDS / 2;
    const atLimit = pd(half, half, 0, 'upstream');
    expect({ rounds: atLimit.rounds.length, complete: atLimit.complete }).toEqual({ rounds: RBG_PLAN_MAX_ROUNDS, complete: true });
    expect(() => pd(half, half + 1, 0, 'parallel')).toThrow(new RangeError(`maxSkewPercent of RoleBasedGroup pd: "0%" over roles that roll ${RBG_PLAN_MAX_ROUNDS + 1} replicas (replicas − partition) may take ${RBG_PLAN_MAX_ROUNDS + 1} rounds of one replica; allowed: "0%" for at most ${RBG_PLAN_MAX_ROUNDS} rolled replicas (rayshift's plan limit), or "1%" to "100%"`));
  });
});

describe('upstream with three roles', () => {
  it('can exceed its own bound (4/5/5 at 10%: 0/1/0 → 0/1/2 is 40 % > 10 % + 25 %); parallel rounds do not', () => {
    const roles = [role('a', 4), role('b', 5), role('c', 5)];
    expect(() => rollOut('upstream', 10, roles)).toThrow('upstream: skew out of bounds at 0/4,1/5,2/5');
    expect(rollOut('parallel', 10, roles)).toBeGreaterThan(0);
  });
});

describe('RBG v0.7.0\'s controller as it runs (executor rbg)', () => {
  const pd = (prefill: number, decode: number, maxUnavailable: number, partition = 0) => [
    { name: 'prefill', replicas: prefill, partition: Math.min(partition, prefill), maxUnavailable },
    { name: 'decode', replicas: decode, partition: Math.min(partition, decode), maxUnavailable },
  ];
  const partitions = (p: RoleBasedGroupPlan) => p.rounds.map((r) => `${r.partition.prefill}/${r.partition.decode}`);

  it('first writes the user\'s partitions (from the old revision\'s statuses), then takes upstream\'s step after each maxUnavailable tick: 5p/3d at 20% as the real controller rolled it', () => {
    const p = plan({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent: 20, coordination: 'controller', roles: pd(5, 3, 1) });
    // test/integration/cluster-rbg-coordinated.test.ts observed exactly these partitions from rbgs v0.7.0.
    expect(partitions(p)).toEqual(['0/0', '3/2', '3/1', '2/1', '1/1', '1/0', '0/0']);
    expect(p.complete).toBe(true);
    // From nothing updated, upstream's step would hold prefill first.
    expect(partitions(plan({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent: 20, coordination: 'upstream', roles: pd(5, 3, 1) }))[0]).not.toBe('0/0');
  });

  it('stalls where the slowest role already reached its partition (6p/2d at 25%, partition 1: decode at 1 of 2 holds prefill at 4 of 6)', () => {
    const p = plan({ kind: 'RoleBasedGroup', name: 'pd', maxSkewPercent: 25, coordination: 'controller', roles: pd(6, 2, 2, 1) });
    expect(partitions(p)).toEqual(['1/1', '2/1']);
    expect(p.rounds[p.rounds.length - 1].updated).toEqual({ prefill: 4, decode: 1 });
    expect(p.complete).toBe(false);
  });
});

describe('AffinityScheduling batches', () => {
  it('makes min(replicas/ratio) batches of ratio pods per role, one wave each when Sequential', () => {
    const roles = [{ name: 'prefill', replicas: 6, ratio: 2 }, { name: 'decode', replicas: 4, ratio: 1 }];
    const seq = affinityBatches(roles, 'Sequential');
    expect(seq.batches).toEqual([0, 1, 2].map((i) => ({ index: i, wave: i, pods: { prefill: 2, decode: 1 } })));
    expect(seq.waves).toBe(3);
    expect(seq.unbatched).toEqual({ prefill: 0, decode: 1 });
    const par = affinityBatches(roles, 'Parallel');
    expect(par.batches.map((b) => b.wave)).toEqual([0, 0, 0]);
    expect(par.waves).toBe(1);
  });

  it('rejects a ratio that is not a positive integer', () => {
    expect(() => affinityBatches([{ name: 'prefill', replicas: 6, ratio: 0 }], 'Parallel')).toThrow('ratios[prefill] is 0; allowed: an integer > 0');
  });
});
