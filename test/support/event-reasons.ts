/**
 * The reasons of the Events about one object, read from a watch. Test support, not the package's API.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes } from '../../lib/runtime/kube/types';

/** Reasons of the Events in `namespace` about object `name`, once all of `expected` were seen through a watch (or after 30 s). */
export function eventReasons(client: KubeClient, namespace: string, name: string, expected: readonly string[]): Promise<string[]> {
  const seen: string[] = [];
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      informer.stop();
      resolve(seen);
    };
    const timer = setTimeout(done, 30_000);
    const informer = client.watch(KnownTypes.Event, namespace, (e) => {
      if (e.type !== 'add' || (e.object.regarding as { name?: string }).name !== name) return;
      seen.push(String(e.object.reason));
      if (expected.every((r) => seen.includes(r))) done();
    });
  });
}
