/**
 * The route hold of version-matched routing (lib/engine/rbg-router-hold.ts) through `coordinationPass`:
 * each routed role keeps its last old replica while the route, as read, sends the old release a share;
 * the weight rule sends the old release 0 once the held replicas are the last and the rest is new and
 * ready; the pass that reads old 0 lets them go. A rollback writes no round while the route sends the
 * new release a share. Literal routes and counts in, literal partitions, reasons and weights out.
 */
import { coordinationPass, type CoordinationPass } from '../../lib/engine/rbg-coordination-pass';
import type { ExecutorRule, ObservedRole } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import type { ObservedRouterRoute } from '../../lib/engine/rbg-router-step';
import { resolveRouter } from '../../lib/spec/rbg-router';

const T0 = Date.parse('2026-11-29T10:00:00Z');

function ruleOf(prefill: number, decode: number, maxSkewPercent = 50): ExecutorRule {
  return {
    name: 'pd',
    maxSkewPercent,
    roles: [
      { name: 'prefill', replicas: prefill, partition: 0, maxUnavailable: 1 },
      { name: 'decode', replicas: decode, partition: 0, maxUnavailable: 1 },
    ],
    progressDeadlineSeconds: 600,
    rollbackOnDeadline: false,
    capacityPolicy: 'wait',
    surgeUnschedulableSeconds: 120,
    router: resolveRouter({ kind: 'sglang', image: 'router:test', gateway: { name: 'gw' } }),
  };
}

/** One role's observation: [desired, written partition, updated, updated and ready, ready]. */
type Counts = [number, number, number, number, number];

/** Prefill and decode on router release `new0000001` with these counts. */
function roles(prefill: Counts, decode: Counts): Map<string, ObservedRole> {
  const role = (name: string, index: number, [desired, partition, updated, updatedReady, ready]: Counts): ObservedRole => ({
    name,
    index,
    desired,
    partition,
    maxUnavailable: 1,
    paused: false,
    revision: `${name}-new`,
    progress: { updatedReplicas: updated, readyReplicas: ready, updatedReadyReplicas: updatedReady, source: 'workload', workloadRevision: `${name}-wr-new` },
    routerRevision: 'new0000001',
  });
  return new Map([
    ['prefill', role('prefill', 0, prefill)],
    ['decode', role('decode', 1, decode)],
  ]);
}

/** The route with these router backends and weights. */
function route(...releases: [string, number][]): ObservedRouterRoute {
  return {
    name: 'g-pd-router',
    route: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'g-pd-router' }, spec: { rules: [{ backendRefs: releases.map(([rev, weight]) => ({ name: `g-pd-router-${rev}`, port: 30000, weight })) }] } },
  };
}

const both = (old: number, next: number) => route(['old0000001', old], ['new0000001', next]);

function pass(rule: ExecutorRule, observed: Map<string, ObservedRole>, onRoute: ObservedRouterRoute, previous: readonly CoordinationStatus[] = [], extra: Partial<Parameters<typeof coordinationPass>[0]> = {}): CoordinationPass {
  return coordinationPass({ rules: [rule], roles: observed, controllerCaughtUp: true, previous, routes: new Map([['pd', onRoute]]), now: T0, ...extra });
}

/** What a pass decided, in literals: partitions written, the coordination's reason, the route weights written [old, new]. */
function seen(p: CoordinationPass) {
  return {
    writes: p.steps[0].writes.map((w) => [w.name, w.partition]),
    reason: p.steps[0].status.reason,
    route: p.routerWrites.map((a) => a.backends.map((b) => b.weight)),
  };
}

describe('the route hold, rolling forward (4 prefill / 2 decode, maxSkew 50%)', () => {
  const rule = ruleOf(4, 2);

  test('keeps the last old prefill and decode until the route reads old 0, then lets them go', () => {
    // 1. The rollout's first round would release every replica (partition 0 each); the route still
    //    sends the old release everything, so each role keeps one old replica.
    const p1 = pass(rule, roles([4, 4, 0, 0, 4], [2, 2, 0, 0, 2]), both(100, 0));
    expect(seen(p1)).toEqual({ writes: [['prefill', 1], ['decode', 1]], reason: 'RoundWritten', route: [] });
    // 2. 3 prefill updated (2 ready), 1 decode updated and ready: the weight follows the slowest ready share.
    const p2 = pass(rule, roles([4, 1, 3, 2, 3], [2, 1, 1, 1, 2]), both(100, 0), p1.steps.map((s) => s.status));
    expect(seen(p2)).toEqual({ writes: [], reason: 'WaitingForRoute', route: [[50, 50]] });
    expect(p2.steps[0].status.roles.map((r) => r.reason)).toEqual([
      'keeps its last replica on the old release until route g-pd-router sends the old release nothing',
      'keeps its last replica on the old release until route g-pd-router sends the old release nothing',
    ]);
    // 3. Every replica but the held ones new and ready, each role with a ready new one: the old release
    //    gets 0; the partitions stay at 1, as the route read this pass still sends it half.
    const p3 = pass(rule, roles([4, 1, 3, 3, 4], [2, 1, 1, 1, 2]), both(50, 50), p2.steps.map((s) => s.status));
    expect(seen(p3)).toEqual({ writes: [], reason: 'WaitingForRoute', route: [[0, 100]] });
    // 4. The route reads old 0: the held replicas go, and the route stays with the new release.
    const p4 = pass(rule, roles([4, 1, 3, 3, 4], [2, 1, 1, 1, 2]), both(0, 100), p3.steps.map((s) => s.status));
    expect(seen(p4)).toEqual({ writes: [['prefill', 0], ['decode', 0]], reason: 'RoundWritten', route: [] });
    // 4b. The RBG controller catching up with that write (the group's generation not yet observed):
    //     the route stays with the new release, not back to the slowest role's share.
    const p4b = pass(rule, roles([4, 0, 3, 3, 4], [2, 0, 1, 1, 2]), both(0, 100), p4.steps.map((s) => s.status), { controllerCaughtUp: false });
    expect(seen(p4b)).toEqual({ writes: [], reason: 'WaitingForController', route: [] });
    // 5. The last replicas replaced (old gone, one new not ready yet): the rollout completes (re-armed,
    //    paused at 0) and the new router keeps everything.
    const p5 = pass(rule, roles([4, 0, 4, 3, 3], [2, 0, 2, 1, 1]), both(0, 100), p4.steps.map((s) => s.status));
    expect(seen(p5)).toEqual({ writes: [['prefill', 0], ['decode', 0]], reason: 'RolloutComplete', route: [] });
  });

  test('holds while the route does not list the new release\'s router yet; not once it lists only the new one', () => {
    const start = roles([4, 4, 0, 0, 4], [2, 2, 0, 0, 2]);
    expect(seen(pass(rule, start, route(['old0000001', 100]))).writes).toEqual([['prefill', 1], ['decode', 1]]);
    expect(seen(pass(rule, start, route(['new0000001', 100]))).writes).toEqual([['prefill', 0], ['decode', 0]]);
    // No route observed for the rule: nothing routes through it, nothing is held.
    expect(coordinationPass({ rules: [rule], roles: start, controllerCaughtUp: true, previous: [], now: T0 }).steps[0].writes.map((w) => [w.name, w.partition])).toEqual([['prefill', 0], ['decode', 0]]);
  });

  test('only the held roles must be down to their last replica: decode held, prefill stopped by maxUnavailable with 2 old, the new release takes all', () => {
    // 40 prefill / 20 decode at 25%: decode's round would go to 0 once prefill has 28 updated; held at 1.
    const big = ruleOf(40, 20, 25);
    const p1 = pass(big, roles([40, 12, 28, 28, 40], [20, 7, 13, 13, 20]), both(30, 70));
    expect(seen(p1)).toEqual({ writes: [['prefill', 2], ['decode', 1]], reason: 'RoundWritten', route: [[35, 65]] });
    // Decode's 19 new replicas ready; prefill (2 unavailable, more than maxUnavailable 1) keeps its
    // partition 2: decode is the one held role, so the old release gets 0 though prefill has 2 old.
    const p2 = pass(big, roles([40, 2, 38, 36, 38], [20, 1, 19, 19, 20]), both(35, 65), p1.steps.map((s) => s.status));
    expect(seen(p2)).toEqual({ writes: [], reason: 'RoleUnavailable', route: [[0, 100]] });
    // Without the hold (the route already at old 0) decode's last replica goes at once.
    const p3 = pass(big, roles([40, 2, 38, 36, 38], [20, 1, 19, 19, 20]), both(0, 100), p2.steps.map((s) => s.status));
    expect(seen(p3)).toEqual({ writes: [['decode', 0]], reason: 'RoundWritten', route: [] });
  });

  test('a role of one replica is not held (it can have no ready new replica beside an old one)', () => {
    const small = ruleOf(4, 1, 100);
    expect(seen(pass(small, roles([4, 4, 0, 0, 4], [1, 1, 0, 0, 1]), both(100, 0))).writes).toEqual([['prefill', 1], ['decode', 0]]);
  });
});

describe('the route hold, rolling back', () => {
  test('no rollback round while the route sends the new release a share; the round once it reads 0', () => {
    const rule = ruleOf(4, 2);
    // A rollout half way (prefill 2 of 4, decode 1 of 2 updated and ready), the route at 50/50.
    const midway = roles([4, 2, 2, 2, 4], [2, 1, 1, 1, 2]);
    const p1 = pass(rule, midway, both(50, 50));
    const revision = p1.steps[0].status.revision;
    const rollback = { revisions: [revision], cause: 'rolled back by a person' };
    const back1 = pass(rule, midway, both(50, 50), p1.steps.map((s) => s.status), { rollback });
    // The roles are paused where they stand (partitions 2 and 1), nothing returned, the route told 0 first.
    const writes = (p: CoordinationPass) => p.steps[0].writes.map((w) => [w.name, w.partition, w.paused]);
    expect([writes(back1), seen(back1).route, back1.steps[0].status.phase, back1.steps[0].status.rollback?.rounds, back1.steps[0].returns]).toEqual([[['prefill', 2, true], ['decode', 1, true]], [[100, 0]], 'RollingBack', 0, undefined]);
    expect(back1.steps[0].status.message).toBe('rolled back by a person; waiting for route g-pd-router to send the abandoned release nothing');
    // The route reads the new release at 0: the first rollback round raises the partitions.
    const back2 = pass(rule, midway, both(100, 0), back1.steps.map((s) => s.status), { rollback });
    expect([back2.steps[0].status.rollback?.rounds, writes(back2), seen(back2).route]).toEqual([1, [['prefill', 3, true], ['decode', 2, true]], []]);
  });
});
