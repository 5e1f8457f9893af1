/** The warmup gate of a coordinated rollout (lib/engine/rbg-warmup.ts): create, wait, open, fail or proceed. */
import { WarmupGateInput, WarmupObservation, warmupGate } from '../../lib/engine/rbg-warmup';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const base: WarmupGateInput = { name: 'pd-warmup-1a2b3c4d', revision: '1a2b3c4d', onFailure: 'Fail', timeoutSeconds: 900, now: T0 };
const seen = (o: Partial<WarmupObservation>): WarmupObservation => ({ phase: 'Running', desired: 8, succeeded: 0, failed: 0, active: 0, ...o });

test('no warmup yet: create it, keep the gate closed, record WarmupStarted once, wake at the timeout', () => {
  const d = warmupGate(base);
  expect([d.create, d.open, d.status.phase, d.status.reason, d.status.message]).toEqual([true, false, 'Warming', 'WarmupCreated', 'warming images: creating RoleBasedGroupWarmup pd-warmup-1a2b3c4d']);
  expect(d.events.map((e) => e.reason)).toEqual(['WarmupStarted']);
  expect(d.wakeAt).toBe(T0 + 900_000);
  // Still missing on the next pass (a lost create race): created again, no second Event.
  const again = warmupGate({ ...base, previous: d.status, now: T0 + 1000 });
  expect([again.create, again.events, again.status.startedAt]).toEqual([true, [], d.status.startedAt]);
});

test('running: says exactly where it stands, in nodes', () => {
  const previous = warmupGate(base).status;
  const d = warmupGate({ ...base, previous, observed: seen({ succeeded: 3, active: 5 }), now: T0 + 5000 });
  expect([d.create, d.open, d.status.phase, d.status.message, d.status.succeeded, d.status.desired]).toEqual([false, false, 'Warming', 'warming images: 3/8 nodes', 3, 8]);
  expect(warmupGate({ ...base, previous, observed: seen({ phase: '', desired: 0 }) }).status.message).toBe('warming images: waiting for RBG to list the nodes');
  expect(warmupGate({ ...base, previous, observed: seen({ succeeded: 2, failed: 1 }) }).status.message).toBe('warming images: 2/8 nodes, 1 failed');
});

test('completed: the gate opens, once, and the verdict is kept for the revision even when the warmup is deleted later', () => {
  const previous = warmupGate(base).status;
  const d = warmupGate({ ...base, previous, observed: seen({ phase: 'Completed', succeeded: 8 }), now: T0 + 60_000 });
  expect([d.open, d.status.phase, d.status.message]).toEqual([true, 'Complete', 'images warm on 8/8 nodes']);
  expect(d.events.map((e) => [e.type, e.reason])).toEqual([['Normal', 'WarmupComplete']]);
  const later = warmupGate({ ...base, previous: d.status, observed: undefined, now: T0 + 3_600_000 });
  expect([later.open, later.create, later.events]).toEqual([true, false, []]);
});

test('RBG fails it: onFailure Fail holds the rollout with RBG\'s reason; Proceed opens the gate', () => {
  const previous = warmupGate(base).status;
  const observed = seen({ phase: 'Failed', succeeded: 6, failed: 2, message: '2 nodes failed (max tolerated: 0)' });
  const fail = warmupGate({ ...base, previous, observed });
  expect([fail.open, fail.status.phase, fail.status.reason]).toEqual([false, 'Failed', 'WarmupFailed']);
  expect(fail.status.message).toBe('RBG failed the warmup (2 nodes failed (max tolerated: 0)): warm on 6/8 nodes, 2 failed; the rollout is held before any partition moved (onFailure Fail); change the images or delete the warmup to try again');
  expect(fail.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'WarmupFailed']]);
  // The verdict holds on later passes.
  expect(warmupGate({ ...base, previous: fail.status, observed }).open).toBe(false);
  const proceed = warmupGate({ ...base, onFailure: 'Proceed', previous, observed });
  expect([proceed.open, proceed.status.phase]).toEqual([true, 'Proceeded']);
  expect(proceed.status.message).toMatch(/rolling out on cold nodes \(onFailure Proceed\)$/);
});

test('a failed warmup that was deleted is tried again; a new revision starts a new warmup', () => {
  const previous = warmupGate(base).status;
  const failed = warmupGate({ ...base, previous, observed: seen({ phase: 'Failed' }) }).status;
  const retry = warmupGate({ ...base, previous: failed, observed: undefined, now: T0 + 120_000 });
  expect([retry.create, retry.open, retry.status.phase, retry.status.startedAt]).toEqual([true, false, 'Warming', new Date(T0 + 120_000).toISOString()]);
  const next = warmupGate({ ...base, name: 'pd-warmup-99999999', revision: '99999999', previous: failed, observed: undefined });
  expect([next.create, next.status.revision]).toEqual([true, '99999999']);
});

test('rayshift\'s own timeout, counted from its first request: a warmup never started (no RBG v0.8 controller) fails at globalTimeoutSeconds', () => {
  const previous = warmupGate(base).status;
  const before = warmupGate({ ...base, previous, observed: seen({ phase: '', desired: 0 }), now: T0 + 899_999 });
  expect(before.status.phase).toBe('Warming');
  const after = warmupGate({ ...base, previous, observed: seen({ phase: '', desired: 0 }), now: T0 + 900_000 });
  expect([after.open, after.status.phase, after.status.reason]).toEqual([false, 'Failed', 'WarmupTimedOut']);
  expect(after.status.message).toMatch(/^not finished 900s after it was created \(globalTimeoutSeconds\): warm on 0\/0 nodes; the rollout is held/);
});
