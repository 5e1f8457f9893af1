/**
 * writeRouteWeights against an in-memory API server path: no PATCH when nothing changes, a retry
 * after a concurrent writer moved the managed rule, giving up after maxAttempts, other errors
 * thrown at once, isPatchConflict, and kubeRouteClient (the executors' client: the ref's kind, name
 * and namespace, the pass's read answering the first GET).
 */
import { JsonPatchOp } from '../../lib/runtime/route/types';
import { isPatchConflict } from '../../lib/runtime/kube/errors';
import { RouteRef, RouteWriteConflictError, kubeRouteClient, writeRouteWeights } from '../../lib/runtime/route/weight-patch';
import { ACTIVE, PENDING, applyRfc6902, backend, clone, sharedHttpRoute } from './support/route-fixtures';

/** An in-memory API server path for one route, with a hook that runs between our read and our write. */
class FakeClient {
  gets = 0;
  patches = 0;
  beforePatch?: (route: any) => void;
  constructor(public route: any) {}
  async get(ref: RouteRef): Promise<unknown> {
    expect(ref).toEqual({ kind: 'HTTPRoute', namespace: 'serving', name: 'llm' });
    this.gets++;
    return clone(this.route);
  }
  async patch(_ref: RouteRef, ops: readonly JsonPatchOp[]): Promise<unknown> {
    this.patches++;
    if (this.beforePatch) {
      const hook = this.beforePatch;
      this.beforePatch = undefined;
      hook(this.route);
    }
    try {
      this.route = applyRfc6902(this.route, ops);
    } catch {
      throw Object.assign(new Error('the server rejected our request due to an error in our request'), {
        status: 422,
        body: { kind: 'Status', status: 'Failure', message: 'the server rejected our request due to an error in our request', reason: 'Invalid', details: {}, code: 422 },
      });
    }
    return clone(this.route);
  }
}

describe('writeRouteWeights', () => {
  const ref = { kind: 'HTTPRoute' as const, namespace: 'serving', name: 'llm' };
  const managed = [{ name: ACTIVE, weight: 70 }, { name: PENDING, weight: 30 }];

  test('a route that already carries the weights costs one GET and no PATCH', async () => {
    const route = sharedHttpRoute();
    route.spec.rules[1].backendRefs.push(backend(PENDING, 0));
    const client = new FakeClient(route);
    const r = await writeRouteWeights(client, ref, [{ name: ACTIVE, weight: 100 }, { name: PENDING, weight: 0 }]);
    expect(r).toMatchObject({ attempts: 1, ops: [] });
    expect([client.gets, client.patches]).toEqual([1, 0]);
  });

  test('a concurrent writer that moves the managed rule makes the first patch fail its test; the retry keeps both edits', async () => {
    const client = new FakeClient(sharedHttpRoute());
    client.beforePatch = (route) => route.spec.rules.splice(0, 0, { matches: [{ path: { type: 'Exact', value: '/healthz' } }], backendRefs: [backend('health-svc', 1)] });
    const r = await writeRouteWeights(client, ref, managed);
    expect(r.attempts).toBe(2);
    expect([client.gets, client.patches]).toEqual([2, 2]);
    expect(client.route.spec.rules[0].backendRefs[0].name).toBe('health-svc');
    expect(client.route.spec.rules[2].backendRefs.map((b: any) => [b.name, b.weight])).toEqual([['static-svc', 0], [ACTIVE, 70], [PENDING, 30]]);
  });

  test('a concurrent edit elsewhere does not conflict: one patch, both edits kept', async () => {
    const client = new FakeClient(sharedHttpRoute());
    client.beforePatch = (route) => (route.spec.hostnames = ['llm.example.com', 'llm.example.org']);
    const r = await writeRouteWeights(client, ref, managed);
    expect(r.attempts).toBe(1);
    expect(client.route.spec.hostnames).toEqual(['llm.example.com', 'llm.example.org']);
  });

  test('gives up with RouteWriteConflictError after maxAttempts, waiting backoffMs between attempts', async () => {
    const client = new FakeClient(sharedHttpRoute());
    let n = 0;
    client.patch = async () => {
      n++;
      throw { status: 422, body: { message: 'the server rejected our request due to an error in our request', details: {} } };
    };
    const waits: number[] = [];
    await expect(writeRouteWeights(client, ref, managed, { maxAttempts: 3, backoffMs: (a) => (waits.push(a), 1) })).rejects.toThrow(RouteWriteConflictError);
    expect(n).toBe(3);
    expect(waits).toEqual([2, 3]);
  });

  test('other errors (a schema violation, 403, 404) are thrown at once', async () => {
    const client = new FakeClient(sharedHttpRoute());
    const invalid = { status: 422, body: { message: 'HTTPRoute "llm" is invalid', details: { causes: [{ field: 'spec.rules[1].backendRefs[1].weight' }] } } };
    client.patch = async () => {
      throw invalid;
    };
    await expect(writeRouteWeights(client, ref, managed)).rejects.toBe(invalid);
    const forbidden = { statusCode: 403 };
    client.patch = async () => {
      throw forbidden;
    };
    await expect(writeRouteWeights(client, ref, managed)).rejects.toBe(forbidden);
  });

  test('isPatchConflict: 409, and 422 without causes', () => {
    expect(isPatchConflict({ status: 409 })).toBe(true);
    expect(isPatchConflict({ code: 422, body: { details: {} } })).toBe(true);
    expect(isPatchConflict(Object.assign(new Error('x'), { statusCode: 422 }))).toBe(true);
    expect(isPatchConflict({ status: 422, body: { details: { causes: [{ field: 'x' }] } } })).toBe(false);
    // The shape of lib/runtime/kube's KubeApiError: statusCode plus the Status details.
    expect(isPatchConflict(Object.assign(new Error('HTTP 422'), { statusCode: 422, details: {} }))).toBe(true);
    expect(isPatchConflict(Object.assign(new Error('HTTP 422'), { statusCode: 422, details: { causes: [{ field: 'spec.rules' }] } }))).toBe(false);
    expect(isPatchConflict({ status: 500 })).toBe(false);
    expect(isPatchConflict(new Error('socket hang up'))).toBe(false);
    expect(isPatchConflict(undefined)).toBe(false);
  });
});

test("kubeRouteClient reads and patches the route the ref names (its kind's type), answering only the first GET with the pass's read", async () => {
  const calls: string[] = [];
  const live = { kind: 'GRPCRoute', metadata: { name: 'llm-grpcroute', resourceVersion: '2' } };
  const kube = {
    get: async (type: { kind: string }, name: string, namespace?: string) => (calls.push(`GET ${type.kind} ${namespace}/${name}`), live as any),
    patchJson: async (type: { kind: string }, name: string, namespace: string | undefined, ops: readonly JsonPatchOp[]) => (calls.push(`PATCH ${type.kind} ${namespace}/${name} ${ops.length}`), live as any),
  };
  const passRead = { kind: 'GRPCRoute', metadata: { name: 'llm-grpcroute', resourceVersion: '1' } };
  const route = kubeRouteClient(kube, passRead);
  const ref = { kind: 'GRPCRoute' as const, namespace: 'serving', name: 'llm-grpcroute' };
  expect(await route.get(ref)).toBe(passRead);
  await route.patch(ref, [{ op: 'test', path: '/metadata/name', value: 'llm-grpcroute' }]);
  expect(await route.get(ref)).toBe(live);
  expect(await kubeRouteClient(kube).get({ ...ref, kind: 'HTTPRoute', name: 'llm-httproute' })).toBe(live);
  expect(calls).toEqual(['PATCH GRPCRoute serving/llm-grpcroute 1', 'GET GRPCRoute serving/llm-grpcroute', 'GET HTTPRoute serving/llm-httproute']);
});
