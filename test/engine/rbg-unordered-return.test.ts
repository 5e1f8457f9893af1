/**
 * Which replicas a rollback round returns on a Stateless RoleInstanceSet (lib/engine/rbg-unordered-return.ts):
 * by revision and readiness, never by ordinal (its instances are `<set>-<random>`).
 */
import { unorderedReturn, type UnorderedReplica } from '../../lib/engine/rbg-unordered-return';

const r = (name: string, abandoned: boolean, ready = true, terminating = false): UnorderedReplica => ({ name, abandoned, ready, terminating });

test('4 replicas, 2 on the abandoned revision, round at partition 3: one returns, the first by name of the ready ones', () => {
  expect(unorderedReturn([r('pd-prefill-x7k2q', true), r('pd-prefill-b4n9z', true), r('pd-prefill-qq2zt', false), r('pd-prefill-m5w8c', false)], 4, { below: 3, maxUnavailable: 1 }, true)).toEqual({
    remove: ['pd-prefill-b4n9z'],
    revert: [],
  });
});

test('a not-ready abandoned instance goes first (it costs no availability), whatever its name', () => {
  expect(unorderedReturn([r('a', true), r('z', true, false), r('m', true)], 3, { below: 1, maxUnavailable: 1 }, true)).toEqual({ remove: ['z'], revert: [] });
});

test('partition at replicas: every live abandoned instance returns', () => {
  expect(unorderedReturn([r('c', true), r('a', true, false), r('b', true)], 3, { below: 3, maxUnavailable: 2 }, true)).toEqual({ remove: ['a', 'b', 'c'], revert: [] });
  // Under maxUnavailable 1, the not-ready one for free and one Ready one; 'c' waits for a later pass.
  expect(unorderedReturn([r('c', true), r('a', true, false), r('b', true)], 3, { below: 3, maxUnavailable: 1 }, true)).toEqual({ remove: ['a', 'b'], revert: [] });
});

test('an instance being deleted is on its way back: a pass run again before the set refilled it returns no more', () => {
  // 4 replicas, round at 3, 'b' deleted by the previous pass and still terminating, 'c' stays on the abandoned revision.
  expect(unorderedReturn([r('b', true, false, true), r('c', true)], 4, { below: 3, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
  // …and after the set deleted it (3 instances listed, the fourth not created yet): still none.
  expect(unorderedReturn([r('c', true)], 4, { below: 3, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
});

test('instances on the previous revision are never chosen', () => {
  expect(unorderedReturn([r('a', false, false), r('b', false), r('c', true)], 3, { below: 2, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
  expect(unorderedReturn([r('a', false, false), r('b', false), r('c', true)], 3, { below: 3, maxUnavailable: 2 }, true)).toEqual({ remove: ['c'], revert: [] });
});

test('a partition capped below replicas (RBG v0.8): 2 of 2 abandoned, written 1, round 2: one deleted, one reverted in place', () => {
  expect(unorderedReturn([r('d-k2', true), r('d-a9', true)], 2, { below: 1, revertBelow: 2, maxUnavailable: 2 }, true)).toEqual({ remove: ['d-a9'], revert: ['d-k2'] });
  // Under maxUnavailable 1 the revert waits until the deleted one is back.
  expect(unorderedReturn([r('d-k2', true), r('d-a9', true)], 2, { below: 1, revertBelow: 2, maxUnavailable: 1 }, true)).toEqual({ remove: ['d-a9'], revert: [] });
  // Unpaused, the set would update a reverted instance forward again: none is reverted.
  expect(unorderedReturn([r('d-k2', true), r('d-a9', true)], 2, { below: 1, revertBelow: 2, maxUnavailable: 1 }, false)).toEqual({ remove: ['d-a9'], revert: [] });
});

test('nothing to return once no more than desired − partition stay on the abandoned revision', () => {
  expect(unorderedReturn([r('a', true), r('b', true)], 6, { below: 4, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
});

test('a Ready instance is returned only within maxUnavailable, counting every instance down, whatever its revision', () => {
  // 'a' on the previous revision but not ready (returned by an earlier pass, starting): under maxUnavailable 1, 'c' waits.
  expect(unorderedReturn([r('a', false, false), r('b', false), r('c', true)], 3, { below: 3, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
  // An instance missing (deleted, not yet refilled) is down too.
  expect(unorderedReturn([r('b', false), r('c', true)], 3, { below: 3, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
  // Once back and Ready: 'c' goes.
  expect(unorderedReturn([r('a', false), r('b', false), r('c', true)], 3, { below: 3, maxUnavailable: 1 }, true)).toEqual({ remove: ['c'], revert: [] });
});
