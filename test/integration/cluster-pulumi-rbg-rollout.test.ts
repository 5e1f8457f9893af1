/**
 * The coordinated rollout of a RoleBasedGroup with executor `pulumi`, run by the provider
 * operations of `RoleBasedGroupRollout` in this process (no Pulumi CLI) on the test cluster: RBG
 * v0.7.0's real controller turns the roles into RoleInstanceSets and Pods (kube-scheduler, kwok)
 * and carries the partitions the provider writes into them. The group is synthesized by the
 * `RoleBasedGroup` construct and server-side applied by a "pulumi" field manager, as
 * `@pulumi/kubernetes` does. Needs `npm run controlplane:build` and
 * `bash scripts/build-cluster.sh kwok rbg`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import * as rollout from '../../lib/pulumi/rbg-rollout-operations';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { RBG_V1ALPHA2_TYPE } from '../../lib/spec/object-names';
import { readRolloutStatus } from '../../lib/runtime/rbg/status';
import { getWhen, TestCluster } from '../support/cluster';
import { PulumiRbgCluster, startPulumiRbgCluster } from '../support/pulumi-rbg-cluster';

const NS = 'pulumi-rbg';
let env: PulumiRbgCluster;
let cluster: TestCluster;
let admin: KubeClient;
let applier: KubeClient;
let kubeconfig: string;
const lines: string[] = [];

beforeAll(async () => {
  env = await startPulumiRbgCluster({ rbg: true, nodes: 2 }, NS);
  ({ cluster, admin, applier, kubeconfig } = env);
}, 300_000);

afterAll(async () => {
  await env?.stop();
}, 60_000);

beforeEach(() => {
  lines.length = 0;
  jest.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
});

afterEach(() => jest.restoreAllMocks());

function group(image: string): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'pd', {
    metadata: { name: 'pd', namespace: NS },
    executor: 'pulumi',
    roles: [
      { name: 'prefill', replicas: 8, template: { spec: { containers: [{ name: 'prefill', image }] } } },
      { name: 'decode', replicas: 4, template: { spec: { containers: [{ name: 'decode', image }] } } },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '25%', maxUnavailable: '25%' } }],
  });
  return Testing.synth(chart)[0] as KubeObject;
}

function inputs(specHash: string): rollout.RbgRolloutInputs {
  return { apiVersion: RBG_V1ALPHA2_TYPE.apiVersion, name: 'pd', namespace: NS, specHash, deadlineSeconds: 120, pollMs: 100, kubeconfig };
}

test('create arms the group; an update with a new template rolls every role out in rounds on RBG\'s real workloads', () => cluster.printLogsOnFailure(async () => {
  await applier.apply(group('sglang:v1'), { force: true });
  const created = await rollout.create({}, inputs('v1'));
  expect(created.outs).toMatchObject({ name: 'pd', roundsLastRun: 0 });
  expect(created.outs).not.toHaveProperty('kubeconfig');
  const armed = readRolloutStatus(await admin.get(RBG_V1ALPHA2_TYPE, 'pd', NS));
  expect(armed?.coordinations.map((c) => c.phase)).toEqual(['Complete']);

  expect(rollout.diff(created.outs!, inputs('v2'))).toEqual({ changes: true });
  expect(rollout.diff(created.outs!, { ...inputs('v1'), kubeconfig: 'other' })).toEqual({ changes: false });
  await applier.apply(group('sglang:v2'), { force: true });
  const updated = await rollout.update({}, inputs('v2'));
  expect(updated.outs!.roundsLastRun).toBeGreaterThan(1);
  expect(lines).toHaveLength(updated.outs!.roundsLastRun);
  expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d pd pd Progressing \(round 1\): prefill \d+\/8, decode \d+\/4 updated/);
  const done = readRolloutStatus(await admin.get(RBG_V1ALPHA2_TYPE, 'pd', NS))!.coordinations[0];
  expect(done.phase).toBe('Complete');
  expect(done.revision).not.toBe(armed!.coordinations[0].revision);
  expect(done.roles.map((r) => [r.name, r.updated])).toEqual([['prefill', 8], ['decode', 4]]);
  // RBG carries the rollout into its workloads: every Pod of the group ends on v2 (its in-place
  // updates may trail the counts the rollout completed on).
  const images = (body: any) => ((body.items ?? []) as any[]).map((p) => (p.spec.containers as { image: string }[]).map((c) => c.image).join()).sort();
  await getWhen(cluster, `/api/v1/namespaces/${NS}/pods`, 'every Pod of the group on v2', (body) => (JSON.stringify(images(body)) === JSON.stringify(Array(12).fill('sglang:v2')) ? undefined : `images ${JSON.stringify(images(body))}`));
}), 300_000);
