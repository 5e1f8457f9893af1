/**
 * Parity with RBG's coordinated-rolling-update tests (v0.7.0 and v0.8.0-alpha.5; cases in
 * test/parity/rbg-cases.ts). Every rolling case runs RBG's own test loop with RBG's own check
 * (test/support/rbg-skew-check.ts: float64, no epsilon) over two engines: rayshift's port of
 * upstream's one-role step and rayshift's parallel rounds. The parallel rounds must also pass the
 * check in every order the workloads can catch up in, since rayshift moves several roles at once.
 */
import { coordinationUpdatedReplicasBound, fastestAndSlowestRole, nextRbgRound, upstreamRollingTargets, type RbgRoleState } from '../../lib/engine';
import { RBG_V1ALPHA2, resolvePartition, validateCoordinatedPolicy, validateRoleBasedGroup } from '../../lib/spec';
import { podTemplate } from '../spec/fixtures';
import { rbgRoundStep } from '../support/rbg-round-step';
import { rbgSkewCheck } from '../support/rbg-skew-check';
import { expectDocumented, label } from './ledger';
import { BOUNDS, FASTEST_SLOWEST, MERGES, MIN_PROGRESS, PARTITIONS, rollingCases, type RollingCase } from './rbg-cases';

type Engine = 'upstream port' | 'parallel rounds';

function start(c: RollingCase): RbgRoleState[] {
  // RBG's test passes desiredReplicas as readyReplicas: every role is ready.
  return c.roles.map((r) => ({ name: r.name, desired: r.desired, updatedReplicas: r.updated, readyReplicas: r.desired, maxUnavailable: 1, partition: 0, currentPartition: r.desired - r.updated }));
}

/** One round with every workload caught up. */
const step = (engine: Engine, maxSkew: number, roles: RbgRoleState[]): RbgRoleState[] => rbgRoundStep(engine === 'parallel rounds' ? 'parallel' : 'upstream', maxSkew, roles);

/**
 * Every state between `from` and `to` where some of the roles that move caught up and the others
 * not yet (`from` itself is the case's start or an earlier round's end, checked already or given).
 */
function catchUpOrders(from: RbgRoleState[], to: RbgRoleState[]): RbgRoleState[][] {
  const moving = from.map((_, i) => i).filter((i) => to[i].updatedReplicas !== from[i].updatedReplicas);
  const out: RbgRoleState[][] = [];
  for (let mask = 1; mask < (1 << moving.length) - 1; mask++) {
    const caughtUp = new Set(moving.filter((_, k) => mask & (1 << k)));
    out.push(from.map((r, i) => (caughtUp.has(i) ? to[i] : r)));
  }
  return out;
}

const show = (roles: readonly RbgRoleState[]) => roles.map((r) => `${r.updatedReplicas}/${r.desired}`).join(',');

/** RBG's test loop (next target, check, stop once every role is updated); the first failure, if any. */
function rbgTestLoop(engine: Engine, c: RollingCase): string | undefined {
  let roles = start(c);
  for (let round = 0; round < 100_000; round++) {
    const next = step(engine, c.maxSkew, roles);
    const checked = engine === 'parallel rounds' ? [next, ...catchUpOrders(roles, next)] : [next];
    for (const state of checked) {
      const v = rbgSkewCheck(c.maxSkew, state);
      if (!v.ok) return `${engine}: ${label(c)}: skew ${v.skew} > ${v.allowed} basis points at ${show(state)}`;
    }
    if (next.every((r) => r.updatedReplicas >= r.desired)) return undefined;
    if (next.every((r, i) => r.updatedReplicas === roles[i].updatedReplicas)) return `${engine}: ${label(c)}: stalled at ${show(next)}`;
    roles = next;
  }
  return `${engine}: ${label(c)}: did not finish`;
}

const ENGINES: Engine[] = ['upstream port', 'parallel rounds'];
const ALL = rollingCases();

describe('RBG Test_CalculateNextRollingTarget_WithNormalCases', () => {
  test.each(ALL.filter((c) => !c.test.includes('(')).map((c) => [c.name, c] as const))('%s passes RBG\'s check with both engines', (_name, c) => {
    expect(ENGINES.map((e) => rbgTestLoop(e, c))).toEqual([undefined, undefined]);
  });

  test.each(['(from 0/0)', '(from every start)'])('every generated case %s passes RBG\'s check with both engines', (loop) => {
    const cases = ALL.filter((c) => c.test.endsWith(loop));
    expect(cases.length).toBeGreaterThan(9000);
    const failures = cases.flatMap((c) => ENGINES.map((e) => rbgTestLoop(e, c))).filter((f) => f !== undefined);
    expect(failures.slice(0, 5)).toEqual([]);
  });

  test('the check computes as Go does, noise included: at 16p/25d and 1%, 5 against 6 is 726 basis points (exactly 725), 4 against 6 is 101 (exactly 100)', () => {
    const at = (p: number, d: number) => rbgSkewCheck(1, [{ name: 'prefill', desired: 16, updatedReplicas: p }, { name: 'decode', desired: 25, updatedReplicas: d }]);
    expect([at(5, 6), at(4, 6)]).toEqual([{ ok: false, skew: 726, allowed: 725 }, { ok: true, skew: 101, allowed: 725 }]);
  });
});

test(`RBG ${label(MIN_PROGRESS)}: both engines progress`, () => {
  const roles: RbgRoleState[] = ['prefill', 'decode'].map((name) => ({ name, desired: 1, updatedReplicas: 0, readyReplicas: 0, maxUnavailable: 1, partition: 0 }));
  const upstream = [...upstreamRollingTargets(10, roles)!.values()].reduce((a, b) => a + b, 0);
  const parallel = nextRbgRound(10, roles).roles.reduce((a, r) => a + r.target, 0);
  expect({ upstream: upstream > 0, parallel: parallel > 0 }).toEqual({ upstream: true, parallel: true });
});

test.each(FASTEST_SLOWEST.map((c) => [label(c), c] as const))('RBG %s', (_title, c) => {
  const roles: RbgRoleState[] = Object.entries(c.roles).map(([name, [desired, updated]]) => ({ name, desired, updatedReplicas: updated, readyReplicas: desired, maxUnavailable: 1, partition: 0 }));
  const pair = fastestAndSlowestRole(roles);
  expect(pair === undefined ? ['', ''] : [pair.fastest.name, pair.slowest.name]).toEqual(c.upstream);
});

test.each(BOUNDS.map((c) => [label(c), c] as const))('RBG %s', (_title, c) => {
  expect(coordinationUpdatedReplicasBound(...c.args)).toEqual(c.upstream);
});

describe('RBG TestCalculatePartitionReplicas', () => {
  test.each(PARTITIONS.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const role = {
      name: 'prefill',
      ...(c.replicas === undefined ? {} : { replicas: c.replicas }),
      standalonePattern: { template: podTemplate(0) },
      ...(c.partition === undefined ? {} : { rolloutStrategy: { rollingUpdate: { partition: c.partition } } }),
    };
    const r = validateRoleBasedGroup({ apiVersion: RBG_V1ALPHA2, kind: 'RoleBasedGroup', metadata: { name: 'pd' }, spec: { roles: [role] } });
    const rayshift = r.errors.length > 0 ? 'rejected' : c.partition === undefined ? 0 : resolvePartition(c.partition, c.replicas ?? 1);
    const upstream = c.upstream === 'error' ? 'rejected' : c.upstream;
    if (c.difference === undefined) {
      expect(rayshift).toBe(upstream);
    } else {
      expect({ rayshift, upstream }).toEqual({ rayshift: 'rejected', upstream });
      expectDocumented(c.difference);
    }
  });
});

describe('RBG Test_mergeStrategyRollingUpdate', () => {
  test.each(MERGES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    // With empty maps no role is coordinated: a group of one role and no CoordinatedPolicy.
    const names = [...new Set([...Object.keys(c.a), ...Object.keys(c.b)])];
    if (names.length === 0) names.push('role1');
    const group = { apiVersion: RBG_V1ALPHA2, kind: 'RoleBasedGroup', metadata: { name: 'pd' }, spec: { roles: names.map((name) => ({ name, replicas: 20, standalonePattern: { template: podTemplate(0) } })) } };
    const rules = Object.entries({ a: c.a, b: c.b }).flatMap(([side, strategies]) =>
      Object.entries(strategies).map(([role, s]) => ({ name: `${side}-${role}`, roles: [role], strategy: { rollingUpdate: { maxSkew: '10%', ...s } } })));
    const result = rules.length === 0 ? validateRoleBasedGroup(group) : validateCoordinatedPolicy({ apiVersion: RBG_V1ALPHA2, kind: 'CoordinatedPolicy', metadata: { name: 'pd' }, spec: { policies: rules } }, group);
    const rayshift = result.errors.length > 0 ? 'rejected' : 'accepted';
    expect(rayshift).toBe(c.difference === undefined ? 'accepted' : 'rejected');
    if (c.difference !== undefined) expectDocumented(c.difference);
  });
});
