/**
 * Which replicas a rollback round returns on a workload with ordinals (lib/engine/rbg-ordered-return.ts):
 * deleted below the round's partition, reverted in place from it up to `revertBelow` where the
 * workload keeps them there, a Ready one only within the role's maxUnavailable.
 */
import { orderedReturn, type OrderedReplica } from '../../lib/engine/rbg-ordered-return';

/** `spec` per ordinal: `A` abandoned and Ready, `a` abandoned and not ready, `C`/`c` likewise on the current revision, `t` terminating, `-` none. */
function replicas(spec: string, role = 'pd-decode'): OrderedReplica[] {
  return [...spec].flatMap((s, ordinal) =>
    s === '-' ? [] : [{ name: `${role}-${ordinal}`, ordinal, abandoned: s === 'A' || s === 'a' || s === 't', ready: s === 'A' || s === 'C', terminating: s === 't' }],
  );
}

test('a round at partition 3 of 4: the abandoned replicas below ordinal 3 are deleted, in ordinal order; the one at 3 stays', () => {
  expect(orderedReturn(replicas('ACAA').reverse(), 4, { below: 3, maxUnavailable: 2 }, true)).toEqual({ remove: ['pd-decode-0', 'pd-decode-2'], revert: [] });
});

test('a partition capped below replicas (RBG v0.8): ordinals from the partition up to revertBelow are reverted, only on a paused RoleInstanceSet', () => {
  expect(orderedReturn(replicas('AAAA'), 4, { below: 1, revertBelow: 3, maxUnavailable: 3 }, true)).toEqual({ remove: ['pd-decode-0'], revert: ['pd-decode-1', 'pd-decode-2'] });
  expect(orderedReturn(replicas('AAAA'), 4, { below: 1, revertBelow: 3, maxUnavailable: 3 }, false)).toEqual({ remove: ['pd-decode-0'], revert: [] });
});

test('nothing on the abandoned revision below the partition: nothing returned', () => {
  expect(orderedReturn(replicas('CCCCAA'), 6, { below: 4, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
  expect(orderedReturn([], 4, { below: 2, revertBelow: 4, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
});

test('a replica being deleted is on its way back: not returned again', () => {
  expect(orderedReturn(replicas('tA'), 2, { below: 1, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
});

test('Ready replicas are returned one maxUnavailable at a time; not-ready ones for free, first, and they leave the room to Ready ones', () => {
  // maxUnavailable 1, partition 4 of 4: ordinals 2 and 3 both Ready on the abandoned revision.
  expect(orderedReturn(replicas('CCAA'), 4, { below: 4, maxUnavailable: 1 }, true)).toEqual({ remove: ['pd-decode-2'], revert: [] });
  // maxUnavailable 2: both.
  expect(orderedReturn(replicas('CCAA'), 4, { below: 4, maxUnavailable: 2 }, true)).toEqual({ remove: ['pd-decode-2', 'pd-decode-3'], revert: [] });
  // Ordinal 1 not ready on the abandoned revision (the failure itself): down already, returned for free, and ordinal 2 beside it.
  expect(orderedReturn(replicas('CaAA'), 4, { below: 4, maxUnavailable: 1 }, true)).toEqual({ remove: ['pd-decode-1', 'pd-decode-2'], revert: [] });
  // Ordinal 0 on the current revision but not ready (returned by an earlier pass, starting): no room for a Ready one.
  expect(orderedReturn(replicas('cCAA'), 4, { below: 4, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
  // An ordinal without a replica (deleted, not recreated yet) is down too.
  expect(orderedReturn(replicas('-CAA'), 4, { below: 4, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
  // maxUnavailable 0 is read as 1, as RBG's workloads read it.
  expect(orderedReturn(replicas('CCAA'), 4, { below: 4, maxUnavailable: 0 }, true)).toEqual({ remove: ['pd-decode-2'], revert: [] });
});

test('a revert in place takes its replica down too: the removes spend the room first', () => {
  expect(orderedReturn(replicas('AA'), 2, { below: 1, revertBelow: 2, maxUnavailable: 1 }, true)).toEqual({ remove: ['pd-decode-0'], revert: [] });
  expect(orderedReturn(replicas('CA'), 2, { below: 1, revertBelow: 2, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: ['pd-decode-1'] });
  expect(orderedReturn(replicas('cA'), 2, { below: 1, revertBelow: 2, maxUnavailable: 1 }, true)).toEqual({ remove: [], revert: [] });
});

test('cluster-rbg-rollback-faults, RBG v0.6.0: the StatefulSet controller, its cache stale after the API server restarted, recreated prefill-2 and -3 on the abandoned revision; they come back one at a time', () => {
  const step = (spec: string) => orderedReturn(replicas(spec, 'pd-prefill'), 4, { below: 4, maxUnavailable: 1 }, true).remove;
  // Each pass as the list shows the Pods; returned 2 Ready Pods at once before (2 down under maxUnavailable 1).
  expect(['CCAA', 'CCtA', 'CC-A', 'CCcA', 'CCCA', 'CCCt', 'CCC-', 'CCCc', 'CCCC'].map(step)).toEqual([['pd-prefill-2'], [], [], [], ['pd-prefill-3'], [], [], [], []]);
});
