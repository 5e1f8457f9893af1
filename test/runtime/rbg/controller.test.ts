/**
 * RbgRolloutController start-up over a scripted Transport: which RoleBasedGroup version it watches,
 * with which label selector, and that it stays idle (and ready) where RBG is not installed. The
 * rollouts themselves are covered on a real API server by test/integration/rbg-rollout.test.ts.
 */
import { HttpRequest, HttpResponse, KubeClient, StreamHandle, Transport } from '../../../lib/runtime/kube';
import { RbgRolloutController } from '../../../operator/rbg-controller';

const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

/** Answers discovery from `served` (group/version → plurals), lists as empty, and holds watch streams open until aborted. */
class ScriptedTransport implements Transport {
  readonly server = 'https://fake';
  readonly requests: string[] = [];
  readonly streams: string[] = [];
  constructor(private readonly served: Record<string, string[]>) {}
  async request(req: HttpRequest): Promise<HttpResponse> {
    this.requests.push(req.path);
    const discovery = /^\/apis\/([^/]+\/[^/?]+)$/.exec(req.path);
    if (discovery) {
      const plurals = this.served[discovery[1]];
      if (!plurals) return reply(404, { kind: 'Status', code: 404, reason: 'NotFound' });
      return reply(200, { kind: 'APIResourceList', groupVersion: discovery[1], resources: plurals.map((name) => ({ name, kind: 'RoleBasedGroup', namespaced: true })) });
    }
    return reply(200, { kind: 'List', metadata: { resourceVersion: '1' }, items: [] });
  }
  async stream(req: HttpRequest): Promise<StreamHandle> {
    this.streams.push(req.path);
    let end!: () => void;
    const done = new Promise<void>((r) => (end = r));
    return { status: 200, done, abort: () => end() };
  }
  close(): void {}
}

function reply(status: number, body: unknown): HttpResponse {
  return { status, headers: { 'content-type': 'application/json' }, text: JSON.stringify(body) };
}

test('watches v1alpha2 RoleBasedGroups labelled for the operator when the server serves v1alpha2', async () => {
  const t = new ScriptedTransport({ 'workloads.x-k8s.io/v1alpha2': ['rolebasedgroups'], 'workloads.x-k8s.io/v1alpha1': ['rolebasedgroups'] });
  const c = new RbgRolloutController({ client: new KubeClient(t), log: SILENT });
  await c.start();
  expect(c.ready()).toBe(true);
  const list = t.requests.find((p) => p.includes('/rolebasedgroups?'));
  expect(list).toMatch(/^\/apis\/workloads\.x-k8s\.io\/v1alpha2\/rolebasedgroups\?/);
  expect(decodeURIComponent(list!)).toContain('labelSelector=rayshift.dev/coordination-executor=operator');
  await c.stop();
});

test('falls back to v1alpha1 on RBG v0.6.0', async () => {
  const t = new ScriptedTransport({ 'workloads.x-k8s.io/v1alpha1': ['rolebasedgroups'] });
  const c = new RbgRolloutController({ client: new KubeClient(t), log: SILENT });
  await c.start();
  expect(t.requests.find((p) => p.includes('/rolebasedgroups?'))).toMatch(/^\/apis\/workloads\.x-k8s\.io\/v1alpha1\/rolebasedgroups\?/);
  await c.stop();
});

test('without RBG installed it watches nothing and is ready, so it can run in every operator', async () => {
  const t = new ScriptedTransport({});
  const c = new RbgRolloutController({ client: new KubeClient(t), log: SILENT });
  expect(c.ready()).toBe(false);
  await c.start();
  expect(c.ready()).toBe(true);
  expect(t.requests.filter((p) => p.includes('/rolebasedgroups'))).toEqual([]);
  expect(t.streams).toEqual([]);
  await c.stop();
});
