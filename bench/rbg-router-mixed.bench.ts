/**
 * Issue 35, side by side in one run: the same coordinated prefill/decode rollout (v1 → v2) under
 * steady load from a bounded client, once with ONE sglang-router over every Pod of the group (what
 * RBG users run today) and once with rayshift's version-matched routing (one router per release,
 * the operator moving the route's weights), at 4 prefill / 2 decode and 40 / 20. Prints, per run,
 * requests served, failed and served by a mixed pair (a prefill and a decode of different
 * releases), the rollout's wall time, and the load average; never asserts. See docs/bench.md.
 *
 * REAL: the test cluster (kube-apiserver, etcd, scheduler, controller-manager, kwok Nodes), RBG
 * v0.7.0's controller rolling the roles, rayshift's operator (its RBG controller, in this process)
 * moving partitions and, in the routed runs, the HTTPRoute's weights, and the sglang-router 0.3.2
 * binary in PD mode (policy random). TEST-ONLY simulated: the prefill and decode workers
 * (simulated-pd-worker.ts; kwok's Pods run no process), the routers' Kubernetes discovery of them
 * (simulated-pod-discovery.ts: a Ready Pod's worker is registered through the router's API, under
 * the selectors the rendered router Deployment carries), and the Gateway (the client sends request
 * i to the new release's router when i mod 100 < the route's live weight).
 *
 *   npx tsx bench/rbg-router-mixed.bench.ts [--sizes 4/2,40/20] [--lanes 2]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeClient } from '../lib/runtime/kube/client';
import { KubeObject } from '../lib/runtime/kube/types';
import { RBG_V1ALPHA2_TYPE } from '../lib/spec/object-names';
import { RbgRolloutController } from '../operator/rbg-controller';
import { startTestCluster, TestCluster } from '../test/support/cluster';
import { upstreamCrdFiles } from '../test/support/controlplane';
import { Proc, Supervisor, httpGet, pollUntil } from '../test/support/processes';
import { coordinationWhen, GroupContext } from '../test/support/rbg-operator-group';
import { followRouteWeight, LoadResult, RoutedGroupShape, startLoad, synthesizeRoutedGroup } from '../test/support/rbg-routed-group';
import { requireSglangRouter, startSglangRouter } from '../test/support/sglang-router';
import { Registered, RouterSelectors, routerSelectorsOf, SimulatedPodDiscovery, startSimulatedPodDiscovery } from '../test/support/simulated-pod-discovery';
import type { ServedPair } from '../test/support/simulated-pd-worker';
import { printTable } from './operator-harness';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const SIZES = arg('sizes', '4/2,40/20').split(',').map((s) => s.split('/').map(Number) as [number, number]);
const LANES = Number(arg('lanes', '2'));
const NS = 'default';
const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
/** RBG v0.7.0's labels on a role's Pods: what a user's one router selects by. */
const POD_GROUP = 'rbg.workloads.x-k8s.io/group-name';
const POD_ROLE = 'rbg.workloads.x-k8s.io/role-name';

type Mode = 'one router' | 'rayshift';

interface Row {
  readonly size: string;
  readonly mode: Mode;
  readonly result: LoadResult;
  readonly mixed: number;
  /** Σ over requests of the chance that a random pairing on the chosen router's pools at send time is mixed. */
  readonly expectedMixed: number;
  readonly served: number;
  readonly wallMs: number;
  readonly weights: string;
}

/** The rule of a size: maxSkew 50 % and one unavailable at 4/2; 25 % and 10 % at larger sizes (40 rounds of one would be a different rollout, not a bigger one). */
function shapeOf(name: string, prefill: number, decode: number): RoutedGroupShape {
  const small = prefill <= 4;
  return { name, namespace: NS, replicas: { prefill, decode }, maxSkew: small ? '50%' : '25%', maxUnavailable: small ? 1 : '10%' };
}

async function main(): Promise<void> {
  requireSglangRouter();
  const gatewayApi = (await upstreamCrdFiles()).filter((f) => f.includes('gateway.networking.k8s.io_'));
  const cluster = await startTestCluster({ rbg: true, nodes: 2, crds: gatewayApi });
  const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  const gitops = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'gitops' });
  const watches: { stop(): void }[] = [];
  const ctx: GroupContext = { cluster, admin, gitops, namespace: NS, watches };
  const controller = new RbgRolloutController({ client: admin, log: SILENT });
  await controller.start();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-router-mixed-'));
  const supervisor = new Supervisor(dir, 'RAYSHIFT_KEEP_SGLANG_ROUTER');
  const rows: Row[] = [];
  try {
    for (const [prefill, decode] of SIZES) {
      for (const mode of ['one router', 'rayshift'] as const) {
        const name = `pd${prefill}-${mode === 'rayshift' ? 'matched' : 'one'}`;
        const row = await rollout(ctx, cluster, supervisor, dir, shapeOf(name, prefill, decode), mode);
        rows.push(row);
        console.log(`${row.size} ${mode}: ${row.result.statuses.length} requests, ${row.mixed} mixed, rollout ${(row.wallMs / 1000).toFixed(1)} s${row.weights ? `; weights ${row.weights}` : ''}`);
      }
    }
  } finally {
    supervisor.release();
    for (const w of watches) w.stop();
    await controller.stop();
    admin.close();
    gitops.close();
    await cluster.stop();
    if (process.env.RAYSHIFT_KEEP_SGLANG_ROUTER !== '1') fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nsame rollout (v1 → v2), ${LANES} client lanes of one request at a time; mixed = served by a prefill and a decode of different releases;`);
  console.log(`pools' mix = the mixed share random pairing gives on the chosen router's registered workers at each request's send time`);
  printTable([
    ['size', 'routing', 'requests', 'served', 'failed', 'mixed', 'mixed %', 'pools\' mix %', 'rollout s', 'to new release'],
    ...rows.map((r) => {
      const failed = r.result.statuses.filter((s) => s !== 200).length;
      return [`${r.size}`, r.mode, r.result.statuses.length, r.served, failed, r.mixed, r.served ? (100 * r.mixed) / r.served : 0, r.result.statuses.length ? (100 * r.expectedMixed) / r.result.statuses.length : 0, r.wallMs / 1000, r.mode === 'rayshift' ? String(r.result.sent.v2 ?? 0) : '-'];
    }),
  ]);
  for (const r of rows.filter((x) => x.weights)) console.log(`${r.size} rayshift: new-release weights ${r.weights}`);
  for (const r of rows.filter((x) => Object.keys(x.result.failed).length)) console.log(`${r.size} ${r.mode}: failed ${JSON.stringify(r.result.failed)}`);
  console.log(`load average (1/5/15 min) at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} on ${os.cpus().length} cores`);
}

/**
 * The chance that a prefill and a decode picked at random (policy random) from `pools` are of
 * different releases: 1 − Σ over releases of P(prefill of r) · P(decode of r); 0 when a pool is
 * empty (the router then fails the request: no pair at all, counted as failed, not mixed).
 */
function mixedChance(pools: Registered): number {
  const total = (byRelease: Readonly<Record<string, number>>) => Object.values(byRelease).reduce((a, b) => a + b, 0);
  const [np, nd] = [total(pools.prefill), total(pools.decode)];
  if (np === 0 || nd === 0) return 0;
  return 1 - Object.keys(pools.prefill).reduce((a, r) => a + ((pools.prefill[r] ?? 0) / np) * ((pools.decode[r] ?? 0) / nd), 0);
}

/** Applies every object (the group and, when routed, its routers, Services and route). */
async function applyAll(gitops: KubeClient, objects: readonly KubeObject[]): Promise<void> {
  for (const o of objects) await gitops.apply(o, { force: true });
}

/** Starts a router with no worker, its discovery under `selectors`, and waits until it has `expect` workers registered and healthy. */
async function routerWithDiscovery(ctx: GroupContext, supervisor: Supervisor, dir: string, name: string, selectors: RouterSelectors, served: ServedPair[], procs: Proc[], expect: number): Promise<{ url: string; discovery: SimulatedPodDiscovery }> {
  const url = await startSglangRouter(supervisor, dir, name, [], [], procs);
  const discovery = startSimulatedPodDiscovery(ctx.admin, ctx.namespace, selectors, url, served);
  await pollUntil(`${name} to register ${expect} workers`, async () => {
    const r = await httpGet(`${url}/workers`);
    const workers: { is_healthy?: boolean }[] = r.status === 200 ? JSON.parse(r.text).workers ?? [] : [];
    discovery.registered(); // throws what the discovery failed with
    return workers.filter((w) => w.is_healthy).length === expect ? undefined : `${workers.length} registered`;
  }, { timeoutMs: 120_000, procs, logs: [{ file: path.join(dir, `${name}.log`), lines: 20 }] });
  return { url, discovery };
}

/** One rollout of `shape` from v1 to v2 under load, routed as `mode` says; the group is deleted after. */
async function rollout(ctx: GroupContext, cluster: TestCluster, supervisor: Supervisor, dir: string, shape: RoutedGroupShape, mode: Mode): Promise<Row> {
  const routed = mode === 'rayshift';
  const total = Object.values(shape.replicas).reduce((a, b) => a + b, 0);
  const size = `${shape.replicas.prefill}/${shape.replicas.decode}`;
  const served: ServedPair[] = [];
  const procs: Proc[] = [];
  const discoveries: SimulatedPodDiscovery[] = [];
  const v1 = synthesizeRoutedGroup(shape, 'sglang:v1', undefined, routed);
  await applyAll(ctx.gitops, v1.objects);
  const armed = await coordinationWhen(ctx, shape.name, 'armed, every replica ready at v1', (c) => c?.phase === 'Complete' && (!routed || c.router?.releases[0]?.weight === 100));
  try {
    const v2 = synthesizeRoutedGroup(shape, 'sglang:v2', v1.revision, routed);
    let choose: (i: number) => { label: string; url: string; discovery: SimulatedPodDiscovery };
    let weights: { weight: number }[] = [];
    let full: Promise<void> = Promise.resolve();
    if (routed) {
      // One router per release, discovering by the selectors its rendered Deployment carries.
      const deploymentOf = (objects: KubeObject[], revision: string) => objects.find((o) => o.kind === 'Deployment' && o.metadata.name?.endsWith(revision))!;
      const old = await routerWithDiscovery(ctx, supervisor, dir, `${shape.name}-router-v1`, routerSelectorsOf(deploymentOf(v1.objects, v1.revision!)), served, procs, total);
      const next = await routerWithDiscovery(ctx, supervisor, dir, `${shape.name}-router-v2`, routerSelectorsOf(deploymentOf(v2.objects, v2.revision!)), served, procs, 0);
      discoveries.push(old.discovery, next.discovery);
      const route = followRouteWeight(ctx.admin, NS, `${shape.name}-pd-router`, `${shape.name}-pd-router-${v2.revision}`);
      ctx.watches.push(route);
      weights = route.weights;
      full = route.full;
      choose = (i) => (i % 100 < route.current() ? { label: 'v2', ...next } : { label: 'v1', ...old });
    } else {
      const selector = (role: string) => ({ [POD_GROUP]: shape.name, [POD_ROLE]: role });
      const one = await routerWithDiscovery(ctx, supervisor, dir, `${shape.name}-router`, { prefill: selector('prefill'), decode: selector('decode') }, served, procs, total);
      discoveries.push(one.discovery);
      choose = () => ({ label: 'one', ...one });
    }
    let expectedMixed = 0;
    const load = startLoad((i) => {
      const { label, url, discovery } = choose(i);
      expectedMixed += mixedChance(discovery.registered());
      return { label, url };
    }, LANES);
    await applyAll(ctx.gitops, v2.objects);
    const t0 = Date.now();
    await coordinationWhen(ctx, shape.name, 'the v2 rollout Complete', (c) => c?.phase === 'Complete' && c.revision !== armed.revision && (!routed || c.router?.releases.find((r) => r.current)?.weight === 100), 600_000);
    const wallMs = Date.now() - t0;
    await full;
    const result = await load.stop();
    const mixed = served.filter((p) => p.prefillRelease !== p.decodeRelease).length;
    return { size, mode, result, mixed, expectedMixed, served: served.length, wallMs, weights: weights.map((w) => w.weight).join(' → ') };
  } finally {
    for (const p of procs) await supervisor.kill(p, 'SIGTERM', 5_000);
    await Promise.all(discoveries.map((d) => d.stop()));
    await ctx.admin.delete(RBG_V1ALPHA2_TYPE, shape.name, NS);
    await cluster.cp.request('DELETE', `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`${POD_GROUP}=${shape.name}`)}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
