/**
 * rayshift's operator beside the real KubeRay operator (v1.7.0) in the test cluster
 * (test/support/operator-env.ts): a RayService synthesized by the `RayService` construct
 * with `executor: 'operator'` is upgraded incrementally by rayshift's operator (in this process),
 * while KubeRay's RayCluster controller turns the operator's RayClusters into head and worker Pods
 * that kube-scheduler places and kwok runs, and writes the `HeadPodReady`/`ready` state the operator
 * waits on (no simulated RayCluster controller). Serve is the TEST-ONLY simulated fleet (no Ray
 * runs here) and Gateway status the TEST-ONLY status writer (no data plane). In the same namespace a
 * second RayService, `executor: 'kuberay'`, is reconciled by KubeRay's RayService controller, and
 * neither controller writes the other's objects. rayshift keeps the head Pods' serve label, and
 * routes traffic to a cluster only once its serve Service has a ready endpoint.
 *
 * Needs `npm run controlplane:build` and `bash scripts/build-cluster.sh kwok kuberay`.
 */
import { App, Chart } from 'cdk8s';
import { RayClusterSpecBuilder, RayService } from '../../lib/cdk8s';
import { FIELD_MANAGER, KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { ENDPOINT_SLICE, FINALIZER, ORIGINATED_FROM_NAME, POD, SERVICE, SPEC_HASH_ANNOTATION } from '../../lib/spec/object-names';
import { getWhen } from '../support/cluster';
import { OperatorEnv, startOperatorHarness, OperatorHarness, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, recordRouteWeights, recordedPendingWeights, serveConfig, waitFor } from '../support/operator-env';

const NS = 'side-by-side';
/** The Node label the upgraded spec selects: its head stays Pending until a Node carries it. */
const POOL_LABEL = 'rayshift.test/pool';
const OPTIONS = { maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 1 };

let harness: OperatorHarness & { env: OperatorEnv };
let env: OperatorEnv;
/** The test's own writes, under a field manager of their own (the operator writes as `rayshift`). */
let user: KubeClient;

beforeAll(async () => {
  harness = await startOperatorHarness({ nodes: 2 });
  env = harness.env;
  user = KubeClient.fromKubeconfig(env.cp.kubeconfigPath, { fieldManager: 'cluster-test-user' });
  await createNamespace(user, NS);
}, 300_000);

afterAll(async () => {
  user?.close();
  await harness?.stop();
});

/** A RayService synthesized by the construct; `pool` puts every Pod on Nodes labelled with it. */
function synthesize(name: string, executor: 'operator' | 'kuberay', workerCpu: string, pool?: string, namespace = NS): KubeObject {
  const podSpec = pool === undefined ? undefined : { nodeSelector: { [POOL_LABEL]: pool } };
  const chart = new Chart(new App(), 'test', { namespace });
  new RayService(chart, name, {
    executor,
    metadata: { name },
    rayClusterConfig: new RayClusterSpecBuilder({
      image: 'rayproject/ray:2.52.0-py311',
      rayVersion: '2.52.0',
      head: { resources: { cpu: '1', memory: '4Gi' }, ...(podSpec ? { podSpec } : {}) },
      workerGroups: [{ groupName: 'small', resources: { cpu: workerCpu, memory: '4Gi' }, replicas: 1, minReplicas: 1, maxReplicas: 4, ...(podSpec ? { podSpec } : {}) }],
    }),
    serveConfig: serveConfig(4),
    ...(executor === 'operator'
      ? { upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { ...OPTIONS, gatewayClassName: 'simulated' } } }
      : {}),
    rayClusterDeletionDelaySeconds: 0,
  });
  return chart.toJson()[0] as KubeObject;
}

const pods = async (cluster: string): Promise<any[]> =>
  (await env.cp.request('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=ray.io%2Fcluster%3D${cluster}`)).body.items ?? [];

const condition = (obj: KubeObject | undefined, type: string): { status?: string } | undefined =>
  ((obj?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type);

/** The field managers of `obj`, as `manager` or `manager/status` for status-subresource writes. */
const managers = (obj: KubeObject): string[] =>
  [...new Set(((obj.metadata as { managedFields?: { manager: string; subresource?: string }[] }).managedFields ?? []).map((m) => (m.subresource ? `${m.manager}/${m.subresource}` : m.manager)))].sort();

let fruitClusterName: string;

test('the operator upgrades a RayService incrementally on RayClusters that KubeRay runs as Pods, waiting on the HeadPodReady KubeRay writes', () =>
  env.cluster.printLogsOnFailure(async () => {
    await user.create(synthesize('fruit', 'operator', '1'));
    await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', NS)).phase === 'Running', 'the first cluster to serve', 120_000);
    const first = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', NS)).activeClusterName as string;
    const firstCluster = await env.admin.get(RAYCLUSTER, first, NS);
    expect(condition(firstCluster, 'HeadPodReady')?.status).toBe('True');
    // KubeRay wrote that status; rayshift wrote the spec (and never the status).
    expect(managers(firstCluster)).toEqual(expect.arrayContaining([FIELD_MANAGER, 'kuberay-operator/status']));
    expect(managers(firstCluster)).not.toContain(`${FIELD_MANAGER}/status`);
    const firstPods = await pods(first);
    expect(firstPods.map((p) => [p.metadata.labels['ray.io/node-type'], p.status.phase, env.cluster.nodes.includes(p.spec.nodeName)]).sort()).toEqual([
      ['head', 'Running', true],
      ['worker', 'Running', true],
    ]);

    // KubeRay creates a RayService's head Pod with ray.io/serve=false and leaves the label to the
    // RayService controller: rayshift's operator sets it once Serve reports the head's proxy
    // healthy, and kube-controller-manager then lists the head in the cluster's serve Service
    // beside the worker (a head-only cluster would otherwise have no serve endpoint at all).
    const headPod = firstPods.find((p) => p.metadata.labels['ray.io/node-type'] === 'head');
    await getWhen(env.cluster, `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D${first}-serve-svc`, 'the head Pod in the serve Service', (b) => {
      const names = ((b.items ?? []) as any[]).flatMap((slice) => ((slice.endpoints ?? []) as any[]).map((e) => e.targetRef?.name)).sort();
      return names.length === 2 && names.includes(headPod.metadata.name) ? undefined : `endpoints ${JSON.stringify(names)}`;
    });
    const labelledHead = await env.admin.get(POD, headPod.metadata.name, NS);
    expect(labelledHead.metadata.labels?.['ray.io/serve']).toBe('true');
    expect(managers(labelledHead)).toEqual(expect.arrayContaining([FIELD_MANAGER, 'kuberay-operator']));

    const recorder = await recordRouteWeights(env.admin, NS, 'fruit-httproute');
    // Every state of the serve Services' EndpointSlices, with its resourceVersion (etcd's revision
    // orders it against the route's writes).
    const slices: { resourceVersion: number; service: string; ready: number }[] = [];
    const sliceWatch = env.admin.watch(ENDPOINT_SLICE, NS, (e) => {
      if (e.type === 'delete') return;
      const ready = ((e.object.endpoints ?? []) as any[]).filter((x) => x.conditions?.ready === true).length;
      slices.push({ resourceVersion: Number(e.object.metadata.resourceVersion), service: String(e.object.metadata.labels?.['kubernetes.io/service-name']), ready });
    });
    sliceWatch.start();
    await waitFor(() => recorder.history.length > 0, 'the route to be watched');
    const current = await user.get(RAYSHIFT_RAYSERVICE, 'fruit', NS);
    await user.update({ ...current, spec: synthesize('fruit', 'operator', '2', 'blue').spec });

    // The new head cannot be placed yet: KubeRay reports it not ready, and the operator waits for it.
    let pending = '';
    await waitFor(async () => {
      const s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', NS));
      pending = (s.pendingClusterName as string | undefined) ?? '';
      if (pending === '' || s.reason !== 'WaitingForHead') return false;
      const head = (await pods(pending)).find((p) => p.metadata.labels['ray.io/node-type'] === 'head');
      const scheduled = (head?.status?.conditions ?? []).find((c: { type: string }) => c.type === 'PodScheduled');
      const cluster = await env.admin.tryGet(RAYCLUSTER, pending, NS);
      return scheduled?.reason === 'Unschedulable' && condition(cluster, 'HeadPodReady')?.status === 'False';
    }, 'the pending head to be Unschedulable, KubeRay to report HeadPodReady=False and the operator to wait for the head', 60_000);
    expect(env.fleet.dashboard(NS, pending)).toBeUndefined(); // the operator has not called its Serve yet
    expect(recorder.history.every((h) => h.weights.every((w) => w.name !== `${pending}-serve-svc` || w.weight === 0))).toBe(true);

    const label = await env.cp.request('PATCH', `/api/v1/nodes/${env.cluster.nodes[1]}`, { metadata: { labels: { [POOL_LABEL]: 'blue' } } }, { contentType: 'application/merge-patch+json' });
    expect(label.status).toBe(200);
    await waitFor(async () => {
      const s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', NS));
      return s.phase === 'Running' && s.activeClusterName === pending && s.pendingClusterName === undefined;
    }, 'the upgrade to complete', 120_000);
    await waitFor(() => recorder.history[recorder.history.length - 1].weights.length === 1, 'the route to drop the old backend');
    recorder.stop();

    sliceWatch.stop();
    // OPTIONS' maxSurge 50, step 25, written from the rules (not by the planner under test): 25 and 50
    // onto the pending cluster's 50 % capacity, then 75 and 100 once the old cluster gave up its half.
    expect(recordedPendingWeights(recorder.history, pending)).toEqual([0, 25, 50, 75, 100]);
    // The first weight on the new cluster was written after its serve Service had a ready endpoint.
    const firstWeight = recorder.history.find((h) => h.weights.some((w) => w.name === `${pending}-serve-svc` && w.weight > 0))!;
    const firstEndpoint = slices.find((x) => x.service === `${pending}-serve-svc` && x.ready > 0);
    expect(firstEndpoint).toBeDefined();
    expect({ endpointAt: firstEndpoint!.resourceVersion, before: firstEndpoint!.resourceVersion < Number(firstWeight.resourceVersion) }).toEqual({ endpointAt: firstEndpoint!.resourceVersion, before: true });
    expect(recorder.history[recorder.history.length - 1].weights).toEqual([{ name: `${pending}-serve-svc`, weight: 100 }]);

    // The new cluster's Pods run on the labelled Node, KubeRay reports it ready; the old one is gone with its Pods.
    const next = await env.admin.get(RAYCLUSTER, pending, NS);
    expect([(next.status as { state?: string }).state, condition(next, 'HeadPodReady')?.status]).toEqual(['ready', 'True']);
    expect((await pods(pending)).map((p) => [p.spec.nodeName, p.status.phase])).toEqual([
      [env.cluster.nodes[1], 'Running'],
      [env.cluster.nodes[1], 'Running'],
    ]);
    expect(env.fleet.dashboard(NS, pending)!.targetCapacity()).toBeNull();
    await getWhen(env.cluster, `/apis/ray.io/v1/namespaces/${NS}/rayclusters/${first}`, 'the old RayCluster to be deleted', (_b, status) => (status === 404 ? undefined : `HTTP ${status}`));
    await getWhen(env.cluster, `/api/v1/namespaces/${NS}/pods?labelSelector=ray.io%2Fcluster%3D${first}`, 'the old Pods to be gone', (b) =>
      (b.items ?? []).length === 0 ? undefined : `${b.items.length} Pods left`,
    );
    fruitClusterName = pending;
  }), 300_000);

test("beside it, KubeRay's RayService controller runs an executor 'kuberay' RayService; neither controller writes the other's objects", () =>
  env.cluster.printLogsOnFailure(async () => {
    expect(fruitClusterName).toBeDefined();
    const fruitBefore = await env.admin.get(RAYCLUSTER, fruitClusterName, NS);
    await user.create(synthesize('veg', 'kuberay', '1'));

    // KubeRay makes its own RayCluster for veg and runs it to ready.
    const listVeg = async () => (await env.admin.list(RAYCLUSTER, { namespace: NS, labelSelector: { [ORIGINATED_FROM_NAME]: 'veg' } })).items;
    await waitFor(async () => (await listVeg()).some((c) => (c.status as { state?: string } | undefined)?.state === 'ready'), "KubeRay's RayCluster for veg to be ready", 120_000);
    const [vegCluster] = await listVeg();
    const vegName = String(vegCluster.metadata.name);
    expect(vegCluster.metadata.ownerReferences).toEqual([expect.objectContaining({ apiVersion: 'ray.io/v1', kind: 'RayService', name: 'veg', controller: true })]);
    expect((await pods(vegName)).map((p) => p.status.phase)).toEqual(['Running', 'Running']);
    // KubeRay's RayService controller has reconciled veg since (it looks for Serve on its cluster).
    const veg = await getWhen(env.cluster, `/apis/ray.io/v1/namespaces/${NS}/rayservices/veg`, 'KubeRay to report on veg', (b) =>
      b.status?.pendingServiceStatus?.rayClusterName === vegName || b.status?.activeServiceStatus?.rayClusterName === vegName ? undefined : `status ${JSON.stringify(b.status ?? {})}`,
    );

    // rayshift's operator left KubeRay's RayService and its cluster alone: no finalizer, no writes, no Serve call.
    expect(veg.metadata.finalizers ?? []).not.toContain(FINALIZER);
    expect(managers(veg).filter((m) => m.startsWith(FIELD_MANAGER))).toEqual([]);
    const vegNow = await env.admin.get(RAYCLUSTER, vegName, NS);
    expect(managers(vegNow).filter((m) => m.startsWith(FIELD_MANAGER))).toEqual([]);
    expect(vegNow.metadata.annotations?.[SPEC_HASH_ANNOTATION]).toBeUndefined();
    expect(env.fleet.dashboard(NS, vegName)).toBeUndefined();
    expect(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'veg', NS)).toBeUndefined();

    // KubeRay's RayService controller left rayshift's objects alone: its cluster's spec is unchanged
    // (same generation), KubeRay wrote only RayCluster status (its RayCluster controller), and the
    // only clusters labelled for fruit are the operator's.
    const fruitNow = await env.admin.get(RAYCLUSTER, fruitClusterName, NS);
    expect(fruitNow.metadata.generation).toBe(fruitBefore.metadata.generation);
    expect(managers(fruitNow).filter((m) => m.startsWith('kuberay'))).toEqual(['kuberay-operator/status']);
    const fruit = await env.admin.get(RAYSHIFT_RAYSERVICE, 'fruit', NS);
    expect(managers(fruit).filter((m) => m.startsWith('kuberay'))).toEqual([]);
    const fruitClusters = (await env.admin.list(RAYCLUSTER, { namespace: NS, labelSelector: { [ORIGINATED_FROM_NAME]: 'fruit' } })).items;
    expect(fruitClusters.map((c) => [c.metadata.name, c.metadata.ownerReferences?.map((o) => `${o.apiVersion}/${o.kind}/${o.uid}`)])).toEqual([
      [fruitClusterName, [`rayshift.dev/v1alpha1/RayService/${fruit.metadata.uid}`]],
    ]);
    for (const name of ['fruit-head-svc', 'fruit-serve-svc', `${fruitClusterName}-serve-svc`]) {
      const svc = await env.admin.get(SERVICE, name, NS);
      expect([name, managers(svc).filter((m) => m.startsWith('kuberay'))]).toEqual([name, []]);
    }
  }), 300_000);

test("KubeRay's behaviour: a ray.io RayService with the same name as a rayshift one in its namespace deletes the rayshift RayClusters (KubeRay finds a RayService's clusters by the originated-from labels alone)", () =>
  env.cluster.printLogsOnFailure(async () => {
    const ns = 'same-name';
    await createNamespace(user, ns);
    await user.create(synthesize('app', 'operator', '1', undefined, ns));
    await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'app', ns)).phase === 'Running', 'the rayshift service to serve', 120_000);
    const ours = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'app', ns)).activeClusterName as string;
    const ourUid = (await env.admin.get(RAYCLUSTER, ours, ns)).metadata.uid;
    // Every RayCluster the operator makes under that name again: KubeRay may delete each one at once,
    // so a poll could miss it; the watch sees each add.
    const remade: string[] = [];
    const clusters = env.admin.watch(RAYCLUSTER, ns, (e) => {
      if (e.type !== 'delete' && e.object.metadata.name === ours && e.object.metadata.uid !== ourUid && !remade.includes(String(e.object.metadata.uid))) remade.push(String(e.object.metadata.uid));
    });
    clusters.start();

    await user.create(synthesize('app', 'kuberay', '1', undefined, ns));
    // KubeRay's cleanUpRayClusterInstance lists RayClusters labelled originated-from-cr-name=app,
    // originated-from-crd=RayService, whatever owns them, and deletes every one its status does not name.
    const events = await getWhen(env.cluster, `/api/v1/namespaces/${ns}/events?fieldSelector=reason%3DDeletedRayCluster`, "KubeRay's DeletedRayCluster event", (b) =>
      (b.items ?? []).some((e: any) => String(e.message).includes(`${ns}/${ours}`)) ? undefined : `events ${JSON.stringify((b.items ?? []).map((e: any) => e.message))}`,
    );
    const event = events.items.find((e: any) => String(e.message).includes(`${ns}/${ours}`));
    expect([event.involvedObject.apiVersion, event.involvedObject.kind, event.involvedObject.name]).toEqual(['ray.io/v1', 'RayService', 'app']);
    // rayshift's operator makes its cluster again (same name, from its spec hash): a new object.
    try {
      await waitFor(() => remade.length > 0, 'the operator to make its deleted RayCluster again', 60_000);
    } finally {
      clusters.stop();
    }
  }), 300_000);
