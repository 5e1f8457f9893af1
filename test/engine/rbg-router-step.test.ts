/**
 * The route step of version-matched routing (lib/engine/rbg-router-step.ts) and its place in
 * `coordinationPass`: literal routes in, literal weights and actions out.
 */
import { coordinationPass } from '../../lib/engine/rbg-coordination-pass';
import type { ObservedRole } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { routerStep, type ObservedRouterRoute } from '../../lib/engine/rbg-router-step';
import { resolveRouter } from '../../lib/spec/rbg-router';
import { prefillDecodeRule } from '../support/rbg-rules';

const T0 = Date.parse('2026-11-29T10:00:00Z');

const rule = prefillDecodeRule({ maxSkewPercent: 100, progressDeadlineSeconds: 600, router: resolveRouter({ kind: 'sglang', image: 'router:test', gateway: { name: 'gw' } }) });

/** Prefill 4 and decode 2 on router release `rev`, with `ready` [prefill, decode] replicas of the new template updated and ready. */
function roles(rev: string | undefined, ready: [number, number], updated: [number, number] = ready, readyAll: [number, number] = [4, 2]): Map<string, ObservedRole> {
  const role = (name: string, index: number, desired: number, i: number): ObservedRole => ({
    name,
    index,
    desired,
    partition: desired - updated[i],
    maxUnavailable: 1,
    paused: false,
    revision: `${name}-${rev ?? 'none'}`,
    progress: { updatedReplicas: updated[i], readyReplicas: readyAll[i], updatedReadyReplicas: ready[i], source: 'workload' },
    ...(rev !== undefined ? { routerRevision: rev } : {}),
  });
  return new Map([
    ['prefill', role('prefill', 0, 4, 0)],
    ['decode', role('decode', 1, 2, 1)],
  ]);
}

/** The rendered route (`RoleBasedGroupRouters`): one rule over the routers of `releases` with these weights. */
function route(...releases: [string, number | undefined][]): ObservedRouterRoute {
  return {
    name: 'g-pd-router',
    route: {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'g-pd-router', namespace: 'ns' },
      spec: { rules: [{ backendRefs: releases.map(([rev, weight]) => ({ name: `g-pd-router-${rev}`, port: 30000, ...(weight !== undefined ? { weight } : {}) })) }] },
    },
  };
}

const progressing = { phase: 'Progressing' } as CoordinationStatus;

describe('routerStep', () => {
  test('moves the new release to the slowest routed role\'s ready share, rounded down, as rounds complete', () => {
    // [prefill, decode] ready on the new release → new weight: 1/4 & 0/2 → 0; 1/4 & 1/2 → 25; 3/4 & 1/2 → 50;
    // 3/4 & 2/2 → 100 (no decode left on the old release: its router can make no pair), the old router kept; 4/4 & 2/2 → 100, the old router may go.
    const seen = ([[1, 0], [1, 1], [3, 1], [3, 2], [4, 2]] as [number, number][]).map((ready) => routerStep(rule, roles('new0000001', ready), progressing, route(['old0000001', 100], ['new0000001', 0])));
    expect(seen.map((s) => s.status.releases.map((r) => [r.revision, r.weight]))).toEqual([
      [['old0000001', 100], ['new0000001', 0]],
      [['old0000001', 75], ['new0000001', 25]],
      [['old0000001', 50], ['new0000001', 50]],
      [['old0000001', 0], ['new0000001', 100]],
      [['old0000001', 0], ['new0000001', 100]],
    ]);
    expect(seen.map((s) => s.status.removeOld)).toEqual([false, false, false, false, true]);
    expect(seen[0].action).toBeUndefined();
    expect(seen[1].action).toEqual({
      type: 'setRouterWeights',
      rule: 'pd',
      route: 'g-pd-router',
      backends: [
        { name: 'g-pd-router-old0000001', weight: 75 },
        { name: 'g-pd-router-new0000001', weight: 25 },
      ],
      event: { type: 'Normal', reason: 'RouterWeights', message: 'pd: route g-pd-router: old release old0000001 75%, new release new0000001 25%' },
    });
  });

  test('every replica on the new release, one briefly unready: the new router keeps 100 (the old one has no worker left)', () => {
    const step = routerStep(rule, roles('new0000001', [3, 2], [4, 2]), progressing, route(['old0000001', 0], ['new0000001', 100]));
    expect([step.status.releases.map((x) => x.weight), step.status.removeOld, step.action]).toEqual([[0, 100], true, undefined]);
    // One prefill and one decode still on the old release: the rule follows the ready new replicas (2 of 4, 1 of 2).
    expect(routerStep(rule, roles('new0000001', [2, 1], [3, 1]), progressing, route(['old0000001', 0], ['new0000001', 100])).status.releases.map((x) => x.weight)).toEqual([50, 50]);
    // Both decodes new, one not ready: the old router has no decode, so the new one keeps everything.
    expect(routerStep(rule, roles('new0000001', [2, 1], [3, 2]), progressing, route(['old0000001', 0], ['new0000001', 100])).status.releases.map((x) => x.weight)).toEqual([0, 100]);
  });

  test('asks for no write when the route already carries the weights', () => {
    expect(routerStep(rule, roles('new0000001', [3, 1]), progressing, route(['old0000001', 50], ['new0000001', 50])).action).toBeUndefined();
  });

  test('without updatedReadyReplicas counts only the ready replicas the old ones cannot account for', () => {
    const r = roles('new0000001', [0, 0], [2, 1], [3, 2]);
    for (const x of r.values()) r.set(x.name, { ...x, progress: { updatedReplicas: x.progress!.updatedReplicas, readyReplicas: x.progress!.readyReplicas, source: 'group' } });
    // prefill: 3 ready, 2 old → at least 1 new ready (25); decode: 2 ready, 1 old → at least 1 (50).
    expect(routerStep(rule, r, progressing, route(['old0000001', 100], ['new0000001', 0])).status.releases.map((x) => x.weight)).toEqual([75, 25]);
  });

  test('with the routed Pods read, no release gets more than its ready Pods serve, whatever the counts say', () => {
    // RBG v0.7.0 on the test cluster (cluster-rbg-router-operator): a RoleInstance counts updated and
    // ready once its template is, while its Pod still runs the old release; then that Pod goes.
    const pods = (prefill: Record<string, number>, decode: Record<string, number>) => new Map([['prefill', new Map(Object.entries(prefill))], ['decode', new Map(Object.entries(decode))]]);
    const onRoute = (readyPods: ObservedRouterRoute['readyPods']) => ({ ...route(['old0000001', 50], ['new0000001', 50]), readyPods });
    const weightOf = (step: ReturnType<typeof routerStep>) => step.status.releases.find((r) => r.current)!.weight;
    // Counts say prefill 2/4 and decode 1/2 new and ready; the Pods say one prefill of the new release is ready.
    const counted = roles('new0000001', [2, 1], [2, 1]);
    expect(weightOf(routerStep(rule, counted, progressing, route(['old0000001', 50], ['new0000001', 50])))).toBe(50);
    expect(weightOf(routerStep(rule, counted, progressing, onRoute(pods({ new0000001: 1, old0000001: 3 }, { new0000001: 1, old0000001: 1 }))))).toBe(25);
    // No decode Pod of the old release ready (its last one replaced): its router can make no pair, the new one takes all.
    expect(weightOf(routerStep(rule, counted, progressing, onRoute(pods({ new0000001: 2, old0000001: 2 }, { new0000001: 1 }))))).toBe(100);
    // A role the Pods were read for but none is ready (absent from the map): nothing of it on either release.
    expect(weightOf(routerStep(rule, counted, progressing, onRoute(new Map([['prefill', new Map([['new0000001', 2], ['old0000001', 2]])]]))))).toBe(100);
    // The counts still bound the Pods: Pods labelled with the new release but not counted updated and ready give nothing.
    expect(weightOf(routerStep(rule, roles('new0000001', [1, 1], [1, 1]), progressing, onRoute(pods({ new0000001: 3, old0000001: 1 }, { new0000001: 1, old0000001: 1 }))))).toBe(25);
  });

  test('keeps the route as it is while a routed role reports no counts (its workload has not observed its spec)', () => {
    const r = roles('new0000001', [4, 2]);
    r.set('decode', { ...r.get('decode')!, progress: undefined });
    const held = routerStep(rule, r, progressing, route(['old0000001', 0], ['new0000001', 100]));
    expect([held.action, held.status.releases.map((x) => x.weight)]).toEqual([undefined, [0, 100]]);
  });

  test('while a routed role reports no counts, "old router may go" stays as the last counts of this release said', () => {
    const r = roles('new0000001', [4, 2]);
    r.set('decode', { ...r.get('decode')!, progress: undefined });
    const done = (revision: string, removeOld: boolean): CoordinationStatus => ({
      phase: 'Complete',
      router: { route: 'g-pd-router', removeOld, releases: [{ revision: 'old0000001', service: 'g-pd-router-old0000001', weight: 0, current: false }, { revision, service: `g-pd-router-${revision}`, weight: 100, current: true }] },
    }) as unknown as CoordinationStatus;
    const onRoute = route(['old0000001', 0], ['new0000001', 100]);
    expect([
      routerStep(rule, r, done('new0000001', true), onRoute).status.removeOld,
      routerStep(rule, r, done('new0000001', false), onRoute).status.removeOld,
      // The last status was another release's (a new rollout began): nothing is known of this one yet.
      routerStep(rule, r, done('other00001', true), onRoute).status.removeOld,
      routerStep(rule, r, progressing, onRoute).status.removeOld,
    ]).toEqual([true, false, false, false]);
  });

  test('a rollback takes the new release to 0 at once, whatever is ready', () => {
    const back = routerStep(rule, roles('new0000001', [4, 2]), { phase: 'RollingBack', rollback: { cause: 'x', rounds: 0, startedAt: '' } } as CoordinationStatus, route(['old0000001', 25], ['new0000001', 75]));
    expect(back.action?.backends).toEqual([
      { name: 'g-pd-router-old0000001', weight: 100 },
      { name: 'g-pd-router-new0000001', weight: 0 },
    ]);
    expect(back.action?.event.message).toBe('pd: route g-pd-router: old release old0000001 100%, new release new0000001 0% (rolling back)');
  });

  test('one router on the route (outside a rollout) takes everything; a third release\'s router none', () => {
    expect(routerStep(rule, roles('new0000001', [0, 0]), progressing, route(['new0000001', undefined])).action?.backends).toEqual([{ name: 'g-pd-router-new0000001', weight: 100 }]);
    const three = routerStep(rule, roles('new0000001', [2, 1]), progressing, route(['a000000001', 60], ['b000000001', 40], ['new0000001', 0]));
    expect(three.status.releases.map((r) => r.weight)).toEqual([50, 0, 50]);
  });

  test('writes nothing, and says why, without the route, the label, or the current release\'s router', () => {
    const problem = (o: ObservedRouterRoute, unmarked = false) => routerStep(rule, roles(unmarked ? undefined : 'new0000001', [4, 2]), progressing, o);
    expect(problem({ name: 'g-pd-router' })).toEqual({ status: { route: 'g-pd-router', releases: [], removeOld: false, problem: 'route g-pd-router not found: render the rule\'s routers' } });
    expect(problem(route(['old0000001', 100]), true).status.problem).toMatch(/^the prefill and decode templates carry no common rayshift.dev\/router-revision label \(prefill undefined, decode undefined\)/);
    expect(problem(route(['old0000001', 100])).status.problem).toBe('route g-pd-router has no backend g-pd-router-new0000001 for the current release: render the routers with previousRevision set to the release rolled from');
    expect(problem(route(['old0000001', 100])).action).toBeUndefined();
  });
});

describe('coordinationPass with a router', () => {
  test('puts the route step in the rule\'s status and its write in routerWrites; a rule without a route observed gets neither', () => {
    const pass = coordinationPass({ rules: [rule], roles: roles('new0000001', [1, 1]), controllerCaughtUp: true, previous: [], routes: new Map([['pd', route(['old0000001', 100], ['new0000001', 0])]]), now: T0 });
    expect(pass.steps[0].status.router?.releases.map((r) => r.weight)).toEqual([75, 25]);
    expect(pass.routerWrites.map((a) => a.backends.map((b) => b.weight))).toEqual([[75, 25]]);
    const bare = coordinationPass({ rules: [rule], roles: roles('new0000001', [1, 1]), controllerCaughtUp: true, previous: [], now: T0 });
    expect(bare.steps[0].status.router).toBeUndefined();
    expect(bare.routerWrites).toEqual([]);
  });
});
