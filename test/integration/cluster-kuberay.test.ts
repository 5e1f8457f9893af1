/**
 * KubeRay's real operator (v1.7.0) in the test cluster (test/support/cluster.ts): a RayCluster whose
 * spec rayshift's `RayClusterSpecBuilder` builds becomes a head Pod, worker Pods and the head
 * Service; kube-scheduler places the Pods on kwok's Nodes, kwok runs them to Ready, KubeRay reports
 * the cluster ready, and kube-controller-manager lists the head in the Service's EndpointSlice. No
 * Ray process runs: nothing here needs one. Needs `npm run controlplane:build` and
 * `bash scripts/build-cluster.sh kwok kuberay`.
 */
import { RayClusterSpecBuilder } from '../../lib/cdk8s';
import { getWhen as getClusterWhen, startTestCluster, TestCluster } from '../support/cluster';

const NS = 'default';
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ kuberay: true, nodes: 2 });
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
});

/** `getWhen` on this cluster. */
const getWhen = (urlPath: string, what: string, check: (body: any, status: number) => string | undefined): Promise<any> =>
  getClusterWhen(cluster, urlPath, what, check, 90_000);

test('KubeRay turns a rayshift-built RayCluster into a head and 2 workers that kwok runs, and reports it ready', () =>
  cluster.printLogsOnFailure(async () => {
    const spec = new RayClusterSpecBuilder({
      image: 'rayproject/ray:2.52.0-py311',
      rayVersion: '2.52.0',
      head: { resources: { cpu: '2', memory: '8Gi' } },
      workerGroups: [{ groupName: 'gpu', resources: { cpu: '4', memory: '16Gi', accelerators: 1 }, replicas: 2, minReplicas: 2, maxReplicas: 4 }],
    }).toRayClusterConfig();
    const created = await cluster.cp.request('POST', `/apis/ray.io/v1/namespaces/${NS}/rayclusters`, {
      apiVersion: 'ray.io/v1',
      kind: 'RayCluster',
      metadata: { name: 'llm' },
      spec,
    });
    expect(created.status).toBe(201);

    const rc = await getWhen(`/apis/ray.io/v1/namespaces/${NS}/rayclusters/llm`, 'RayCluster llm to be ready', (b) =>
      b.status?.state === 'ready' ? undefined : `state ${b.status?.state}, conditions ${JSON.stringify(b.status?.conditions ?? [])}`,
    );
    expect(rc.status.readyWorkerReplicas).toBe(2);
    expect(rc.status.conditions).toContainEqual(expect.objectContaining({ type: 'RayClusterProvisioned', status: 'True' }));
    expect(rc.status.conditions).toContainEqual(expect.objectContaining({ type: 'HeadPodReady', status: 'True' }));

    const pods = (await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=ray.io%2Fcluster%3Dllm`)).body.items as any[];
    const summary = pods
      .map((p) => ({ type: p.metadata.labels['ray.io/node-type'], group: p.metadata.labels['ray.io/group'], phase: p.status.phase, onKwok: cluster.nodes.includes(p.spec.nodeName) }))
      .sort((a, b) => a.type.localeCompare(b.type));
    expect(summary).toEqual([
      { type: 'head', group: 'headgroup', phase: 'Running', onKwok: true },
      { type: 'worker', group: 'gpu', phase: 'Running', onKwok: true },
      { type: 'worker', group: 'gpu', phase: 'Running', onKwok: true },
    ]);
    const worker = pods.find((p) => p.metadata.labels['ray.io/node-type'] === 'worker');
    expect(worker.spec.containers[0].resources.limits['nvidia.com/gpu']).toBe('1');
    const head = pods.find((p) => p.metadata.labels['ray.io/node-type'] === 'head');

    const svc = await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/services/llm-head-svc`);
    expect(svc.status).toBe(200);
    expect(svc.body.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'RayCluster', name: 'llm' })]);
    await getWhen(
      `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dllm-head-svc`,
      'the head Service EndpointSlice to list the head Pod',
      (b) => {
        const addrs = (b.items ?? []).flatMap((s: any) => (s.endpoints ?? []).filter((e: any) => e.conditions?.ready).flatMap((e: any) => e.addresses));
        return addrs.length === 1 && addrs[0] === head.status.podIP ? undefined : `ready addresses ${JSON.stringify(addrs)}, head ${head.status.podIP}`;
      },
    );
  }));

test('deleting the RayCluster removes its Pods and Service (KubeRay and the garbage collector)', () =>
  cluster.printLogsOnFailure(async () => {
    const del = await cluster.cp.request('DELETE', `/apis/ray.io/v1/namespaces/${NS}/rayclusters/llm`);
    expect(del.status).toBe(200);
    await getWhen(`/api/v1/namespaces/${NS}/pods?labelSelector=ray.io%2Fcluster%3Dllm`, 'the Pods of llm to be gone', (b) =>
      (b.items ?? []).length === 0 ? undefined : `${b.items.length} Pods left`,
    );
    await getWhen(`/api/v1/namespaces/${NS}/services/llm-head-svc`, 'the head Service to be gone', (_b, status) =>
      status === 404 ? undefined : `HTTP ${status}`,
    );
  }));
