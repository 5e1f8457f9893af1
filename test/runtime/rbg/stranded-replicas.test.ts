/**
 * When the executor lists a RoleInstanceSet's instances to replace stranded ones
 * (lib/runtime/rbg/stranded-replicas.ts `mayStrand`): a stateful set on one revision with fewer
 * replicas updated, never a Stateless one (it updates them itself when unpaused, and has no ordinals).
 */
import type { KubeObject } from '../../../lib/runtime/kube/types';
import { mayStrand } from '../../../lib/runtime/rbg/stranded-replicas';

const set = (annotations: Record<string, string>): KubeObject => ({
  apiVersion: 'workloads.x-k8s.io/v1alpha2',
  kind: 'RoleInstanceSet',
  metadata: { name: 'rv-w', namespace: 'llm', uid: 'ris', annotations },
  spec: { replicas: 3, updateStrategy: { partition: 2 } },
  status: { observedGeneration: 2, currentRevision: 'rv-w-v1', updateRevision: 'rv-w-v1', updatedReplicas: 2, readyReplicas: 3 },
});

test('a Stateful RoleInstanceSet on one revision with 2 of 3 updated may strand its third replica', () => {
  expect(mayStrand(set({ 'rbg.workloads.x-k8s.io/role-instance-pattern': 'Stateful' }))).toBe(true);
  expect(mayStrand(set({}))).toBe(true);
});

test('a Stateless one in the same state does not: nothing is listed by ordinal', () => {
  expect(mayStrand(set({ 'rbg.workloads.x-k8s.io/role-instance-pattern': 'Stateless' }))).toBe(false);
});
