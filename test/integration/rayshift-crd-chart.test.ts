/**
 * The operator's install chart on a real kube-apiserver: every object it synthesizes is accepted
 * (the Deployment without a Pod Security warning in its `restricted` namespace), the CRD becomes
 * Established, and the ServiceAccount can do exactly the operator's job — write route weights,
 * RayService status and finalizers, RayClusters, its Lease — and nothing next to it (Secrets,
 * RayService specs, other Leases, route status writes). Needs `npm run controlplane:build`.
 */
import { Testing } from 'cdk8s';
import * as fs from 'node:fs';
import { parse } from 'yaml';
import { crdsOf, newestVersion } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { buildServiceRoute, clusterBackends } from '../../lib/runtime/route/build';
import { routePath } from '../support/rest-paths';
import { JsonPatchOp } from '../../lib/runtime/route/types';
import { RouteClient, writeRouteWeights } from '../../lib/runtime/route/weight-patch';
import { OPERATOR_LEASE_NAME, OperatorChart } from '../../operator/chart/operator-chart';
import { ControlPlane, startControlPlane, upstreamCrdFiles } from '../support/controlplane';
import { rayshiftService } from '../spec/fixtures';
import { backendWeights } from '../support/route-weights';
import { collectionPath } from '../support/rest-paths';
import { waitFor } from '../support/wait-at-most';

const OP_NS = 'rayshift-system';
const NS = 'serving';
const SA_USER = `system:serviceaccount:${OP_NS}:rayshift-operator`;

let cp: ControlPlane;
let objects: any[];
let token: string;
const warnings = new Map<string, string | undefined>();


/**
 * Polls `fn` until `ok` holds (a wait for the API server's controllers and RBAC cache, not an
 * assertion that something did not happen); throws on timeout so a wait that never ends fails here
 * rather than as a confusing assertion later.
 */
async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  let v!: T;
  await waitFor(async () => {
    v = await fn();
    return ok(v) || `last value: ${JSON.stringify(v).slice(0, 300)}`;
  }, 'the value to be accepted', { timeoutMs, everyMs: 200 });
  return v;
}

beforeAll(async () => {
  const crds = (await upstreamCrdFiles()).filter((f) => /ray\.io_|gateway\.networking\.k8s\.io_/.test(f));
  cp = await startControlPlane({ crds });
  const file = await resolveCrdFile(crdsOf('kuberay', newestVersion('kuberay')).find((c) => c.file === 'ray.io_rayservices.yaml')!);
  const chart = new OperatorChart(Testing.app(), 'op', { kubeRayRayServiceCrd: parse(fs.readFileSync(file, 'utf8'), { maxAliasCount: -1 }) });
  objects = Testing.synth(chart);
  for (const o of objects) {
    const r = await cp.request('POST', collectionPath(o), o);
    if (r.status !== 201) throw new Error(`creating ${o.kind} ${o.metadata.name}: HTTP ${r.status}: ${r.body?.message}`);
    warnings.set(o.kind, r.headers.warning as string | undefined);
  }
  await eventually(
    () => cp.request('GET', '/apis/rayshift.dev/v1alpha1/rayservices?limit=1'),
    (r) => r.status === 200,
  );
  // The list is served before the establishing controller flips Established; wait for it so the
  // assertion below tests the CRD, not a race with that controller.
  await eventually(
    () => cp.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayservices.rayshift.dev'),
    (r) => establishedOf(r.body) === 'True',
  );
  expect((await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(201);
  token = await cp.serviceAccountToken(OP_NS, 'rayshift-operator');
}, 300_000);

afterAll(async () => {
  await cp?.stop();
});

test('every object of the chart is accepted; the Deployment raises no Pod Security warning in its restricted namespace', async () => {
  expect(objects.map((o) => o.kind)).toEqual(['Namespace', 'CustomResourceDefinition', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'Deployment']);
  expect(warnings.get('Deployment')).toBeUndefined();
  // The check is live: a privileged Deployment in the same namespace is warned about.
  const dep = structuredClone(objects.find((o) => o.kind === 'Deployment'));
  dep.metadata.name = 'privileged';
  dep.spec.template.spec.containers[0].securityContext = { privileged: true };
  const r = await cp.request('POST', collectionPath(dep), dep);
  expect(r.status).toBe(201);
  expect(String(r.headers.warning)).toMatch(/would violate PodSecurity .*restricted.*privileged/);
  const crd = await cp.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayservices.rayshift.dev');
  expect(establishedOf(crd.body)).toBe('True');
});

/** The status of a CRD's Established condition, if any. */
function establishedOf(crd: any): string | undefined {
  return crd?.status?.conditions?.find((c: any) => c.type === 'Established')?.status;
}

/** What RBAC says the operator's ServiceAccount may do. */
async function can(verb: string, resource: string, opts: { group?: string; namespace?: string; subresource?: string; name?: string } = {}): Promise<boolean> {
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: SA_USER,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${OP_NS}`, 'system:authenticated'],
      resourceAttributes: { verb, resource, group: opts.group ?? '', namespace: opts.namespace, subresource: opts.subresource, name: opts.name },
    },
  };
  const r = await cp.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', review);
  expect(r.status).toBe(201);
  return r.body.status.allowed === true;
}

test('RBAC allows the operator\'s job and nothing next to it', async () => {
  await eventually(() => can('patch', 'httproutes', { group: 'gateway.networking.k8s.io', namespace: NS }), (v) => v);
  const allowed: Array<[string, string, Parameters<typeof can>[2]]> = [
    ['watch', 'rayservices', { group: 'rayshift.dev', namespace: NS }],
    ['patch', 'rayservices', { group: 'rayshift.dev', namespace: NS, subresource: 'status' }],
    ['update', 'rayservices', { group: 'rayshift.dev', namespace: NS, subresource: 'finalizers' }],
    ['create', 'rayclusters', { group: 'ray.io', namespace: NS }],
    ['delete', 'rayclusters', { group: 'ray.io', namespace: NS }],
    ['patch', 'services', { namespace: NS }],
    ['create', 'gateways', { group: 'gateway.networking.k8s.io', namespace: NS }],
    ['patch', 'grpcroutes', { group: 'gateway.networking.k8s.io', namespace: NS }],
    ['create', 'events', { group: 'events.k8s.io', namespace: NS }],
    ['create', 'leases', { group: 'coordination.k8s.io', namespace: OP_NS }],
    ['update', 'leases', { group: 'coordination.k8s.io', namespace: OP_NS, name: OPERATOR_LEASE_NAME }],
  ];
  const denied: typeof allowed = [
    ['update', 'rayservices', { group: 'rayshift.dev', namespace: NS }],
    ['delete', 'rayservices', { group: 'rayshift.dev', namespace: NS }],
    ['create', 'rayservices', { group: 'rayshift.dev', namespace: NS }],
    ['update', 'rayservices', { group: 'ray.io', namespace: NS }],
    ['get', 'secrets', { namespace: NS }],
    ['list', 'secrets', { namespace: OP_NS }],
    ['create', 'pods', { namespace: NS }],
    ['update', 'httproutes', { group: 'gateway.networking.k8s.io', namespace: NS }],
    ['delete', 'httproutes', { group: 'gateway.networking.k8s.io', namespace: NS }],
    ['get', 'httproutes', { group: 'gateway.networking.k8s.io', namespace: NS, subresource: 'status' }],
    ['update', 'rayclusters', { group: 'ray.io', namespace: NS }],
    ['update', 'rayservices', { group: 'rayshift.dev', namespace: NS, subresource: 'status' }],
    ['create', 'events', { namespace: NS }],
    ['patch', 'httproutes', { group: 'gateway.networking.k8s.io', namespace: NS, subresource: 'status' }],
    ['create', 'leases', { group: 'coordination.k8s.io', namespace: NS }],
    ['update', 'leases', { group: 'coordination.k8s.io', namespace: OP_NS, name: 'someone-elses-lease' }],
    ['delete', 'leases', { group: 'coordination.k8s.io', namespace: OP_NS, name: OPERATOR_LEASE_NAME }],
    ['update', 'clusterroles', { group: 'rbac.authorization.k8s.io' }],
    ['delete', 'customresourcedefinitions', { group: 'apiextensions.k8s.io' }],
  ];
  for (const [verb, resource, opts] of allowed) expect([verb, resource, opts, await can(verb, resource, opts)]).toEqual([verb, resource, opts, true]);
  for (const [verb, resource, opts] of denied) expect([verb, resource, opts, await can(verb, resource, opts)]).toEqual([verb, resource, opts, false]);
});

test('RBAC lets the RoleBasedGroup executor watch and patch groups, read their workloads, create and watch warmups and record Events — and nothing more', async () => {
  await eventually(() => can('patch', 'rolebasedgroups', { group: 'workloads.x-k8s.io', namespace: NS }), (v) => v);
  const allowed: Array<[string, string, Parameters<typeof can>[2]]> = [
    ['watch', 'rolebasedgroups', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['list', 'rolebasedgroups', { group: 'workloads.x-k8s.io' }],
    ['patch', 'rolebasedgroups', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['get', 'roleinstancesets', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['watch', 'roleinstancesets', { group: 'workloads.x-k8s.io' }],
    ['create', 'rolebasedgroupwarmups', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['watch', 'rolebasedgroupwarmups', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['get', 'statefulsets', { group: 'apps', namespace: NS }],
    // v1alpha1 roles on RBG v0.6.0: watched, and a round's partition carried into the StatefulSet.
    ['list', 'statefulsets', { group: 'apps', namespace: NS }],
    ['patch', 'statefulsets', { group: 'apps', namespace: NS }],
    // A rollback round replaces a StatefulSet role's Pods on the abandoned revision.
    ['delete', 'pods', { namespace: NS }],
    // A rollback round on RBG v0.8 reverts a last ordinal in place to the template of the revision before the rollout.
    ['update', 'roleinstances', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['get', 'controllerrevisions', { group: 'apps', namespace: NS }],
    ['get', 'leaderworkersets', { group: 'leaderworkerset.x-k8s.io', namespace: NS }],
    ['create', 'events', { group: 'events.k8s.io', namespace: NS }],
  ];
  const denied: typeof allowed = [
    ['create', 'rolebasedgroups', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['update', 'rolebasedgroups', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['delete', 'rolebasedgroups', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['patch', 'rolebasedgroups', { group: 'workloads.x-k8s.io', namespace: NS, subresource: 'status' }],
    ['patch', 'coordinatedpolicies', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['create', 'coordinatedpolicies', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['patch', 'roleinstancesets', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['delete', 'rolebasedgroupwarmups', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['patch', 'rolebasedgroupwarmups', { group: 'workloads.x-k8s.io', namespace: NS, subresource: 'status' }],
    ['delete', 'statefulsets', { group: 'apps', namespace: NS }],
    ['list', 'controllerrevisions', { group: 'apps', namespace: NS }],
    ['create', 'roleinstances', { group: 'workloads.x-k8s.io', namespace: NS }],
    ['get', 'deployments', { group: 'apps', namespace: NS }],
    ['create', 'pods', { namespace: NS }],
    ['delete', 'events', { group: 'events.k8s.io', namespace: NS }],
  ];
  for (const [verb, resource, opts] of allowed) expect([verb, resource, opts, await can(verb, resource, opts)]).toEqual([verb, resource, opts, true]);
  for (const [verb, resource, opts] of denied) expect([verb, resource, opts, await can(verb, resource, opts)]).toEqual([verb, resource, opts, false]);
});

/** A RouteClient that authenticates with the operator's ServiceAccount token. */
function asOperator(): RouteClient {
  return {
    async get(ref) {
      const path = routePath(ref.kind, ref.namespace, ref.name);
      const r = await cp.request('GET', path, undefined, { token });
      if (r.status !== 200) throw Object.assign(new Error(`GET ${path}: ${r.status}`), { status: r.status, body: r.body });
      return r.body;
    },
    async patch(ref, ops: readonly JsonPatchOp[]) {
      const path = routePath(ref.kind, ref.namespace, ref.name);
      const r = await cp.request('PATCH', path, ops, { contentType: 'application/json-patch+json', token });
      if (r.status >= 300) throw Object.assign(new Error(`PATCH ${path}: ${r.status} ${r.body?.message}`), { status: r.status, body: r.body });
      return r.body;
    },
  };
}

test('as its ServiceAccount the operator writes route weights, status, finalizers, RayClusters, head Pods\' serve label and its Lease, and deletes Pods — and is refused a spec write, Pod creation, and Secrets', async () => {
  // Route weights (JSON patch with test guards) on a route the admin created.
  const route = buildServiceRoute({ rayServiceName: 'llm', namespace: NS, backends: [{ cluster: 'llm-aaaaa', weight: 100 }] });
  expect((await cp.request('POST', `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`, route)).status).toBe(201);
  const written = await writeRouteWeights(asOperator(), { kind: 'HTTPRoute', namespace: NS, name: 'llm-httproute' }, clusterBackends(NS, [{ cluster: 'llm-aaaaa', weight: 60 }, { cluster: 'llm-bbbbb', weight: 40 }]));
  expect(backendWeights(written.route, ['llm-aaaaa-serve-svc', 'llm-bbbbb-serve-svc'])).toEqual([60, 40]);

  // A rayshift RayService: finalizer (metadata patch) and status yes, spec no.
  const rs = rayshiftService();
  rs.metadata = { name: 'llm', namespace: NS };
  expect((await cp.request('POST', `/apis/rayshift.dev/v1alpha1/namespaces/${NS}/rayservices`, rs)).status).toBe(201);
  const path = `/apis/rayshift.dev/v1alpha1/namespaces/${NS}/rayservices/llm`;
  const json = { contentType: 'application/json-patch+json', token };
  const merge = { contentType: 'application/merge-patch+json', token };
  expect((await cp.request('PATCH', path, [{ op: 'add', path: '/metadata/finalizers', value: ['rayshift.dev/finalizer'] }], json)).status).toBe(200);
  expect((await cp.request('PATCH', `${path}/status`, { status: { phase: 'Upgrading', activeServiceStatus: { rayClusterName: 'llm-aaaaa', trafficRoutedPercent: 60 } } }, merge)).status).toBe(200);
  // Read back as the admin: the operator reads RayServices from its watch, never with a get.
  const got = await cp.request('GET', path);
  expect(got.body.status.phase).toBe('Upgrading');
  expect((await cp.request('GET', path, undefined, { token })).status).toBe(403);
  // `patch` on rayservices would also let it patch the spec; RBAC cannot split metadata from spec, so
  // the operator's own code never sends one. What RBAC does refuse is a full update.
  expect((await cp.request('PUT', path, got.body, { token })).status).toBe(403);

  // A RayCluster.
  const cluster = {
    apiVersion: 'ray.io/v1',
    kind: 'RayCluster',
    metadata: { name: 'llm-bbbbb', namespace: NS },
    spec: { headGroupSpec: { template: { spec: { containers: [{ name: 'ray-head', image: 'rayproject/ray:2.52.0' }] } } } },
  };
  expect((await cp.request('POST', `/apis/ray.io/v1/namespaces/${NS}/rayclusters`, cluster, { token })).status).toBe(201);

  // Its Lease: create, then a resourceVersion-guarded update.
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${OP_NS}/leases`;
  const lease = await cp.request('POST', leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: OPERATOR_LEASE_NAME }, spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15 } }, { token });
  expect(lease.status).toBe(201);
  const renewed = await cp.request('PUT', `${leases}/${OPERATOR_LEASE_NAME}`, { ...lease.body, spec: { ...lease.body.spec, holderIdentity: 'pod-b' } }, { token });
  expect(renewed.status).toBe(200);
  expect((await cp.request('PUT', `${leases}/${OPERATOR_LEASE_NAME}`, { ...lease.body, spec: { ...lease.body.spec, holderIdentity: 'pod-c' } }, { token })).status).toBe(409);

  // Head Pods: read, and the serve label patched; EndpointSlices read. Creating a Pod, no; deleting
  // one, yes (a rollback round replaces a StatefulSet role's Pods on the abandoned revision).
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'llm-bbbbb-head', namespace: NS, labels: { 'ray.io/node-type': 'head', 'ray.io/serve': 'false' } }, spec: { containers: [{ name: 'ray-head', image: 'rayproject/ray:2.52.0' }] } };
  expect((await cp.request('POST', `/api/v1/namespaces/${NS}/pods`, pod)).status).toBe(201);
  expect((await cp.request('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=ray.io%2Fnode-type%3Dhead`, undefined, { token })).status).toBe(200);
  expect((await cp.request('PATCH', `/api/v1/namespaces/${NS}/pods/llm-bbbbb-head`, { metadata: { labels: { 'ray.io/serve': 'true' } } }, merge)).status).toBe(200);
  expect((await cp.request('GET', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, undefined, { token })).status).toBe(200);
  expect((await cp.request('POST', `/api/v1/namespaces/${NS}/pods`, { ...pod, metadata: { ...pod.metadata, name: 'other' } }, { token })).status).toBe(403);
  expect((await cp.request('DELETE', `/api/v1/namespaces/${NS}/pods/llm-bbbbb-head`, undefined, { token })).status).toBe(200);

  // Nothing else.
  expect((await cp.request('GET', `/api/v1/namespaces/${NS}/secrets`, undefined, { token })).status).toBe(403);
  expect((await cp.request('GET', `/api/v1/namespaces/${NS}/configmaps`, undefined, { token })).status).toBe(403);
  expect((await cp.request('PATCH', `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes/llm-httproute/status`, { status: { parents: [] } }, merge)).status).toBe(403);
});
