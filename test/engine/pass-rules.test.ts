/**
 * The rules around one reconcile pass (lib/engine/pass-rules.ts): what may wait in memory, when a
 * service next needs attention, which Serve config a PUT carries, in-place config changes, spent
 * steering and a traffic step's due time.
 */
import { RayServiceAction } from '../../lib/engine/actions';
import {
  ROUTE_CONFIRMATION_GRACE_MS,
  finalizationActions,
  inPlaceServeConfig,
  isOnlyConfirmation,
  nextAttentionAt,
  serveConfigForCapacity,
  statusWrite,
  trafficStepDueAt,
} from '../../lib/engine/pass-rules';
import { RayServiceDecision } from '../../lib/engine/rayservice-engine';
import { RayServiceStatus } from '../../lib/engine/status';
import { MIGRATING, NOW } from './pass-fixtures';

const SHIFT: RayServiceAction = { type: 'setTrafficWeights', activeCluster: 'a', active: 25, pendingCluster: 'b', pending: 75 };
const CAPACITY: RayServiceAction = { type: 'setTargetCapacity', cluster: 'active', clusterName: 'a', percent: 50 };
const decision = (status: RayServiceStatus, actions: RayServiceAction[] = [], nextStepAt?: number): RayServiceDecision => ({ status, actions, events: [], ...(nextStepAt !== undefined ? { nextStepAt } : {}) });
const attention = { now: NOW, intervalMs: 30_000, held: false, watchDriven: true, pollMs: 1_000 };

describe('isOnlyConfirmation', () => {
  test('a stamped confirmation while the interval runs may wait in memory', () => {
    const next = { ...MIGRATING, reason: 'WaitingForInterval' as const, trafficConfirmed: true, lastTrafficMigratedTime: NOW, lastProgressTime: NOW, nextStepAt: NOW + 30_000 };
    expect(isOnlyConfirmation(MIGRATING, next, NOW)).toBe(true);
  });
  test('any other change (weights, capacity) must be written', () => {
    const next = { ...MIGRATING, reason: 'WaitingForInterval' as const, pendingWeight: 75, activeWeight: 25 };
    expect(isOnlyConfirmation(MIGRATING, next, NOW)).toBe(false);
  });
  test('a route wait may wait only within the grace after the step', () => {
    const next = { ...MIGRATING, reason: 'WaitingForRoute' as const };
    expect(isOnlyConfirmation(MIGRATING, next, NOW)).toBe(true);
    expect(isOnlyConfirmation(MIGRATING, next, (MIGRATING.lastProgressTime ?? 0) + ROUTE_CONFIRMATION_GRACE_MS)).toBe(false);
  });
  test('with no upgrade in flight nothing waits', () => {
    const idle = { ...MIGRATING, pendingClusterName: undefined, reason: 'WaitingForInterval' as const };
    expect(isOnlyConfirmation(MIGRATING, idle, NOW)).toBe(false);
  });
});

describe('statusWrite', () => {
  const confirmed = { ...MIGRATING, reason: 'WaitingForInterval' as const, trafficConfirmed: true, lastTrafficMigratedTime: NOW, lastProgressTime: NOW, nextStepAt: NOW + 30_000 };
  test.each([
    ['a confirmation over this process\'s own status, no action', decision(confirmed), MIGRATING, true, 'hold'],
    ['the stored status another process (or an earlier run) wrote', decision(confirmed), MIGRATING, false, 'write'],
    ['a confirmation with an action to carry out', decision(confirmed, [CAPACITY]), MIGRATING, true, 'write'],
    ['no stored status yet', decision(confirmed), undefined, true, 'write'],
    ['a change beyond the confirmation', decision({ ...confirmed, pendingWeight: 75, activeWeight: 25 }), MIGRATING, true, 'write'],
  ] as const)('%s', (_what, d, stored, own, expected) => {
    expect(statusWrite(d, stored, own, NOW)).toBe(expected);
  });
});

describe('finalizationActions', () => {
  test('with an upgrade in flight, every request goes back to the active cluster', () => {
    expect(finalizationActions(MIGRATING)).toEqual([{ type: 'setTrafficWeights', activeCluster: 'a', active: 100, pending: 0 }]);
  });
  test('a service with one cluster, or none yet, needs nothing before its finalizer goes', () => {
    expect(finalizationActions({ ...MIGRATING, pendingClusterName: undefined })).toEqual([]);
    expect(finalizationActions({})).toEqual([]);
  });
});

describe('nextAttentionAt', () => {
  test('after actions whose effects are not all watched, at once', () => {
    expect(nextAttentionAt(decision(MIGRATING, [CAPACITY]), attention)).toBe(NOW);
    expect(nextAttentionAt(decision(MIGRATING, [SHIFT]), { ...attention, watchDriven: false })).toBe(NOW);
  });
  test('after a watched traffic step, the earlier of the due time and one interval after the grace', () => {
    expect(nextAttentionAt(decision(MIGRATING, [SHIFT]), attention)).toBe(NOW + ROUTE_CONFIRMATION_GRACE_MS + 30_000);
    expect(nextAttentionAt(decision(MIGRATING, [SHIFT], NOW + 2_000), attention)).toBe(NOW + 2_000);
  });
  test('while waiting on Serve (not watchable), one poll later unless the due time is sooner', () => {
    const waiting = { ...MIGRATING, reason: 'WaitingForCapacity' as const };
    expect(nextAttentionAt(decision(waiting), attention)).toBe(NOW + 1_000);
    expect(nextAttentionAt(decision(waiting, [], NOW + 500), attention)).toBe(NOW + 500);
  });
  test('a route wait held in memory wakes at the end of its grace; otherwise only the due time or an event', () => {
    const routeWait = { ...MIGRATING, reason: 'WaitingForRoute' as const };
    expect(nextAttentionAt(decision(routeWait), { ...attention, held: true })).toBe((MIGRATING.lastProgressTime ?? 0) + ROUTE_CONFIRMATION_GRACE_MS);
    expect(nextAttentionAt(decision(routeWait), attention)).toBeUndefined();
    expect(nextAttentionAt(decision({ ...MIGRATING, reason: 'WaitingForInterval' }, [], NOW + 30_000), attention)).toBe(NOW + 30_000);
  });
  test('a driver without watches (Pulumi) polls a route wait: no event would wake it', () => {
    // The consumer test's `pulumi up` once slept from the route wait to its deadline (the progress deadline was the only wake-up).
    const routeWait = { ...MIGRATING, reason: 'WaitingForRoute' as const };
    expect(nextAttentionAt(decision(routeWait, [], NOW + 600_000), { ...attention, watchDriven: false })).toBe(NOW + 1_000);
    expect(nextAttentionAt(decision(routeWait, [], NOW + 600_000), attention)).toBe(NOW + 600_000);
  });
  test('a held change of the replicas shown wakes the service at its due time, unless something else comes first', () => {
    const running = { ...MIGRATING, reason: 'WaitingForInterval' as const };
    expect(nextAttentionAt(decision(running), { ...attention, replicasDueAt: NOW + 4_000 })).toBe(NOW + 4_000);
    expect(nextAttentionAt(decision(running, [], NOW + 30_000), { ...attention, replicasDueAt: NOW + 4_000 })).toBe(NOW + 4_000);
    expect(nextAttentionAt(decision(running, [], NOW + 2_000), { ...attention, replicasDueAt: NOW + 4_000 })).toBe(NOW + 2_000);
  });
});

describe('trafficStepDueAt', () => {
  test('one interval after the previous traffic move', () => {
    expect(trafficStepDueAt(MIGRATING, [CAPACITY, SHIFT], 30_000)).toBe(NOW - 10_000 + 30_000);
  });
  test('none without a weight change, without a previous move, or when the weights stay', () => {
    expect(trafficStepDueAt(MIGRATING, [CAPACITY], 30_000)).toBeUndefined();
    expect(trafficStepDueAt({ ...MIGRATING, lastTrafficMigratedTime: undefined }, [SHIFT], 30_000)).toBeUndefined();
    expect(trafficStepDueAt({ ...MIGRATING, pendingWeight: 75 }, [SHIFT], 30_000)).toBeUndefined();
    expect(trafficStepDueAt(undefined, [SHIFT], 30_000)).toBeUndefined();
  });
});

describe('Serve configs', () => {
  test('the active cluster keeps the config it serves while another takes over; others get the spec', () => {
    expect(serveConfigForCapacity(CAPACITY as never, MIGRATING, 'old', 'new')).toBe('old');
    expect(serveConfigForCapacity({ ...CAPACITY, cluster: 'pending', clusterName: 'b' } as never, MIGRATING, 'old', 'new')).toBe('new');
    expect(serveConfigForCapacity(CAPACITY as never, { ...MIGRATING, pendingClusterName: undefined }, 'old', 'new')).toBe('new');
    expect(serveConfigForCapacity(CAPACITY as never, MIGRATING, undefined, 'new')).toBe('new');
  });

  const SERVING: RayServiceStatus = { ...MIGRATING, phase: 'Running', reason: 'Promoted', pendingClusterName: undefined, activeTargetCapacity: 100, activeWeight: 100, pendingWeight: 0 };
  const ready = { headReady: true, targetCapacity: 100, appliedConfig: 'old' };
  test('a config change alone is PUT in place to the serving cluster at its capacity', () => {
    expect(inPlaceServeConfig(decision(SERVING), 'h1', ready, 'new')).toEqual({ cluster: 'a', config: 'new', percent: 100 });
  });
  test('not during an upgrade, not with other actions, not for a rejected spec, not before Serve answers, not when applied', () => {
    expect(inPlaceServeConfig(decision(MIGRATING), 'h1', ready, 'new')).toBeUndefined();
    expect(inPlaceServeConfig(decision(SERVING, [CAPACITY]), 'h1', ready, 'new')).toBeUndefined();
    expect(inPlaceServeConfig(decision({ ...SERVING, rejectedSpecHash: 'h1' }), 'h1', ready, 'new')).toBeUndefined();
    expect(inPlaceServeConfig(decision(SERVING), 'h1', { ...ready, targetCapacity: undefined }, 'new')).toBeUndefined();
    expect(inPlaceServeConfig(decision(SERVING), 'h1', { ...ready, headReady: false }, 'new')).toBeUndefined();
    expect(inPlaceServeConfig(decision(SERVING), 'h1', { ...ready, appliedConfig: 'new' }, 'new')).toBeUndefined();
    expect(inPlaceServeConfig(decision(SERVING), 'h1', undefined, 'new')).toBeUndefined();
  });
});
