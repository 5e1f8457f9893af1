/**
 * capacityPolicy shrinkFirst on the test cluster (real kube-scheduler and KubeRay, one kwok Node
 * with 8 nvidia.com/gpu): a service whose workers take one GPU each, maxSurgePercent 50 over 4
 * workers (a first step of 2 GPUs), with a filler leaving 1 GPU free. `plan --cluster` reports
 * that the surge fits only once the old cluster shrinks and plans the zero-surge upgrade with its
 * dip; the operator starts it without a surge (status.capacity.shrinkFirst, one Event) and runs
 * it to promotion with the two clusters' Serve target capacities never summing over 100 at any
 * status the API server held (watched), and no Pod of the namespace ever Unschedulable.
 *
 * What this does not show: GPUs freed by the shrink. No Serve placement or autoscaler stand-in runs
 * here, so KubeRay starts the new cluster's workers from the spec alone and the freeing names no Pod;
 * cluster-operator-shrink-first-freeing.test.ts shows the freeing, with both stand-ins.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { gpuConfig, rayshiftCli } from '../support/gpu-capacity';
import { OperatorHarness, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayService, startOperatorHarness, waitFor } from '../support/operator-env';
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


function service(ns: string, cpu: string): KubeObject {
  const svc = rayService(ns, 'llm', { maxSurge: 50, step: 50, extensions: { capacityPolicy: 'shrinkFirst' } });
  (svc.spec as Record<string, unknown>).rayClusterConfig = gpuConfig(cpu);
  return svc;
}

async function state(ns: string): Promise<Record<string, any>> {
  return engineState(await harness.env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns));
}

/** The built CLI against the test cluster. */
function rayshift(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return rayshiftCli(harness.env.cp.kubeconfigPath, args);
}

test('shrinkFirst: plan --cluster shows the zero-surge plan and its dip; the operator upgrades without a surge, the capacities never over 100, no Pod Unschedulable', () => harness.env.cluster.printLogsOnFailure(async () => {
  const env = harness.env;
  const ns = 'gpu-shrink';
  await createNamespace(env.admin, ns);
  await env.admin.create(service(ns, '1'));
  await waitFor(async () => (await state(ns)).phase === 'Running', 'the first cluster to serve');
  const first = (await state(ns)).activeClusterName as string;
  // 8 GPUs: 1 for the serving worker, 6 for the filler, 1 free.
  await env.admin.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gpu-filler', namespace: ns }, spec: { containers: [{ name: 'c', image: 'registry.local/filler:1', resources: { limits: { 'nvidia.com/gpu': '6' } } }] } });
  await waitFor(async () => typeof ((await env.admin.tryGet(POD, 'gpu-filler', ns))?.spec as any)?.nodeName === 'string', 'the filler to be bound');

  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-plan-')), 'llm.yaml');
  fs.writeFileSync(file, stringify(service(ns, '2')));
  const planned = await rayshift(['plan', '--cluster', '--json', file]);
  expect(planned.code).toBe(0);
  const plan = JSON.parse(planned.out).plans[0];
  // The first step needs ceil(4 × 50%) = 2 GPUs; 1 is free, and 2 once the serving worker's is given back.
  expect(plan.capacity).toEqual({ namespace: ns, activeCluster: first, outcome: 'fitsAfterOldShrinks', message: 'small: needs 2 nvidia.com/gpu on nodes matching {type=kwok}, 1 free' });
  // Old 100 → 50, new 0 → 50, traffic 50 at 0 s; the old cluster's last 50 of traffic leaves at 1 s (the new one carries 100 on 50), its capacity goes to 0 and the new one's to 100 at 2 s.
  expect(plan.steps.map((s: any) => `${s.atSeconds} ${s.action} ${s.activeTargetCapacity}/${s.pendingTargetCapacity} ${s.activeWeight}/${s.pendingWeight}`)).toEqual([
    '0 scale-active 50/0 100/0', '0 scale-pending 50/50 100/0', '0 shift-traffic 50/50 50/50', '1 shift-traffic 50/50 0/100', '2 scale-active 0/50 0/100', '2 scale-pending 0/100 0/100', '2 promote 100/0 100/0',
  ]);
  expect(plan.dip).toEqual({ value: 50, times: 2, from: 0, until: 2, lasts: 1 });
  expect(plan.peakCapacityPercent).toBe(100);

  // Every status and every Pod the API server holds from here on.
  const sums: number[] = [];
  let flagged = false;
  const services = env.admin.watch(RAYSHIFT_RAYSERVICE, ns, (e) => {
    const s = engineState(e.object);
    if (s.pendingClusterName !== undefined) sums.push(s.activeTargetCapacity + s.pendingTargetCapacity);
    if (s.capacity?.shrinkFirst === true) flagged = true;
  });
  const unschedulable = new Set<string>();
  const pods = env.admin.watch(POD, ns, (e) => {
    if ((e.object.status as any)?.conditions?.some((c: any) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable')) unschedulable.add(String(e.object.metadata.name));
  });
  services.start();
  pods.start();
  await services.waitForSync(30_000);
  await pods.waitForSync(30_000);
  try {
    const started = Date.now();
    const current = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!;
    await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: gpuConfig('2') } });
    await waitFor(async () => {
      const s = await state(ns);
      return s.phase === 'Running' && s.activeClusterName !== first && s.pendingClusterName === undefined ? true : `${s.phase}/${s.reason} ${s.activeTargetCapacity}/${s.pendingTargetCapacity}`;
    }, 'the zero-surge upgrade to complete', 120_000);
    const took = Date.now() - started;
    expect(flagged).toBe(true);
    expect(sums.length).toBeGreaterThan(0);
    expect(Math.max(...sums)).toBeLessThanOrEqual(100);
    expect([...unschedulable]).toEqual([]);
    const events = (await env.admin.list(EVENT, { namespace: ns })).items.filter((e: any) => e.reason === 'InsufficientCapacity') as any[];
    expect(events.map((e) => e.note)).toEqual(['upgrade started without a surge (capacityPolicy shrinkFirst): the old cluster gives back 50% of its capacity before the new one takes it, so the service runs at 50% during each step: small: needs 2 nvidia.com/gpu on nodes matching {type=kwok}, 1 free']);
    process.stdout.write(`shrinkFirst: promoted ${took} ms after the spec change; ${sums.length} statuses with a pending cluster, largest capacity sum ${Math.max(...sums)}\n`);
  } finally {
    services.stop();
    pods.stop();
  }
}), 240_000);
