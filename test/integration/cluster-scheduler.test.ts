/**
 * The test cluster's kube-scheduler and kwok (test/support/cluster.ts): a Pod with no node is bound
 * to one of kwok's fake Nodes by the real scheduler and brought to Running and Ready by kwok's
 * stages; a Pod that fits no Node stays Pending, marked Unschedulable by the scheduler. Needs
 * `npm run controlplane:build` and `bash scripts/build-cluster.sh kwok`.
 */
import { pollUntil } from '../support/processes';
import { startTestCluster, TestCluster } from '../support/cluster';

const NS = 'default';
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 2 });
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
