/**
 * Route weight patches against a real kube-apiserver with the pinned Gateway API CRDs: the patch
 * changes only the managed weights of a shared HTTPRoute (everything else JSON-equal before and
 * after), and a concurrent writer that edits the route between our read and our write keeps its
 * edit while ours still lands (the `test` guards refuse a stale patch, the writer re-reads and
 * re-plans). Needs `npm run controlplane:build`.
 */
import { buildServiceRoute, clusterBackends } from '../../lib/runtime/route/build';
import { routePath } from '../support/rest-paths';
import { planWeightPatch } from '../../lib/runtime/route/weight-patch';
import { backendWeights } from '../support/route-weights';
import { routeReadiness } from '../../lib/runtime/route/readiness';
import { JsonPatchOp } from '../../lib/runtime/route/types';
import { isPatchConflict } from '../../lib/runtime/kube/errors';
import { RouteClient, RouteRef, writeRouteWeights } from '../../lib/runtime/route/weight-patch';
import { ControlPlane, startControlPlane, upstreamCrdFiles } from '../support/controlplane';

const NS = 'serving';
const ACTIVE = 'llm-aaaaa-serve-svc';
const PENDING = 'llm-bbbbb-serve-svc';
const HTTP = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`;
const GRPC = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/grpcroutes`;

let cp: ControlPlane;

beforeAll(async () => {
  const crds = (await upstreamCrdFiles()).filter((f) => f.includes('gateway.networking.k8s.io_'));
  cp = await startControlPlane({ crds });
  expect((await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(201);
}, 300_000);

afterAll(async () => {
  await cp?.stop();
});

/** A RouteClient over the control plane, rejecting like a Kubernetes client does (status + Status body). */
function client(token?: string): RouteClient & { patches: number } {
  const c = {
    patches: 0,
    async get(ref: RouteRef): Promise<unknown> {
      const path = routePath(ref.kind, ref.namespace, ref.name);
      const r = await cp.request('GET', path, undefined, { token });
      if (r.status !== 200) throw Object.assign(new Error(`GET ${path}: HTTP ${r.status}`), { status: r.status, body: r.body });
      return r.body;
    },
    async patch(ref: RouteRef, ops: readonly JsonPatchOp[]): Promise<unknown> {
      c.patches++;
      const path = routePath(ref.kind, ref.namespace, ref.name);
      const r = await cp.request('PATCH', path, ops, { contentType: 'application/json-patch+json', token });
      if (r.status >= 300) throw Object.assign(new Error(`PATCH ${path}: HTTP ${r.status} ${r.body?.message}`), { status: r.status, body: r.body });
      return r.body;
    },
  };
  return c;
}

/** Runs `edit` (a real write by someone else) once, right before our first PATCH reaches the server. */
function withConcurrentWriter(base: RouteClient, edit: () => Promise<void>): RouteClient {
  let done = false;
  return {
    get: (ref) => base.get(ref),
    async patch(ref, ops) {
      if (!done) {
        done = true;
        await edit();
      }
      return base.patch(ref, ops);
    },
  };
}

const svc = (name: string, weight?: number, extra: Record<string, unknown> = {}) => ({ name, port: 8000, ...(weight !== undefined ? { weight } : {}), ...extra });

function sharedRoute(name: string): any {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: NS, labels: { team: 'platform' }, annotations: { owner: 'platform-team' } },
    spec: {
      parentRefs: [{ name: 'shared', namespace: 'gateways', sectionName: 'https' }],
      hostnames: ['llm.example.com'],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/admin' }, headers: [{ type: 'Exact', name: 'x-admin', value: '1' }] }],
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-from', value: 'gw' }] } }],
          backendRefs: [svc('admin-svc', 3)],
        },
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'x-served-by', value: 'ray' }] } }],
          backendRefs: [
            svc('static-svc', 0, { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { remove: ['cookie'] } }] }),
            svc(ACTIVE, 100, { namespace: NS }),
          ],
        },
        {
          matches: [{ path: { type: 'Exact', value: '/old' } }],
          filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/' }, statusCode: 301 } }],
        },
      ],
    },
  };
}

async function create(path: string, obj: unknown): Promise<any> {
  const r = await cp.request('POST', path, obj);
  expect(r.status).toBe(201);
  return r.body;
}

async function get(path: string): Promise<any> {
  const r = await cp.request('GET', path);
  expect(r.status).toBe(200);
  return r.body;
}

/** What must not change: spec (minus the managed backends) and the user's labels and annotations. */
function unmanaged(route: any, names: readonly string[] = [ACTIVE, PENDING]): unknown {
  const spec = structuredClone(route.spec);
  for (const rule of spec.rules) {
    if (rule.backendRefs) rule.backendRefs = rule.backendRefs.filter((b: any) => !names.includes(b.name));
  }
  return { spec, labels: route.metadata.labels, annotations: route.metadata.annotations };
}

const weights = (route: any) => backendWeights(route, [ACTIVE, PENDING]);

describe('weight patches on a shared HTTPRoute (real kube-apiserver)', () => {
  test('adding the pending backend and moving weights changes only the managed backends; the rest is JSON-equal', async () => {
    const path = `${HTTP}/shared-a`;
    const before = await create(HTTP, sharedRoute('shared-a'));

    const add = await writeRouteWeights(client(), { kind: 'HTTPRoute', namespace: NS, name: 'shared-a' }, [
      { name: ACTIVE, namespace: NS, weight: 100 },
      { name: PENDING, namespace: NS, weight: 0 },
    ]);
    expect(add.attempts).toBe(1);
    let after = await get(path);
    expect(unmanaged(after)).toEqual(unmanaged(before));
    expect(after.spec.rules[1].backendRefs.map((b: any) => b.name)).toEqual(['static-svc', ACTIVE, PENDING]);
    expect(weights(after)).toEqual([100, 0]);

    await writeRouteWeights(client(), { kind: 'HTTPRoute', namespace: NS, name: 'shared-a' }, [
      { name: ACTIVE, weight: 65 },
      { name: PENDING, weight: 35 },
    ]);
    after = await get(path);
    expect(unmanaged(after)).toEqual(unmanaged(before));
    expect(weights(after)).toEqual([65, 35]);
    // The unmanaged backend of the managed rule, with its own filter, is byte-for-byte the same.
    expect(after.spec.rules[1].backendRefs[0]).toEqual(before.spec.rules[1].backendRefs[0]);
    expect(after.metadata.generation).toBe(before.metadata.generation + 2);

    // Promotion: the old active backend leaves, the pending one takes everything.
    await writeRouteWeights(client(), { kind: 'HTTPRoute', namespace: NS, name: 'shared-a' }, [{ name: PENDING, weight: 100 }], { remove: [{ name: ACTIVE }] });
    after = await get(path);
    expect(unmanaged(after)).toEqual(unmanaged(before));
    expect(after.spec.rules[1].backendRefs.map((b: any) => [b.name, b.weight])).toEqual([['static-svc', 0], [PENDING, 100]]);
  });

  test('a concurrent writer inserts a rule between our read and our write: our test guard refuses the stale patch, the retry keeps both edits', async () => {
    const path = `${HTTP}/shared-b`;
    await create(HTTP, sharedRoute('shared-b'));
    const theirRule = { matches: [{ path: { type: 'Exact', value: '/healthz' } }], backendRefs: [svc('health-svc', 1)] };
    let theirs: any;
    const racing = withConcurrentWriter(client(), async () => {
      const r = await cp.request('PATCH', path, [{ op: 'add', path: '/spec/rules/0', value: theirRule }], { contentType: 'application/json-patch+json' });
      expect(r.status).toBe(200);
      theirs = r.body;
    });
    const res = await writeRouteWeights(racing, { kind: 'HTTPRoute', namespace: NS, name: 'shared-b' }, [
      { name: ACTIVE, weight: 80 },
      { name: PENDING, weight: 20 },
    ]);
    expect(res.attempts).toBe(2);
    const after = await get(path);
    // Their rule is there (with the server's defaults), and every unmanaged field is what they left.
    expect(after.spec.rules[0]).toEqual(theirs.spec.rules[0]);
    expect(unmanaged(after)).toEqual(unmanaged(theirs));
    // Our weights landed in the managed rule, now at index 2.
    expect(after.spec.rules[2].backendRefs.map((b: any) => [b.name, b.weight])).toEqual([['static-svc', 0], [ACTIVE, 80], [PENDING, 20]]);
  });

  test('a concurrent edit of an unmanaged filter does not move our indices: one patch, both edits kept', async () => {
    const path = `${HTTP}/shared-c`;
    const before = await create(HTTP, sharedRoute('shared-c'));
    before.spec.rules[1].backendRefs.push({ group: '', kind: 'Service', name: PENDING, port: 8000, weight: 0 });
    expect((await cp.request('PUT', path, before)).status).toBe(200);
    let theirs: any;
    const racing = withConcurrentWriter(client(), async () => {
      const r = await cp.request('PATCH', path, [{ op: 'replace', path: '/spec/rules/0/filters/0/requestHeaderModifier/set/0/value', value: 'edge' }], {
        contentType: 'application/json-patch+json',
      });
      expect(r.status).toBe(200);
      theirs = r.body;
    });
    const res = await writeRouteWeights(racing, { kind: 'HTTPRoute', namespace: NS, name: 'shared-c' }, [
      { name: ACTIVE, weight: 50 },
      { name: PENDING, weight: 50 },
    ]);
    expect(res.attempts).toBe(1);
    const after = await get(path);
    expect(after.spec.rules[0].filters[0].requestHeaderModifier.set[0].value).toBe('edge');
    expect(unmanaged(after)).toEqual(unmanaged(theirs));
    expect(weights(after)).toEqual([50, 50]);
  });

  test('a concurrent change of the managed rule\'s backend list is refused and re-planned: no duplicate, no lost backend', async () => {
    const path = `${HTTP}/shared-d`;
    await create(HTTP, sharedRoute('shared-d'));
    let theirs: any;
    const racing = withConcurrentWriter(client(), async () => {
      // They drop their static backend and add a canary of their own to the same rule.
      const r = await cp.request(
        'PATCH',
        path,
        [
          { op: 'remove', path: '/spec/rules/1/backendRefs/0' },
          { op: 'add', path: '/spec/rules/1/backendRefs/-', value: svc('their-canary', 5) },
        ],
        { contentType: 'application/json-patch+json' },
      );
      expect(r.status).toBe(200);
      theirs = r.body;
    });
    const res = await writeRouteWeights(racing, { kind: 'HTTPRoute', namespace: NS, name: 'shared-d' }, [
      { name: ACTIVE, weight: 100 },
      { name: PENDING, weight: 0 },
    ]);
    expect(res.attempts).toBe(2);
    const after = await get(path);
    expect(after.spec.rules[1].backendRefs.map((b: any) => b.name)).toEqual([ACTIVE, 'their-canary', PENDING]);
    expect(unmanaged(after)).toEqual(unmanaged(theirs));
  });

  test('the API server answers a failed test op with 422 and no causes (a conflict), a schema violation with causes (not one)', async () => {
    const path = `${HTTP}/shared-e`;
    const route = await create(HTTP, sharedRoute('shared-e'));
    const ops = planWeightPatch(route, [{ name: ACTIVE, weight: 10 }]);
    expect((await cp.request('PATCH', path, [{ op: 'add', path: '/spec/rules/0', value: { backendRefs: [svc('x', 1)] } }], { contentType: 'application/json-patch+json' })).status).toBe(200);
    const stale = await cp.request('PATCH', path, ops, { contentType: 'application/json-patch+json' });
    expect(stale.status).toBe(422);
    expect(isPatchConflict({ status: stale.status, body: stale.body })).toBe(true);
    const invalid = await cp.request('PATCH', path, [{ op: 'replace', path: '/spec/rules/2/backendRefs/1/weight', value: 2_000_000 }], {
      contentType: 'application/json-patch+json',
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.details.causes.length).toBeGreaterThan(0);
    expect(isPatchConflict({ status: invalid.status, body: invalid.body })).toBe(false);
    await expect(
      writeRouteWeights(
        {
          get: (p) => client().get(p),
          patch: async () => {
            throw { status: invalid.status, body: invalid.body };
          },
        },
        { kind: 'HTTPRoute', namespace: NS, name: 'shared-e' },
        [{ name: ACTIVE, weight: 10 }],
      ),
    ).rejects.toMatchObject({ status: 422 });
  });
});

describe('routes rayshift builds (real kube-apiserver)', () => {
  test('a KubeRay-shaped HTTPRoute is accepted by the schema and driven through a whole upgrade', async () => {
    const built = buildServiceRoute({ rayServiceName: 'llm', namespace: NS, backends: [{ cluster: 'llm-aaaaa', weight: 100 }] });
    const created = await create(HTTP, built);
    expect(created.spec.rules[0].matches).toEqual([{ path: { type: 'PathPrefix', value: '/' } }]);
    const ref = { kind: 'HTTPRoute' as const, namespace: NS, name: 'llm-httproute' };
    for (const p of [0, 25, 50, 100]) {
      await writeRouteWeights(client(), ref, clusterBackends(NS, [{ cluster: 'llm-aaaaa', weight: 100 - p }, { cluster: 'llm-bbbbb', weight: p }]));
      expect(weights(await get(routePath('HTTPRoute', NS, 'llm-httproute')))).toEqual([100 - p, p]);
    }
    await writeRouteWeights(client(), ref, clusterBackends(NS, [{ cluster: 'llm-bbbbb', weight: 100 }]), { remove: [{ name: ACTIVE, namespace: NS }] });
    const final = await get(routePath('HTTPRoute', NS, 'llm-httproute'));
    expect(final.spec.rules[0].backendRefs).toEqual([{ group: '', kind: 'Service', name: PENDING, namespace: NS, port: 8000, weight: 100 }]);
  });

  test('a GRPCRoute with method matches and an unmanaged rule: only the managed backends move', async () => {
    const built: any = buildServiceRoute({ rayServiceName: 'llm', namespace: NS, routeKind: 'GRPC', backends: [{ cluster: 'llm-aaaaa', weight: 100 }], port: 9000 });
    built.spec.rules[0].matches = [{ method: { type: 'Exact', service: 'llm.v1.Generate' } }];
    built.spec.rules.unshift({ matches: [{ method: { service: 'grpc.health.v1.Health' } }], backendRefs: [svc('health-svc', 1)] });
    const before = await create(GRPC, built);
    const ref = { kind: 'GRPCRoute' as const, namespace: NS, name: 'llm-grpcroute' };
    await writeRouteWeights(client(), ref, clusterBackends(NS, [{ cluster: 'llm-aaaaa', weight: 70 }, { cluster: 'llm-bbbbb', weight: 30 }], 9000));
    const after = await get(`${GRPC}/llm-grpcroute`);
    expect(unmanaged(after)).toEqual(unmanaged(before));
    expect(after.spec.rules[1].backendRefs.map((b: any) => [b.name, b.port, b.weight])).toEqual([[ACTIVE, 9000, 70], [PENDING, 9000, 30]]);
  });

  test('readiness follows the status a Gateway controller writes, and a weight change makes it stale until re-observed', async () => {
    const route = await create(HTTP, buildServiceRoute({ rayServiceName: 'ready', namespace: NS, backends: [{ cluster: 'ready-aaaaa', weight: 100 }] }));
    const path = `${HTTP}/ready-httproute`;
    expect(routeReadiness(route).reasons).toEqual([`parent Gateway ${NS}/ready-gateway: no status.parents entry yet (no controller has processed the route for this parent)`]);
    const status = (generation: number, resolved: string) => ({
      parents: [
        {
          parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'ready-gateway', namespace: NS },
          controllerName: 'traefik.io/gateway-controller',
          conditions: [
            { type: 'Accepted', status: 'True', reason: 'Accepted', message: '', observedGeneration: generation, lastTransitionTime: '2026-01-01T00:00:00Z' },
            { type: 'ResolvedRefs', status: resolved, reason: resolved === 'True' ? 'ResolvedRefs' : 'BackendNotFound', message: '', observedGeneration: generation, lastTransitionTime: '2026-01-01T00:00:00Z' },
          ],
        },
      ],
    });
    const writeStatus = async (generation: number, resolved: string) => {
      const r = await cp.request('PATCH', `${path}/status`, { status: status(generation, resolved) }, { contentType: 'application/merge-patch+json' });
      expect(r.status).toBe(200);
    };
    await writeStatus(1, 'False');
    expect(routeReadiness(await get(path)).reasons).toEqual([
      `parent Gateway ${NS}/ready-gateway: controller traefik.io/gateway-controller: condition ResolvedRefs is False (BackendNotFound)`,
    ]);
    await writeStatus(1, 'True');
    expect(routeReadiness(await get(path)).ready).toBe(true);
    const written = await writeRouteWeights(client(), { kind: 'HTTPRoute', namespace: NS, name: 'ready-httproute' }, clusterBackends(NS, [{ cluster: 'ready-aaaaa', weight: 90 }, { cluster: 'ready-bbbbb', weight: 10 }]));
    const moved = written.route as any;
    expect(moved.metadata.generation).toBe(2);
    expect(routeReadiness(moved).ready).toBe(false);
    expect(routeReadiness(moved).reasons[0]).toMatch(/condition Accepted is for generation 1, older than metadata.generation 2 \(stale\)/);
    await writeStatus(2, 'True');
    expect(routeReadiness(await get(path)).ready).toBe(true);
  });
});
