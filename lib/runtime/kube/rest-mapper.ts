/**
 * The REST mapping of resource types (kind → plural, namespaced): from the type itself when it says,
 * from `KnownTypes`, else from API discovery, cached per group/version and refetched once when a
 * kind is missing (a CRD installed after the first lookup).
 */
import { UnknownKindError, isNotFound } from './errors';
import { KnownTypes, ResolvedResource, ResourceType, splitApiVersion } from './types';

/** One group/version's discovery document, as far as the mapping reads it. */
interface DiscoveryList {
  readonly resources?: ReadonlyArray<{ name: string; kind: string; namespaced: boolean }>;
}

/** Resolves resource types through `get` (a GET of a discovery path on one API server). */
export class RestMapper {
  readonly #discovery = new Map<string, Promise<Map<string, ResolvedResource>>>();

  constructor(private readonly get: (path: string) => Promise<unknown>) {}

  /** The REST mapping of `type`; throws `UnknownKindError` when the server does not serve the kind. */
  async resolve(type: ResourceType): Promise<ResolvedResource> {
    const [group, version] = splitApiVersion(type.apiVersion);
    if (type.plural && type.namespaced !== undefined) {
      return { apiVersion: type.apiVersion, kind: type.kind, group, version, plural: type.plural, namespaced: type.namespaced };
    }
    const known = Object.values(KnownTypes).find((k) => k.apiVersion === type.apiVersion && k.kind === type.kind);
    if (known) return { apiVersion: known.apiVersion, kind: known.kind, group, version, plural: known.plural, namespaced: known.namespaced };
    for (let attempt = 0; attempt < 2; attempt++) {
      if (attempt > 0) this.#discovery.delete(type.apiVersion);
      let p = this.#discovery.get(type.apiVersion);
      if (!p) {
        p = this.#discover(type.apiVersion);
        this.#discovery.set(type.apiVersion, p);
        p.catch(() => this.#discovery.delete(type.apiVersion));
      }
      let mapping: Map<string, ResolvedResource>;
      try {
        mapping = await p;
      } catch (e) {
        if (isNotFound(e)) {
          if (attempt === 0) continue;
          throw new UnknownKindError(type.apiVersion, type.kind);
        }
        throw e;
      }
      const r = mapping.get(type.kind);
      if (r) return r;
    }
    throw new UnknownKindError(type.apiVersion, type.kind);
  }

  async #discover(apiVersion: string): Promise<Map<string, ResolvedResource>> {
    const [group, version] = splitApiVersion(apiVersion);
    const list = (await this.get(group ? `/apis/${group}/${version}` : `/api/${version}`)) as DiscoveryList;
    const m = new Map<string, ResolvedResource>();
    for (const r of list.resources ?? []) {
      if (r.name.includes('/')) continue; // subresources
      m.set(r.kind, { apiVersion, kind: r.kind, group, version, plural: r.name, namespaced: r.namespaced });
    }
    return m;
  }
}
