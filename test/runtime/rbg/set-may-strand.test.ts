/**
 * What the executor reads of a RoleInstanceSet for `mayStrand` (lib/runtime/rbg/stranded-replicas.ts
 * `setMayStrand`): its pattern annotation, its revisions and counts, and `spec.replicas`.
 */
import type { KubeObject } from '../../../lib/runtime/kube/types';
import { setMayStrand } from '../../../lib/runtime/rbg/stranded-replicas';

const set = (annotations: Record<string, string>): KubeObject => ({
  apiVersion: 'workloads.x-k8s.io/v1alpha2',
  kind: 'RoleInstanceSet',
  metadata: { name: 'rv-w', namespace: 'llm', uid: 'ris', annotations },
  spec: { replicas: 3, updateStrategy: { partition: 2 } },
  status: { observedGeneration: 2, currentRevision: 'rv-w-v1', updateRevision: 'rv-w-v1', updatedReplicas: 2, readyReplicas: 3 },
});

test('a Stateful RoleInstanceSet (or one without the annotation) on one revision with 2 of 3 updated may strand its third replica', () => {
  expect(setMayStrand(set({ 'rbg.workloads.x-k8s.io/role-instance-pattern': 'Stateful' }))).toBe(true);
  expect(setMayStrand(set({}))).toBe(true);
});

test('a Stateless one in the same state does not', () => {
  expect(setMayStrand(set({ 'rbg.workloads.x-k8s.io/role-instance-pattern': 'Stateless' }))).toBe(false);
});
