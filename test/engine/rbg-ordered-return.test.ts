/**
 * Which replicas a rollback round returns on a workload with ordinals (lib/engine/rbg-ordered-return.ts):
 * deleted below the round's partition, reverted in place from it up to `revertBelow` where the
 * workload keeps them there.
 */
import { orderedReturn } from '../../lib/engine/rbg-ordered-return';

const at = (...ordinals: number[]) => ordinals.map((ordinal) => ({ name: `pd-decode-${ordinal}`, ordinal }));

test('a round at partition 3 of 4: the abandoned replicas below ordinal 3 are deleted, in ordinal order; the one at 3 stays', () => {
  expect(orderedReturn(at(3, 2, 0), { below: 3 }, true)).toEqual({ remove: ['pd-decode-0', 'pd-decode-2'], revert: [] });
});

test('a partition capped below replicas (RBG v0.8): ordinals from the partition up to revertBelow are reverted, only on a paused RoleInstanceSet', () => {
  expect(orderedReturn(at(0, 1, 2, 3), { below: 1, revertBelow: 3 }, true)).toEqual({ remove: ['pd-decode-0'], revert: ['pd-decode-1', 'pd-decode-2'] });
  expect(orderedReturn(at(0, 1, 2, 3), { below: 1, revertBelow: 3 }, false)).toEqual({ remove: ['pd-decode-0'], revert: [] });
});

test('nothing on the abandoned revision below the partition: nothing returned', () => {
  expect(orderedReturn(at(4, 5), { below: 4 }, true)).toEqual({ remove: [], revert: [] });
  expect(orderedReturn([], { below: 2, revertBelow: 4 }, true)).toEqual({ remove: [], revert: [] });
});
