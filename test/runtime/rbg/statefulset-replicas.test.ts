/** Reading a StatefulSet role's replicas from one Pod list read right after it (lib/runtime/rbg/statefulset-replicas.ts). */
import type { KubeClient } from '../../../lib/runtime/kube/client';
import { KnownTypes, KubeObject } from '../../../lib/runtime/kube/types';
import { readStatefulSetReplicas } from '../../../lib/runtime/rbg/statefulset-replicas';
import { STATEFUL_SET_TYPE } from '../../../lib/spec/object-names';

const sts = (updateRevision: string): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'pd-prefill', namespace: 'ns', uid: 'u1' },
  spec: { replicas: 2, selector: { matchLabels: { app: 'pd-prefill' } } },
  status: { currentRevision: 'r1', updateRevision },
});
const pod = (ordinal: number, revision: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `pd-prefill-${ordinal}`, labels: { 'controller-revision-hash': revision }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'pd-prefill', uid: 'u1', controller: true }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

/** A client stub that serves each read in turn and records the reads (the StatefulSet's, then its Pods'). */
function client(reads: { set: KubeObject | undefined; pods: KubeObject[] }[]): { client: KubeClient; calls: string[] } {
  const calls: string[] = [];
  let i = -1;
  const stub = {
    tryGet: async (type: { kind: string }) => (calls.push(`get ${type.kind}`), reads[++i].set),
    list: async (type: { kind: string }, opts: { labelSelector?: Record<string, string> }) => (calls.push(`list ${type.kind} ${JSON.stringify(opts.labelSelector)}`), { items: reads[i].pods }),
  };
  return { client: stub as unknown as KubeClient, calls };
}

test('reads the StatefulSet, then its Pods by its selector, once when every Pod is on one of its revisions', async () => {
  const { client: c, calls } = client([{ set: sts('r2'), pods: [pod(0, 'r1'), pod(1, 'r2')] }]);
  const read = await readStatefulSetReplicas(c, STATEFUL_SET_TYPE, 'pd-prefill', 'ns');
  expect(calls).toEqual(['get StatefulSet', `list ${KnownTypes.Pod.kind} {"app":"pd-prefill"}`]);
  expect(read?.replicas?.map((x) => x.revision)).toEqual(['current', 'update']);
});

test('a Pod on a revision the StatefulSet did not name: both are read once more, and the second read is the one counted', async () => {
  const { client: c, calls } = client([
    { set: sts('r2'), pods: [pod(0, 'r1'), pod(1, 'r3')] },
    { set: sts('r3'), pods: [pod(0, 'r1'), pod(1, 'r3')] },
  ]);
  const read = await readStatefulSetReplicas(c, STATEFUL_SET_TYPE, 'pd-prefill', 'ns');
  expect(calls).toHaveLength(4);
  expect(read?.replicas?.map((x) => x.revision)).toEqual(['current', 'update']);
});

test('a Pod still on another revision after the second read counts as `other`; no third read', async () => {
  const reads = [{ set: sts('r2'), pods: [pod(0, 'r9'), pod(1, 'r2')] }, { set: sts('r2'), pods: [pod(0, 'r9'), pod(1, 'r2')] }];
  const { client: c, calls } = client(reads);
  const read = await readStatefulSetReplicas(c, STATEFUL_SET_TYPE, 'pd-prefill', 'ns');
  expect(calls).toHaveLength(4);
  expect(read?.replicas?.map((x) => x.revision)).toEqual(['other', 'update']);
});

test('a StatefulSet that is gone reads as undefined', async () => {
  expect(await readStatefulSetReplicas(client([{ set: undefined, pods: [] }]).client, STATEFUL_SET_TYPE, 'pd-prefill', 'ns')).toBeUndefined();
});
