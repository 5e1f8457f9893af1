/**
 * One coordinated prefill/decode rollout (v1 → v2) of a RoleBasedGroup under rayshift's operator,
 * under steady load, routed either by ONE real sglang-router over every Pod of the group (what RBG
 * users run today) or by rayshift's version-matched routing (one real router per release, the
 * operator moving the route's weights): what bench/rbg-router-mixed.bench.ts measures and
 * cluster-rbg-router-pods checks. The workers, the routers' Pod discovery and the Gateway are
 * TEST-ONLY simulations (simulated-pd-worker.ts, simulated-pod-discovery.ts, the client reading the
 * route's live weight). Test support, not the package's API.
 */
import * as path from 'node:path';
import type { KubeClient } from '../../lib/runtime/kube/client';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { RBG_V1ALPHA2_TYPE } from '../../lib/spec/object-names';
import type { TestCluster } from './cluster';
import { Proc, Supervisor, httpGet, pollUntil } from './processes';
import { coordinationWhen, GroupContext } from './rbg-operator-group';
import { followRouteWeight, LoadResult, RoutedGroupShape, startLoad, synthesizeRoutedGroup } from './rbg-routed-group';
import { startSglangRouter } from './sglang-router';
import { Registered, RouterSelectors, routerSelectorsOf, SimulatedPodDiscovery, startSimulatedPodDiscovery } from './simulated-pod-discovery';
import type { ServedPair } from './simulated-pd-worker';

/** RBG v0.7.0's labels on a role's Pods: what a user's one router selects by. */
const POD_GROUP = 'rbg.workloads.x-k8s.io/group-name';
const POD_ROLE = 'rbg.workloads.x-k8s.io/role-name';

/** How requests are routed: one router over every Pod, or rayshift's router per release. */
export type RoutingMode = 'one router' | 'rayshift';

/** What one rollout under load gave. */
export interface RouterRollout {
  readonly size: string;
  readonly mode: RoutingMode;
  readonly result: LoadResult;
  /** Requests served by a prefill and a decode of different releases. */
  readonly mixed: number;
  /** Σ over requests of the chance that a random pairing on the chosen router's pools at send time is mixed. */
  readonly expectedMixed: number;
  /** Requests the decodes served (each with both releases). */
  readonly served: number;
  /** From the v2 apply to the coordination's Complete, ms. */
  readonly wallMs: number;
  /** The route's new-release weights in order (rayshift mode), `a → b → …`. */
  readonly weights: string;
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

/** One rollout of `shape` from v1 to v2 under `lanes` client lanes, routed as `mode` says; the group is deleted after. */
export async function routerRollout(ctx: GroupContext, cluster: TestCluster, supervisor: Supervisor, dir: string, shape: RoutedGroupShape, mode: RoutingMode, lanes: number): Promise<RouterRollout> {
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
      const route = followRouteWeight(ctx.admin, ctx.namespace, `${shape.name}-pd-router`, `${shape.name}-pd-router-${v2.revision}`);
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
    }, lanes);
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
    await ctx.admin.delete(RBG_V1ALPHA2_TYPE, shape.name, ctx.namespace);
    await cluster.cp.request('DELETE', `/api/v1/namespaces/${ctx.namespace}/pods?labelSelector=${encodeURIComponent(`${POD_GROUP}=${shape.name}`)}`);
  }
}

