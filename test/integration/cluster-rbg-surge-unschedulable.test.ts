/**
 * The capacity preflight and the scheduler watch of a coordinated RoleBasedGroup rollout (executor
 * `operator`) on the test cluster: RBG v0.7.0's real controller turns the group's roles into
 * RoleInstanceSets and Pods, the real kube-scheduler places them on the one kwok Node (8
 * `nvidia.com/gpu` allocatable, test/support/kwok-stages.yaml), and rayshift's RBG controller runs
 * in this process. The group, 2 prefill and 1 decode of one GPU each, is rolled to a new release
 * after a filler Pod took the Node's other 5 GPUs. With `surgeUnschedulableSeconds: 5`:
 *
 * - a release whose replicas ask for 2 GPUs each: the first replica a round replaces frees one GPU
 *   and its successor needs two. The preflight of the first round says so before it is released:
 *   - under `wait`, the round is released with the verdict in `capacity` and one
 *     `InsufficientCapacity` Event; the scheduler marks the successor Unschedulable, the
 *     coordination records it (`surgeUnschedulable`, past the bound), one `SurgeUnschedulable` Event
 *     names the scheduler's message, and once the filler is gone the rollout completes by itself
 *     with the record cleared;
 *   - under `fail`, nothing is released: `Failed`, reason `InsufficientCapacity`, every Pod on v1;
 * - a release of one GPU each, on the same full Node: the round fits only once its own old Pods are
 *   gone (a coordinated role has no surge), which the preflight counts; under `fail` it is released
 *   with no verdict and no Event, and the rollout completes;
 * - a release of one GPU each that requires a Pod affinity no Pod satisfies (the preflight places
 *   on node selectors, node affinity and tolerations, not on other Pods): the preflight passes and
 *   the scheduler marks the successor Unschedulable; under `fail` the coordination is rolled back
 *   in tandem (reason `SurgeUnschedulable`) and ends `RolledBack` with every Pod back on v1, long
 *   before the 600 s progress deadline.
 *
 * The last two cases run the refusal and the scheduler watch under executor `pulumi`: the provider
 * operations of `RoleBasedGroupRollout` (what its dynamic provider runs during `pulumi up`; no
 * Pulumi CLI, as in cluster-pulumi-rbg-rollback.test.ts) drive the same reconciler, and `update`
 * fails naming `InsufficientCapacity`, then `SurgeUnschedulable`.
 *
 * Needs `npm run controlplane:build` and `bash scripts/build-cluster.sh kwok rbg`.
 */
import * as fs from 'node:fs';
import * as rollout from '../../lib/pulumi/rbg-rollout-operations';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes } from '../../lib/runtime/kube/types';
import { POD } from '../../lib/spec/object-names';
import { getWhen, TestCluster } from '../support/cluster';
import { RBG_RELEASES } from '../support/rbg-releases';
import { coordinationWhen, GroupContext, GroupUnderTest, RbgOperatorCluster, Rule, startRbgOperatorCluster, synthesizeOperatorGroup } from '../support/rbg-operator-group';

const NS = 'default';
/** RBG v0.7.0: RoleInstanceSets. */
const RELEASE = RBG_RELEASES[0];
const REPLICAS = { prefill: 2, decode: 1 };
const V1 = { default: 'sglang:v1', gpus: 1 };
const V2 = { default: 'sglang:v2', gpus: 2 };
/** One GPU each, as v1 asks. */
const V2_SAME = { default: 'sglang:v2', gpus: 1 };
/** One GPU each, but each replica requires a Pod no one runs on its Node. */
const V2_AFFINITY = {
  default: 'sglang:v2',
  gpus: 1,
  affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'test.rayshift.dev/absent': 'true' } }, topologyKey: 'kubernetes.io/hostname' }] } },
};
const BOUND_SECONDS = 5;

let env: RbgOperatorCluster;
let cluster: TestCluster;
let admin: KubeClient;
let ctx: GroupContext;
const watches: { stop(): void }[] = [];

beforeAll(async () => {
  // One Node: its 8 GPUs are all the cluster has.
  env = await startRbgOperatorCluster(RELEASE.rbg, 1);
  ({ cluster, admin } = env);
  ctx = { cluster, admin, gitops: env.gitops, namespace: NS, watches, release: RELEASE };
}, 300_000);

afterAll(async () => {
  for (const w of watches) w.stop();
  await env?.stop();
}, 60_000);

/** A Pod that holds `gpus` GPUs once the scheduler bound it. */
async function fill(name: string, gpus: number): Promise<void> {
  await admin.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS }, spec: { containers: [{ name: 'c', image: 'registry.local/filler:1', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] } });
  await getWhen(cluster, `/api/v1/namespaces/${NS}/pods/${name}`, `the filler of ${gpus} GPUs to be bound`, (body) => (typeof body?.spec?.nodeName === 'string' ? undefined : 'not bound yet'));
}

/** The group at v1 (3 GPUs), the other 5 GPUs of the Node taken by filler `filler`, then `v2` applied. */
async function rollIntoFullNode(name: string, filler: string, rule: Rule, v2: typeof V2 | typeof V2_SAME | typeof V2_AFFINITY = V2): Promise<GroupUnderTest> {
  const g = new GroupUnderTest(ctx, name, REPLICAS, { rollingUpdate: { maxSkew: '50%', maxUnavailable: 1 }, surgeUnschedulableSeconds: BOUND_SECONDS, ...rule });
  await g.create(V1);
  await fill(filler, 8 - 3);
  await g.changeTemplate(v2);
  return g;
}

/**
 * Group `name` under executor `pulumi`: created at v1 (3 GPUs) and armed by the provider's `create`,
 * the Node's other 5 GPUs taken by filler `filler`, then `v2` applied and rolled out by `update`:
 * its error message (or `settled`).
 */
async function pulumiRollIntoFullNode(name: string, filler: string, rule: Rule, v2: typeof V2 | typeof V2_AFFINITY): Promise<string> {
  const apply = (images: typeof V1 | typeof V2 | typeof V2_AFFINITY) =>
    env.gitops.apply(synthesizeOperatorGroup(NS, name, images, REPLICAS, { rollingUpdate: { maxSkew: '50%', maxUnavailable: 1 }, surgeUnschedulableSeconds: BOUND_SECONDS, ...rule }, RELEASE, 'pulumi'), { force: true });
  const inputs = (specHash: string): rollout.RbgRolloutInputs => ({ apiVersion: RELEASE.groupType.apiVersion, name, namespace: NS, specHash, deadlineSeconds: 240, pollMs: 100, kubeconfig: fs.readFileSync(cluster.cp.kubeconfigPath, 'utf8') });
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await apply(V1);
    await rollout.create({}, inputs('v1'));
    await fill(filler, 8 - 3);
    await apply(v2);
    return await rollout.update({}, inputs('v2')).then(() => 'settled', (e: Error) => e.message);
  } finally {
    log.mockRestore();
  }
}

/** Deletes group `name` and filler `filler` and waits for the group's Pods to go: the Node's GPUs are free for the next case. */
async function clearNode(name: string, filler: string): Promise<void> {
  await admin.delete(POD, filler, NS, { ignoreNotFound: true });
  await admin.delete(RELEASE.groupType, name, NS);
  await getWhen(cluster, podsPath(name), `the Pods of ${name} gone`, (body) => ((body?.items ?? []).length === 0 ? undefined : `${body.items.length} Pods left`));
}

/** The reasons of the Events about group `name`, as listed now. */
async function groupEventReasons(name: string): Promise<string[]> {
  const events = await admin.list(KnownTypes.Event, { namespace: NS });
  return events.items.filter((e) => (e.regarding as { name?: string } | undefined)?.name === name).map((e) => String(e.reason));
}

/** The API path listing group `name`'s Pods (RBG's v1alpha2 group label). */
function podsPath(name: string): string {
  return `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`rbg.workloads.x-k8s.io/group-name=${name}`)}`;
}

/** Waits until every Pod of group `name` is back on the release of one GPU and bound by the scheduler. */
async function everyPodOnV1AndBound(name: string): Promise<void> {
  await getWhen(cluster, podsPath(name), `every Pod of ${name} on v1 and bound`, (body) => {
    const pods = ((body?.items ?? []) as any[]).filter((p) => !p.metadata.deletionTimestamp);
    const off = pods.filter((p) => p.spec.containers[0].image !== 'sglang:v1' || typeof p.spec.nodeName !== 'string');
    return pods.length === 3 && off.length === 0 ? undefined : `${pods.length} Pods, not on v1 or not bound: ${off.map((p) => p.metadata.name).join(', ')}`;
  });
  expect(Object.values(await podGpus(name))).toEqual(['sglang:v1 1', 'sglang:v1 1', 'sglang:v1 1']);
}

/** The image and `nvidia.com/gpu` limit of each of the group's Pods (RBG's v1alpha2 group label), by Pod name. */
async function podGpus(name: string): Promise<Record<string, string>> {
  const pods = await admin.list(POD, { namespace: NS, labelSelector: { 'rbg.workloads.x-k8s.io/group-name': name } });
  return Object.fromEntries(pods.items.filter((p) => !p.metadata.deletionTimestamp).map((p) => {
    const c = (p.spec as any).containers[0];
    return [String(p.metadata.name), `${c.image} ${c.resources?.limits?.['nvidia.com/gpu']}`];
  }));
}

test('wait: the Unschedulable replica is recorded past the bound with the scheduler\'s message and one Event; once capacity is free the rollout completes and the record is gone', () =>
  cluster.printLogsOnFailure(async () => {
    const g = await rollIntoFullNode('pd-wait', 'filler-wait', { capacityPolicy: 'wait' });
    const reported = await coordinationWhen(ctx, g.name, 'surgeUnschedulable past the bound', (c) => c?.surgeUnschedulable?.boundExceeded === true, 60_000);
    expect(reported.phase).toBe('Progressing');
    expect(reported.surgeUnschedulable!.pods).toBeGreaterThanOrEqual(1);
    expect(reported.surgeUnschedulable!.message).toMatch(/Insufficient nvidia\.com\/gpu/);
    // The first round's preflight said so before the round was released.
    expect(reported.capacity).toMatchObject({ outcome: 'doesNotFit', message: expect.stringMatching(/needs \d+ nvidia\.com\/gpu on nodes matching \{\}, \d+ free/) });
    process.stdout.write(`[cluster-rbg-surge-unschedulable] wait: reported ${JSON.stringify(reported.surgeUnschedulable)}\n`);
    await admin.delete(POD, 'filler-wait', NS);
    const done = await g.complete();
    expect(done.surgeUnschedulable).toBeUndefined();
    expect(Object.values(await podGpus(g.name))).toEqual(['sglang:v2 2', 'sglang:v2 2', 'sglang:v2 2']);
    const reasons = await groupEventReasons(g.name);
    expect([reasons.filter((r) => r === 'InsufficientCapacity').length, reasons.filter((r) => r === 'SurgeUnschedulable').length]).toEqual([1, 1]);
    await clearNode(g.name, 'filler-wait');
  }));

test('fail, a first round that does not fit: the preflight releases nothing (Failed, reason InsufficientCapacity, one Event) and every Pod stays on v1', () =>
  cluster.printLogsOnFailure(async () => {
    const g = await rollIntoFullNode('pd-refused', 'filler-refused', { capacityPolicy: 'fail' });
    const refused = await coordinationWhen(ctx, g.name, 'Failed', (c) => c?.phase === 'Failed', 60_000);
    expect([refused.reason, refused.rounds]).toEqual(['InsufficientCapacity', 0]);
    expect(refused.capacity?.message).toMatch(/^prefill: needs \d+ nvidia\.com\/gpu on nodes matching \{\}, \d+ free/);
    // A pass after it: still nothing released.
    await g.recorder.until('the RBG controller to report the held roles', (s) => g.roles.every((r) => s[r].observed), 60_000, g.from);
    expect(Object.values(await podGpus(g.name))).toEqual(['sglang:v1 1', 'sglang:v1 1', 'sglang:v1 1']);
    const reasons = await groupEventReasons(g.name);
    expect([reasons.filter((r) => r === 'InsufficientCapacity').length, reasons.filter((r) => r === 'SurgeUnschedulable').length]).toEqual([1, 0]);
    process.stdout.write(`[cluster-rbg-surge-unschedulable] fail, refused: ${refused.message}\n`);
    await clearNode(g.name, 'filler-refused');
  }));

test('fail, a release that fits once each round\'s own old Pods are gone (no GPU free before): the preflight passes, no verdict and no Event, and the rollout completes', () =>
  cluster.printLogsOnFailure(async () => {
    const g = await rollIntoFullNode('pd-fits', 'filler-fits', { capacityPolicy: 'fail' }, V2_SAME);
    const done = await g.complete();
    expect([done.phase, done.capacity, done.surgeUnschedulable]).toEqual(['Complete', undefined, undefined]);
    expect(Object.values(await podGpus(g.name))).toEqual(['sglang:v2 1', 'sglang:v2 1', 'sglang:v2 1']);
    const reasons = await groupEventReasons(g.name);
    expect([reasons.filter((r) => r === 'InsufficientCapacity').length, reasons.filter((r) => r === 'SurgeUnschedulable').length]).toEqual([0, 0]);
    await clearNode(g.name, 'filler-fits');
  }));

test('fail, a round the preflight passes but the scheduler cannot place (a Pod affinity): past the bound every role is rolled back in tandem (reason SurgeUnschedulable), RolledBack with every Pod on v1, long before the progress deadline', () =>
  cluster.printLogsOnFailure(async () => {
    const g = await rollIntoFullNode('pd-fail', 'filler-fail', { capacityPolicy: 'fail' }, V2_AFFINITY);
    // Rolled back by the scheduler watch, not the 600 s progress deadline: the reason and cause say which.
    const back = await coordinationWhen(ctx, g.name, 'RolledBack', (c) => c?.phase === 'RolledBack', 120_000);
    expect(back.reason).toBe('SurgeUnschedulable');
    expect(back.rollback!.cause).toMatch(/Unschedulable for \d+ s \(surgeUnschedulableSeconds 5\); rolled back \(capacityPolicy fail\): .*pod affinity/);
    expect(back.capacity).toBeUndefined();
    expect(back.roles.map((r) => [r.name, r.replicasByRevision?.abandoned])).toEqual([['prefill', 0], ['decode', 0]]);
    process.stdout.write(`[cluster-rbg-surge-unschedulable] fail: RolledBack, ${back.rollback!.rounds} rollback round(s)\n`);
    await everyPodOnV1AndBound(g.name);
    expect((await groupEventReasons(g.name)).filter((r) => r === 'SurgeUnschedulable')).toHaveLength(1);
    await clearNode(g.name, 'filler-fail');
  }));

test('executor pulumi, fail, a first round that does not fit: `update` fails at once naming InsufficientCapacity and what does not fit; every Pod stays on v1', () =>
  cluster.printLogsOnFailure(async () => {
    const message = await pulumiRollIntoFullNode('pulumi-refused', 'filler-pulumi-refused', { capacityPolicy: 'fail' }, V2);
    expect(message).toMatch(new RegExp(`^RoleBasedGroup ${NS}/pulumi-refused: InsufficientCapacity: pd Failed \\(round 0\\): `));
    expect(message).toMatch(/needs \d+ nvidia\.com\/gpu on nodes matching \{\}, \d+ free/);
    expect(Object.values(await podGpus('pulumi-refused'))).toEqual(['sglang:v1 1', 'sglang:v1 1', 'sglang:v1 1']);
    expect((await groupEventReasons('pulumi-refused')).filter((r) => r === 'InsufficientCapacity')).toHaveLength(1);
    await clearNode('pulumi-refused', 'filler-pulumi-refused');
  }));

test('executor pulumi, fail, a round the scheduler cannot place: past the bound `update` runs the rollback and fails naming SurgeUnschedulable, every Pod back on v1', () =>
  cluster.printLogsOnFailure(async () => {
    const message = await pulumiRollIntoFullNode('pulumi-fail', 'filler-pulumi-fail', { capacityPolicy: 'fail' }, V2_AFFINITY);
    expect(message).toMatch(new RegExp(`^RoleBasedGroup ${NS}/pulumi-fail: SurgeUnschedulable: pd RolledBack \\(round \\d+, rollback round \\d+\\): prefill 0/2, decode 0/1 on the abandoned revision`));
    await everyPodOnV1AndBound('pulumi-fail');
    expect((await groupEventReasons('pulumi-fail')).filter((r) => r === 'SurgeUnschedulable')).toHaveLength(1);
    await clearNode('pulumi-fail', 'filler-pulumi-fail');
  }));
