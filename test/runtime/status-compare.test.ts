/**
 * Comparing a rendered RayService status with the stored one (lib/runtime/rayservice/status.ts):
 * what counts as unchanged, what counts as the same but for the Serve replicas shown (a change of
 * only those is written at most once per refresh), and the stored write time the refresh counts from.
 */
import { lastUpdateTimeOf, sameStatus, sameStatusButServeReplicas, serveReplicasDiffer } from '../../lib/runtime/rayservice/status';

const STORED = {
  phase: 'Upgrading',
  lastUpdateTime: '2026-01-01T00:00:00.000Z',
  activeServiceStatus: { rayClusterName: 'a', targetCapacity: 100, trafficRoutedPercent: 75, readyReplicas: 4, targetReplicas: 4 },
  pendingServiceStatus: { rayClusterName: 'b', targetCapacity: 50, trafficRoutedPercent: 25, readyReplicas: 2, targetReplicas: 2 },
};

test('key order and lastUpdateTime do not make a status differ', () => {
  const reordered = { pendingServiceStatus: STORED.pendingServiceStatus, activeServiceStatus: STORED.activeServiceStatus, phase: 'Upgrading', lastUpdateTime: '2026-01-01T00:09:00.000Z' };
  expect(sameStatus(STORED, reordered)).toBe(true);
  expect(sameStatusButServeReplicas(STORED, reordered)).toBe(true);
});

test('a change of either side\'s ready or target replicas, or a side\'s replicas appearing, is the same status but for the replicas shown', () => {
  const fewerReady = { ...STORED, pendingServiceStatus: { ...STORED.pendingServiceStatus, readyReplicas: 1 } };
  expect(sameStatus(STORED, fewerReady)).toBe(false);
  expect(sameStatusButServeReplicas(STORED, fewerReady)).toBe(true);
  expect(sameStatusButServeReplicas(STORED, { ...STORED, activeServiceStatus: { ...STORED.activeServiceStatus, targetReplicas: 3 } })).toBe(true);
  const { readyReplicas: _r, targetReplicas: _t, ...pendingUnread } = STORED.pendingServiceStatus;
  expect(sameStatusButServeReplicas({ ...STORED, pendingServiceStatus: pendingUnread }, STORED)).toBe(true);
});

test('any other change, alone or beside the replicas, is not', () => {
  const weights = { ...STORED, activeServiceStatus: { ...STORED.activeServiceStatus, trafficRoutedPercent: 50, readyReplicas: 3 } };
  expect(sameStatusButServeReplicas(STORED, weights)).toBe(false);
  expect(sameStatusButServeReplicas(STORED, { ...STORED, phase: 'Running' })).toBe(false);
  expect(sameStatusButServeReplicas(STORED, { ...STORED, owner: { replica: 'rayshift-0' } })).toBe(false);
});

test('serveReplicasDiffer: either side\'s ready or target replicas changed, shown or no longer shown; nothing else counts', () => {
  expect(serveReplicasDiffer(STORED, { ...STORED, phase: 'Running', lastUpdateTime: 'later' })).toBe(false);
  expect(serveReplicasDiffer(STORED, { ...STORED, pendingServiceStatus: { ...STORED.pendingServiceStatus, readyReplicas: 1 } })).toBe(true);
  expect(serveReplicasDiffer(STORED, { ...STORED, activeServiceStatus: { ...STORED.activeServiceStatus, targetReplicas: 5 } })).toBe(true);
  // The pending head not ready: its replicas are no longer shown.
  const { readyReplicas: _r, targetReplicas: _t, ...pendingUnread } = STORED.pendingServiceStatus;
  expect(serveReplicasDiffer(STORED, { ...STORED, pendingServiceStatus: pendingUnread })).toBe(true);
  // Ready 1 of 2 on one side is not 2 of 1 on the other.
  expect(serveReplicasDiffer({ activeServiceStatus: { readyReplicas: 1, targetReplicas: 2 } }, { pendingServiceStatus: { readyReplicas: 1, targetReplicas: 2 } })).toBe(true);
});

test('the stored write time is lastUpdateTime in epoch ms; missing or malformed, it is unknown', () => {
  expect(lastUpdateTimeOf(STORED)).toBe(Date.UTC(2026, 0, 1));
  expect(lastUpdateTimeOf({})).toBeUndefined();
  expect(lastUpdateTimeOf({ lastUpdateTime: 'yesterday' })).toBeUndefined();
  expect(lastUpdateTimeOf({ lastUpdateTime: 1767225600000 })).toBeUndefined();
});
