/**
 * The test cluster's kube-scheduler and kwok (test/support/cluster.ts): a Pod with no node is bound
 * to one of kwok's fake Nodes by the real scheduler and brought to Running and Ready by kwok's
 * stages; a Pod that fits no Node stays Pending, marked Unschedulable by the scheduler; an image
 * changed in place is reported as a kubelet would after restarting the container; an image the
 * kubelet cannot pull (kwok's `pod-image-pull-failure` stage) leaves a new Pod or an in-place
 * update not Ready until a pullable image replaces it; a terminating Pod is removed by the simulated
 * kubelet deleter (test/support/simulated-kubelet-deleter.ts) by UID, once its finalizers are gone,
 * on kwok's Nodes only. Needs
 * `npm run controlplane:build` and `bash scripts/build-cluster.sh kwok`.
 */
import { resolveCrdFile } from '../../lib/crds/resolve';
import { KubeClient } from '../../lib/runtime/kube/client';
import { POD, WARMUP_TYPE } from '../../lib/spec/object-names';
import { pollUntil } from '../support/processes';
import { startTestCluster, TestCluster } from '../support/cluster';
import { sendFinalDelete } from '../support/simulated-kubelet-deleter';

const NS = 'default';
let cluster: TestCluster;

beforeAll(async () => {
  // RBG v0.8's RoleBasedGroupWarmup CRD alone (no RBG controller): the owner of the warmup Pods below.
  const warmups = await resolveCrdFile({ project: 'rbg', version: 'v0.8.0-alpha.5', file: 'workloads.x-k8s.io_rolebasedgroupwarmups.yaml' });
  cluster = await startTestCluster({ nodes: 2, crds: [warmups] });
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
});

/** The Pod, once `check` returns undefined for it (else the reason), within 60 s. */
async function podWhen(name: string, what: string, check: (pod: any) => string | undefined): Promise<any> {
  let pod: any;
  await pollUntil(
    `Pod ${name} ${what}`,
    async () => {
      const r = await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/pods/${name}`);
      if (r.status !== 200) return `HTTP ${r.status}`;
      pod = r.body;
      return check(pod);
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  return pod;
}

function createPod(name: string, extra: Record<string, unknown> = {}): Promise<unknown> {
  return cluster.cp.request('POST', `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'main', image: 'registry.example/app:1', resources: { requests: { cpu: '1' } } }], ...extra },
  });
}

test('kube-scheduler binds a Pod to a fake Node, and kwok runs it to Ready with an IP', () =>
  cluster.printLogsOnFailure(async () => {
    await createPod('scheduled');
    const pod = await podWhen('scheduled', 'Running and Ready', (p) => {
      const ready = (p.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
      return p.status?.phase === 'Running' && ready?.status === 'True' ? undefined : `phase ${p.status?.phase}, Ready ${ready?.status}`;
    });
    expect(cluster.nodes).toContain(pod.spec.nodeName);
    expect(pod.status.podIP).toMatch(/^10\.244\.\d+\.\d+$/);
    expect(pod.status.containerStatuses).toEqual([
      expect.objectContaining({ name: 'main', image: 'registry.example/app:1', ready: true }),
    ]);
    // The binding came from the scheduler (a Scheduled event by default-scheduler), not from a client.
    const events = await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3Dscheduled`);
    expect(events.body.items.map((e: any) => [e.reason, e.reportingComponent || e.source?.component])).toContainEqual([
      'Scheduled',
      'default-scheduler',
    ]);
  }));

test('a Pod that fits no Node stays Pending, marked Unschedulable by kube-scheduler', () =>
  cluster.printLogsOnFailure(async () => {
    await createPod('unschedulable', { nodeSelector: { 'example.com/no-such-label': 'x' } });
    const pod = await podWhen('unschedulable', 'marked Unschedulable', (p) => {
      const cond = (p.status?.conditions ?? []).find((c: any) => c.type === 'PodScheduled');
      return cond?.reason === 'Unschedulable' ? undefined : `PodScheduled ${JSON.stringify(cond)}`;
    });
    expect(pod.status.phase).toBe('Pending');
    expect(pod.spec.nodeName).toBeUndefined();
  }));

test("an image changed in place is reported by kwok's pod-image-update stage: new image and image ID, one more restart", () =>
  cluster.printLogsOnFailure(async () => {
    await createPod('in-place');
    const before = await podWhen('in-place', 'Running', (p) => (p.status?.phase === 'Running' ? undefined : `phase ${p.status?.phase}`));
    expect(before.status.containerStatuses[0]).toEqual(expect.objectContaining({ image: 'registry.example/app:1', imageID: 'kwok://registry.example/app:1', restartCount: 0 }));
    const patched = await cluster.cp.request('PATCH', `/api/v1/namespaces/${NS}/pods/in-place`, { spec: { containers: [{ name: 'main', image: 'registry.example/app:2' }] } }, {
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(patched.status).toBe(200);
    const after = await podWhen('in-place', 'reporting app:2', (p) =>
      p.status?.containerStatuses?.[0]?.image === 'registry.example/app:2' ? undefined : `image ${p.status?.containerStatuses?.[0]?.image}`,
    );
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.status.phase).toBe('Running');
    expect(after.status.containerStatuses[0]).toEqual(expect.objectContaining({ imageID: 'kwok://registry.example/app:2', restartCount: 1, ready: true }));
  }));

/** The Pod's Ready condition status and its first container's waiting reason, as one string. */
function readiness(p: any): string {
  const ready = (p.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
  return `Ready ${ready?.status}, waiting ${p.status?.containerStatuses?.[0]?.state?.waiting?.reason}`;
}

test("an image the kubelet cannot pull (kwok's pod-image-pull-failure stage): a new Pod is never Ready; an in-place update to it turns a Running Pod not Ready until a pullable image replaces it", () =>
  cluster.printLogsOnFailure(async () => {
    await createPod('never-pulled', { containers: [{ name: 'main', image: 'registry.example/app:2-unpullable' }] });
    const fresh = await podWhen('never-pulled', 'waiting in ErrImagePull', (p) => (readiness(p) === 'Ready False, waiting ErrImagePull' ? undefined : readiness(p)));
    expect(fresh.status.phase).toBe('Pending');
    expect(fresh.status.containerStatuses[0]).toEqual(expect.objectContaining({ image: 'registry.example/app:2-unpullable', ready: false }));

    await createPod('pull-fails');
    const running = await podWhen('pull-fails', 'Running and Ready', (p) => (p.status?.phase === 'Running' && readiness(p) === 'Ready True, waiting undefined' ? undefined : readiness(p)));
    const patch = (image: string) => cluster.cp.request('PATCH', `/api/v1/namespaces/${NS}/pods/pull-fails`, { spec: { containers: [{ name: 'main', image }] } }, { contentType: 'application/strategic-merge-patch+json' });
    expect((await patch('registry.example/app:2-unpullable')).status).toBe(200);
    const failed = await podWhen('pull-fails', 'not Ready, waiting in ErrImagePull', (p) => (readiness(p) === 'Ready False, waiting ErrImagePull' ? undefined : readiness(p)));
    expect(failed.metadata.uid).toBe(running.metadata.uid);
    // The strategic merge keeps the conditions the stage does not write (the scheduler's).
    expect(failed.status.conditions.find((c: any) => c.type === 'PodScheduled')?.status).toBe('True');
    expect((await patch('registry.example/app:3')).status).toBe(200);
    const recovered = await podWhen('pull-fails', 'Ready again with app:3', (p) => (readiness(p) === 'Ready True, waiting undefined' && p.status.containerStatuses[0].image === 'registry.example/app:3' ? undefined : readiness(p)));
    expect(recovered.status.containerStatuses[0]).toEqual(expect.objectContaining({ imageID: 'kwok://registry.example/app:3', ready: true }));
  }));

/** Status of the Pod's condition `type`, or undefined. */
function conditionOf(p: any, type: string): string | undefined {
  return (p.status?.conditions ?? []).find((c: any) => c.type === type)?.status;
}

test("readiness gates as RBG runs them (the gate's owner sets it True on a new Pod; an in-place update sets it False, then the image, then True): kwok never reports the Pod Ready while a gate is not True", () =>
  cluster.printLogsOnFailure(async () => {
    const GATE = 'InPlaceUpdateReady';
    const client = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
    // Every version of the Pod, from a watch (a Ready flip between two polls would slip through).
    const versions: any[] = [];
    const watch = client.watch(POD, NS, (e) => void (e.object.metadata.name === 'gated' && e.type !== 'delete' && versions.push(e.object)));
    watch.start();
    try {
      await watch.waitForSync(30_000);
      await createPod('gated', { readinessGates: [{ conditionType: GATE }] });
      // A new Pod: its containers run, but it is not Ready until the gate's owner sets the gate True.
      const started = await podWhen('gated', 'Running, containers ready', (p) => (p.status?.phase === 'Running' && conditionOf(p, 'ContainersReady') === 'True' ? undefined : readiness(p)));
      expect([conditionOf(started, 'Ready'), conditionOf(started, GATE)]).toEqual(['False', undefined]);
      const setConditions = (conditions: object[]) => cluster.cp.request('PATCH', `/api/v1/namespaces/${NS}/pods/gated/status`, { status: { conditions } }, { contentType: 'application/strategic-merge-patch+json' });
      expect((await setConditions([{ type: GATE, status: 'True' }])).status).toBe(200);
      await podWhen('gated', 'Ready once its gate is True', (p) => (conditionOf(p, 'Ready') === 'True' ? undefined : readiness(p)));
      // RBG's Update() step 1: the gate False, and with it Ready False, in one status write.
      expect((await setConditions([{ type: GATE, status: 'False', reason: 'StartInPlaceUpdate' }, { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady' }])).status).toBe(200);
      // Step 3: the new image; kwok restarts the container in place.
      expect((await cluster.cp.request('PATCH', `/api/v1/namespaces/${NS}/pods/gated`, { spec: { containers: [{ name: 'main', image: 'registry.example/app:2' }] } }, { contentType: 'application/strategic-merge-patch+json' })).status).toBe(200);
      const restarted = await podWhen('gated', 'reporting app:2', (p) => (p.status?.containerStatuses?.[0]?.image === 'registry.example/app:2' ? undefined : `image ${p.status?.containerStatuses?.[0]?.image}`));
      // RBG's refresh once the container runs the new image: the gate True; kwok then reports Ready.
      expect(conditionOf(restarted, 'Ready')).toBe('False');
      expect((await setConditions([{ type: GATE, status: 'True', reason: '' }])).status).toBe(200);
      await podWhen('gated', 'Ready again', (p) => (conditionOf(p, 'Ready') === 'True' ? undefined : readiness(p)));
      await watch.idle();
      const readyWhileGated = versions.filter((p) => conditionOf(p, GATE) !== 'True' && conditionOf(p, 'Ready') === 'True').map((p) => p.metadata.resourceVersion);
      expect(readyWhileGated).toEqual([]);
    } finally {
      await watch.stop();
      client.close();
    }
  }));

test("RBG v0.8's warmup Pods run to Succeeded (kwok's pod-warmup-complete stage); Pods missing any of its marks stay Running", () =>
  cluster.printLogsOnFailure(async () => {
    const client = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
    const versions = new Map<string, any[]>();
    const watch = client.watch(POD, NS, (e) => void (e.type !== 'delete' && versions.set(String(e.object.metadata.name), [...(versions.get(String(e.object.metadata.name)) ?? []), e.object])));
    watch.start();
    try {
      await watch.waitForSync(30_000);
      // The owner as RBG v0.8's warmup controller makes its Pods (rolebasedgroupwarmup_controller.go
      // buildWarmupPod): its name and UID as labels, it as controller, restartPolicy Never, one Node.
      const warmup = await client.create({ apiVersion: WARMUP_TYPE.apiVersion, kind: WARMUP_TYPE.kind, metadata: { name: 'warm', namespace: NS }, spec: { targetNodes: { nodeNames: [cluster.nodes[0]], imagePreload: { images: ['registry.example/app:2'] } } } });
      const other = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'not-a-warmup', namespace: NS } });
      const owner = (o: any, kind: string) => ({ apiVersion: o.apiVersion, kind, name: o.metadata.name, uid: o.metadata.uid, controller: true, blockOwnerDeletion: true });
      const labels = { 'workloads.x-k8s.io/warmup-name': 'warm', 'workloads.x-k8s.io/warmup-uid': String(warmup.metadata.uid), 'workloads.x-k8s.io/node-name': cluster.nodes[0] };
      const pod = (name: string, meta: object, restartPolicy: string) =>
        client.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, ...meta }, spec: { restartPolicy, nodeSelector: { 'kubernetes.io/hostname': cluster.nodes[0] }, containers: [{ name: 'image-preload-0', image: 'registry.example/app:2', command: ['sh', '-c', 'exit 0'] }] } });
      // Near misses first, each lacking one mark of a warmup Pod.
      const misses: Record<string, [object, string]> = {
        'never-plain': [{}, 'Never'],
        'never-labelled-unowned': [{ labels }, 'Never'],
        'never-owned-by-a-configmap': [{ labels, ownerReferences: [owner(other, 'ConfigMap')] }, 'Never'],
        'warmup-owned-always': [{ labels, ownerReferences: [owner(warmup, 'RoleBasedGroupWarmup')] }, 'Always'],
      };
      for (const [name, [meta, policy]] of Object.entries(misses)) await pod(name, meta, policy);
      for (const name of Object.keys(misses)) await podWhen(name, 'Running', (p) => (p.status?.phase === 'Running' ? undefined : `phase ${p.status?.phase}`));
      // Then the warmup Pod: kwok runs it, then ends it as a kubelet does when every container exited 0.
      await pod('warmup-on-node-0', { labels, ownerReferences: [owner(warmup, 'RoleBasedGroupWarmup')] }, 'Never');
      const done = await podWhen('warmup-on-node-0', 'Succeeded', (p) => (p.status?.phase === 'Succeeded' ? undefined : `phase ${p.status?.phase}`));
      expect(done.status.containerStatuses).toEqual([expect.objectContaining({ name: 'image-preload-0', ready: false, state: { terminated: expect.objectContaining({ exitCode: 0, reason: 'Completed' }) } })]);
      expect(versions.get('warmup-on-node-0')!.map((p) => p.status?.phase).filter((ph, i, all) => ph !== all[i - 1])).toEqual(['Pending', 'Running', 'Succeeded']);
      // The near misses were Running before the warmup Pod was created and saw the same stages: none left Running.
      await watch.idle();
      for (const name of Object.keys(misses)) expect([name, [...new Set(versions.get(name)!.map((p) => p.status?.phase))]]).toEqual([name, ['Pending', 'Running']]);
    } finally {
      await watch.stop();
      client.close();
    }
  }));

/**
 * Deletes `name` (default grace: it turns terminating) and waits until a terminating witness Pod on a
 * kwok Node, deleted after it, is gone: the deleter's one Pod watch delivers events in order, so by
 * then it has looked at `name`'s terminating state too. Returns `name` as it is then.
 */
async function terminateAndLetTheDeleterLook(name: string): Promise<any> {
  expect((await cluster.cp.request('DELETE', `/api/v1/namespaces/${NS}/pods/${name}`)).status).toBe(200);
  const witness = `${name}-witness`;
  await createPod(witness);
  await podWhen(witness, 'bound to a Node', (p) => (p.spec.nodeName ? undefined : 'not bound'));
  expect((await cluster.cp.request('DELETE', `/api/v1/namespaces/${NS}/pods/${witness}`)).status).toBe(200);
  await pollUntil(`Pod ${witness} gone`, async () => ((await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/pods/${witness}`)).status === 404 ? undefined : 'still there'), { timeoutMs: 60_000, intervalMs: 250 });
  return (await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/pods/${name}`)).body;
}

test('the simulated kubelet deleter removes a terminating Pod once its finalizers are gone, by UID (a late delete spares the Pod that took the name), and leaves Pods of other Nodes alone', () =>
  cluster.printLogsOnFailure(async () => {
    const client = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
    try {
      // A finalizer holds the Pod: terminating, not deleted (a delete with grace 0 would have set its grace period to 0).
      await createPod('held', { terminationGracePeriodSeconds: 30 });
      await cluster.cp.request('PATCH', `/api/v1/namespaces/${NS}/pods/held`, { metadata: { finalizers: ['example.com/hold'] } }, { contentType: 'application/merge-patch+json' });
      const first = await podWhen('held', 'Running', (p) => (p.status?.phase === 'Running' ? undefined : `phase ${p.status?.phase}`));
      const held = await terminateAndLetTheDeleterLook('held');
      expect([held.metadata?.uid, held.metadata?.deletionGracePeriodSeconds, held.metadata?.finalizers]).toEqual([first.metadata.uid, 30, ['example.com/hold']]);
      // The finalizer removed: the deleter deletes it.
      expect((await cluster.cp.request('PATCH', `/api/v1/namespaces/${NS}/pods/held`, { metadata: { finalizers: null } }, { contentType: 'application/merge-patch+json' })).status).toBe(200);
      await pollUntil('Pod held deleted', async () => ((await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/pods/held`)).status === 404 ? undefined : 'still there'), { timeoutMs: 60_000, intervalMs: 250 });

      // The name taken by a new Pod (as a StatefulSet does at once): the old Pod's delete, sent late
      // from the view the deleter had of it, is refused by its UID precondition; the new Pod runs on.
      await createPod('held');
      const fresh = await podWhen('held', 'Running again', (p) => (p.status?.phase === 'Running' ? undefined : `phase ${p.status?.phase}`));
      expect(fresh.metadata.uid).not.toBe(first.metadata.uid);
      expect(await sendFinalDelete(client, held)).toBe('name-reused');
      const after = (await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/pods/held`)).body;
      expect([after.metadata.uid, after.metadata.deletionTimestamp]).toEqual([fresh.metadata.uid, undefined]);

      // A Node that is not kwok's (no kubelet of ours): its terminating Pod is not deleted.
      await cluster.cp.request('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'not-kwok', labels: { 'kubernetes.io/hostname': 'not-kwok' } } });
      await createPod('elsewhere', { nodeName: 'not-kwok', terminationGracePeriodSeconds: 30 });
      const elsewhere = await terminateAndLetTheDeleterLook('elsewhere');
      expect([elsewhere.metadata?.name, elsewhere.metadata?.deletionGracePeriodSeconds]).toEqual(['elsewhere', 30]);
      // That Node's kubelet, played here, ends it.
      expect(await sendFinalDelete(client, elsewhere)).toBe('deleted');
      await cluster.cp.request('DELETE', '/api/v1/nodes/not-kwok');
    } finally {
      client.close();
    }
  }));
