/**
 * Where a reconciler reads objects from: straight from the API server (`apiReader`), or from the
 * watch caches an operator keeps anyway (`CachedObjectReader`), which turns the dozens of GETs of
 * a pass into map look-ups. A cache lags behind the writes its own process makes, so the cached
 * reader also remembers what this process just wrote (and deleted) until the watch catches up:
 * a pass never acts on a state older than one it produced itself. An object written here and then
 * deleted by someone else is gone once the watch has read past the write (KubeRay deleting a
 * rayshift RayCluster it takes for its own: the operator must see it gone to make it again).
 */
import { KubeClient } from './client';
import { Informer } from './informer';
import { KubeObject, ResourceType } from './types';
import { hasLabels } from './cache-index';

/** Reads of a reconciler, plus the bookkeeping of its own writes. */
export interface ObjectReader {
  /** The object, or undefined when it does not exist. */
  tryGet(type: ResourceType, name: string, namespace: string): Promise<KubeObject | undefined>;
  /** Objects of `type` in `namespace` carrying every label of `labels`. */
  list(type: ResourceType, namespace: string, labels: Readonly<Record<string, string>>): Promise<KubeObject[]>;
  /** Records an object as the API server returned it after this process wrote it. */
  wrote(obj: KubeObject): void;
  /** Records that this process deleted the object. */
  deleted(type: ResourceType, name: string, namespace: string): void;
}

/** A reader that asks the API server every time (the CLI, the Pulumi provider, tests). */
export function apiReader(client: Pick<KubeClient, 'tryGet' | 'list'>): ObjectReader {
  return {
    tryGet: (type, name, namespace) => client.tryGet(type, name, namespace),
    list: async (type, namespace, labels) => (await client.list(type, { namespace, labelSelector: labels })).items,
    wrote: () => undefined,
    deleted: () => undefined,
  };
}

/** The part of an `Informer` the cached reader uses: its synced cache and how far its watch has read. */
export type CacheView = Pick<Informer, 'get' | 'list' | 'resourceVersion'>;

/** `apiVersion/kind` of a type or object. */
function typeKey(t: { apiVersion: string; kind: string }): string {
  return `${t.apiVersion}/${t.kind}`;
}

/** What this process last did to one object: wrote it (the object) or deleted it (null). */
interface OwnWrite {
  readonly object: KubeObject | null;
  /** The resourceVersion written (deletions: the last one seen); a cache at or past it is trusted again. */
  readonly resourceVersion?: string;
}

/**
 * resourceVersion `a` is newer than `b`. resourceVersions are opaque in the API, but
 * kube-apiserver's are etcd revisions (decimal integers), which is what makes "the watch has caught
 * up with my write" decidable; anything else counts as not newer, so the own write wins until the
 * watch replaces it.
 */
function newer(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return a.length !== b.length ? a.length > b.length : a > b;
}

/**
 * Reads from informers for the types it was given (falling back to the API server for others),
 * merged with this process' own writes. Informers must be synced before the first read.
 */
export class CachedObjectReader implements ObjectReader {
  private readonly informers = new Map<string, CacheView>();
  private readonly own = new Map<string, OwnWrite>();

  constructor(
    private readonly client: KubeClient,
    informers: ReadonlyArray<{ readonly type: ResourceType; readonly informer: CacheView }>,
  ) {
    for (const { type, informer } of informers) this.informers.set(typeKey(type), informer);
  }

  async tryGet(type: ResourceType, name: string, namespace: string): Promise<KubeObject | undefined> {
    const informer = this.informers.get(typeKey(type));
    if (!informer) return this.client.tryGet(type, name, namespace);
    return this.merge(type, informer, namespace, name) ?? undefined;
  }

  async list(type: ResourceType, namespace: string, labels: Readonly<Record<string, string>>): Promise<KubeObject[]> {
    const informer = this.informers.get(typeKey(type));
    if (!informer) return (await this.client.list(type, { namespace, labelSelector: labels })).items;
    // The cache's candidates come from its label index; own writes may carry other labels, so every
    // merged object is checked again below.
    const names = new Set(informer.list(namespace, labels).map((o) => String(o.metadata.name)));
    const prefix = `${typeKey(type)}/${namespace}/`;
    for (const key of this.own.keys()) if (key.startsWith(prefix)) names.add(key.slice(prefix.length));
    const out: KubeObject[] = [];
    for (const name of names) {
      const o = this.merge(type, informer, namespace, name);
      if (o && hasLabels(o, labels)) out.push(o);
    }
    return out;
  }

  wrote(obj: KubeObject): void {
    if (!this.informers.has(typeKey(obj))) return;
    this.own.set(this.objectKey(obj), { object: obj, resourceVersion: obj.metadata.resourceVersion });
  }

  /**
   * True when a watch event's object is exactly what this process wrote (same resourceVersion):
   * the echo of its own write, which tells the writer nothing new.
   */
  isOwnWrite(obj: KubeObject): boolean {
    const rv = obj.metadata.resourceVersion;
    return rv !== undefined && this.own.get(this.objectKey(obj))?.resourceVersion === rv;
  }

  deleted(type: ResourceType, name: string, namespace: string): void {
    const informer = this.informers.get(typeKey(type));
    if (!informer) return;
    const key = this.key(type, namespace, name);
    const last = this.own.get(key)?.object ?? informer.get(name, namespace);
    this.own.set(key, { object: null, resourceVersion: last?.metadata.resourceVersion });
  }

  /** The cached object unless this process' own write is newer; forgets own writes the watch has caught up with. */
  private merge(type: ResourceType, informer: CacheView, namespace: string, name: string): KubeObject | null | undefined {
    const cached = informer.get(name, namespace);
    const key = this.key(type, namespace, name);
    const own = this.own.get(key);
    if (!own) return cached;
    const atOrPast = (rv: string | undefined) => rv !== undefined && (rv === own.resourceVersion || newer(rv, own.resourceVersion));
    const caughtUp = own.object === null
      ? cached === undefined || cached.metadata.deletionTimestamp !== undefined || newer(cached.metadata.resourceVersion, own.resourceVersion)
      : cached !== undefined
        ? atOrPast(cached.metadata.resourceVersion)
        // Absent from a cache whose watch has read past the write: someone else deleted it since (or
        // relabelled it out of the watch). Keeping the write would show a deleted object for ever.
        : atOrPast(informer.resourceVersion);
    if (caughtUp) {
      this.own.delete(key);
      return cached;
    }
    return own.object;
  }

  private objectKey(obj: KubeObject): string {
    return this.key(obj, String(obj.metadata.namespace ?? ''), String(obj.metadata.name));
  }

  private key(type: { apiVersion: string; kind: string }, namespace: string, name: string): string {
    return `${typeKey(type)}/${namespace}/${name}`;
  }
}
