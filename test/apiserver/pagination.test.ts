/**
 * Cross-namespace pages over a scripted Kubernetes API that serves `limit`/`continue` and answers 403
 * where the caller may not list: the cost of a call is bounded, paging returns every visible object
 * exactly once in namespace order, and page sizes are checked and capped.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { MAX_PAGE_SIZE, NAMESPACES_PER_PAGE, listAllNamespacesPage, listNamespacePage, sealPageToken } from '../../lib/apiserver/pagination';
import { KubeClient } from '../../lib/runtime/kube/client';
import type { HttpRequest, HttpResponse, StreamHandle, Transport } from '../../lib/runtime/kube/transport';
import { KnownTypes } from '../../lib/runtime/kube/types';

const CM = KnownTypes.ConfigMap;

/** A Kubernetes API holding `perNamespace(ns)` ConfigMaps in each namespace; the caller may list only where `allowed`. */
class ScriptedCluster implements Transport {
  readonly server = 'https://scripted';
  /** Paths of the ConfigMap lists asked for. */
  readonly lists: string[] = [];
  constructor(
    private readonly namespaces: readonly string[],
    private readonly perNamespace: (ns: string) => number,
    private readonly allowed: (ns: string | undefined) => boolean,
  ) {}
  async request(req: HttpRequest): Promise<HttpResponse> {
    const url = new URL(req.path, 'http://x');
    if (url.pathname === '/api/v1/namespaces') return reply(200, { kind: 'NamespaceList', metadata: {}, items: this.namespaces.map((name) => ({ metadata: { name } })) });
    const m = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?configmaps$/.exec(url.pathname);
    if (!m) return reply(404, { kind: 'Status', code: 404, reason: 'NotFound' });
    this.lists.push(req.path);
    const ns = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    if (!this.allowed(ns)) return reply(403, { kind: 'Status', code: 403, reason: 'Forbidden', message: 'forbidden' });
    const all = (ns === undefined ? [...this.namespaces].sort() : [ns]).flatMap((n) => Array.from({ length: this.perNamespace(n) }, (_, k) => ({ metadata: { namespace: n, name: `cm-${k}` } })));
    const from = Number(url.searchParams.get('continue') ?? 0);
    const limit = Number(url.searchParams.get('limit') ?? all.length);
    const items = all.slice(from, from + limit);
    const more = from + limit < all.length;
    return reply(200, { kind: 'ConfigMapList', metadata: more ? { continue: String(from + limit) } : {}, items });
  }
  async stream(): Promise<StreamHandle> {
    throw new Error('no watches here');
  }
  close(): void {}
}

function reply(status: number, body: unknown): HttpResponse {
  return { status, headers: { 'content-type': 'application/json' }, text: JSON.stringify(body) };
}

const names = Array.from({ length: 60 }, (_, i) => `ns-${String(i).padStart(2, '0')}`);
const key = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;

/** Pages through everything with `pageSize`, counting the ConfigMap lists of each call. */
async function pageThrough(cluster: ScriptedCluster, pageSize: number): Promise<{ keys: string[]; costs: number[] }> {
  const kube = new KubeClient(cluster);
  const keys: string[] = [];
  const costs: number[] = [];
  let pageToken = '';
  do {
    const before = cluster.lists.length;
    const page = await listAllNamespacesPage(kube, kube, CM, { pageSize, pageToken });
    costs.push(cluster.lists.length - before);
    keys.push(...page.items.map(key));
    pageToken = page.nextPageToken;
  } while (pageToken && costs.length < 1000);
  return { keys, costs };
}

test('a caller who may list cluster-wide costs one request per page', async () => {
  const cluster = new ScriptedCluster(names, () => 3, () => true);
  const { keys, costs } = await pageThrough(cluster, 50);
  expect(keys).toHaveLength(180);
  expect(new Set(keys).size).toBe(180);
  expect(costs.every((c) => c === 1)).toBe(true);
  expect(cluster.lists.every((p) => p.startsWith('/api/v1/configmaps?'))).toBe(true);
});

test.each([1, 2, 5, 7, 0])('page_size %p: a caller allowed in some namespaces pages through each visible object once, at a bounded cost per call', async (pageSize) => {
  // Every third namespace visible; sizes 0..4 so that pages cut namespaces at every position.
  const visible = (ns: string | undefined) => ns !== undefined && Number(ns.slice(3)) % 3 === 0;
  const count = (ns: string) => Number(ns.slice(3)) % 5;
  const cluster = new ScriptedCluster(names, count, visible);
  const { keys, costs } = await pageThrough(cluster, pageSize);
  const expected = names.filter((n) => visible(n)).flatMap((n) => Array.from({ length: count(n) }, (_, k) => `${n}/cm-${k}`));
  expect(keys).toEqual(expected);
  // One forbidden cluster-wide attempt on the first call only, then at most NAMESPACES_PER_PAGE each.
  expect(costs[0]).toBeLessThanOrEqual(1 + NAMESPACES_PER_PAGE);
  expect(Math.max(...costs.slice(1), 0)).toBeLessThanOrEqual(NAMESPACES_PER_PAGE);
});

test('a caller who sees nothing in many namespaces gets short pages with tokens, each call bounded', async () => {
  const many = Array.from({ length: 207 }, (_, i) => `team-${String(i).padStart(3, '0')}`);
  const cluster = new ScriptedCluster(many, () => 2, (ns) => ns === 'team-206');
  const { keys, costs } = await pageThrough(cluster, 1);
  expect(keys).toEqual(['team-206/cm-0', 'team-206/cm-1']);
  expect(costs[0]).toBe(1 + NAMESPACES_PER_PAGE);
  expect(costs.slice(1).every((c) => c <= NAMESPACES_PER_PAGE)).toBe(true);
  // Each namespace listed once, plus the forbidden cluster-wide attempt and the resumed team-206.
  expect(costs.reduce((a, b) => a + b)).toBe(1 + 207 + 1);
});

test('a token naming a namespace deleted since resumes at the next one without its continue token', async () => {
  const cluster = new ScriptedCluster(names, () => 4, (ns) => ns !== undefined);
  const kube = new KubeClient(cluster);
  const token = sealPageToken({ ns: 'ns-05x', c: '2' }, { pageSize: 3, pageToken: '' }, CM);
  const page = await listAllNamespacesPage(kube, kube, CM, { pageSize: 3, pageToken: token });
  expect(page.items.map(key)).toEqual(['ns-06/cm-0', 'ns-06/cm-1', 'ns-06/cm-2']);
});

test('page_size: 0 and sizes above the maximum are served as the maximum; negative ones are INVALID_ARGUMENT naming the range', async () => {
  const cluster = new ScriptedCluster(['big'], () => MAX_PAGE_SIZE + 20, () => true);
  const kube = new KubeClient(cluster);
  expect((await listNamespacePage(kube, CM, 'big', { pageSize: 0, pageToken: '' })).items).toHaveLength(MAX_PAGE_SIZE);
  const capped = await listAllNamespacesPage(kube, kube, CM, { pageSize: 10_000, pageToken: '' });
  expect(capped.items).toHaveLength(MAX_PAGE_SIZE);
  expect(capped.nextPageToken).not.toBe('');
  const err = await listNamespacePage(kube, CM, 'big', { pageSize: -1, pageToken: '' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  expect((err as ConnectError).rawMessage).toBe('page_size must be between 0 and 500 (0: 500; larger sizes are served as 500); got -1');
});

test('page tokens are sealed: a forged, altered or another caller’s or query’s token is INVALID_ARGUMENT, and none names a namespace', async () => {
  const cluster = new ScriptedCluster(names, () => 4, (ns) => ns !== undefined);
  const kube = new KubeClient(cluster);
  const first = await listAllNamespacesPage(kube, kube, CM, { pageSize: 3, pageToken: '', caller: 'alice' });
  expect(first.nextPageToken).not.toBe('');
  // The cursor names a namespace; the token shows nothing of it, in any encoding the caller might try.
  for (const text of [Buffer.from(first.nextPageToken, 'base64url').toString('latin1'), first.nextPageToken]) expect(text).not.toMatch(/ns-\d/);
  const refused = async (req: { pageToken: string; caller?: string; labelSelector?: string }) => {
    const err = await listAllNamespacesPage(kube, kube, CM, { pageSize: 3, ...req }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  };
  // The finding's hand-made tokens: plain base64 JSON, and one whose namespace is an object (a 500 before).
  await refused({ pageToken: Buffer.from(JSON.stringify({ ns: 'kube' })).toString('base64url'), caller: 'alice' });
  await refused({ pageToken: Buffer.from('{"ns":{"toString":null}}').toString('base64url'), caller: 'alice' });
  const altered = Buffer.from(first.nextPageToken, 'base64url');
  altered[14] ^= 1;
  await refused({ pageToken: altered.toString('base64url'), caller: 'alice' });
  await refused({ pageToken: first.nextPageToken, caller: 'bob' });
  await refused({ pageToken: first.nextPageToken, caller: 'alice', labelSelector: 'a=b' });
  // The caller it was issued to resumes where the first page ended.
  const second = await listAllNamespacesPage(kube, kube, CM, { pageSize: 3, pageToken: first.nextPageToken, caller: 'alice' });
  expect(second.items.map(key)[0]).not.toBe(first.items.map(key)[0]);
});
