/**
 * Informer logic over a scripted Transport: relist diffs, resume points, bookmarks, 410 handling,
 * backoff, ordering and handler isolation. The same behaviours against a real kube-apiserver (restart,
 * etcd compaction) are in test/integration/kube-watch.test.ts.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeApiError, KubeConnectionError } from '../../lib/runtime/kube/errors';
import { InformerEvent } from '../../lib/runtime/kube/informer-options';
import { HttpRequest, HttpResponse, StreamHandle, Transport } from '../../lib/runtime/kube/transport';
import { KnownTypes, KubeObject } from '../../lib/runtime/kube/types';
import { waitFor } from '../support/wait-at-most';

const CM = KnownTypes.ConfigMap;

function cm(name: string, rv: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion: rv }, data };
}

interface OpenWatch {
  readonly req: HttpRequest;
  readonly query: URLSearchParams;
  send(type: string, object: unknown): void;
  end(): void;
  fail(code?: string): void;
  aborted: boolean;
}

/** A scripted API server: lists come from `state`, watches are handed to the test to drive. */
class ScriptedTransport implements Transport {
  readonly server = 'https://scripted';
  state: { rv: string; items: KubeObject[] } = { rv: '1', items: [] };
  listReplies: Array<{ status: number; body: unknown }> = [];
  watchReplies: Array<{ status: number; body: unknown } | 'refuse'> = [];
  readonly lists: HttpRequest[] = [];
  readonly watches: OpenWatch[] = [];
  private waiters: Array<() => void> = [];

  async request(req: HttpRequest): Promise<HttpResponse> {
    this.lists.push(req);
    const scripted = this.listReplies.shift();
    const r = scripted ?? { status: 200, body: { metadata: { resourceVersion: this.state.rv }, items: this.state.items.map((o) => ({ ...o, apiVersion: undefined, kind: undefined })) } };
    return { status: r.status, headers: { 'content-type': 'application/json' }, text: JSON.stringify(r.body) };
  }

  async stream(req: HttpRequest, onLine: (line: string) => void): Promise<StreamHandle> {
    const scripted = this.watchReplies.shift();
    if (scripted === 'refuse') throw new KubeConnectionError('GET', req.path, Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    if (scripted) return { status: scripted.status, text: JSON.stringify(scripted.body), done: Promise.resolve(), abort: () => undefined };
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    done.catch(() => undefined);
    const w: OpenWatch = {
      req,
      query: new URL(`http://x${req.path}`).searchParams,
      aborted: false,
      send: (type, object) => onLine(JSON.stringify({ type, object })),
      end: () => resolve(),
      fail: (code = 'ECONNRESET') => reject(new KubeConnectionError('GET', req.path, Object.assign(new Error('reset'), { code }))),
    };
    this.watches.push(w);
    for (const f of this.waiters.splice(0)) f();
    return {
      status: 200,
      done,
      abort: () => {
        w.aborted = true;
        resolve();
      },
    };
  }

  /** Resolves when watch number `n` (1-based) is open. */
  async watch(n: number): Promise<OpenWatch> {
    // Woken by each watch the informer opens.
    await waitFor(() => this.watches.length >= n || `have ${this.watches.length}`, `watch ${n} to open`, { timeoutMs: 5_000, wake: (recheck) => (this.waiters.push(recheck), () => undefined) });
    return this.watches[n - 1];
  }

  close(): void {}
}

const FAST = { backoff: { initialMs: 1, maxMs: 5, jitter: 0 }, resyncIntervalMs: 0, watchTimeoutSeconds: 60 } as const;

function setup(opts: Record<string, unknown> = {}) {
  const t = new ScriptedTransport();
  const kube = new KubeClient(t);
  const events: InformerEvent[] = [];
  const errors: Array<[unknown, string]> = [];
  const show = () => events.map((e) => `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}${e.relist ? ' relist' : ''}${e.resync ? ' resync' : ''}`);
  const start = (handler?: (e: InformerEvent) => void | Promise<void>) =>
    kube.watch(CM, 'ns', handler ?? ((e) => void events.push(e)), { ...FAST, onError: (e, c) => errors.push([e, c]), ...opts });
  return { t, kube, events, errors, show, start };
}

function until(what: string, fn: () => boolean, timeoutMs = 5_000): Promise<void> {
  return waitFor(fn, what, { timeoutMs, everyMs: 2 });
}

describe('Informer', () => {
  test('lists, then watches from the list resourceVersion with bookmarks; events update the cache', async () => {
    const { t, events, show, start } = setup();
    t.state = { rv: '10', items: [cm('a', '5'), cm('b', '6')] };
    const inf = start();
    await inf.waitForSync(1_000);
    expect(inf.list().map((o) => o.metadata.name)).toEqual(['a', 'b']);
    expect(inf.get('a', 'ns')).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    const w = await t.watch(1);
    expect(t.lists[0].path).toBe('/api/v1/namespaces/ns/configmaps?limit=500');
    expect(Object.fromEntries(w.query)).toEqual({ watch: 'true', resourceVersion: '10', allowWatchBookmarks: 'true', timeoutSeconds: '60' });

    w.send('ADDED', cm('c', '11'));
    w.send('MODIFIED', cm('a', '12', { k: 'v' }));
    w.send('MODIFIED', cm('a', '12', { k: 'v' })); // a repeat of a known version: not reported
    w.send('DELETED', cm('b', '13'));
    w.send('DELETED', cm('never-seen', '14')); // unknown object: nothing to report
    w.send('BOOKMARK', { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '20' } });
    await inf.idle();
    expect(show()).toEqual(['add a@5', 'add b@6', 'add c@11', 'update a@12', 'delete b@13']);
    expect(events[3].oldObject?.metadata.resourceVersion).toBe('5');
    expect(inf.resourceVersion).toBe('20');
    expect(inf.list().map((o) => o.metadata.name).sort()).toEqual(['a', 'c']);
    expect(inf.stats).toMatchObject({ lists: 1, watches: 1, bookmarks: 1, expired: 0, errors: 0 });

    // The server ends the watch (timeout): the next one resumes from the bookmark, no relist.
    w.end();
    const w2 = await t.watch(2);
    expect(w2.query.get('resourceVersion')).toBe('20');
    expect(t.lists).toHaveLength(1);
    await inf.stop();
    expect(w2.aborted).toBe(true);
  });

  test('lists by namespace and labels follow every change: add, relabel, delete and relist', async () => {
    const { t, start } = setup();
    const labelled = (name: string, rv: string, labels: Record<string, string>, namespace = 'ns'): KubeObject => ({ ...cm(name, rv), metadata: { name, namespace, resourceVersion: rv, labels } });
    t.state = { rv: '10', items: [labelled('a', '1', { app: 'x', tier: 'head' }), labelled('b', '2', { app: 'y' }), labelled('c', '3', { app: 'x' })] };
    const inf = start();
    await inf.waitForSync(1_000);
    const names = (labels?: Record<string, string>, namespace = 'ns') => inf.list(namespace, labels).map((o) => o.metadata.name).sort();
    expect(names({ app: 'x' })).toEqual(['a', 'c']);
    expect(names({ app: 'x', tier: 'head' })).toEqual(['a']);
    expect(names({ app: 'z' })).toEqual([]);
    expect(names()).toEqual(['a', 'b', 'c']);

    const w = await t.watch(1);
    w.send('MODIFIED', labelled('c', '11', { app: 'y' })); // relabelled out of app=x
    w.send('ADDED', labelled('d', '12', { app: 'x', tier: 'head' }));
    w.send('ADDED', labelled('e', '13', { app: 'x' }, 'other'));
    w.send('DELETED', labelled('a', '14', { app: 'x', tier: 'head' }));
    await inf.idle();
    expect(names({ app: 'x' })).toEqual(['d']);
    expect(names({ app: 'y' })).toEqual(['b', 'c']);
    expect(names({ tier: 'head', app: 'x' })).toEqual(['d']);
    expect(names({ app: 'x' }, 'other')).toEqual(['e']);
    expect(names()).toEqual(['b', 'c', 'd']);
    expect(inf.list(undefined, { app: 'x' }).map((o) => o.metadata.name).sort()).toEqual(['d', 'e']);

    // A relist replaces the cache, and the indexes with it.
    t.state = { rv: '50', items: [labelled('b', '2', { app: 'x' }), labelled('f', '45', { app: 'y' })] };
    w.send('ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version' });
    await t.watch(2);
    await inf.idle();
    expect(names({ app: 'x' })).toEqual(['b']);
    expect(names({ app: 'y' })).toEqual(['f']);
    expect(names({ app: 'x' }, 'other')).toEqual([]);
    await inf.stop();
  });

  test('an ERROR 410 event relists and reports only the differences', async () => {
    const { t, show, start } = setup();
    t.state = { rv: '10', items: [cm('same', '1'), cm('changed', '2'), cm('gone', '3')] };
    const inf = start();
    const w = await t.watch(1);
    t.state = { rv: '50', items: [cm('same', '1'), cm('changed', '40'), cm('new', '45')] };
    w.send('ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version: 10 (45)' });
    const w2 = await t.watch(2);
    expect(w.aborted).toBe(true);
    expect(w2.query.get('resourceVersion')).toBe('50');
    await inf.idle();
    expect(show()).toEqual(['add same@1', 'add changed@2', 'add gone@3', 'update changed@40 relist', 'add new@45 relist', 'delete gone@3 relist']);
    expect(inf.stats).toMatchObject({ lists: 2, expired: 1, errors: 0 });
    await inf.stop();
  });

  test('an HTTP 410 on opening the watch relists too', async () => {
    const { t, start } = setup();
    t.state = { rv: '10', items: [] };
    t.watchReplies.push({ status: 410, body: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } });
    const inf = start();
    await t.watch(1);
    expect(t.lists).toHaveLength(2);
    expect(inf.stats.expired).toBe(1);
    await inf.stop();
  });

  test('connection failures back off and resume from the last resourceVersion without relisting', async () => {
    const { t, errors, start } = setup();
    t.state = { rv: '10', items: [] };
    const inf = start();
    const w = await t.watch(1);
    w.send('ADDED', cm('x', '11'));
    w.fail();
    t.watchReplies.push('refuse', 'refuse', { status: 503, body: { kind: 'Status', code: 503, reason: 'ServiceUnavailable', message: 'starting' } });
    const w2 = await t.watch(2);
    expect(w2.query.get('resourceVersion')).toBe('11');
    expect(t.lists).toHaveLength(1);
    expect(errors.map(([e, c]) => `${c}: ${e instanceof KubeApiError ? e.statusCode : (e as KubeConnectionError).code}`)).toEqual([
      'watch: ECONNRESET',
      'watch: ECONNREFUSED',
      'watch: ECONNREFUSED',
      'watch: 503',
    ]);
    expect(inf.stats.errors).toBe(4);
    await inf.stop();
  });

  test('a backoff ends when another request of the same client is answered after the outage', async () => {
    // A minute of backoff after the first failure: only the restored signal can reopen the watch in time.
    const { t, kube, start } = setup({ backoff: { initialMs: 60_000, maxMs: 60_000, jitter: 0 } });
    t.state = { rv: '10', items: [] };
    const inf = start();
    const w = await t.watch(1);
    w.fail('ECONNRESET');
    await until('the broken watch to be counted', () => inf.stats.errors === 1);
    expect(kube.reachability.reachable).toBe(false);
    await kube.request('GET', '/api/v1/namespaces/ns/configmaps'); // e.g. a controller's write, answered 200
    const w2 = await t.watch(2);
    expect(w2.query.get('resourceVersion')).toBe('10');
    await inf.stop();
  });

  test('list failures are retried; waitForSync reports the last error on timeout', async () => {
    // On jest's clock: each list failure is followed by exactly one backoff of 30 ms, and the sync
    // timeout fires when the test moves the clock, not when a loaded machine gets round to it.
    jest.useFakeTimers();
    try {
      const { t, errors, start } = setup({ backoff: { initialMs: 30, maxMs: 30, jitter: 0 } });
      const forbidden = { status: 403, body: { kind: 'Status', code: 403, reason: 'Forbidden', message: 'configmaps is forbidden' } };
      t.listReplies.push(forbidden, forbidden, forbidden, forbidden, forbidden, forbidden);
      const inf = start();
      const sync = expect(inf.waitForSync(50)).rejects.toThrow(/did not sync within 50 ms; last error: GET \/api\/v1\/namespaces\/ns\/configmaps: HTTP 403 Forbidden/);
      await jest.advanceTimersByTimeAsync(0);
      expect(errors).toHaveLength(1); // the first list, at once
      await jest.advanceTimersByTimeAsync(30);
      expect(errors).toHaveLength(2); // one backoff later
      await jest.advanceTimersByTimeAsync(20);
      await sync;
      expect(t.lists).toHaveLength(2);
      t.listReplies = [];
      await jest.advanceTimersByTimeAsync(30); // the third list, after the backoff, succeeds
      expect(inf.hasSynced()).toBe(true);
      expect(t.lists).toHaveLength(3);
      expect(errors.every(([e, c]) => c === 'list' && (e as KubeApiError).statusCode === 403)).toBe(true);
      const stopped = inf.stop();
      await jest.advanceTimersByTimeAsync(0);
      await stopped;
    } finally {
      jest.useRealTimers();
    }
  });

  test('events reach an async handler one at a time, in order; handler errors do not stop it', async () => {
    const { t, errors, start } = setup();
    t.state = { rv: '1', items: [] };
    const log: string[] = [];
    let active = 0;
    const inf = start(async (e) => {
      active++;
      expect(active).toBe(1);
      log.push(`start ${e.object.metadata.name}`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`end ${e.object.metadata.name}`);
      active--;
      if (e.object.metadata.name === 'b') throw new Error('handler failed');
    });
    const w = await t.watch(1);
    for (const [n, rv] of [['a', '2'], ['b', '3'], ['c', '4']]) w.send('ADDED', cm(n, rv));
    // The cache is already current while the handler is still busy with the first event.
    expect(inf.size).toBe(3);
    await until('three handled', () => log.length === 6);
    await inf.idle();
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(errors.map(([e, c]) => `${c}: ${(e as Error).message}`)).toEqual(['handler: handler failed']);
    await inf.stop();
  });

  test('periodic resync re-emits the cache; periodic relist diffs against the server', async () => {
    const { t, show, start } = setup({ resyncIntervalMs: 20, relistIntervalMs: 60 });
    t.state = { rv: '1', items: [cm('a', '1')] };
    const inf = start();
    await until('a resync', () => show().includes('update a@1 resync'));
    t.state = { rv: '5', items: [cm('a', '1'), cm('b', '5')] };
    await until('the relist', () => show().includes('add b@5 relist'), 2_000);
    expect(inf.stats.lists).toBeGreaterThanOrEqual(2);
    await inf.stop();
    expect(show().filter((s) => !s.includes('resync'))).toEqual(['add a@1', 'add b@5 relist']);
  });

  test('stop() ends a loop that is still failing to list; waitForSync on a stopped informer rejects', async () => {
    const { t, start } = setup();
    t.listReplies.push({ status: 500, body: 'down' }, { status: 500, body: 'down' });
    const inf = start();
    const sync = inf.waitForSync();
    await inf.stop();
    await expect(sync).rejects.toThrow(/stopped before its cache synced/);
    await inf.stop(); // idempotent
  });
});
