/**
 * The integration tests' control plane is real: upstream kube-apiserver and etcd built from Go modules,
 * with the pinned upstream CRDs (KubeRay, Gateway API, RBG) installed, their OpenAPI schemas enforced
 * and RBAC on. Needs `npm run controlplane:build` first.
 */
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as https from 'node:https';
import * as path from 'node:path';
import { ControlPlane, startControlPlane, upstreamCrdFiles } from '../support/controlplane';
import { waitFor } from '../support/wait-at-most';

const NS = 'rayshift-it';
const ALICE = { token: crypto.randomBytes(16).toString('hex'), user: 'alice', groups: ['rayshift-testers'] };
const BOB = { token: crypto.randomBytes(16).toString('hex'), user: 'bob' };

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ crds: await upstreamCrdFiles(), extraTokens: [ALICE, BOB] });
  const ns = await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  expect(ns.status).toBe(201);
}, 300_000);

afterAll(async () => {
  await cp?.stop();
});

function rayService(name: string, spec?: Record<string, unknown>) {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayService',
    metadata: { name, namespace: NS },
    spec: spec ?? {
      rayClusterConfig: {
        headGroupSpec: {
          template: { spec: { containers: [{ name: 'ray-head', image: 'rayproject/ray:2.46.0' }] } },
        },
      },
    },
  };
}

const rayServices = `/apis/ray.io/v1/namespaces/${NS}/rayservices`;

/** Polls `fn` until it returns true (RBAC caches update asynchronously after a binding is written). */
async function eventually(fn: () => Promise<boolean>, timeoutMs = 15_000): Promise<boolean> {
  return waitFor(fn, 'the RBAC caches to agree', { timeoutMs, everyMs: 100 }).then(() => true, () => false);
}

describe('test control plane (kube-apiserver + etcd built from Go modules)', () => {
  test('serves the Kubernetes version pinned in test/controlplane/go.mod over TLS that only its own CA verifies', async () => {
    // Without the CA the serving certificate is not trusted: the helper's requests really verify it.
    const untrusted = await new Promise<string>((resolve) => {
      https
        .get(`${cp.url}/version`, { agent: false }, (res) => {
          res.resume();
          resolve(`HTTP ${res.statusCode}`);
        })
        .on('error', (e: NodeJS.ErrnoException) => resolve(String(e.code)));
    });
    expect(untrusted).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');

    const pinned = execFileSync('bash', [path.join(__dirname, '../../scripts/controlplane-bin-dir.sh'), '--version'], {
      encoding: 'utf8',
    }).trim();
    const v = await cp.request('GET', '/version');
    expect(v.status).toBe(200);
    expect(v.body.gitVersion).toBe(pinned);
  });

  test('has the newest pinned KubeRay, Gateway API and RBG CRDs Established', async () => {
    for (const name of ['rayservices.ray.io', 'rayclusters.ray.io', 'httproutes.gateway.networking.k8s.io', 'rolebasedgroups.workloads.x-k8s.io', 'coordinatedpolicies.workloads.x-k8s.io']) {
      const r = await cp.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      expect(r.status).toBe(200);
      const established = r.body.status.conditions.find((c: { type: string }) => c.type === 'Established');
      expect(established?.status).toBe('True');
    }
  });

  test('creates a ray.io/v1 RayService with a minimal valid spec and reads it back', async () => {
    const created = await cp.request('POST', rayServices, rayService('minimal'));
    expect(created.status).toBe(201);
    const got = await cp.request('GET', `${rayServices}/minimal`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.uid).toBe(created.body.metadata.uid);
    expect(got.body.spec.rayClusterConfig.headGroupSpec.template.spec.containers).toEqual([
      { name: 'ray-head', image: 'rayproject/ray:2.46.0' },
    ]);
  });

  test('rejects a RayService without spec.rayClusterConfig with 422 from the KubeRay CRD schema', async () => {
    const r = await cp.request('POST', rayServices, rayService('no-cluster', { serveConfigV2: 'applications: []' }));
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.details.causes).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'spec.rayClusterConfig', reason: 'FieldValueRequired' })]),
    );
    expect((await cp.request('GET', `${rayServices}/no-cluster`)).status).toBe(404);
  });

  test('rejects an HTTPRoute backendRef with weight -1 with 422 from the Gateway API CRD schema', async () => {
    const route = (weight: number) => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: `weight-${weight < 0 ? 'negative' : weight}`, namespace: NS },
      spec: {
        parentRefs: [{ name: 'gw' }],
        rules: [{ backendRefs: [{ name: 'svc-a', port: 8000, weight }] }],
      },
    });
    const routes = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`;
    const bad = await cp.request('POST', routes, route(-1));
    expect(bad.status).toBe(422);
    expect(bad.body.message).toMatch(/spec\.rules\[0\]\.backendRefs\[0\]\.weight.*should be greater than or equal to 0/);
    const good = await cp.request('POST', routes, route(70));
    expect(good.status).toBe(201);
  });

  test('enforces RBAC: a user without a RoleBinding gets 403 listing RayServices, 200 once a Role and RoleBinding grant it', async () => {
    const asAlice = () => cp.request('GET', rayServices, undefined, { token: ALICE.token });
    const before = await asAlice();
    expect(before.status).toBe(403);
    expect(before.body.message).toContain('User "alice" cannot list resource "rayservices"');

    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}`;
    const role = await cp.request('POST', `${rbac}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'rayservice-reader' },
      rules: [{ apiGroups: ['ray.io'], resources: ['rayservices'], verbs: ['get', 'list', 'watch'] }],
    });
    expect(role.status).toBe(201);
    const binding = await cp.request('POST', `${rbac}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'alice-reads-rayservices' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'rayservice-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
    expect(binding.status).toBe(201);

    expect(await eventually(async () => (await asAlice()).status === 200)).toBe(true);
    expect((await asAlice()).body.kind).toBe('RayServiceList');
    // The grant is exactly what the Role says: read-only, this namespace, this user.
    expect((await cp.request('POST', rayServices, rayService('by-alice'), { token: ALICE.token })).status).toBe(403);
    expect((await cp.request('GET', '/apis/ray.io/v1/namespaces/default/rayservices', undefined, { token: ALICE.token })).status).toBe(403);
    expect((await cp.request('GET', rayServices, undefined, { token: BOB.token })).status).toBe(403);
    expect((await cp.request('GET', rayServices, undefined, { token: 'not-a-valid-token' })).status).toBe(401);
  });

  test('a ServiceAccount token from the TokenRequest API authenticates as that ServiceAccount', async () => {
    const token = await cp.serviceAccountToken(NS, 'rollout-bot');
    const review = await cp.request(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { token },
    );
    expect(review.status).toBe(201);
    expect(review.body.status.userInfo.username).toBe(`system:serviceaccount:${NS}:rollout-bot`);
    expect(review.body.status.userInfo.groups).toEqual(expect.arrayContaining(['system:serviceaccounts', `system:serviceaccounts:${NS}`]));
    expect((await cp.request('GET', rayServices, undefined, { token })).status).toBe(403);
  });

  test('restart() restarts kube-apiserver on the same URL and the objects stored in etcd are still there', async () => {
    const created = await cp.request('POST', rayServices, rayService('survivor'));
    expect(created.status).toBe(201);
    const url = cp.url;

    await cp.restart();

    expect(cp.url).toBe(url);
    const got = await cp.request('GET', `${rayServices}/survivor`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.uid).toBe(created.body.metadata.uid);
    expect(got.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    // The CRD schema is enforced again after the restart.
    expect((await cp.request('POST', rayServices, rayService('no-cluster', {}))).status).toBe(422);
  });
});
