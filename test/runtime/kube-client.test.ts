/**
 * KubeClient request shapes over a recording Transport, and the real KubeConfigTransport (loaded from a
 * kubeconfig through @kubernetes/client-node, which is ESM) against a local HTTP server. The behaviour of
 * a real API server is covered by test/integration/kube-client.test.ts.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import { KubeClient } from '../../lib/runtime/kube/client';
import { loadClientNode } from '../../lib/runtime/kube/client-node';
import { KubeApiError, KubeConnectionError, UnknownKindError } from '../../lib/runtime/kube/errors';
import { HttpRequest, HttpResponse, StreamHandle, Transport } from '../../lib/runtime/kube/transport';
import { KnownTypes } from '../../lib/runtime/kube/types';

type Reply = { status: number; body?: unknown };

class RecordingTransport implements Transport {
  readonly server = 'https://fake';
  readonly requests: HttpRequest[] = [];
  constructor(private readonly reply: (req: HttpRequest) => Reply) {}
  async request(req: HttpRequest): Promise<HttpResponse> {
    this.requests.push(req);
    const r = this.reply(req);
    return { status: r.status, headers: { 'content-type': 'application/json' }, text: r.body === undefined ? '' : JSON.stringify(r.body) };
  }
  async stream(): Promise<StreamHandle> {
    throw new Error('not used');
  }
  close(): void {}
}

const ok = (body: unknown = {}): Reply => ({ status: 200, body });
const RS = { apiVersion: 'ray.io/v1', kind: 'RayJob' }; // not in KnownTypes: resolved by discovery
const rayDiscovery = {
  kind: 'APIResourceList',
  groupVersion: 'ray.io/v1',
  resources: [
    { name: 'rayjobs', kind: 'RayJob', namespaced: true },
    { name: 'rayjobs/status', kind: 'RayJob', namespaced: true },
    { name: 'rayclusters', kind: 'RayCluster', namespaced: true },
  ],
};

describe('KubeClient requests', () => {
  test('apply / applyStatus: SSA content type, field manager, force, dry run; managedFields dropped', async () => {
    const t = new RecordingTransport(() => ok());
    const kube = new KubeClient(t);
    const obj = { ...KnownTypes.ConfigMap, metadata: { name: 'a', namespace: 'ns', managedFields: [{ manager: 'x' }], resourceVersion: '5' }, data: { k: 'v' } };
    await kube.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: obj.metadata, data: obj.data });
    await kube.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' } }, { force: true, dryRun: true, fieldManager: 'other' });
    await kube.applyStatus({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, status: { x: 1 } });
    expect(t.requests.map((r) => `${r.method} ${r.path} ${r.contentType}`)).toEqual([
      'PATCH /api/v1/namespaces/ns/configmaps/a?fieldManager=rayshift application/apply-patch+yaml',
      'PATCH /api/v1/namespaces/ns/configmaps/a?fieldManager=other&force=true&dryRun=All application/apply-patch+yaml',
      'PATCH /api/v1/namespaces/ns/configmaps/a/status?fieldManager=rayshift application/apply-patch+yaml',
    ]);
    expect(JSON.parse(t.requests[0].body!)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '5' }, data: { k: 'v' } });
  });

  test('create / update / updateStatus / patches / delete', async () => {
    const t = new RecordingTransport((req) => (req.path.startsWith('/apis/ray.io/v1?') || req.path === '/apis/ray.io/v1' ? ok(rayDiscovery) : ok()));
    const kube = new KubeClient(t, { namespace: 'home' });
    expect(kube.namespace).toBe('home');
    const rs = { apiVersion: 'ray.io/v1', kind: 'RayJob', metadata: { name: 'r', namespace: 'ns', resourceVersion: '7' } };
    await kube.create(rs);
    await kube.update(rs);
    await kube.updateStatus({ ...rs, status: { observedGeneration: 2 } });
    await kube.patchJson(RS, 'r', 'ns', [{ op: 'test', path: '/a', value: 1 }]);
    await kube.patchMerge(RS, 'r', 'ns', { metadata: { finalizers: null } }, { subresource: 'status' });
    await kube.delete(RS, 'r', 'ns', { propagationPolicy: 'Foreground', preconditions: { resourceVersion: '7' } });
    await kube.get(KnownTypes.Namespace, 'ns', 'ignored-for-cluster-scoped');
    expect(t.requests.map((r) => `${r.method} ${r.path}${r.contentType ? ` ${r.contentType}` : ''}`)).toEqual([
      'GET /apis/ray.io/v1',
      'POST /apis/ray.io/v1/namespaces/ns/rayjobs?fieldManager=rayshift',
      'PUT /apis/ray.io/v1/namespaces/ns/rayjobs/r?fieldManager=rayshift',
      'PUT /apis/ray.io/v1/namespaces/ns/rayjobs/r/status?fieldManager=rayshift',
      'PATCH /apis/ray.io/v1/namespaces/ns/rayjobs/r?fieldManager=rayshift application/json-patch+json',
      'PATCH /apis/ray.io/v1/namespaces/ns/rayjobs/r/status?fieldManager=rayshift application/merge-patch+json',
      'DELETE /apis/ray.io/v1/namespaces/ns/rayjobs/r',
      'GET /api/v1/namespaces/ns',
    ]);
    expect(JSON.parse(t.requests[6].body!)).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground', preconditions: { resourceVersion: '7' } });
    // Discovery was fetched once for all those calls.
    expect(t.requests.filter((r) => r.path === '/apis/ray.io/v1')).toHaveLength(1);
  });

  test('guards: update needs a resourceVersion, namespaced kinds need a namespace', async () => {
    const kube = new KubeClient(new RecordingTransport(() => ok()));
    await expect(kube.update({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n' } })).rejects.toThrow(/resourceVersion is required/);
    await expect(kube.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } })).rejects.toThrow(/metadata.namespace is required/);
    await expect(kube.get(KnownTypes.ConfigMap, 'a')).rejects.toThrow(/a namespace is required/);
  });

  test('discovery: a kind missing from the cache is refetched once (CRD installed later), then UnknownKindError', async () => {
    let served = false;
    const t = new RecordingTransport((req) => {
      if (req.path === '/apis/ray.io/v1') return ok(served ? rayDiscovery : { resources: [] });
      if (req.path === '/apis/nope.io/v1') return { status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound' } };
      return ok({ metadata: { resourceVersion: '9' }, items: [{ metadata: { name: 'x' } }] });
    });
    const kube = new KubeClient(t);
    await expect(kube.resolve(RS)).rejects.toBeInstanceOf(UnknownKindError);
    served = true;
    await expect(kube.resolve(RS)).resolves.toMatchObject({ plural: 'rayjobs', namespaced: true, group: 'ray.io' });
    await expect(kube.resolve({ apiVersion: 'nope.io/v1', kind: 'X' })).rejects.toThrow(/serves no resource of kind X in nope.io\/v1/);
    // plural + namespaced skip discovery.
    const before = t.requests.length;
    await expect(kube.resolve({ apiVersion: 'x.io/v2', kind: 'Thing', plural: 'things', namespaced: false })).resolves.toEqual({
      apiVersion: 'x.io/v2', kind: 'Thing', group: 'x.io', version: 'v2', plural: 'things', namespaced: false,
    });
    expect(t.requests.length).toBe(before);
    // List items get apiVersion and kind.
    const l = await kube.list(RS, { namespace: 'n', labelSelector: { a: 'b', c: 'd' }, limit: 10 });
    expect(l.items[0]).toEqual({ apiVersion: 'ray.io/v1', kind: 'RayJob', metadata: { name: 'x' } });
    expect(t.requests[t.requests.length - 1].path).toBe('/apis/ray.io/v1/namespaces/n/rayjobs?labelSelector=a%3Db%2Cc%3Dd&limit=10');
  });

  test('listAll follows continue tokens and starts over when a token expires', async () => {
    let expireOnce = true;
    const t = new RecordingTransport((req) => {
      const u = new URL(`http://x${req.path}`);
      const cont = u.searchParams.get('continue');
      if (cont === 'p2' && expireOnce) {
        expireOnce = false;
        return { status: 410, body: { kind: 'Status', code: 410, reason: 'Expired', message: 'continue token expired' } };
      }
      const page = cont === 'p2' ? 2 : 1;
      return ok({ metadata: { resourceVersion: '100', ...(page === 1 ? { continue: 'p2' } : {}) }, items: [{ metadata: { name: `i${page}` } }] });
    });
    const kube = new KubeClient(t);
    const all = await kube.listAll(KnownTypes.ConfigMap, { pageSize: 1 });
    expect(all.items.map((i) => i.metadata.name)).toEqual(['i1', 'i2']);
    expect(all.resourceVersion).toBe('100');
    expect(t.requests.map((r) => r.path)).toEqual([
      '/api/v1/configmaps?limit=1',
      '/api/v1/configmaps?limit=1&continue=p2',
      '/api/v1/configmaps?limit=1',
      '/api/v1/configmaps?limit=1&continue=p2',
    ]);
  });

  test('tryGet returns undefined on 404 only; delete ignoreNotFound', async () => {
    const t = new RecordingTransport((req) =>
      req.path.endsWith('/missing') ? { status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' } } : { status: 500, body: 'oops' },
    );
    const kube = new KubeClient(t);
    await expect(kube.tryGet(KnownTypes.ConfigMap, 'missing', 'n')).resolves.toBeUndefined();
    await expect(kube.delete(KnownTypes.ConfigMap, 'missing', 'n', { ignoreNotFound: true })).resolves.toBe(false);
    await expect(kube.tryGet(KnownTypes.ConfigMap, 'other', 'n')).rejects.toMatchObject({ statusCode: 500, reason: 'InternalError' });
  });
});

describe('KubeConfigTransport (client-node KubeConfig, real sockets)', () => {
  let server: http.Server;
  let url: string;
  let dir: string;
  const seen: Array<{ method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const sockets = new Set<net.Socket>();
  const TOKEN = 'sekret-token-0123456789';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        if (req.url?.includes('watch=true')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          // One event split across writes, then two in one write.
          res.write('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}');
          setTimeout(() => {
            res.write('}}\n{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"2"}}}\n{"type":"DELETED",');
            setTimeout(() => res.end('"object":{"metadata":{"name":"a","resourceVersion":"3"}}}\n'), 10);
          }, 10);
          return;
        }
        if (req.url?.includes('forbidden')) {
          res.writeHead(403, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'no' }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n' } }));
      });
    });
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-transport-'));
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function kubeconfig(server: string, extra = ''): string {
    const file = path.join(dir, `kc-${seen.length}-${Math.random()}`);
    fs.writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "${server}", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: ${TOKEN}${extra}}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: team-a}
- name: other
  context: {cluster: c, user: u}
current-context: ctx
`,
    );
    return file;
  }

  test('@kubernetes/client-node (ESM) loads under jest through Node\'s own require', () => {
    const k = loadClientNode();
    expect(typeof k.KubeConfig).toBe('function');
    expect(loadClientNode()).toBe(k);
  });

  test('sends the kubeconfig credentials and body, reuses connections, reads the context namespace', async () => {
    const kube = KubeClient.fromKubeconfig(kubeconfig(url));
    try {
      expect(kube.namespace).toBe('team-a');
      expect(KubeClient.fromKubeconfig(kubeconfig(url), { context: 'other' }).namespace).toBe('default');
      const n = seen.length;
      await kube.get(KnownTypes.ConfigMap, 'a', 'n');
      await kube.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n' }, data: { x: 'y' } });
      const [get, apply] = seen.slice(n);
      expect(get).toMatchObject({ method: 'GET', url: '/api/v1/namespaces/n/configmaps/a' });
      expect(get.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(get.headers.accept).toBe('application/json');
      expect(apply.headers['content-type']).toBe('application/apply-patch+yaml');
      expect(JSON.parse(apply.body)).toMatchObject({ data: { x: 'y' } });
      expect(apply.headers.connection).toBe('keep-alive');
      // The client never prints its credentials.
      expect(util.inspect(kube, { depth: 20, showHidden: true })).not.toContain(TOKEN);
      expect(JSON.stringify(kube)).not.toContain(TOKEN);
    } finally {
      kube.close();
    }
  });

  test('streams watch lines split across chunks; non-2xx answers are typed errors without credentials', async () => {
    const kube = KubeClient.fromKubeconfig(kubeconfig(url));
    try {
      const events: string[] = [];
      const h = await kube.watchStream(KnownTypes.ConfigMap, { namespace: 'n', resourceVersion: '0' }, (e) => events.push(`${e.type} ${e.object.metadata.resourceVersion} ${e.object.kind}`));
      await h.done;
      expect(events).toEqual(['ADDED 1 ConfigMap', 'BOOKMARK 2 undefined', 'DELETED 3 ConfigMap']);
      expect(seen[seen.length - 1].url).toBe('/api/v1/namespaces/n/configmaps?watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=300');

      const err = await kube.get(KnownTypes.ConfigMap, 'forbidden', 'n').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KubeApiError);
      expect((err as KubeApiError).message).toBe('GET /api/v1/namespaces/n/configmaps/forbidden: HTTP 403 Forbidden: no');
      expect(util.inspect(err, { depth: 20, showHidden: true }) + JSON.stringify(err)).not.toContain(TOKEN);
    } finally {
      kube.close();
    }
  });

  test('connection failures are KubeConnectionError without credentials', async () => {
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise((r) => s.close(r));
    const kube = KubeClient.fromKubeconfig(kubeconfig(`http://127.0.0.1:${port}`));
    const err = await kube.get(KnownTypes.ConfigMap, 'a', 'n').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeConnectionError);
    expect((err as KubeConnectionError).code).toBe('ECONNREFUSED');
    expect(util.inspect(err, { depth: 20, showHidden: true })).not.toContain(TOKEN);
    kube.close();
  });
});
