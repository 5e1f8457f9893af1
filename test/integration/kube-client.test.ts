/**
 * KubeClient against a real kube-apiserver + etcd with the upstream CRDs installed (RBAC on). Every
 * assertion reads the outcome back from the server.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import { stringify } from 'yaml';
import { KubeClient } from '../../lib/runtime/kube/client';
import { Condition, findCondition, setCondition } from '../../lib/runtime/kube/conditions';
import { KubeApiError, UnknownKindError } from '../../lib/runtime/kube/errors';
import { retryOnConflict } from '../../lib/runtime/kube/retry';
import { ALL_NAMESPACES, KnownTypes, KubeObject } from '../../lib/runtime/kube/types';
import { ControlPlane, startControlPlane, upstreamCrdFiles } from '../support/controlplane';
import { rejectionOf } from '../support/rejection';
import { waitFor } from '../support/wait-at-most';

const NS = 'kube-client-it';
const RS = { apiVersion: 'ray.io/v1', kind: 'RayService' } as const; // resolved through discovery
const ROUTE = KnownTypes.HTTPRoute;
const CM = KnownTypes.ConfigMap;

let cp: ControlPlane;
let kube: KubeClient;

beforeAll(async () => {
  cp = await startControlPlane({ crds: await upstreamCrdFiles() });
  kube = KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
}, 300_000);

afterAll(async () => {
  kube?.close();
  await cp?.stop();
});

function rayService(name: string, image = 'rayproject/ray:2.46.0'): KubeObject {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayService',
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      rayClusterConfig: {
        headGroupSpec: { rayStartParams: {}, template: { spec: { containers: [{ name: 'ray-head', image }] } } },
      },
    },
  };
}

function httpRoute(name: string, weights: [number, number]): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: NS },
    spec: {
      parentRefs: [{ name: 'gw', namespace: NS }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [
            { name: 'blue-serve-svc', namespace: NS, port: 8000, weight: weights[0] },
            { name: 'green-serve-svc', namespace: NS, port: 8000, weight: weights[1] },
          ],
        },
      ],
    },
  };
}

describe('KubeClient (real kube-apiserver)', () => {
  test('loads the kubeconfig (server, context namespace) and resolves CRD kinds through discovery', async () => {
    expect(kube.server).toBe(cp.url);
    expect(kube.namespace).toBe('default');
    await expect(kube.resolve(RS)).resolves.toMatchObject({ group: 'ray.io', version: 'v1', plural: 'rayservices', namespaced: true });
    await expect(kube.resolve({ apiVersion: 'workloads.x-k8s.io/v1alpha1', kind: 'RoleBasedGroup' })).resolves.toMatchObject({
      plural: 'rolebasedgroups',
      namespaced: true,
    });
    await expect(kube.resolve({ apiVersion: 'ray.io/v1', kind: 'NoSuchKind' })).rejects.toBeInstanceOf(UnknownKindError);
    await expect(kube.resolve({ apiVersion: 'nosuch.example.com/v1', kind: 'X' })).rejects.toBeInstanceOf(UnknownKindError);
  });

  test('server-side apply creates then updates, keeping field manager rayshift in managedFields', async () => {
    const created = await kube.apply(rayService('ssa'));
    expect(created.metadata.generation).toBe(1);
    const update = rayService('ssa', 'rayproject/ray:2.47.0');
    update.metadata.labels = { app: 'ssa', tier: 'serving' };
    await kube.apply(update);

    const got = await kube.get(RS, 'ssa', NS);
    expect(got.metadata.generation).toBe(2);
    expect(got.metadata.labels).toEqual({ app: 'ssa', tier: 'serving' });
    expect((got.spec as any).rayClusterConfig.headGroupSpec.template.spec.containers[0].image).toBe('rayproject/ray:2.47.0');
    const managers = got.metadata.managedFields!.map((m) => `${m.manager}/${m.operation}`);
    expect(managers).toEqual(['rayshift/Apply']);
    expect(JSON.stringify(got.metadata.managedFields![0].fieldsV1)).toContain('"f:tier"');

    // A field rayshift stops sending is removed (it was its only owner).
    await kube.apply(rayService('ssa', 'rayproject/ray:2.47.0'));
    expect((await kube.get(RS, 'ssa', NS)).metadata.labels).toEqual({ app: 'ssa' });

    // Another manager setting the same field conflicts unless it forces; force moves ownership.
    const other = { apiVersion: 'ray.io/v1', kind: 'RayService', metadata: { name: 'ssa', namespace: NS, labels: { app: 'other' } } };
    const conflict = await rejectionOf(kube.apply(other, { fieldManager: 'gitops' }), KubeApiError);
    expect(conflict.statusCode).toBe(409);
    expect(conflict.isConflict).toBe(true);
    expect(conflict.serverMessage).toContain('rayshift');
    await kube.apply(other, { fieldManager: 'gitops', force: true });
    const after = await kube.get(RS, 'ssa', NS);
    expect(after.metadata.labels).toEqual({ app: 'other' });
    expect(after.metadata.managedFields!.map((m) => m.manager).sort()).toEqual(['gitops', 'rayshift']);
  });

  test('dry-run apply is validated but not persisted', async () => {
    const dry = await kube.apply(rayService('dry'), { dryRun: true });
    expect(dry.metadata.uid).toBeTruthy();
    expect(await kube.tryGet(RS, 'dry', NS)).toBeUndefined();
  });

  test('status subresource: observedGeneration and conditions; lastTransitionTime moves only on a status change', async () => {
    await kube.apply(rayService('st'));
    const obj = await kube.get(RS, 'st', NS);
    const t1 = new Date('2030-01-01T00:00:00.123Z');
    const conds = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Upgrading', message: 'step 1', observedGeneration: 1 }, t1);
    const written = await kube.updateStatus({ ...obj, status: { observedGeneration: obj.metadata.generation, conditions: conds } });
    // A status write does not bump the generation; the status is stored.
    expect(written.metadata.generation).toBe(1);
    let got = await kube.get(RS, 'st', NS);
    expect(got.status).toEqual({ observedGeneration: 1, conditions: [{ type: 'Ready', status: 'False', reason: 'Upgrading', message: 'step 1', lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 1 }] });

    // Same status, new reason: the transition time stays; a spec change sent to /status is ignored.
    const t2 = new Date('2030-01-01T00:05:00Z');
    const same = setCondition((got.status as any).conditions as Condition[], { type: 'Ready', status: 'False', reason: 'Upgrading', message: 'step 2' }, t2);
    await kube.updateStatus({ ...got, spec: { rayClusterConfig: { headGroupSpec: { rayStartParams: {}, template: { spec: { containers: [{ name: 'x', image: 'y' }] } } } } }, status: { ...(got.status as object), conditions: same } });
    got = await kube.get(RS, 'st', NS);
    expect((got.spec as any).rayClusterConfig.headGroupSpec.template.spec.containers[0].name).toBe('ray-head');
    expect(findCondition((got.status as any).conditions, 'Ready')).toMatchObject({ message: 'step 2', lastTransitionTime: '2030-01-01T00:00:00Z' });

    // Status flips: the transition time moves. Through server-side apply to /status this time. The
    // server tracks Apply and Update of one manager name as two managers, so taking over fields written
    // by updateStatus needs `force` (pick one write style per object).
    const t3 = new Date('2030-01-01T00:10:00Z');
    const flipped = setCondition((got.status as any).conditions as Condition[], { type: 'Ready', status: 'True', reason: 'Serving', observedGeneration: 1 }, t3);
    const statusApply = { apiVersion: 'ray.io/v1', kind: 'RayService', metadata: { name: 'st', namespace: NS }, status: { observedGeneration: 1, conditions: flipped } };
    const mixed = await rejectionOf(kube.applyStatus(statusApply), KubeApiError);
    expect(mixed.isConflict).toBe(true);
    await kube.applyStatus(statusApply, { force: true });
    got = await kube.get(RS, 'st', NS);
    expect(findCondition((got.status as any).conditions, 'Ready')).toMatchObject({ status: 'True', reason: 'Serving', lastTransitionTime: '2030-01-01T00:10:00Z' });
    expect(got.metadata.managedFields!.some((m) => m.manager === 'rayshift' && m.operation === 'Apply' && m.subresource === 'status')).toBe(true);
  });

  test('update with a stale resourceVersion gets a typed 409; retryOnConflict succeeds after a concurrent writer', async () => {
    const cm = await kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'occ', namespace: NS }, data: { a: '1' } });
    await kube.update({ ...cm, data: { a: '2' } });
    const stale = await rejectionOf(kube.update({ ...cm, data: { a: 'stale' } }), KubeApiError);
    expect(stale.statusCode).toBe(409);
    expect(stale.reason).toBe('Conflict');
    expect(stale.isConflict).toBe(true);
    await expect(kube.update({ ...cm, metadata: { ...cm.metadata, resourceVersion: undefined } })).rejects.toThrow(/resourceVersion is required/);

    const attempts: number[] = [];
    const result = await retryOnConflict(
      async (attempt) => {
        attempts.push(attempt);
        const cur = await kube.get<KubeObject & { data: Record<string, string> }>(CM, 'occ', NS);
        if (attempt === 1) {
          // Another writer changes the object between our read and our write.
          const r = await cp.request('PUT', `/api/v1/namespaces/${NS}/configmaps/occ`, { ...cur, data: { ...cur.data, other: 'x' } });
          expect(r.status).toBe(200);
        }
        return kube.update({ ...cur, data: { ...cur.data, ours: 'y' } });
      },
      { attempts: 4, backoff: { initialMs: 5 } },
    );
    expect(attempts).toEqual([1, 2]);
    expect((result as any).data).toEqual({ a: '2', other: 'x', ours: 'y' });
    expect((await kube.get<any>(CM, 'occ', NS)).data).toEqual({ a: '2', other: 'x', ours: 'y' });

    // AlreadyExists is a 409 too, but not a conflict: not retried.
    let calls = 0;
    const exists = await rejectionOf(
      retryOnConflict(() => {
        calls++;
        return kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'occ', namespace: NS } });
      }),
      KubeApiError,
    );
    expect(exists.isAlreadyExists).toBe(true);
    expect(calls).toBe(1);
  });

  test('JSON patch: a failing test op is rejected and changes nothing; a passing one changes only the weights', async () => {
    await kube.create(httpRoute('route', [90, 10]));
    const before = await kube.get(ROUTE, 'route', NS);
    const err = await rejectionOf(
      kube.patchJson(ROUTE, 'route', NS, [
        { op: 'test', path: '/spec/rules/0/backendRefs/0/weight', value: 50 },
        { op: 'replace', path: '/spec/rules/0/backendRefs/0/weight', value: 0 },
        { op: 'replace', path: '/spec/rules/0/backendRefs/1/weight', value: 100 },
      ]),
      KubeApiError,
    );
    // kube-apiserver answers a failed `test` op with a bare 422 Invalid ("the server rejected our request...").
    expect(err.statusCode).toBe(422);
    expect(err.reason).toBe('Invalid');
    const unchanged = await kube.get(ROUTE, 'route', NS);
    expect(unchanged.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(unchanged.spec).toEqual(before.spec);

    const patched = await kube.patchJson(ROUTE, 'route', NS, [
      { op: 'test', path: '/metadata/resourceVersion', value: before.metadata.resourceVersion },
      { op: 'test', path: '/spec/rules/0/backendRefs/0/weight', value: 90 },
      { op: 'replace', path: '/spec/rules/0/backendRefs/0/weight', value: 70 },
      { op: 'replace', path: '/spec/rules/0/backendRefs/1/weight', value: 30 },
    ]);
    // Exactly the two weights changed; everything else (including server defaults) is as before.
    const expected = structuredClone(before.spec) as any;
    expected.rules[0].backendRefs[0].weight = 70;
    expected.rules[0].backendRefs[1].weight = 30;
    expect(patched.spec).toEqual(expected);
    expect(patched.metadata.managedFields!.some((m) => m.manager === 'rayshift' && m.operation === 'Update')).toBe(true);

    // The resourceVersion guard now fails: the object moved on.
    const guard = await rejectionOf(
      kube.patchJson(ROUTE, 'route', NS, [
        { op: 'test', path: '/metadata/resourceVersion', value: before.metadata.resourceVersion },
        { op: 'replace', path: '/spec/rules/0/backendRefs/0/weight', value: 0 },
      ]),
      KubeApiError,
    );
    expect(guard.statusCode).toBe(422);
    expect((await kube.get<any>(ROUTE, 'route', NS)).spec.rules[0].backendRefs[0].weight).toBe(70);
  });

  test('list: label selectors and pagination', async () => {
    for (let i = 0; i < 5; i++) {
      await kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `page-${i}`, namespace: NS, labels: { set: 'paged', parity: i % 2 ? 'odd' : 'even' } } });
    }
    const first = await kube.list(CM, { namespace: NS, labelSelector: { set: 'paged' }, limit: 2 });
    expect(first.items.map((o) => o.metadata.name)).toEqual(['page-0', 'page-1']);
    expect(first.items[0]).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(first.continue).toBeTruthy();
    const second = await kube.list(CM, { namespace: NS, labelSelector: { set: 'paged' }, limit: 2, continue: first.continue });
    expect(second.items.map((o) => o.metadata.name)).toEqual(['page-2', 'page-3']);

    const all = await kube.listAll(CM, { namespace: NS, labelSelector: 'set=paged', pageSize: 2 });
    expect(all.items.map((o) => o.metadata.name)).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
    expect(Number(all.resourceVersion)).toBeGreaterThan(0);
    const odd = await kube.listAll(CM, { namespace: ALL_NAMESPACES, labelSelector: 'set=paged,parity=odd' });
    expect(odd.items.map((o) => o.metadata.name)).toEqual(['page-1', 'page-3']);
    const byField = await kube.list(CM, { namespace: NS, fieldSelector: 'metadata.name=page-4' });
    expect(byField.items.map((o) => o.metadata.name)).toEqual(['page-4']);
  });

  test('delete: propagation policy, preconditions, not found', async () => {
    await kube.apply(rayService('del-fg'));
    expect(await kube.delete(RS, 'del-fg', NS, { propagationPolicy: 'Foreground' })).toBe(true);
    // No garbage collector runs here, so the foreground finalizer keeps the object, marked for deletion.
    const lingering = await kube.get(RS, 'del-fg', NS);
    expect(lingering.metadata.deletionTimestamp).toBeTruthy();
    expect(lingering.metadata.finalizers).toEqual(['foregroundDeletion']);
    await kube.patchJson(RS, 'del-fg', NS, [
      { op: 'test', path: '/metadata/finalizers', value: ['foregroundDeletion'] },
      { op: 'remove', path: '/metadata/finalizers' },
    ]);
    expect(await kube.tryGet(RS, 'del-fg', NS)).toBeUndefined();

    const cm = await kube.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'del-pre', namespace: NS } });
    const pre = await rejectionOf(kube.delete(CM, 'del-pre', NS, { preconditions: { resourceVersion: '1' } }), KubeApiError);
    expect(pre.statusCode).toBe(409);
    expect(await kube.delete(CM, 'del-pre', NS, { propagationPolicy: 'Background', preconditions: { uid: cm.metadata.uid } })).toBe(true);
    expect(await kube.tryGet(CM, 'del-pre', NS)).toBeUndefined();
    expect(await kube.delete(CM, 'del-pre', NS, { ignoreNotFound: true })).toBe(false);
    const nf = await rejectionOf(kube.delete(CM, 'del-pre', NS), KubeApiError);
    expect(nf.isNotFound).toBe(true);
    expect(nf.message).toBe(`DELETE /api/v1/namespaces/${NS}/configmaps/del-pre: HTTP 404 NotFound: configmaps "del-pre" not found`);
  });

  test('schema validation errors are typed 422 Invalid with causes', async () => {
    const bad = httpRoute('bad', [90, 10]);
    (bad.spec as any).rules[0].backendRefs[0].weight = -1;
    const err = await rejectionOf(kube.create(bad), KubeApiError);
    expect(err.statusCode).toBe(422);
    expect(err.reason).toBe('Invalid');
    expect(err.details?.causes?.some((c) => c.field?.includes('weight'))).toBe(true);
  });

  test('RBAC: a ServiceAccount without rights gets a typed 403 that leaks no token; a bad token a typed 401', async () => {
    const token = await cp.serviceAccountToken(NS, 'nobody');
    const dir = fs.mkdtempSync(path.join(cp.dir, 'sa-'));
    const kcPath = path.join(dir, 'kubeconfig');
    const writeKubeconfig = (file: string, tok: string) =>
      fs.writeFileSync(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'c', cluster: { server: cp.url, 'certificate-authority': cp.caFile } }],
          users: [{ name: 'u', user: { token: tok } }],
          contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: NS } }],
          'current-context': 'x',
        }),
      );
    writeKubeconfig(kcPath, token);
    const sa = KubeClient.fromKubeconfig(kcPath);
    expect(sa.namespace).toBe(NS);
    try {
      const err = await rejectionOf(sa.get(KnownTypes.RayService, 'ssa', NS), KubeApiError);
      expect(err.statusCode).toBe(403);
      expect(err.reason).toBe('Forbidden');
      expect(err.isForbidden).toBe(true);
      expect(err.serverMessage).toContain(`system:serviceaccount:${NS}:nobody`);
      for (const text of [err.message, String(err), err.stack ?? '', JSON.stringify(err), util.inspect(err), util.inspect(sa, { depth: 10 }), JSON.stringify(sa)]) {
        expect(text).not.toContain(token);
        expect(text).not.toContain(cp.adminToken);
      }
      // Discovery is open to authenticated users, so kinds still resolve; writes are forbidden too.
      expect((await rejectionOf(sa.apply(rayService('sa-made')), KubeApiError)).statusCode).toBe(403);

      // Granting the right makes the same client succeed (RBAC caches may lag a little).
      await kube.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'rs-reader', namespace: NS }, rules: [{ apiGroups: ['ray.io'], resources: ['rayservices'], verbs: ['get'] }] });
      await kube.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'rs-reader', namespace: NS },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'rs-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'nobody', namespace: NS }],
      });
      await waitFor(async () => (await sa.tryGet(KnownTypes.RayService, 'ssa', NS))?.metadata.name === 'ssa', 'the granted read to succeed', { timeoutMs: 10_000, everyMs: 100, retryErrors: true });
    } finally {
      sa.close();
    }

    const badToken = crypto.randomBytes(16).toString('hex');
    const badPath = path.join(dir, 'bad-kubeconfig');
    writeKubeconfig(badPath, badToken);
    const bad = KubeClient.fromKubeconfig(badPath);
    try {
      const err = await rejectionOf(bad.get(KnownTypes.ConfigMap, 'x', NS), KubeApiError);
      expect(err.statusCode).toBe(401);
      expect(err.isUnauthorized).toBe(true);
      expect(util.inspect(err) + JSON.stringify(err) + err.message).not.toContain(badToken);
    } finally {
      bad.close();
    }
  });

  test('in-cluster config: server from the environment, token, CA and namespace from the ServiceAccount folder', async () => {
    const dir = fs.mkdtempSync(path.join(cp.dir, 'sa-mount-'));
    const token = await cp.serviceAccountToken(NS, 'pod-sa');
    fs.writeFileSync(path.join(dir, 'token'), token);
    fs.copyFileSync(cp.caFile, path.join(dir, 'ca.crt'));
    fs.writeFileSync(path.join(dir, 'namespace'), NS);
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    const u = new URL(cp.url);
    process.env.KUBERNETES_SERVICE_HOST = u.hostname;
    process.env.KUBERNETES_SERVICE_PORT = u.port;
    let pod: KubeClient | undefined;
    try {
      pod = KubeClient.inCluster({ serviceAccountDir: dir });
      expect(pod.namespace).toBe(NS);
      expect(pod.server).toBe(cp.url);
      // Authenticated as the ServiceAccount (whose rights are none): the server names it in the 403.
      const err = await rejectionOf(pod.list(CM, { namespace: NS }), KubeApiError);
      expect(err.statusCode).toBe(403);
      expect(err.serverMessage).toContain(`system:serviceaccount:${NS}:pod-sa`);
    } finally {
      pod?.close();
      for (const [k, v] of [['KUBERNETES_SERVICE_HOST', saved.host], ['KUBERNETES_SERVICE_PORT', saved.port]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    delete process.env.KUBERNETES_SERVICE_HOST;
    expect(() => KubeClient.inCluster({ serviceAccountDir: dir })).toThrow(/not running in a cluster/);
  });
});
