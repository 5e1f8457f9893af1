/**
 * capacityPolicy shrinkFirst frees the old cluster's worker Pods (docs/capacity.md, "Executing
 * shrinkFirst"), on the test cluster: real kube-apiserver, kube-scheduler, KubeRay and kwok, two
 * Nodes of 8 nvidia.com/gpu each, workers of one GPU each. The service runs 8 Serve replicas on 8
 * workers; fillers leave 1 GPU free; maxSurgePercent 50 makes each step 4 replicas, 4 GPUs.
 *
 * Two TEST-ONLY stand-ins play what needs Ray processes: the simulated Serve places each replica on
 * a running worker Pod of its own and reports it (`node_instance_id`, test/support/
 * serve-simulator-placement.ts, fed by simulated-serve-placement.ts), and simulated-ray-autoscaler.ts
 * sets a group's `replicas` for replicas waiting for a node, holding back while `workersToDelete`
 * names a live Pod, as Ray's in-tree autoscaler does. So the new cluster's Pods are asked for only
 * as its Serve capacity rises, and they can bind only to GPUs the old cluster's freed Pods gave back.
 *
 * From a Pod watch: no Pod is ever Unschedulable, and the GPUs of the Pods bound to a Node never sum
 * above its allocatable; a `WorkersFreed` Event names old workers, which are gone; the upgrade is
 * promoted with the new cluster's 8 replicas RUNNING on 8 distinct worker Pods of its own.
 */
import { gpuConfig } from '../support/gpu-capacity';
import { OperatorHarness, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayService, serveConfig, startOperatorHarness, waitFor } from '../support/operator-env';
import { SimulatedRayAutoscaler, startSimulatedRayAutoscaler } from '../support/simulated-ray-autoscaler';
import { SimulatedServePlacement, startSimulatedServePlacement } from '../support/simulated-serve-placement';
import { KnownTypes, type KubeObject } from '../../lib/runtime/kube/types';
import { POD } from '../../lib/spec/object-names';

const GPU = 'nvidia.com/gpu';
const REPLICAS = 8;

let harness: OperatorHarness;
let placement: SimulatedServePlacement | undefined;

beforeAll(async () => {
  harness = await startOperatorHarness({
    nodes: 2,
    // Serve's proxies drain for 100 ms here (30 s in Ray): the freeing waits for it either way.
    serve: (ns, cluster) => ({ replicaStartDelayMs: 20, proxyDrainMs: 100, placement: () => placement?.nodes(ns, cluster) ?? [] }),
  });
  placement = startSimulatedServePlacement(harness.env.admin);
  await placement.waitForSync(30_000);
}, 300_000);

afterAll(async () => {
  await placement?.stop();
  await harness?.stop();
});

/** Workers of one GPU each, up to one per replica. */
function service(ns: string, cpu: string): KubeObject {
  const svc = rayService(ns, 'llm', { maxSurge: 50, step: 50, serve: serveConfig(REPLICAS), extensions: { capacityPolicy: 'shrinkFirst' } });
  const config = gpuConfig(cpu) as any;
  config.workerGroupSpecs[0].maxReplicas = REPLICAS;
  (svc.spec as Record<string, unknown>).rayClusterConfig = config;
  return svc;
}

function gpusOf(pod: KubeObject): number {
  const containers = ((pod.spec as any)?.containers ?? []) as any[];
  return containers.reduce((sum, c) => sum + Number(c.resources?.limits?.[GPU] ?? c.resources?.requests?.[GPU] ?? 0), 0);
}

test('shrinkFirst frees the old cluster\'s idle workers before each take: a step of 4 GPUs with 1 free runs with no Pod Unschedulable and never more GPUs bound than allocatable', () => harness.env.cluster.printLogsOnFailure(async () => {
  const env = harness.env;
  const ns = 'gpu-free';
  await createNamespace(env.admin, ns);
  const details = (cluster: string) => env.fleet.dashboard(ns, cluster)?.details();
  let autoscaler: SimulatedRayAutoscaler | undefined = startSimulatedRayAutoscaler(env.admin, ns, details);
  const state = async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns));
  const workersOf = async (cluster: string) => (await env.admin.list(POD, { namespace: ns, labelSelector: { 'ray.io/cluster': cluster, 'ray.io/node-type': 'worker' } })).items;
  /** The cluster's Serve replicas, each `state@pod`. */
  const replicasOf = (cluster: string): string[] =>
    Object.values((details(cluster) as any)?.applications ?? {}).flatMap((a: any) => Object.values(a.deployments).flatMap((d: any) => d.replicas.map((r: any) => `${r.state}@${r.node_instance_id}`)));

  try {
    await env.admin.create(service(ns, '1'));
    await waitFor(async () => {
      const s = await state();
      if (s.phase !== 'Running') return `phase ${s.phase}`;
      const running = replicasOf(s.activeClusterName).filter((r) => r.startsWith('RUNNING@'));
      return running.length === REPLICAS || `${running.length} replicas RUNNING`;
    }, 'the first cluster to serve its 8 replicas', 180_000);
    const first = (await state()).activeClusterName as string;
    const firstWorkers = (await workersOf(first)).map((p) => String(p.metadata.name));
    // The stand-ins put each replica on a worker of its own: 8 workers, launched by the autoscaler stand-in from KubeRay's 1.
    expect(firstWorkers).toHaveLength(REPLICAS);
    expect(new Set(replicasOf(first).map((r) => r.split('@')[1]))).toEqual(new Set(firstWorkers));

    // Fill each Node to leave 1 GPU free in all.
    const nodes = (await env.admin.list(KnownTypes.Node, { labelSelector: { type: 'kwok' } })).items;
    const allocatable = new Map(nodes.map((n) => [String(n.metadata.name), Number((n.status as any).allocatable[GPU])]));
    const bound = (await env.admin.list(POD, { namespace: ns })).items.filter((p) => (p.spec as any).nodeName !== undefined);
    let leave = 1;
    for (const [node, gpus] of allocatable) {
      const free = gpus - bound.filter((p) => (p.spec as any).nodeName === node).reduce((sum, p) => sum + gpusOf(p), 0);
      const fill = free - Math.min(leave, free);
      leave -= Math.min(leave, free);
      if (fill <= 0) continue;
      await env.admin.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `gpu-filler-${node}`, namespace: ns }, spec: { nodeSelector: { 'kubernetes.io/hostname': node }, containers: [{ name: 'c', image: 'registry.local/filler:1', resources: { limits: { [GPU]: String(fill) } } }] } });
    }
    await waitFor(async () => (await env.admin.list(POD, { namespace: ns })).items.filter((p) => String(p.metadata.name).startsWith('gpu-filler-')).every((p) => (p.spec as any).nodeName !== undefined), 'the fillers to be bound');

    // Every Pod from here on: Unschedulable ones, and the GPUs bound per Node after each event.
    const unschedulable = new Set<string>();
    const holding = new Map<string, { node: string; gpus: number }>();
    const peak = new Map<string, number>();
    // The GPUs every live Pod asks for, bound or still Pending: binding alone is the scheduler's
    // guarantee; what the upgrade must never do is ask for more than the Nodes have.
    const asking = new Map<string, number>();
    let peakAsked = 0;
    const pods = env.admin.watch(POD, ns, (e) => {
      const pod = e.object;
      const name = String(pod.metadata.name);
      const phase = (pod.status as { phase?: string } | undefined)?.phase;
      if (e.type === 'delete' || phase === 'Succeeded' || phase === 'Failed') asking.delete(name);
      else asking.set(name, gpusOf(pod));
      peakAsked = Math.max(peakAsked, [...asking.values()].reduce((a, b) => a + b, 0));
      if ((pod.status as any)?.conditions?.some((c: any) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable')) unschedulable.add(name);
      // A Pod holds its requests on its Node from binding until it is gone, terminating included.
      const node = (pod.spec as any)?.nodeName as string | undefined;
      if (e.type === 'delete' || node === undefined) holding.delete(name);
      else holding.set(name, { node, gpus: gpusOf(pod) });
      for (const n of allocatable.keys()) {
        const sum = [...holding.values()].filter((h) => h.node === n).reduce((s, h) => s + h.gpus, 0);
        peak.set(n, Math.max(peak.get(n) ?? 0, sum));
      }
    }, { resyncIntervalMs: 0 });
    await pods.waitForSync(30_000);
    const started = Date.now();
    try {
      const current = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!;
      await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: (service(ns, '2').spec as Record<string, unknown>).rayClusterConfig } });
      await waitFor(async () => {
        const s = await state();
        return s.phase === 'Running' && s.activeClusterName !== first && s.pendingClusterName === undefined ? true : `${s.phase}/${s.reason} ${s.activeTargetCapacity}/${s.pendingTargetCapacity}`;
      }, 'the zero-surge upgrade to complete', { timeoutMs: 240_000, abortIf: () => (unschedulable.size > 0 ? `Pods Unschedulable: ${[...unschedulable].join(', ')}` : undefined) });
      const took = Date.now() - started;
      const promoted = (await state()).activeClusterName as string;
      expect([...unschedulable]).toEqual([]);
      for (const [node, gpus] of allocatable) expect(peak.get(node) ?? 0).toBeLessThanOrEqual(gpus);
      expect(peakAsked).toBeLessThanOrEqual([...allocatable.values()].reduce((a, b) => a + b, 0));

      // Freed by name: old workers, each gone now.
      const freed = (await env.admin.list(KnownTypes.Event, { namespace: ns })).items.filter((e: any) => e.reason === 'WorkersFreed') as any[];
      const named = freed.flatMap((e) => String(e.note).split(': ').pop()!.split(', '));
      expect(named.length).toBeGreaterThan(0);
      for (const pod of named) expect(firstWorkers).toContain(pod);
      const left = new Set((await env.admin.list(POD, { namespace: ns })).items.map((p) => String(p.metadata.name)));
      expect(named.filter((p) => left.has(p))).toEqual([]);

      // The new cluster serves on workers of its own, which the autoscaler stand-in asked for.
      await waitFor(() => replicasOf(promoted).filter((r) => r.startsWith('RUNNING@')).length === REPLICAS || replicasOf(promoted).join(' '), 'the new cluster\'s replicas to run');
      const newWorkers = (await workersOf(promoted)).map((p) => String(p.metadata.name));
      expect(new Set(replicasOf(promoted).map((r) => r.split('@')[1]))).toEqual(new Set(newWorkers));
      expect(newWorkers).toHaveLength(REPLICAS);
      process.stdout.write(`shrinkFirst freeing: promoted ${took} ms after the spec change; ${freed.length} WorkersFreed Event(s) naming ${named.length} Pod(s); peak GPUs bound per Node ${JSON.stringify(Object.fromEntries(peak))}, asked by live Pods ${peakAsked}; autoscaler stand-in wrote ${autoscaler.writes.length} patches, held ${autoscaler.heldForDeletes()} launch(es) for pending deletes\n`);
    } finally {
      await pods.stop();
    }
  } finally {
    await autoscaler?.stop();
    autoscaler = undefined;
  }
}), 600_000);
