/**
 * RBG's real controller (v0.7.0) in the test cluster (test/support/cluster.ts): a RoleBasedGroup
 * synthesized by rayshift's `RoleBasedGroup` construct (executor `rbg`, RBG's default RoleInstanceSet
 * workloads) becomes one RoleInstanceSet per role and one Pod per replica, which kube-scheduler and
 * kwok run to Ready, and RBG reports every role ready. A new image is then rolled in place: kwok's
 * `pod-image-update` stage reports the new image as a kubelet would, and RBG counts every replica
 * updated on the same Pods. Needs `npm run controlplane:build` and `bash scripts/build-cluster.sh kwok rbg`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { pollUntil } from '../support/processes';
import { getWhen as getClusterWhen, startTestCluster, TestCluster } from '../support/cluster';

const NS = 'default';
const REPLICAS: Record<string, number> = { prefill: 2, decode: 1 };
const GROUP = `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/rolebasedgroups`;
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ rbg: true, nodes: 2 });
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
});

/** The group as the construct synthesizes it, every role at `image`. */
function synthesize(image: string): any {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name: 'pd', namespace: NS },
    roles: Object.entries(REPLICAS).map(([name, replicas]) => ({ name, replicas, template: { spec: { containers: [{ name, image }] } } })),
  });
  const objects = Testing.synth(chart);
  expect(objects.map((o) => o.kind)).toEqual(['RoleBasedGroup']);
  return objects[0];
}

/** `getWhen` on this cluster for a resource that must exist (another status is a reason to wait). */
const getWhen = (urlPath: string, what: string, check: (body: any) => string | undefined): Promise<any> =>
  getClusterWhen(cluster, urlPath, what, (body, status) => (status === 200 ? check(body) : `HTTP ${status}`), 120_000);

/** Waits until RBG reports every role with all replicas ready and updated to the group's template. */
async function groupReady(what: string): Promise<void> {
  await pollUntil(
    what,
    async () => {
      const g = (await cluster.cp.request('GET', `${GROUP}/pd`)).body;
      const statuses = (g.status?.roleStatuses ?? []) as any[];
      const behind = Object.entries(REPLICAS).filter(([role, n]) => {
        const s = statuses.find((x) => x.name === role);
        return !(s && s.readyReplicas === n && s.updatedReplicas === n);
      });
      if (behind.length === 0) return undefined;
      // For a failure message, what RBG's status is computed from: RoleInstanceSets, RoleInstances
      // and each Pod's image and runtime conditions.
      const pods = (await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/pods`)).body.items as any[];
      const podState = pods.map((p) => {
        const conds = (p.status?.conditions ?? []).filter((c: any) => ['Ready', 'ContainersReady', 'InPlaceUpdateReady'].includes(c.type));
        return `${p.metadata.name} ${p.status?.containerStatuses?.[0]?.image} ${conds.map((c: any) => `${c.type}=${c.status}`).join(',')}`;
      });
      const sets = (await cluster.cp.request('GET', `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/roleinstancesets`)).body.items as any[];
      const setState = sets.map((x) => `${x.metadata.name} updated ${x.status?.updatedReplicas} ready ${x.status?.readyReplicas} revision ${x.status?.updateRevision}`);
      const instances = (await cluster.cp.request('GET', `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/roleinstances`)).body.items as any[];
      const instanceState = instances.map((x) => `${x.metadata.name} ${JSON.stringify(x.status?.componentStatuses)} ${(x.status?.conditions ?? []).map((c: any) => `${c.type}=${c.status}`).join(',')}`);
      return `roles ${JSON.stringify(statuses)}; sets ${setState.join('; ')}; instances ${instanceState.join('; ')}; pods ${podState.join('; ')}`;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/** The group's Pods as role → image per Pod name. */
async function podImages(): Promise<Record<string, string>> {
  const pods = (await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/pods`)).body.items as any[];
  return Object.fromEntries(pods.map((p) => [p.metadata.name, `${p.status?.phase} ${p.status?.containerStatuses?.[0]?.image}`]));
}

test('RBG turns a rayshift-synthesized group into one RoleInstanceSet per role and ready Pods', () =>
  cluster.printLogsOnFailure(async () => {
    const created = await cluster.cp.request('POST', GROUP, synthesize('sglang:v1'));
    expect(created.status).toBe(201);
    await groupReady('every role of pd ready');
    const sets = (await cluster.cp.request('GET', `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/roleinstancesets`)).body.items as any[];
    expect(sets.map((s) => s.metadata.ownerReferences?.[0]?.name)).toEqual(['pd', 'pd']);
    const images = await podImages();
    expect(Object.values(images).sort()).toEqual(['Running sglang:v1', 'Running sglang:v1', 'Running sglang:v1']);
  }));

test('a new image rolls in place: the same Pods report it, and RBG counts every replica updated', () =>
  cluster.printLogsOnFailure(async () => {
    const before = await podImages();
    const current = (await cluster.cp.request('GET', `${GROUP}/pd`)).body;
    const next = synthesize('sglang:v2');
    const put = await cluster.cp.request('PUT', `${GROUP}/pd`, { ...next, metadata: { ...next.metadata, resourceVersion: current.metadata.resourceVersion } });
    expect(put.status).toBe(200);
    await getWhen(`/api/v1/namespaces/${NS}/pods`, 'every Pod to report sglang:v2', (b) => {
      const images = (b.items as any[]).map((p) => p.status?.containerStatuses?.[0]?.image);
      return images.length === 3 && images.every((i) => i === 'sglang:v2') ? undefined : `images ${JSON.stringify(images)}`;
    });
    await groupReady('every role of pd updated and ready');
    const after = await podImages();
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort()); // in place: no Pod replaced
    expect(Object.values(after)).toEqual(['Running sglang:v2', 'Running sglang:v2', 'Running sglang:v2']);
  }));
