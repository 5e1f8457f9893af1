/**
 * Informers (`KubeClient.watch`) against a real kube-apiserver + etcd.
 *
 * The API server runs with `--watch-cache-sizes=configmaps#0`: ConfigMap watches are served straight
 * from etcd (as for any resource when the watch cache is off), so compacting etcd makes a resume from an
 * older resourceVersion fail with 410. RayService (CRD) watches go through the watch cache as usual,
 * which is what an API server restart resets.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeApiError } from '../../lib/runtime/kube/errors';
import { Informer } from '../../lib/runtime/kube/informer';
import { InformerEvent } from '../../lib/runtime/kube/informer-options';
import { ALL_NAMESPACES, KnownTypes, KubeObject } from '../../lib/runtime/kube/types';
import { ControlPlane, startControlPlane, upstreamCrdFiles } from '../support/controlplane';
import { waitFor } from '../support/wait-at-most';

const NS = 'kube-watch-it';
const NS2 = 'kube-watch-it-2';
const RS = KnownTypes.RayService;
const CM = KnownTypes.ConfigMap;
const FAST = { backoff: { initialMs: 100, maxMs: 1_000, jitter: 0.1 }, resyncIntervalMs: 0 } as const;

let cp: ControlPlane;
let kube: KubeClient;
const informers: Informer<any>[] = [];

beforeAll(async () => {
  cp = await startControlPlane({ crds: await upstreamCrdFiles(), apiserverArgs: ['--watch-cache-sizes=configmaps#0'] });
  kube = KubeClient.fromKubeconfig(cp.kubeconfigPath);
  for (const name of [NS, NS2]) await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}, 300_000);

afterEach(async () => {
  await Promise.all(informers.splice(0).map((i) => i.stop()));
});

afterAll(async () => {
  kube?.close();
  await cp?.stop();
});

function rayService(name: string, namespace = NS, image = 'rayproject/ray:2.46.0'): KubeObject {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayService',
    metadata: { name, namespace },
    spec: { rayClusterConfig: { headGroupSpec: { rayStartParams: {}, template: { spec: { containers: [{ name: 'ray-head', image }] } } } } },
  };
}

function recorder() {
  const events: InformerEvent[] = [];
  return { events, handler: (e: InformerEvent) => void events.push(e), seen: () => events.map(show) };
}

function show(e: InformerEvent): string {
  return `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}${e.resync ? ' (resync)' : ''}`;
}

function until(what: string, fn: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  return waitFor(fn, what, timeoutMs);
}

function keysOf(objs: KubeObject[]): string[] {
  return objs.map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
}

async function etcd(p: string, body: unknown): Promise<any> {
  const r = await fetch(cp.etcdUrl + p, { method: 'POST', body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`etcd ${p}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}

/** A TCP proxy in front of the API server whose connections can be cut (TLS passes through untouched). */
async function startProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((down) => {
    if (cut) {
      down.destroy();
      return;
    }
    const up = net.connect(Number(target.port), target.hostname);
    sockets.add(down).add(up);
    const close = () => {
      down.destroy();
      up.destroy();
      sockets.delete(down);
      sockets.delete(up);
    };
    down.on('error', close).on('close', close);
    up.on('error', close).on('close', close);
    down.pipe(up);
    up.pipe(down);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    /** Drops every open connection and refuses new ones. */
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    heal() {
      cut = false;
    },
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

function kubeconfigFor(server: string, file: string): string {
  fs.writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'certificate-authority': cp.caFile } }],
      users: [{ name: 'admin', user: { token: cp.adminToken } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'admin' } }],
      'current-context': 'x',
    }),
  );
  return file;
}

describe('Informer (real kube-apiserver)', () => {
  test('lists, then reports add/update/delete in order, keeping its cache equal to the server', async () => {
    await kube.apply(rayService('pre'));
    const rec = recorder();
    const inf = kube.watch(RS, NS, rec.handler, FAST);
    informers.push(inf);
    expect(inf.hasSynced()).toBe(false);
    await inf.waitForSync(30_000);
    expect(inf.hasSynced()).toBe(true);
    expect(inf.get('pre', NS)?.metadata.name).toBe('pre');

    await kube.apply(rayService('b'));
    await kube.apply(rayService('b', NS, 'rayproject/ray:2.47.0'));
    await kube.delete(RS, 'b', NS);
    await kube.apply(rayService('pre', NS, 'rayproject/ray:2.47.0'));
    await kube.apply(rayService('elsewhere', NS2)); // other namespace: not watched
    await until('5 events', () => rec.events.length >= 5);
    await inf.idle();
    expect(rec.seen()).toEqual([`add ${NS}/pre`, `add ${NS}/b`, `update ${NS}/b`, `delete ${NS}/b`, `update ${NS}/pre`]);
    expect((rec.events[2].oldObject!.spec as any).rayClusterConfig.headGroupSpec.template.spec.containers[0].image).toBe('rayproject/ray:2.46.0');
    expect((rec.events[2].object.spec as any).rayClusterConfig.headGroupSpec.template.spec.containers[0].image).toBe('rayproject/ray:2.47.0');
    expect(keysOf(inf.list())).toEqual(keysOf((await kube.listAll(RS, { namespace: NS })).items));
    expect(inf.stats).toMatchObject({ lists: 1, expired: 0, errors: 0 });

    // All namespaces.
    const recAll = recorder();
    const all = kube.watch(RS, ALL_NAMESPACES, recAll.handler, FAST);
    informers.push(all);
    await all.waitForSync(30_000);
    await all.idle();
    expect(recAll.seen().sort()).toEqual([`add ${NS2}/elsewhere`, `add ${NS}/pre`]);
    expect(all.list(NS2).map((o) => o.metadata.name)).toEqual(['elsewhere']);
  });

  test('bookmarks move the resourceVersion past writes to other kinds, without events or relists', async () => {
    await kube.apply(rayService('bm'));
    const rec = recorder();
    // kube-apiserver's watch cache sends a watcher a bookmark 2 s before its timeout (and about every
    // minute), carrying the newest revision the cache knows, if newer than what the watcher has seen.
    const inf = kube.watch(RS, NS, rec.handler, { ...FAST, watchTimeoutSeconds: 5 });
    informers.push(inf);
    await inf.waitForSync(30_000);
    await inf.idle();
    const events = rec.events.length;
    const other = await kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { generateName: 'bump-', namespace: NS } });
    const target = Number(other.metadata.resourceVersion);
    expect(target).toBeGreaterThan(Number(inf.resourceVersion));
    await until(
      'a bookmark past the Secret write',
      async () => {
        // A consistent list makes the API server ask etcd for progress, which advances the RayService
        // watch cache to the current revision; the next bookmark then carries it.
        await kube.list(RS, { namespace: NS, limit: 1 });
        return Number(inf.resourceVersion) >= target;
      },
      30_000,
    );
    expect(inf.stats.bookmarks).toBeGreaterThan(0);
    expect(rec.events.length).toBe(events);
    expect(inf.stats).toMatchObject({ lists: 1, expired: 0, errors: 0 });
  });

  test('survives a kube-apiserver restart: later events arrive, old ones are not reported again', async () => {
    for (const n of ['r-a', 'r-b', 'r-c']) await kube.apply(rayService(n));
    const rec = recorder();
    const errors: unknown[] = [];
    const inf = kube.watch(RS, NS, rec.handler, { ...FAST, onError: (e) => errors.push(e) });
    informers.push(inf);
    await inf.waitForSync(30_000);
    await inf.idle();
    const initial = rec.events.length;
    const watchesBefore = inf.stats.watches;

    // The open watch keeps kube-apiserver's graceful shutdown waiting, so the harness SIGKILLs it after
    // 30 s: the informer sees the connection reset, then refused connections, then a fresh server.
    await cp.restart();
    // The informer reconnects on its own; wait until it has watched (or relisted) again.
    await until('a new watch after the restart', () => inf.stats.watches > watchesBefore, 60_000);
    const rvAtRestart = Number(inf.resourceVersion);

    await kube.apply(rayService('r-new'));
    await kube.apply(rayService('r-a', NS, 'rayproject/ray:2.47.0'));
    await kube.delete(RS, 'r-b', NS);
    // A sentinel written last: a watch delivers events in resourceVersion order, so once its add
    // arrived, any (wrong) extra event for the three changes before it has arrived too.
    await kube.apply(rayService('r-sentinel'));
    await until('the sentinel after the three changes', () => rec.events.some((e) => show(e) === `add ${NS}/r-sentinel`), 60_000);
    await inf.idle();
    const after = rec.events.slice(initial).filter((e) => show(e) !== `add ${NS}/r-sentinel`);
    expect(after.map(show).sort()).toEqual([`add ${NS}/r-new`, `delete ${NS}/r-b`, `update ${NS}/r-a`].sort());
    for (const e of after.filter((x) => x.type !== 'delete')) expect(Number(e.object.metadata.resourceVersion)).toBeGreaterThan(rvAtRestart);
    expect(keysOf(inf.list())).toEqual(keysOf((await kube.listAll(RS, { namespace: NS })).items));
    // The restart really cut the watch: it reconnected, after errors or a 410 from the fresh watch cache.
    expect(inf.stats.watches).toBeGreaterThan(watchesBefore);
    expect(inf.stats.errors + inf.stats.expired).toBeGreaterThan(0);
  }, 120_000);

  test('410 after etcd compaction: the informer relists and its cache matches the server', async () => {
    const proxy = await startProxy(new URL(cp.url));
    const viaProxy = KubeClient.fromKubeconfig(kubeconfigFor(proxy.url, path.join(cp.dir, 'proxy-kubeconfig')));
    try {
      for (const n of ['c-1', 'c-2', 'c-3']) await kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, namespace: NS, labels: { set: 'compact' } }, data: { v: '1' } });
      const rec = recorder();
      const errors: unknown[] = [];
      const inf = viaProxy.watch(CM, NS, rec.handler, { ...FAST, labelSelector: { set: 'compact' }, onError: (e) => errors.push(e) });
      informers.push(inf);
      await inf.waitForSync(30_000);
      await inf.idle();
      expect(rec.seen().sort()).toEqual([`add ${NS}/c-1`, `add ${NS}/c-2`, `add ${NS}/c-3`]);
      const staleRv = inf.resourceVersion!;

      // Cut the informer off, change things behind its back and compact etcd past its resourceVersion.
      proxy.cut();
      await until('the informer to notice the cut', () => errors.length > 0);
      const c1 = await kube.get(CM, 'c-1', NS);
      await kube.update({ ...c1, data: { v: '2' } });
      await kube.delete(CM, 'c-2', NS);
      await kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c-4', namespace: NS, labels: { set: 'compact' } } });
      const rev = (await etcd('/v3/kv/range', { key: Buffer.from('/').toString('base64') })).header.revision;
      expect(Number(rev)).toBeGreaterThan(Number(staleRv));
      await etcd('/v3/kv/compaction', { revision: rev, physical: true });
      // The server itself now refuses a watch from the informer's resourceVersion.
      const direct = await new Promise<string>((resolve, reject) => {
        kube
          .watchStream(CM, { namespace: NS, resourceVersion: staleRv, timeoutSeconds: 5 }, (ev) => resolve(`${ev.type} ${(ev.object as any).code}`))
          .then((h) => h.done.then(() => resolve('closed')), (e: KubeApiError) => resolve(`HTTP ${e.statusCode}`))
          .catch(reject);
      });
      expect(direct).toMatch(/^(ERROR 410|HTTP 410)$/);
      expect(rec.events.length).toBe(3);

      proxy.heal();
      await until('the informer to relist', () => inf.stats.expired >= 1 && inf.stats.lists >= 2, 60_000);
      await inf.idle();
      const after = rec.events.slice(3);
      expect(after.map(show).sort()).toEqual([`add ${NS}/c-4`, `delete ${NS}/c-2`, `update ${NS}/c-1`]);
      expect(after.every((e) => e.relist)).toBe(true);
      expect(keysOf(inf.list())).toEqual(keysOf((await kube.listAll(CM, { namespace: NS, labelSelector: 'set=compact' })).items));

      // And it keeps watching after the relist.
      await kube.delete(CM, 'c-3', NS);
      await until('the delete after the relist', () => rec.events.length >= 7);
      expect(show(rec.events[6])).toBe(`delete ${NS}/c-3`);
      expect(rec.events[6].relist).toBeUndefined();
    } finally {
      viaProxy.close();
      await proxy.close();
    }
  }, 120_000);

  test('periodic resync re-emits cached objects as updates marked resync', async () => {
    await kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'resync-1', namespace: NS2 } });
    const rec = recorder();
    const inf = kube.watch(CM, NS2, rec.handler, { ...FAST, resyncIntervalMs: 200 });
    informers.push(inf);
    await inf.waitForSync(30_000);
    await until('two resyncs', () => rec.events.filter((e) => e.resync).length >= 2, 10_000);
    expect(rec.seen().slice(0, 3)).toEqual([`add ${NS2}/resync-1`, `update ${NS2}/resync-1 (resync)`, `update ${NS2}/resync-1 (resync)`]);
    const r = rec.events.find((e) => e.resync)!;
    expect(r.object).toBe(r.oldObject);
  });

  test('without RBAC rights the informer reports typed 403s, never syncs, and stops cleanly', async () => {
    const token = await cp.serviceAccountToken(NS, 'watch-nobody');
    const file = path.join(cp.dir, 'nobody-kubeconfig');
    fs.writeFileSync(
      file,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: cp.url, 'certificate-authority': cp.caFile } }],
        users: [{ name: 'u', user: { token } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    const sa = KubeClient.fromKubeconfig(file);
    const errors: unknown[] = [];
    const inf = sa.watch(RS, NS, undefined, { ...FAST, onError: (e) => errors.push(e) });
    try {
      await expect(inf.waitForSync(1_500)).rejects.toThrow(/did not sync within 1500 ms; last error: .*HTTP 403 Forbidden/);
      expect(errors.length).toBeGreaterThanOrEqual(2); // it keeps retrying with backoff
      expect(errors.every((e) => e instanceof KubeApiError && e.statusCode === 403)).toBe(true);
      expect(inf.hasSynced()).toBe(false);
    } finally {
      await inf.stop();
      sa.close();
    }
  });
});
