/**
 * The capacity preflight on the test cluster: the real kube-scheduler binds a filler Pod that takes
 * GPUs of the one kwok Node (8 nvidia.com/gpu allocatable, test/support/kwok-stages.yaml), and a
 * RayService whose workers each request one GPU is upgraded with maxSurgePercent 100 over 4 workers,
 * so its first step needs 4 GPUs. With none free, `plan --cluster` says so before anything is
 * created, and `wait` creates the pending RayCluster anyway (reason in the status and condition,
 * one Event) while the real scheduler leaves its worker Unschedulable until the filler is deleted;
 * then the upgrade runs to the end. With 1 free, `fail` refuses it (phase Failed) and never creates
 * the pending cluster. A ResourceQuota on
 * `requests.nvidia.com/gpu` refuses it the same way while the Node still has GPUs free.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { gpuConfig, rayshiftCli } from '../support/gpu-capacity';
import { OperatorHarness, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, startOperatorHarness, waitFor } from '../support/operator-env';
import { KnownTypes, type KubeObject } from '../../lib/runtime/kube/types';
import { POD } from '../../lib/spec/object-names';

const EVENT = KnownTypes.Event;

let harness: OperatorHarness;

beforeAll(async () => {
  harness = await startOperatorHarness({ nodes: 1 });
}, 300_000);

afterAll(async () => {
  await harness?.stop();
});


function gpuService(ns: string, policy: 'wait' | 'fail'): KubeObject {
  const svc = rayService(ns, 'llm', { maxSurge: 100, step: 50, extensions: { capacityPolicy: policy } });
  (svc.spec as Record<string, unknown>).rayClusterConfig = gpuConfig('1');
  return svc;
}

/** A Pod that holds `gpus` GPUs once the scheduler bound it. */
async function fill(ns: string, gpus: number): Promise<void> {
  const env = harness.env;
  await env.admin.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gpu-filler', namespace: ns }, spec: { containers: [{ name: 'c', image: 'registry.local/filler:1', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }] } });
  await waitFor(async () => typeof ((await env.admin.tryGet(POD, 'gpu-filler', ns))?.spec as any)?.nodeName === 'string', `the filler of ${gpus} GPUs to be bound`);
}

async function state(ns: string): Promise<Record<string, any>> {
  return engineState(await harness.env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns));
}

/** Creates service `llm` in a new namespace `ns`, lets a filler take `gpus` GPUs, and starts its upgrade; returns the serving cluster. */
async function upgradeWithGpusTaken(ns: string, policy: 'wait' | 'fail', gpus: number): Promise<string> {
  const env = harness.env;
  await createNamespace(env.admin, ns);
  await env.admin.create(gpuService(ns, policy));
  await waitFor(async () => (await state(ns)).phase === 'Running', 'the first cluster to serve');
  await fill(ns, gpus);
  return startUpgrade(ns);
}

/** Changes the service's worker CPU (a new cluster spec), which starts an upgrade; returns the serving cluster. */
async function startUpgrade(ns: string): Promise<string> {
  const env = harness.env;
  const current = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!;
  const active = engineState(current).activeClusterName as string;
  await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: gpuConfig('2') } });
  return active;
}

async function clusters(ns: string): Promise<string[]> {
  return (await harness.env.admin.list(RAYCLUSTER, { namespace: ns })).items.map((c) => String(c.metadata.name));
}

const MESSAGE = 'small: needs 4 nvidia.com/gpu on nodes matching {type=kwok}, 1 free';
const NONE_FREE = 'small: needs 4 nvidia.com/gpu on nodes matching {type=kwok}, 0 free';


/** The built CLI against the test cluster. */
function rayshift(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return rayshiftCli(harness.env.cp.kubeconfigPath, args);
}

test('wait: the pending cluster is created and its Pods wait for the scheduler, with the reason in the status and one Event; the upgrade completes once the GPUs are free', () => harness.env.cluster.printLogsOnFailure(async () => {
  const env = harness.env;
  const ns = 'gpu-wait';
  const started = Date.now();
  await createNamespace(env.admin, ns);
  await env.admin.create(gpuService(ns, 'wait'));
  await waitFor(async () => (await state(ns)).phase === 'Running', 'the first cluster to serve');
  // 8 GPUs: 1 for the serving worker, 7 for the filler, none free.
  await fill(ns, 7);
  // Before anything is created, plan --cluster judges the upgrade on the live cluster, against the serving cluster.
  const first = (await state(ns)).activeClusterName as string;
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-plan-')), 'llm.yaml');
  const upgraded = gpuService(ns, 'wait');
  (upgraded.spec as Record<string, unknown>).rayClusterConfig = gpuConfig('2');
  fs.writeFileSync(file, stringify(upgraded));
  const json = await rayshift(['plan', '--cluster', '--json', file]);
  expect(json.code).toBe(0);
  expect(JSON.parse(json.out).plans[0].capacity).toEqual({ namespace: ns, activeCluster: first, outcome: 'doesNotFit', message: NONE_FREE });
  const text = await rayshift(['plan', '--cluster', file]);
  expect(text.out).toContain(`  capacity (namespace ${ns}, serving ${first}): does not fit: ${NONE_FREE}\n`);
  expect(await clusters(ns)).toEqual([first]);
  await startUpgrade(ns);
  // The upgrade starts as it would without a preflight: the pending RayCluster exists.
  await waitFor(async () => (await state(ns)).pendingClusterName !== undefined, 'the pending cluster to be created');
  const pending = (await state(ns)).pendingClusterName as string;
  await waitFor(async () => (await clusters(ns)).includes(pending), `RayCluster ${pending} to exist`);
  const status = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!.status as any;
  expect(status.phase).toBe('Upgrading');
  expect(status.capacity).toMatchObject({ outcome: 'doesNotFit', message: NONE_FREE });
  expect(status.message).toContain(`; capacity preflight: ${NONE_FREE}`);
  expect(status.conditions.find((c: any) => c.type === 'CapacityFits')).toMatchObject({ status: 'False', reason: 'DoesNotFit', message: NONE_FREE });
  // The real scheduler finds no GPU for the surge's worker (KubeRay starts the group's 1 replica; no autoscaler runs here to ask for more).
  const unschedulable = async () => (await env.admin.list(POD, { namespace: ns, labelSelector: `ray.io/cluster=${pending},ray.io/node-type=worker` })).items
    .filter((p: any) => (p.status?.conditions ?? []).some((c: any) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable'));
  await waitFor(async () => ((await unschedulable()).length === 1 ? true : `${(await unschedulable()).length} unschedulable`), 'the surge\'s worker to be Unschedulable');
  const heldAt = Date.now();
  // Free the GPUs: the scheduler binds the surge and the upgrade runs to the end.
  await env.admin.delete(POD, 'gpu-filler', ns);
  await waitFor(async () => {
    const s = await state(ns);
    return s.phase === 'Running' && s.activeClusterName === pending && s.pendingClusterName === undefined ? true : `${s.phase}/${s.reason}`;
  }, 'the upgrade to complete once the GPUs are free', 120_000);
  // One Event for the whole upgrade, not one per pass.
  const events = (await env.admin.list(EVENT, { namespace: ns })).items.filter((e: any) => e.reason === 'InsufficientCapacity') as any[];
  expect(events.map((e) => [e.type, e.action, e.note])).toEqual([['Warning', 'CapacityPreflight', `upgrade started; its new Pods wait for the scheduler until capacity is free (capacityPolicy wait): ${NONE_FREE}`]]);
  // The goal is the serving cluster's spec again: the preflight's record is gone.
  const done = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!.status as any;
  expect(done.capacity).toBeUndefined();
  expect(done.conditions.find((c: any) => c.type === 'CapacityFits')).toBeUndefined();
  process.stdout.write(`capacity wait: surge Unschedulable ${heldAt - started} ms after creation, upgrade done ${Date.now() - heldAt} ms after the GPUs were freed\n`);
}), 240_000);

test('fail: phase Failed with the message, and the pending cluster is never created', () => harness.env.cluster.printLogsOnFailure(async () => {
  const env = harness.env;
  const ns = 'gpu-fail';
  const started = Date.now();
  // 8 GPUs: 1 for the wait test's service, 1 for this one's worker, 5 for the filler, 1 free.
  const first = await upgradeWithGpusTaken(ns, 'fail', 5);
  await waitFor(async () => (await state(ns)).phase === 'Failed', 'the upgrade to be refused');
  const status = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!.status as any;
  expect(status).toMatchObject({ phase: 'Failed', reason: 'InsufficientCapacity', capacity: { outcome: 'doesNotFit', message: MESSAGE } });
  expect(status.conditions.find((c: any) => c.type === 'Ready')).toMatchObject({ status: 'True' });
  expect(await clusters(ns)).toEqual([first]);
  await env.admin.delete(POD, 'gpu-filler', ns);
  process.stdout.write(`capacity fail: refused ${Date.now() - started} ms after creation\n`);
}), 240_000);

test('a ResourceQuota on requests.nvidia.com/gpu is honoured though the Node has GPUs free', () => harness.env.cluster.printLogsOnFailure(async () => {
  const env = harness.env;
  const ns = 'gpu-quota';
  const QUOTA = { apiVersion: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', namespaced: true };
  await createNamespace(env.admin, ns);
  await env.admin.create({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'gpus', namespace: ns }, spec: { hard: { 'requests.nvidia.com/gpu': '2' } } });
  const used = async () => (((await env.admin.tryGet(QUOTA, 'gpus', ns))?.status as any)?.used ?? {})['requests.nvidia.com/gpu'];
  await waitFor(async () => (await used()) === '0', 'the quota controller to count the namespace');
  await env.admin.create(gpuService(ns, 'fail'));
  await waitFor(async () => (await state(ns)).phase === 'Running', 'the first cluster to serve');
  await waitFor(async () => (await used()) === '1', 'the quota to count the serving worker');
  // The Node has 8 − 2 (the other tests' services) − 1 = 5 GPUs free; the quota has 2 − 1 = 1.
  const first = await startUpgrade(ns);
  await waitFor(async () => (await state(ns)).phase === 'Failed', 'the upgrade to be refused');
  const status = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!.status as any;
  expect(status.capacity).toMatchObject({ outcome: 'doesNotFit', message: 'needs 4 requests.nvidia.com/gpu in ResourceQuota gpus, 1 free (hard 2, used 1)' });
  expect(await clusters(ns)).toEqual([first]);
}), 240_000);

/** GPUs of the kwok Node not requested by a bound, unfinished Pod. */
async function freeGpus(): Promise<number> {
  const pods = (await harness.env.admin.list(POD)).items as any[];
  const used = pods
    .filter((p) => typeof p.spec?.nodeName === 'string' && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
    .reduce((a, p) => a + p.spec.containers.reduce((b: number, c: any) => b + Number(c.resources?.limits?.['nvidia.com/gpu'] ?? 0), 0), 0);
  return 8 - used;
}

/** The value of `rayshift_surge_unschedulable_seconds` for service `llm` in `ns`, as the operator's registry serves it. */
async function surgeSeconds(ns: string): Promise<number | undefined> {
  const text = await harness.operator.metrics.registry.getSingleMetricAsString('rayshift_surge_unschedulable_seconds');
  const line = text.split('\n').find((l) => l.startsWith(`rayshift_surge_unschedulable_seconds{namespace="${ns}",name="llm"}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

test('wait: a surge the real scheduler leaves Unschedulable past surgeUnschedulableSeconds is reported (status, one Event, metric), and the upgrade completes once GPUs are free', () => harness.env.cluster.printLogsOnFailure(async () => {
  const env = harness.env;
  const ns = 'gpu-surge';
  await createNamespace(env.admin, ns);
  const svc = rayService(ns, 'llm', { maxSurge: 100, step: 50, extensions: { capacityPolicy: 'wait', surgeUnschedulableSeconds: 1 } });
  (svc.spec as Record<string, unknown>).rayClusterConfig = gpuConfig('1');
  await env.admin.create(svc);
  await waitFor(async () => (await state(ns)).phase === 'Running', 'the first cluster to serve');
  await fill(ns, await freeGpus());
  // The new spec's head needs a GPU too: with none free it stays Unschedulable, so the upgrade waits for it.
  const current = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!;
  const first = engineState(current).activeClusterName as string;
  const next = gpuConfig('2') as any;
  next.headGroupSpec.template.spec.nodeSelector = { type: 'kwok' };
  next.headGroupSpec.template.spec.containers[0].resources = { limits: { 'nvidia.com/gpu': '1' } };
  await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: next } });
  const started = Date.now();
  await waitFor(async () => ((await state(ns)).surgeUnschedulable?.boundExceeded === true ? true : JSON.stringify((await state(ns)).surgeUnschedulable ?? null)), 'the surge to be reported Unschedulable');
  const reportedAfter = Date.now() - started;
  const status = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!.status as any;
  const pending = status.engineState.pendingClusterName as string;
  expect(status.phase).toBe('Upgrading');
  expect(status.surgeUnschedulable).toMatchObject({ boundExceeded: true });
  expect(status.surgeUnschedulable.pods).toBeGreaterThanOrEqual(1);
  // The scheduler's own words, read from the Pod's PodScheduled condition.
  expect(status.surgeUnschedulable.message).toContain('Insufficient nvidia.com/gpu');
  expect(status.message).toContain(`of ${pending} Unschedulable: `);
  const since = Date.parse(status.surgeUnschedulable.sinceTime);
  // The operator records its metrics once the pass that wrote this status returns: wait for that pass.
  await waitFor(async () => ((await surgeSeconds(ns)) ?? 0) >= 1 || `gauge ${await surgeSeconds(ns)}`, 'the surge gauge to count the Unschedulable seconds');
  const events = async () => (await env.admin.list(EVENT, { namespace: ns })).items.filter((e: any) => e.reason === 'SurgeUnschedulable') as any[];
  await waitFor(async () => (await events()).length > 0, 'the SurgeUnschedulable Event');
  const reported = await events();
  expect(reported.map((e) => [e.type, e.action])).toEqual([['Warning', 'SurgeScheduling']]);
  expect(reported[0].note).toMatch(new RegExp(`^\\d+ Pods? of the new cluster ${pending} Unschedulable for \\d+ s \\(surgeUnschedulableSeconds 1\\); the upgrade waits for capacity \\(capacityPolicy wait\\): `));
  // Free the GPUs: the head and workers are bound, the upgrade completes, the record and the gauge go.
  await env.admin.delete(POD, 'gpu-filler', ns);
  await waitFor(async () => {
    const s = await state(ns);
    return s.phase === 'Running' && s.activeClusterName === pending ? true : `${s.phase}/${s.reason}`;
  }, 'the upgrade to complete once the GPUs are free', 120_000);
  expect(((await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!.status as any).surgeUnschedulable).toBeUndefined();
  await waitFor(async () => (await surgeSeconds(ns)) === 0 || `gauge ${await surgeSeconds(ns)}`, 'the surge gauge to read 0 after the pass that promoted');
  expect((await events()).length).toBe(1);
  expect(first).not.toBe(pending);
  process.stdout.write(`surge wait: reported ${reportedAfter} ms after the upgrade started (Unschedulable since ${since - started} ms after it), bound 1 s\n`);
}), 240_000);

test('fail: a surge the preflight passes but the scheduler cannot place (required pod affinity) is rolled back past surgeUnschedulableSeconds, not at the progress deadline', () => harness.env.cluster.printLogsOnFailure(async () => {
  const env = harness.env;
  const ns = 'surge-fail';
  await createNamespace(env.admin, ns);
  await env.admin.create(rayService(ns, 'llm', { extensions: { capacityPolicy: 'fail', surgeUnschedulableSeconds: 1 } }));
  await waitFor(async () => (await state(ns)).phase === 'Running', 'the first cluster to serve');
  const current = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!;
  const first = engineState(current).activeClusterName as string;
  // Pod affinity is not something the preflight models: it fits, and the scheduler finds no node.
  const next = rayClusterConfig('2') as any;
  next.headGroupSpec.template.spec.affinity = { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'rayshift-test/absent': 'yes' } }, topologyKey: 'kubernetes.io/hostname' }] } };
  await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: next } });
  const started = Date.now();
  await waitFor(async () => ((await state(ns)).rollback === 'SurgeUnschedulable' || (await state(ns)).reason === 'SurgeUnschedulable' ? true : `${(await state(ns)).phase}/${(await state(ns)).reason}`), 'the upgrade to be rolled back');
  const rolledBackAfter = Date.now() - started;
  await waitFor(async () => {
    const s = await state(ns);
    return s.phase === 'Running' && s.pendingClusterName === undefined && s.activeClusterName === first ? true : `${s.phase}/${s.reason}`;
  }, 'the rollback to complete');
  const s = await state(ns);
  expect(s).toMatchObject({ reason: 'SurgeUnschedulable', activeClusterName: first });
  expect(s.capacity).toBeUndefined();
  await waitFor(async () => ((await clusters(ns)).length === 1 ? true : (await clusters(ns)).join(',')), 'the pending RayCluster to be deleted');
  expect(await clusters(ns)).toEqual([first]);
  const events = (await env.admin.list(EVENT, { namespace: ns })).items.filter((e: any) => e.reason === 'SurgeUnschedulable') as any[];
  expect(events).toHaveLength(1);
  expect(events[0].note).toContain('rolling the upgrade back (capacityPolicy fail)');
  expect(events[0].note).toContain("didn't match pod affinity rules");
  process.stdout.write(`surge fail: rolled back ${rolledBackAfter} ms after the upgrade started (bound 1 s, progress deadline 600 s)\n`);
}), 240_000);
