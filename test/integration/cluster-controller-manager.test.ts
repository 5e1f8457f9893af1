/**
 * The test cluster's kube-controller-manager (test/support/cluster.ts): a Deployment becomes a
 * ReplicaSet and Pods (scheduled and run by the scheduler and kwok), its Service gets an
 * EndpointSlice listing exactly the ready Pods, an object owned by a deleted owner is garbage
 * collected, and a deleted namespace finishes terminating. Needs `npm run controlplane:build` and
 * `bash scripts/build-cluster.sh kwok`.
 */
import { getWhen as getClusterWhen, startTestCluster, TestCluster } from '../support/cluster';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 2 });
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
});

async function create(path: string, body: Record<string, unknown>): Promise<any> {
  const r = await cluster.cp.request('POST', path, body);
  if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`);
  return r.body;
}

/** `getWhen` on this cluster. */
const getWhen = (urlPath: string, what: string, check: (body: any, status: number) => string | undefined): Promise<any> =>
  getClusterWhen(cluster, urlPath, what, check, 60_000);

test('a Deployment runs 3 Pods and its Service gets an EndpointSlice with exactly their IPs', () =>
  cluster.printLogsOnFailure(async () => {
    const ns = 'endpoints';
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const labels = { app: 'web' };
    await create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 3,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'registry.example/web:1', ports: [{ name: 'http', containerPort: 8080 }] }] } },
      },
    });
    await create(`/api/v1/namespaces/${ns}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    const pods = await getWhen(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`, '3 web Pods Running', (b) => {
      const running = (b.items ?? []).filter((p: any) => p.status?.phase === 'Running' && p.status.podIP);
      return running.length === 3 ? undefined : `${running.length} of ${(b.items ?? []).length} Running`;
    });
    const ips = pods.items.map((p: any) => p.status.podIP).sort();
    const slices = await getWhen(
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb`,
      'the EndpointSlice of Service web to list the 3 ready Pods',
      (b) => {
        const ready = (b.items ?? []).flatMap((s: any) => (s.endpoints ?? []).filter((e: any) => e.conditions?.ready));
        return ready.length === 3 ? undefined : `${ready.length} ready endpoints`;
      },
    );
    const endpoints = slices.items.flatMap((s: any) => s.endpoints);
    expect(endpoints.flatMap((e: any) => e.addresses).sort()).toEqual(ips);
    expect(slices.items[0].ports).toEqual([expect.objectContaining({ name: 'http', port: 8080 })]);
    expect(slices.items[0].metadata.labels['endpointslice.kubernetes.io/managed-by']).toBe('endpointslice-controller.k8s.io');
  }));

test('deleting an owner garbage-collects the object it owns', () =>
  cluster.printLogsOnFailure(async () => {
    const ns = 'default';
    const owner = await create(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
    await create(`/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owned', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }] },
    });
    await create(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bystander' } });
    const del = await cluster.cp.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/owner`, { propagationPolicy: 'Background' });
    expect(del.status).toBe(200);
    await getWhen(`/api/v1/namespaces/${ns}/configmaps/owned`, 'the owned ConfigMap to be collected', (_b, status) =>
      status === 404 ? undefined : `HTTP ${status}`,
    );
    expect((await cluster.cp.request('GET', `/api/v1/namespaces/${ns}/configmaps/bystander`)).status).toBe(200);
  }));

test('a deleted namespace finishes terminating: its objects are removed and then the namespace', () =>
  cluster.printLogsOnFailure(async () => {
    const ns = 'short-lived';
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await create(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'data' } });
    expect((await cluster.cp.request('DELETE', `/api/v1/namespaces/${ns}`)).status).toBe(200);
    await getWhen(`/api/v1/namespaces/${ns}`, `namespace ${ns} to be gone`, (b, status) =>
      status === 404 ? undefined : `HTTP ${status}, phase ${b?.status?.phase}`,
    );
  }));
