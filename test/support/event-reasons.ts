/**
 * The reasons of the Events about one object, read from a watch. Test support, not the package's API.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes } from '../../lib/runtime/kube/types';

/** How long `eventReasons` waits before it fails naming what it saw: a bound for a hung test, not a window (a loaded machine's rollout took 61 s where a 30 s window had ended it). */
const GIVE_UP_MS = 300_000;

/**
 * Reasons of the Events in `namespace` about object `name`, in arrival order, once all of `expected`
 * were seen through a watch; fails after GIVE_UP_MS naming the ones seen.
 */
export function eventReasons(client: KubeClient, namespace: string, name: string, expected: readonly string[]): Promise<string[]> {
  const seen: string[] = [];
  return new Promise((resolve, reject) => {
    const end = (settle: () => void) => {
      clearTimeout(timer);
      informer.stop();
      settle();
    };
    const timer = setTimeout(() => end(() => reject(new Error(`Events about ${namespace}/${name}: waited ${GIVE_UP_MS / 1000} s for ${expected.join(', ')}; saw ${seen.join(', ') || 'none'}`))), GIVE_UP_MS);
    const informer = client.watch(KnownTypes.Event, namespace, (e) => {
      if (e.type !== 'add' || (e.object.regarding as { name?: string }).name !== name) return;
      seen.push(String(e.object.reason));
      if (expected.every((r) => seen.includes(r))) end(() => resolve(seen));
    });
  });
}
