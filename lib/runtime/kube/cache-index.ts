/**
 * The indexes of an informer's cache: its objects' keys by namespace and by each label (key and
 * value) within a namespace, so that listing by label costs the objects that carry the label, not
 * every object of the type. An operator's passes list RayClusters, EndpointSlices and head Pods by
 * label on every pass; with a hundred services in one namespace, scanning the whole cache for each
 * list made the informer code the fastest-growing cause in the operator's CPU profile (docs/bench.md).
 */
import type { KubeObject } from './types';

/** True when `o` carries every label of `labels`. */
export function hasLabels(o: KubeObject, labels: Readonly<Record<string, string>>): boolean {
  const own = o.metadata.labels ?? {};
  for (const k in labels) if (own[k] !== labels[k]) return false;
  return true;
}

const NONE: ReadonlySet<string> = new Set();

/** See the file comment. */
export class CacheIndex {
  readonly #sets = new Map<string, Set<string>>();

  /** Indexes the object cached under `key`. */
  add(key: string, obj: KubeObject): void {
    for (const entry of entriesOf(obj)) {
      let set = this.#sets.get(entry);
      if (!set) this.#sets.set(entry, (set = new Set()));
      set.add(key);
    }
  }

  /** Forgets the object cached under `key` (as it was indexed). */
  remove(key: string, obj: KubeObject): void {
    for (const entry of entriesOf(obj)) {
      const set = this.#sets.get(entry);
      if (!set) continue;
      set.delete(key);
      if (set.size === 0) this.#sets.delete(entry);
    }
  }

  /** Forgets every object. */
  clear(): void {
    this.#sets.clear();
  }

  /**
   * The keys of the objects of `namespace` that may carry `labels`: those carrying the rarest of
   * them, or every object of the namespace without labels. The caller checks the other labels.
   */
  candidates(namespace: string, labels: Readonly<Record<string, string>> = {}): ReadonlySet<string> {
    let best = this.#sets.get(namespaceEntry(namespace)) ?? NONE;
    for (const k in labels) {
      const set = this.#sets.get(labelEntry(namespace, k, labels[k])) ?? NONE;
      if (set.size < best.size) best = set;
      if (best.size === 0) break;
    }
    return best;
  }
}

function namespaceEntry(namespace: string): string {
  return namespace;
}

/** NUL cannot occur in a namespace, a label key or a label value. */
function labelEntry(namespace: string, key: string, value: string): string {
  return `${namespace}\u0000${key}\u0000${value}`;
}

function entriesOf(obj: KubeObject): string[] {
  const namespace = obj.metadata.namespace ?? '';
  const labels = obj.metadata.labels ?? {};
  return [namespaceEntry(namespace), ...Object.keys(labels).map((k) => labelEntry(namespace, k, labels[k]))];
}
