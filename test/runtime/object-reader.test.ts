/**
 * The operator's cached reader: informer caches merged with the operator's own writes, so a pass
 * never sees a state older than one it wrote itself, and the cache is trusted again once the watch
 * has delivered that write.
 */
import { CacheView, CachedObjectReader } from '../../lib/runtime/kube/object-reader';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';

const ROUTE = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true };
const SECRET = { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };

/** A cache the test fills the way a watch would (each event moves the watch's resourceVersion). */
class FakeCache implements CacheView {
  readonly objects = new Map<string, KubeObject>();
  resourceVersion: string | undefined;
  get(name: string, namespace?: string): KubeObject | undefined {
    return this.objects.get(`${namespace}/${name}`);
  }
  list(namespace?: string): KubeObject[] {
    return [...this.objects.values()].filter((o) => o.metadata.namespace === namespace);
  }
  put(o: KubeObject): void {
    this.objects.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
    this.resourceVersion = o.metadata.resourceVersion;
  }
  /** A DELETED event at revision `rv`. */
  remove(name: string, rv: string): void {
    this.objects.delete(`ns/${name}`);
    this.resourceVersion = rv;
  }
}

function route(name: string, rv: string, weight: number, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: ROUTE.apiVersion, kind: ROUTE.kind, metadata: { name, namespace: 'ns', resourceVersion: rv, labels }, spec: { weight } };
}

function setup() {
  const cache = new FakeCache();
  const apiCalls: string[] = [];
  const client = {
    tryGet: async (t: { kind: string }, name: string) => {
      apiCalls.push(`get ${t.kind}/${name}`);
      return undefined;
    },
    list: async (t: { kind: string }) => {
      apiCalls.push(`list ${t.kind}`);
      return { items: [] };
    },
  } as unknown as KubeClient;
  return { cache, apiCalls, reader: new CachedObjectReader(client, [{ type: ROUTE, informer: cache }]) };
}

test('a cached type is read from the cache, with no API call', async () => {
  const { cache, apiCalls, reader } = setup();
  cache.put(route('r', '10', 1));
  expect((await reader.tryGet(ROUTE, 'r', 'ns'))?.spec).toEqual({ weight: 1 });
  expect(await reader.tryGet(ROUTE, 'missing', 'ns')).toBeUndefined();
  expect(apiCalls).toEqual([]);
});

test('a type without a cache is read from the API server', async () => {
  const { apiCalls, reader } = setup();
  await reader.tryGet(SECRET, 's', 'ns');
  await reader.list(SECRET, 'ns', {});
  expect(apiCalls).toEqual(['get Secret/s', 'list Secret']);
});

test('an own write is seen until the watch delivers it or something newer', async () => {
  const { cache, reader } = setup();
  cache.put(route('r', '10', 1));
  reader.wrote(route('r', '12', 2));
  expect((await reader.tryGet(ROUTE, 'r', 'ns'))?.spec).toEqual({ weight: 2 });
  cache.put(route('r', '13', 3)); // someone else's later write arrives: the cache is newer again
  expect((await reader.tryGet(ROUTE, 'r', 'ns'))?.spec).toEqual({ weight: 3 });
  reader.wrote(route('r', '99', 4));
  cache.put(route('r', '99', 4));
  cache.put(route('r', '100', 5));
  expect((await reader.tryGet(ROUTE, 'r', 'ns'))?.spec).toEqual({ weight: 5 });
});

test('resourceVersions compare as revisions, not as strings', async () => {
  const { cache, reader } = setup();
  reader.wrote(route('r', '9', 1));
  cache.put(route('r', '10', 2)); // "10" < "9" as strings, newer as a revision
  expect((await reader.tryGet(ROUTE, 'r', 'ns'))?.spec).toEqual({ weight: 2 });
});

test('an own create is listed before the watch delivers it, and an own delete hides the object', async () => {
  const { cache, reader } = setup();
  cache.put(route('old', '5', 1, { app: 'a' }));
  cache.put(route('other', '6', 1, { app: 'b' }));
  reader.wrote(route('new', '7', 1, { app: 'a' }));
  expect((await reader.list(ROUTE, 'ns', { app: 'a' })).map((o) => o.metadata.name).sort()).toEqual(['new', 'old']);
  reader.deleted(ROUTE, 'old', 'ns');
  expect((await reader.list(ROUTE, 'ns', { app: 'a' })).map((o) => o.metadata.name)).toEqual(['new']);
  expect(await reader.tryGet(ROUTE, 'old', 'ns')).toBeUndefined();
  cache.remove('old', '8'); // the watch delivers the deletion
  cache.put(route('old', '20', 1, { app: 'a' })); // and later a new object of that name appears
  expect((await reader.tryGet(ROUTE, 'old', 'ns'))?.metadata.resourceVersion).toBe('20');
});

test('an own write of an object someone else then deletes is forgotten once the watch has read past the write', async () => {
  const { cache, reader } = setup();
  cache.put(route('other', '10', 1, { app: 'a' }));
  reader.wrote(route('r', '12', 1, { app: 'a' })); // created; the watch has not delivered it yet
  expect((await reader.list(ROUTE, 'ns', { app: 'a' })).map((o) => o.metadata.name).sort()).toEqual(['other', 'r']);
  // The watch delivers the create and, before the next read, another controller's delete of it.
  cache.put(route('r', '12', 1, { app: 'a' }));
  cache.remove('r', '15');
  expect(await reader.tryGet(ROUTE, 'r', 'ns')).toBeUndefined();
  expect((await reader.list(ROUTE, 'ns', { app: 'a' })).map((o) => o.metadata.name)).toEqual(['other']);
  // A later own write of the name is seen again until the watch reads past it.
  reader.wrote(route('r', '20', 2, { app: 'a' }));
  expect((await reader.tryGet(ROUTE, 'r', 'ns'))?.spec).toEqual({ weight: 2 });
});

test('writes of types without a cache are not remembered', async () => {
  const { apiCalls, reader } = setup();
  reader.wrote({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns', resourceVersion: '1' } });
  expect(await reader.tryGet(SECRET, 's', 'ns')).toBeUndefined();
  expect(apiCalls).toEqual(['get Secret/s']);
});
