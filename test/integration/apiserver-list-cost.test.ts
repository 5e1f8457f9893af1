/**
 * The cost of lists across namespaces on a real kube-apiserver with 60 more namespaces: a caller who
 * may list cluster-wide costs one request per page; a caller who may list in only some namespaces
 * costs at most `NAMESPACES_PER_PAGE` namespace lists per call (counted on the wire, and in the
 * kube-apiserver's audit log for calls through the API server), and paging through returns every
 * object the caller may see exactly once.
 */
import * as fs from 'node:fs';
import { NAMESPACES_PER_PAGE, listAllNamespacesPage } from '../../lib/apiserver/pagination';
import { KubeClient } from '../../lib/runtime/kube/client';
import { loadClientNode } from '../../lib/runtime/kube/client-node';
import { KubeConfigTransport, type HttpRequest, type Transport } from '../../lib/runtime/kube/transport';
import { RAYSHIFT_RAYSERVICE } from '../../lib/spec/object-names';
import { ApiEnv, grantUser, rayServiceBody, startApiEnv } from '../apiserver/support/api-env';
import { createNamespace, waitFor } from '../support/operator-env';

let env: ApiEnv;
const SPREAD = Array.from({ length: 60 }, (_, i) => `spread-${String(i).padStart(2, '0')}`);
/** alice may list RayServices in every fourth of them (and in team-a, where there are none). */
const aliceMay = (ns: string) => Number(ns.slice(-2)) % 4 === 0;
/** 0, 1 or 2 RayServices per namespace, so that pages end inside namespaces and between them. */
const servicesIn = (ns: string) => Number(ns.slice(-2)) % 3;
const key = (o: { namespace: string; name: string }) => `${o.namespace}/${o.name}`;
const visibleToAlice = SPREAD.filter(aliceMay).flatMap((ns) => Array.from({ length: servicesIn(ns) }, (_, k) => `${ns}/svc-${k}`));

/** Records the path of every request before passing it on. */
class CountingTransport implements Transport {
  readonly paths: string[] = [];
  constructor(private readonly inner: Transport) {}
  get server(): string {
    return this.inner.server;
  }
  request(req: HttpRequest) {
    this.paths.push(req.path);
    return this.inner.request(req);
  }
  stream(req: HttpRequest, onLine: (line: string) => void) {
    return this.inner.stream(req, onLine);
  }
  close(): void {
    this.inner.close();
  }
}

/** A counted client of the control plane authenticating with `token`. */
function countedClient(token: string): { kube: KubeClient; counter: CountingTransport } {
  const kc = new (loadClientNode().KubeConfig)();
  kc.loadFromOptions({
    clusters: [{ name: 'cp', server: env.cp.url, caFile: env.cp.caFile, skipTLSVerify: false }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'cp', cluster: 'cp', user: 'u' }],
    currentContext: 'cp',
  });
  const counter = new CountingTransport(new KubeConfigTransport(kc));
  return { kube: new KubeClient(counter), counter };
}

beforeAll(async () => {
  env = await startApiEnv();
  for (const ns of SPREAD) {
    await createNamespace(env.admin, ns);
    if (aliceMay(ns)) await grantUser(env.admin, ns, 'alice', 'rayservice-reader', [{ apiGroups: ['rayshift.dev'], resources: ['rayservices'], verbs: ['list'] }]);
    for (let k = 0; k < servicesIn(ns); k++) {
      const created = await env.rest('POST', `/apis/rayshift/v1/namespaces/${ns}/rayservices`, rayServiceBody(`svc-${k}`), { token: env.cp.adminToken });
      if (created.status !== 200) throw new Error(`creating ${ns}/svc-${k}: ${created.text}`);
    }
  }
}, 300_000);

afterAll(async () => {
  await env?.stop();
});

test('a caller who may list cluster-wide: one list request per page', async () => {
  const { kube, counter } = countedClient(env.cp.adminToken);
  try {
    const page = await listAllNamespacesPage(kube, env.admin, RAYSHIFT_RAYSERVICE, { pageSize: 0, pageToken: '' });
    expect(page.items).toHaveLength(SPREAD.reduce((n, ns) => n + servicesIn(ns), 0));
    expect(page.nextPageToken).toBe('');
    expect(counter.paths).toEqual(['/apis/rayshift.dev/v1alpha1/rayservices?limit=500']);
  } finally {
    kube.close();
  }
});

test('a caller who may list in some namespaces: at most NAMESPACES_PER_PAGE namespace lists per call, each visible object once', async () => {
  const { kube, counter } = countedClient(env.tokens.alice);
  try {
    const seen: string[] = [];
    const costs: number[] = [];
    let pageToken = '';
    do {
      const before = counter.paths.length;
      const page = await listAllNamespacesPage(kube, env.admin, RAYSHIFT_RAYSERVICE, { pageSize: 1, pageToken });
      costs.push(counter.paths.length - before);
      seen.push(...page.items.map((o) => key({ namespace: String(o.metadata.namespace), name: String(o.metadata.name) })));
      pageToken = page.nextPageToken;
    } while (pageToken && costs.length < 500);
    expect(seen).toEqual(visibleToAlice);
    // The first call also tries (and is refused) the cluster-wide list.
    expect(counter.paths[0]).toBe('/apis/rayshift.dev/v1alpha1/rayservices?limit=1');
    expect(costs[0]).toBeLessThanOrEqual(1 + NAMESPACES_PER_PAGE);
    expect(Math.max(...costs.slice(1))).toBeLessThanOrEqual(NAMESPACES_PER_PAGE);
  } finally {
    kube.close();
  }
});

test('through the API server: paging returns what alice may see once, at the audited cost of the same walk', async () => {
  const api = env.client('connect', env.tokens.alice);
  const seen: string[] = [];
  let calls = 0;
  let pageToken = '';
  do {
    const page = await api.rayServices.listAllRayServices({ pageSize: 1, pageToken });
    calls++;
    seen.push(...page.rayServices.map(key));
    pageToken = page.nextPageToken;
  } while (pageToken && calls < 500);
  expect(seen).toEqual(visibleToAlice);

  // The same walk, counted on the wire as alice herself: the API server must have made exactly as many lists as her.
  const { kube, counter } = countedClient(env.tokens.alice);
  try {
    let token = '';
    do token = (await listAllNamespacesPage(kube, env.admin, RAYSHIFT_RAYSERVICE, { pageSize: 1, pageToken: token })).nextPageToken;
    while (token);
  } finally {
    kube.close();
  }
  expect(counter.paths.length).toBeLessThanOrEqual(calls * NAMESPACES_PER_PAGE + 1);
  type AuditEvent = { verb: string; stage: string; objectRef?: { resource?: string }; impersonatedUser?: { username: string } };
  let lists = 0;
  await waitFor(() => {
    const events = fs.readFileSync(env.auditLog, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditEvent);
    lists = events.filter((e) => e.stage === 'ResponseComplete' && e.verb === 'list' && e.objectRef?.resource === 'rayservices' && e.impersonatedUser?.username === 'alice').length;
    return lists >= counter.paths.length;
  }, 'the audit events of the impersonated lists', 30_000, 200);
  expect(lists).toBe(counter.paths.length);
});
