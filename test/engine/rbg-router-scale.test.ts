/**
 * The old release's router after a routed rollout (lib/engine/rbg-router-scale.ts): literal route
 * steps, routes and Deployments in, literal scale actions and statuses out.
 */
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { routerScaleStep, type ObservedRouterDeployment } from '../../lib/engine/rbg-router-scale';
import type { RouterStep } from '../../lib/engine/rbg-router-step';
import type { JsonObject } from '../../lib/spec/read';

const ROUTE = 'g-pd-router';
const OLD = `${ROUTE}-aaaaaaaaaa`;
const NEW = `${ROUTE}-bbbbbbbbbb`;
const complete = { phase: 'Complete' } as CoordinationStatus;
const progressing = { phase: 'Progressing' } as CoordinationStatus;

/** The route as read: old and new routers with these weights. */
function route(oldWeight: number, newWeight: number): JsonObject {
  return { metadata: { name: ROUTE }, spec: { rules: [{ backendRefs: [{ name: OLD, port: 30000, weight: oldWeight }, { name: NEW, port: 30000, weight: newWeight }] }] } };
}

/** The route step's decision: old and new weights, removeOld, and an action when they differ from `read`. */
function routed(oldWeight: number, newWeight: number, removeOld: boolean, read?: [number, number]): RouterStep {
  const status = {
    route: ROUTE,
    removeOld,
    releases: [
      { revision: 'aaaaaaaaaa', service: OLD, weight: oldWeight, current: false },
      { revision: 'bbbbbbbbbb', service: NEW, weight: newWeight, current: true },
    ],
  };
  if (!read || (read[0] === oldWeight && read[1] === newWeight)) return { status };
  const event = { type: 'Normal' as const, reason: 'RouterWeights', message: 'm' };
  return { status, action: { type: 'setRouterWeights', rule: 'pd', route: ROUTE, backends: [{ name: OLD, weight: oldWeight }, { name: NEW, weight: newWeight }], event } };
}

function deployments(...ds: [string, number, number, boolean?][]): Map<string, ObservedRouterDeployment> {
  return new Map(ds.map(([name, replicas, readyReplicas, observed]) => [name, { name, replicas, readyReplicas, observed: observed ?? true }]));
}

describe('routerScaleStep', () => {
  test('scales the old router to 0 once the rollout is Complete and the route as read sends it 0, recording its replicas', () => {
    const step = routerScaleStep('pd', complete, routed(0, 100, true), route(0, 100), deployments([OLD, 2, 2], [NEW, 1, 1]));
    expect(step.before).toEqual([]);
    expect(step.after).toEqual([
      { type: 'scaleRouter', rule: 'pd', deployment: OLD, from: 2, replicas: 0, event: { type: 'Normal', reason: 'RouterScaled', message: `pd: router ${OLD} of old release aaaaaaaaaa scaled to 0 (was 2): the rollout is complete and the route sends it nothing` } },
    ]);
    expect(step.status.scaledDown).toEqual([{ deployment: OLD, replicas: 2 }]);
    expect(step.routeAction).toBeUndefined();
  });

  test('does not scale while the route as read still sends the old router a share (the 0 is written this pass)', () => {
    const step = routerScaleStep('pd', complete, routed(0, 100, true, [25, 75]), route(25, 75), deployments([OLD, 1, 1], [NEW, 1, 1]));
    expect([step.before, step.after, step.status.scaledDown]).toEqual([[], [], undefined]);
    expect(step.routeAction?.backends).toEqual([{ name: OLD, weight: 0 }, { name: NEW, weight: 100 }]);
  });

  test('does not scale before the rollout is Complete, nor while the old router may not go', () => {
    expect(routerScaleStep('pd', progressing, routed(0, 100, true), route(0, 100), deployments([OLD, 1, 1], [NEW, 1, 1])).after).toEqual([]);
    expect(routerScaleStep('pd', complete, routed(0, 100, false), route(0, 100), deployments([OLD, 1, 1], [NEW, 1, 1])).after).toEqual([]);
  });

  test('scales nothing the executor did not find under the backend\'s name with the router labels', () => {
    const step = routerScaleStep('pd', complete, routed(0, 100, true), route(0, 100), deployments([NEW, 1, 1]));
    expect([step.before, step.after, step.status.scaledDown]).toEqual([[], [], undefined]);
  });

  test('once scaled down, writes nothing more and keeps the record', () => {
    const step = routerScaleStep('pd', complete, routed(0, 100, true), route(0, 100), deployments([OLD, 0, 0], [NEW, 1, 1]), [{ deployment: OLD, replicas: 2 }]);
    expect([step.before, step.after, step.status.scaledDown]).toEqual([[], [], [{ deployment: OLD, replicas: 2 }]]);
  });

  test('drops the record of a router no longer on the route', () => {
    const step = routerScaleStep('pd', complete, routed(0, 100, true), route(0, 100), deployments([OLD, 1, 1], [NEW, 1, 1]), [{ deployment: `${ROUTE}-cccccccccc`, replicas: 3 }]);
    expect(step.status.scaledDown).toEqual([{ deployment: OLD, replicas: 1 }]);
  });

  test('before weight moves to a scaled-down router, scales it back to its recorded replicas and holds the route until it is ready', () => {
    // A rollout back to the old release: its router is to take 25 (here the "old" backend gains).
    const decided = routed(25, 75, false, [0, 100]);
    const start = routerScaleStep('pd', progressing, decided, route(0, 100), deployments([OLD, 0, 0], [NEW, 1, 1]), [{ deployment: OLD, replicas: 2 }]);
    expect(start.before).toEqual([
      { type: 'scaleRouter', rule: 'pd', deployment: OLD, from: 0, replicas: 2, event: { type: 'Normal', reason: 'RouterScaled', message: `pd: router ${OLD} scaled back to 2 before the route sends release aaaaaaaaaa traffic` } },
    ]);
    expect(start.routeAction).toBeUndefined();
    expect(start.status.releases.map((r) => r.weight)).toEqual([0, 100]);
    expect(start.status.waitingForRouter).toEqual([OLD]);
    expect(start.status.scaledDown).toBeUndefined();

    // Scaled, one of two ready: held, nothing more to write.
    const starting = routerScaleStep('pd', progressing, decided, route(0, 100), deployments([OLD, 2, 1], [NEW, 1, 1]));
    expect([starting.before, starting.after, starting.routeAction, starting.status.waitingForRouter]).toEqual([[], [], undefined, [OLD]]);
    // Ready, but the controller has not observed the scale yet: still held.
    expect(routerScaleStep('pd', progressing, decided, route(0, 100), deployments([OLD, 2, 2, false], [NEW, 1, 1])).status.waitingForRouter).toEqual([OLD]);

    // Ready: the route moves.
    const ready = routerScaleStep('pd', progressing, decided, route(0, 100), deployments([OLD, 2, 2], [NEW, 1, 1]));
    expect([ready.before, ready.status.waitingForRouter]).toEqual([[], undefined]);
    expect(ready.routeAction?.backends).toEqual([{ name: OLD, weight: 25 }, { name: NEW, weight: 75 }]);
    expect(ready.status.releases.map((r) => r.weight)).toEqual([25, 75]);
  });

  test('a scaled-down router with no record comes back at 1 replica (what the construct renders)', () => {
    const step = routerScaleStep('pd', progressing, routed(100, 0, false, [0, 100]), route(0, 100), deployments([OLD, 0, 0], [NEW, 1, 1]));
    expect(step.before.map((a) => [a.deployment, a.from, a.replicas])).toEqual([[OLD, 0, 1]]);
  });

  test('holds the new release\'s weight while its own router is not ready (a freshly rendered router)', () => {
    const step = routerScaleStep('pd', progressing, routed(75, 25, false, [100, 0]), route(100, 0), deployments([OLD, 1, 1], [NEW, 1, 0]));
    expect([step.before, step.routeAction, step.status.waitingForRouter]).toEqual([[], undefined, [NEW]]);
    expect(step.status.releases.map((r) => r.weight)).toEqual([100, 0]);
  });
});
