/** The weight rule of version-matched routing (lib/engine/rbg-router-weight.ts), with literal expectations. */
import { planRoleBasedGroup } from '../../lib/engine/plan-rbg';
import { routerWeights } from '../../lib/engine/rbg-router-weight';

const pd = (prefill: number, decode: number, desired: [number, number] = [4, 2]) => [
  { name: 'prefill', desired: desired[0], readyUpdated: prefill },
  { name: 'decode', desired: desired[1], readyUpdated: decode },
];

test('4 prefill / 2 decode: the weight follows the slowest role as replicas become ready, all of it once prefill has no old replica, the old router gone at the end', () => {
  const states: [number, number][] = [[0, 0], [1, 0], [2, 1], [3, 1], [4, 1], [4, 2]];
  expect(states.map(([p, d]) => routerWeights(pd(p, d), false))).toEqual([
    { newWeight: 0, oldWeight: 100, removeOld: false },
    { newWeight: 0, oldWeight: 100, removeOld: false },
    { newWeight: 50, oldWeight: 50, removeOld: false },
    { newWeight: 50, oldWeight: 50, removeOld: false },
    // Every prefill new: the old router has no prefill, so its 50 could only fail.
    { newWeight: 100, oldWeight: 0, removeOld: false },
    { newWeight: 100, oldWeight: 0, removeOld: true },
  ]);
});

test('a role with no ready replica left on the old release sends everything to the new router (the old one can make no pair), and keeps the old router', () => {
  const roles = (p: { ready: number; updated: number; readyOld?: number }, d: { ready: number; updated: number; readyOld?: number }) => [
    { name: 'prefill', desired: 4, readyUpdated: p.ready, updated: p.updated, ...(p.readyOld === undefined ? {} : { readyOld: p.readyOld }) },
    { name: 'decode', desired: 2, readyUpdated: d.ready, updated: d.updated, ...(d.readyOld === undefined ? {} : { readyOld: d.readyOld }) },
  ];
  // Both decodes new while prefill is at 2 of 4 (the cluster bench's one-router-per-release run failed here: "No decode workers available").
  expect(routerWeights(roles({ ready: 2, updated: 2 }, { ready: 1, updated: 2 }), false)).toEqual({ newWeight: 100, oldWeight: 0, removeOld: false });
  // One decode still old but not ready (being replaced): the same.
  expect(routerWeights(roles({ ready: 2, updated: 2, readyOld: 2 }, { ready: 1, updated: 1, readyOld: 0 }), false)).toEqual({ newWeight: 100, oldWeight: 0, removeOld: false });
  // That old decode ready: the slowest role's share again.
  expect(routerWeights(roles({ ready: 2, updated: 2, readyOld: 2 }, { ready: 1, updated: 1, readyOld: 1 }), false)).toEqual({ newWeight: 50, oldWeight: 50, removeOld: false });
  // A rollback still sends the new release nothing.
  expect(routerWeights(roles({ ready: 2, updated: 2 }, { ready: 1, updated: 2 }), true)).toEqual({ newWeight: 0, oldWeight: 100, removeOld: false });
});

test('rounds down: 1 of 3 ready is 33, never 34; 40 / 20 moves in single percents', () => {
  expect(routerWeights(pd(2, 1, [3, 3]), false).newWeight).toBe(33);
  expect(routerWeights(pd(2, 2, [3, 3]), false).newWeight).toBe(66);
  expect([[4, 2], [12, 6], [13, 7], [39, 19], [38, 19]].map(([p, d]) => routerWeights(pd(p, d, [40, 20]), false).newWeight)).toEqual([10, 30, 32, 95, 95]);
});

test('a new replica that stops being ready takes its share back', () => {
  expect(routerWeights(pd(2, 1), false).newWeight).toBe(50);
  expect(routerWeights(pd(2, 0), false)).toEqual({ newWeight: 0, oldWeight: 100, removeOld: false });
});

test('once no replica is left on the old release, a briefly unready new one takes nothing back: the old router has no worker', () => {
  const updated = (p: [number, number], d: [number, number]) => [
    { name: 'prefill', desired: 4, readyUpdated: p[0], updated: p[1] },
    { name: 'decode', desired: 2, readyUpdated: d[0], updated: d[1] },
  ];
  // [ready, updated] per role: every replica new, 3 of 4 prefill ready; then one decode still old.
  expect(routerWeights(updated([3, 4], [2, 2]), false)).toEqual({ newWeight: 100, oldWeight: 0, removeOld: true });
  expect(routerWeights(updated([0, 4], [0, 2]), false)).toEqual({ newWeight: 100, oldWeight: 0, removeOld: true });
  expect(routerWeights(updated([3, 4], [1, 1]), false)).toEqual({ newWeight: 100, oldWeight: 0, removeOld: false });
  expect(routerWeights(updated([2, 3], [1, 1]), false)).toEqual({ newWeight: 50, oldWeight: 50, removeOld: false });
  expect(routerWeights(updated([3, 4], [2, 2]), true)).toEqual({ newWeight: 0, oldWeight: 100, removeOld: false });
});

test('a role with no replicas does not count; no counted role routes nothing to the new release', () => {
  expect(routerWeights(pd(2, 0, [4, 0]), false).newWeight).toBe(50);
  expect(routerWeights([], false)).toEqual({ newWeight: 0, oldWeight: 100, removeOld: false });
});

test('a rollback moves every request to the old release at once, whatever is ready', () => {
  expect(routerWeights(pd(4, 2), true)).toEqual({ newWeight: 0, oldWeight: 100, removeOld: false });
  expect(routerWeights(pd(2, 1), true)).toEqual({ newWeight: 0, oldWeight: 100, removeOld: false });
});

test('counts that are not integers ≥ 0 are refused with the role and the range', () => {
  expect(() => routerWeights([{ name: 'decode', desired: 2, readyUpdated: -1 }], false)).toThrow('routed role decode: desired 2, readyUpdated -1, updated -1; allowed: integers ≥ 0');
  expect(() => routerWeights([{ name: 'decode', desired: 2, readyUpdated: 1, updated: 1.5 }], false)).toThrow('routed role decode: desired 2, readyUpdated 1, updated 1.5; allowed: integers ≥ 0');
  expect(() => routerWeights([{ name: 'decode', desired: 2, readyUpdated: 1, updated: 1, readyOld: -1 }], false)).toThrow('routed role decode: desired 2, readyUpdated 1, updated 1, readyOld -1; allowed: integers ≥ 0');
});

describe('plan: the weight per round', () => {
  const input = {
    kind: 'RoleBasedGroup' as const,
    name: 'pd',
    maxSkewPercent: 10,
    coordination: 'parallel' as const,
    roles: [
      { name: 'prefill', replicas: 5, partition: 0, maxUnavailable: 1 },
      { name: 'decode', replicas: 3, partition: 0, maxUnavailable: 1 },
    ],
  };

  test('5 prefill / 3 decode at 10%: 2/5 and 1/3 ready is 33, 3/5 and 2/3 is 60, then a held round at 100 and the last replicas; the rollback sends the new release nothing', () => {
    const plan = planRoleBasedGroup({ ...input, router: { prefill: 'prefill', decode: 'decode' }, failAtRound: 3 });
    // Round 3 would release both roles' last old replicas: the route hold keeps one of each (partition
    // 1) while the route still sends the old release a share; once that round's replicas are ready the
    // route sends the new release 100, and round 4 lets the held replicas go.
    expect(plan.rounds.map((r) => [r.updated.prefill, r.updated.decode, r.partition.prefill, r.partition.decode, r.weight, r.heldForRoute])).toEqual([
      [2, 1, 3, 2, 33, undefined],
      [3, 2, 2, 1, 60, undefined],
      [4, 2, 1, 1, 100, ['prefill', 'decode']],
      [5, 3, 0, 0, 100, undefined],
    ]);
    expect(plan.rollback!.rounds.map((r) => r.weight)).toEqual([0, 0, 0, 0]);
  });

  test('without a router the rounds carry no weight', () => {
    expect(planRoleBasedGroup(input).rounds.map((r) => r.weight)).toEqual([undefined, undefined, undefined]);
  });
});
