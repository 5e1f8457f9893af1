/** The v0.6.0 way-back Pod count: every replica down, and the replicas down apart from Pods another actor deleted during it. */
import type { KubeClient } from '../../lib/runtime/kube/client';
import type { InformerEvent } from '../../lib/runtime/kube/informer';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { watchStatefulSetPods } from './statefulset-pod-availability';

/** A Pod of role prefill at `ordinal`: Ready, being deleted (by a Foreground delete when `foreground`), or starting. */
function pod(ordinal: number, state: 'up' | 'starting' | { deletedForeground: boolean }): KubeObject {
  const deleting = typeof state === 'object';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `pd-prefill-${ordinal}`,
      namespace: 'default',
      ...(deleting ? { deletionTimestamp: '2026-11-30T22:00:00Z', ...(state.deletedForeground ? { finalizers: ['foregroundDeletion'] } : {}) } : {}),
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: state === 'up' || deleting ? 'True' : 'False' }] },
  };
}

function watched() {
  let handler: (e: InformerEvent) => void = () => undefined;
  const client = { watch: (_t: unknown, _ns: string, h: (e: InformerEvent) => void) => ((handler = h), { stop: () => undefined }) } as unknown as KubeClient;
  const pods = watchStatefulSetPods(client, 'default', 'pd', { prefill: 4 });
  const send = (object: KubeObject, type: InformerEvent['type'] = 'update') => handler({ type, object } as InformerEvent);
  for (let i = 0; i < 4; i++) send(pod(i, 'up'), 'add');
  return { pods, send };
}

test("a Pod rayshift deletes (Foreground) is charged; one another actor deletes on the way back is counted only among all, until it is up again", () => {
  const { pods, send } = watched();
  pods.from();
  send(pod(1, { deletedForeground: true }));
  send(pod(2, { deletedForeground: false }));
  expect(pods.worst().prefill).toEqual({ down: 2, at: '0:U 1:T 2:T* 3:U' });
  // The most is kept with the moment it first happened (prefill-1 alone down).
  expect(pods.worst({ exceptDeletedByOthers: true }).prefill).toEqual({ down: 1, at: '0:U 1:T 2:U 3:U' });
  // Gone, then replaced and starting: still the other actor's.
  send(pod(2, 'up'), 'delete');
  send(pod(2, 'starting'), 'add');
  expect(pods.worst({ exceptDeletedByOthers: true }).prefill.down).toBe(1);
  // Up again: the next deletion of that ordinal is judged on its own.
  send(pod(2, 'up'));
  send(pod(1, 'up'));
  send(pod(2, { deletedForeground: true }));
  send(pod(3, { deletedForeground: true }));
  expect(pods.worst({ exceptDeletedByOthers: true }).prefill).toEqual({ down: 2, at: '0:U 1:U 2:T 3:T' });
});

test('a replica down since before from() (the rollout deleted it) is charged, whoever deleted it', () => {
  const { pods, send } = watched();
  send(pod(3, { deletedForeground: false }));
  send(pod(3, 'starting'), 'add');
  pods.from();
  expect(pods.worst({ exceptDeletedByOthers: true }).prefill).toEqual({ down: 1, at: '0:U 1:U 2:U 3:S' });
});
