/**
 * Where `rayshift status` reads the object it shows and how it follows the object's changes. Both
 * sources hand over the object as the Kubernetes API returns it, so one view renders both: the
 * kubeconfig source reads and watches the object itself; the API-server source
 * (`api-status-source.ts`) rebuilds it from the API's answers.
 */
import type { KubeClient } from '../runtime/kube/client';
import type { KubeObject, ResourceType } from '../runtime/kube/types';

/** What a followed object did. */
export interface FollowListener {
  /** It changed: its state now. */
  changed(obj: KubeObject): void;
  /** It was deleted. */
  deleted(): void;
  /** Following it failed for good. */
  failed(err: unknown): void;
}

/** One object to show and follow. */
export interface StatusSource {
  /** The object, or undefined when it does not exist. */
  read(): Promise<KubeObject | undefined>;
  /** Starts following the object (once `read` found it); the returned function stops. */
  follow(listener: FollowListener): () => Promise<void>;
  /** Releases connections. */
  close(): void;
}

/** The object `name` in `namespace` of the first of `types` that has it, read and watched through `client`. */
export function kubeStatusSource(client: KubeClient, types: readonly ResourceType[], namespace: string, name: string): StatusSource {
  let found = types[0];
  return {
    async read() {
      for (const type of types) {
        const obj = await client.tryGet(type, name, namespace);
        if (obj) {
          found = type;
          return obj;
        }
      }
      return undefined;
    },
    follow(listener) {
      const informer = client.watch(found, namespace, (e) => {
        if (e.object.metadata.name !== name) return;
        if (e.type === 'delete') listener.deleted();
        else listener.changed(e.object);
      }, { resyncIntervalMs: 0 });
      return () => informer.stop();
    },
    close: () => client.close(),
  };
}
