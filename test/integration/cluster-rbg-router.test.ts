/**
 * Version-matched routing's rendered objects against the test cluster (test/support/cluster.ts):
 * RBG v0.7.0's real controller, kube-apiserver with the pinned RBG and Gateway API CRDs, kwok nodes.
 * Every object the `RoleBasedGroup` construct renders for a `router` is accepted with strict field
 * validation, RBG's pods carry the release label, and each release's router selectors (the
 * arguments sglang-router discovers pods with) select exactly that release's prefill and decode
 * pods. Needs `npm run controlplane:build` and `bash scripts/build-cluster.sh kwok rbg`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { getWhen as getClusterWhen, startTestCluster, TestCluster } from '../support/cluster';
import { upstreamCrdFiles } from '../support/controlplane';
import { collectionPath } from '../support/rest-paths';

const NS = 'default';
let cluster: TestCluster;

beforeAll(async () => {
  const gatewayApi = (await upstreamCrdFiles()).filter((f) => f.includes('gateway.networking.k8s.io_'));
  cluster = await startTestCluster({ rbg: true, nodes: 2, crds: gatewayApi });
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
});

/** The objects the construct synthesizes with the prefill at `prefillImage` (decode at sglang:v1), and the release they make. */
function synthesize(prefillImage: string, previousRevision?: string): { objects: any[]; revision: string } {
  const chart = Testing.chart();
  const group = new RoleBasedGroup(chart, 'g', {
    metadata: { name: 'pd', namespace: NS },
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: 2, template: { spec: { containers: [{ name: 'prefill', image: prefillImage }] } } },
      { name: 'decode', replicas: 1, template: { spec: { containers: [{ name: 'decode', image: 'sglang:v1' }] } } },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%' }, router: { kind: 'sglang', image: 'sglang-router:0.3.2', gateway: { name: 'inference' }, ...(previousRevision ? { previousRevision } : {}) } }],
  });
  return { objects: Testing.synth(chart), revision: group.routerRevision('pd')! };
}

/** Creates `o` with strict field validation (an unknown or duplicate field is refused, not dropped), or replaces it when it exists. */
async function apply(o: any): Promise<void> {
  const path = `${collectionPath({ ...o, metadata: { ...o.metadata, namespace: NS } })}`;
  const created = await cluster.cp.request('POST', `${path}?fieldValidation=Strict`, o);
  if (created.status === 201) return;
  expect(created.status).toBe(409);
  const current = (await cluster.cp.request('GET', `${path}/${o.metadata.name}`)).body;
  const put = await cluster.cp.request('PUT', `${path}/${o.metadata.name}?fieldValidation=Strict`, { ...o, metadata: { ...o.metadata, resourceVersion: current.metadata.resourceVersion } });
  expect([o.kind, put.status, put.body?.message]).toEqual([o.kind, 200, undefined]);
}

/** The `--prefill-selector` and `--decode-selector` label selectors of the router of release `revision`, as Kubernetes label selectors. */
function selectors(objects: any[], revision: string): { prefill: string; decode: string } {
  const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === `pd-pd-router-${revision}`);
  const args: string[] = d.spec.template.spec.containers[0].args;
  const after = (flag: string) => args.slice(args.indexOf(flag) + 1, args.indexOf(flag) + 4).join(',');
  return { prefill: after('--prefill-selector'), decode: after('--decode-selector') };
}

/** Names of the pods `selector` selects once they are `count`, each with its image. */
const selected = (selector: string, count: number, what: string): Promise<string[]> =>
  getClusterWhen(
    cluster,
    `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(selector)}`,
    what,
    (b, status) => {
      if (status !== 200) return `HTTP ${status}`;
      const running = (b.items as any[]).filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
      return running.length === count ? undefined : `${running.length} running of ${b.items.length}: ${b.items.map((p: any) => p.metadata.name).join(', ')}`;
    },
    120_000,
  ).then((b) => (b.items as any[]).map((p) => `${p.metadata.labels['rbg.workloads.x-k8s.io/role-name']} ${p.spec.containers[0].image}`).sort());

test("one release: every rendered object is accepted strictly, and the router's selectors select exactly the group's prefill and decode pods", () =>
  cluster.printLogsOnFailure(async () => {
    const { objects, revision } = synthesize('sglang:v1');
    expect(objects.map((o) => o.kind)).toEqual(['RoleBasedGroup', 'ServiceAccount', 'Role', 'RoleBinding', 'Deployment', 'Service', 'HTTPRoute']);
    for (const o of objects) await apply(o);
    const s = selectors(objects, revision);
    expect(await selected(s.prefill, 2, 'the release-1 prefill pods')).toEqual(['prefill sglang:v1', 'prefill sglang:v1']);
    expect(await selected(s.decode, 1, 'the release-1 decode pod')).toEqual(['decode sglang:v1']);
    // The router's own pods run too (kwok), under the ServiceAccount the Role lets list pods.
    expect(await selected(`rayshift.dev/router-for=pd,rayshift.dev/router-revision=${revision}`, 1, 'the release-1 router pod')).toEqual(['undefined sglang-router:0.3.2']);
  }));

test('a new prefill image: both routers and the split route are accepted, and once RBG has rolled every pod each release selects only its own', () =>
  cluster.printLogsOnFailure(async () => {
    const v1 = synthesize('sglang:v1').revision;
    const { objects, revision: v2 } = synthesize('sglang:v2', v1);
    expect(v2).not.toBe(v1);
    for (const o of objects) await apply(o);
    const route = (await cluster.cp.request('GET', `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes/pd-pd-router`)).body;
    expect(route.spec.rules[0].backendRefs.map((b: any) => [b.name, b.weight])).toEqual([
      [`pd-pd-router-${v1}`, 100],
      [`pd-pd-router-${v2}`, 0],
    ]);
    const next = selectors(objects, v2);
    const old = selectors(objects, v1);
    // The decode template changed only by the release label: it rolls too, so the new prefills have a decode to pair with.
    expect(await selected(next.prefill, 2, 'the release-2 prefill pods')).toEqual(['prefill sglang:v2', 'prefill sglang:v2']);
    expect(await selected(next.decode, 1, 'the release-2 decode pod')).toEqual(['decode sglang:v1']);
    expect(await selected(old.prefill, 0, 'no release-1 prefill pod left')).toEqual([]);
    expect(await selected(old.decode, 0, 'no release-1 decode pod left')).toEqual([]);
  }));
