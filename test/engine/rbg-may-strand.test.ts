/**
 * When the executor lists a RoleInstanceSet's instances to replace stranded ones
 * (lib/engine/rbg-stranded.ts `mayStrand`): a stateful set on one revision with fewer replicas
 * updated, never a Stateless one (it updates them itself when unpaused, and has no ordinals).
 */
import { mayStrand } from '../../lib/engine/rbg-stranded';

const onOneRevision = { updateRevision: 'rv-w-v1', currentRevision: 'rv-w-v1', desired: 3 };

test('a stateful RoleInstanceSet on one revision with 2 of 3 updated may strand its third replica; with 3 of 3 it does not', () => {
  expect(mayStrand({ ...onOneRevision, stateless: false, updatedReplicas: 2 })).toBe(true);
  expect(mayStrand({ ...onOneRevision, stateless: false, updatedReplicas: 3 })).toBe(false);
});

test('a set still rolling between two revisions, or one that reports no count, does not', () => {
  expect(mayStrand({ ...onOneRevision, stateless: false, updateRevision: 'rv-w-v2', updatedReplicas: 2 })).toBe(false);
  expect(mayStrand({ ...onOneRevision, stateless: false })).toBe(false);
});

test('a Stateless one in the same state does not: nothing is listed by ordinal', () => {
  expect(mayStrand({ ...onOneRevision, stateless: true, updatedReplicas: 2 })).toBe(false);
});
