/**
 * Version-matched routing with the routers' OWN Kubernetes discovery, on the test cluster
 * (test/support/cluster.ts): RBG v0.7.0's real controller rolls a routed prefill/decode group (4/2)
 * synthesized by the `RoleBasedGroup` construct with a `router`, kwok runs its Pods, and rayshift's
 * operator (its RBG controller, in this process) moves the partitions and the route's weights. Each
 * release's router is the REAL sglang-router 0.3.2 started as the construct renders its Deployment
 * (command and args, `--service-discovery` with the rendered `--prefill-selector` /
 * `--decode-selector` and `--service-discovery-port`), outside the cluster with the test cluster's
 * admin kubeconfig: it watches the kwok Pods itself and dials its workers at their Pod IPs, a
 * prefill's bootstrap port read from the annotation the construct writes.
 *
 * SIMULATED: the workers (kwok's Pods run no process; test/support/pd-workers-at-pod-ips.ts puts a
 * simulated prefill or decode of the Pod's release at each Pod's IP, on a Pod network no other suite
 * uses) and the Gateway (the client sends request i to the new release's router when i mod 100 < the
 * route's live weight). No request may fail or be served by a prefill and a decode of different
 * releases, both releases must serve, and at the end each router's workers (`GET /workers`) must be
 * exactly its release's Ready Pods. Needs root (the interface), `npm run controlplane:build`,
 * `bash scripts/build-cluster.sh kwok rbg` and `bash scripts/install-sglang-router.sh`.
 */
import * as path from 'node:path';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { POD, RBG_V1ALPHA2_POD_LABELS, RBG_V1ALPHA2_TYPE, ROUTER_FOR_LABEL, ROUTER_REVISION_LABEL, SGLANG_BOOTSTRAP_PORT_ANNOTATION } from '../../lib/spec/object-names';
import type { TestCluster } from '../support/cluster';
import { PdWorkersAtPodIps, startPdWorkersAtPodIps } from '../support/pd-workers-at-pod-ips';
import { Proc, Supervisor, pollUntil } from '../support/processes';
import { coordinationWhen, GroupContext } from '../support/rbg-operator-group';
import { followRouteWeight, startLoad, synthesizeRoutedGroup } from '../support/rbg-routed-group';
import { RoutedGroupSuite, startRoutedGroupSuite } from '../support/routed-group-suite';
import { routerWorkers, startRenderedSglangRouter } from '../support/sglang-router';
import type { ServedPair } from '../support/simulated-pd-worker';
import { SimulatedRouterProbes, startSimulatedRouterProbes, withSimulatedProbeGate } from '../support/simulated-router-probe';

const NS = 'default';
const NAME = 'pd-disc';
const ROUTE = `${NAME}-pd-router`;
const SHAPE = { name: NAME, namespace: NS, replicas: { prefill: 4, decode: 2 }, maxSkew: '50%' };
/** The Pod network of this suite's kwok Nodes: one no other suite routes (the interface shadows it). */
const POD_NETWORK = '10.247';
let suite: RoutedGroupSuite;
let cluster: TestCluster;
let ctx: GroupContext;
let dir: string;
let supervisor: Supervisor;
let workers: PdWorkersAtPodIps | undefined;
let probes: SimulatedRouterProbes | undefined;
const routers: Proc[] = [];
const served: ServedPair[] = [];

beforeAll(async () => {
  suite = await startRoutedGroupSuite('router-discovery', NS, POD_NETWORK);
  ({ ctx, dir, supervisor } = suite);
  cluster = ctx.cluster;
}, 300_000);

afterAll(async () => {
  await probes?.stop();
  for (const proc of routers.splice(0)) await supervisor.kill(proc, 'SIGTERM', 5_000);
  await workers?.stop();
  await suite?.stop();
}, 60_000);

/** The rendered router Deployment of `revision`. */
function routerDeployment(objects: readonly KubeObject[], revision: string): KubeObject {
  const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.labels?.[ROUTER_REVISION_LABEL] === revision);
  if (!d) throw new Error(`no router Deployment for release ${revision} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return d;
}

/** The rendered objects with each router Deployment's Pods waiting for the simulated probe's gate. */
function gated(objects: readonly KubeObject[]): KubeObject[] {
  return objects.map((o) => (o.kind === 'Deployment' && o.metadata.labels?.[ROUTER_REVISION_LABEL] !== undefined ? withSimulatedProbeGate(o) : o));
}

/** The value after `flag` in a rendered router's args. */
function flagValue(deployment: KubeObject, flag: string): string {
  const args: string[] = (deployment.spec as any).template.spec.containers[0].args;
  return args[args.indexOf(flag) + 1];
}

/**
 * What a router of `revision` should list: every Ready, non-terminating prefill and decode Pod of the
 * group carrying that release, as `[url, type, bootstrap port]`, sorted (from the Pods, not the router).
 */
async function readyPodsOf(revision: string, port: string, bootstrapPort: number): Promise<string[][]> {
  const pods = await ctx.admin.listAll(POD, { namespace: NS, labelSelector: { [RBG_V1ALPHA2_POD_LABELS.group]: NAME, [ROUTER_REVISION_LABEL]: revision } });
  return pods.items
    .filter((p) => !p.metadata.deletionTimestamp)
    .filter((p) => ((p.status as any)?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True') && (p.status as any)?.podIP)
    .map((p) => {
      const role = p.metadata.labels![RBG_V1ALPHA2_POD_LABELS.role];
      return [`http://${(p.status as any).podIP}:${port}`, role, role === 'prefill' ? String(bootstrapPort) : '-'];
    })
    .sort((a, b) => a[0].localeCompare(b[0]));
}

/** The router's workers as `[url, type, bootstrap port]`, sorted; healthy ones only when `healthy`. */
async function listed(url: string, healthy = false): Promise<string[][]> {
  return (await routerWorkers(url))
    .filter((w) => !healthy || w.is_healthy)
    .map((w) => [w.url, w.worker_type, w.bootstrap_port === undefined ? '-' : String(w.bootstrap_port)])
    .sort((a, b) => a[0].localeCompare(b[0]));
}

/** Waits until the router at `url` lists exactly (and healthy) the Ready Pods of `revision`, and returns them. */
async function discovered(name: string, url: string, revision: string, port: string, bootstrapPort: number, timeoutMs = 90_000): Promise<string[][]> {
  let want: string[][] = [];
  await pollUntil(`${name} to discover exactly the Ready Pods of ${revision}`, async () => {
    want = await readyPodsOf(revision, port, bootstrapPort);
    workers!.running(); // throws what a worker failed with
    const have = await listed(url);
    const healthy = await listed(url, true);
    return JSON.stringify(have) === JSON.stringify(want) && healthy.length === have.length ? undefined : `router lists ${JSON.stringify(have)} (${healthy.length} healthy), the Pods are ${JSON.stringify(want)}`;
  }, { timeoutMs, procs: routers, logs: [{ file: path.join(dir, `${name}.log`), lines: 15 }] });
  return want;
}

test('each release\'s real router discovers its own release\'s Pods at their IPs: no failed request, no mixed pair, both releases serve, and each router ends with exactly its Ready Pods', () =>
  cluster.printLogsOnFailure(async () => {
    const v1 = synthesizeRoutedGroup(SHAPE, 'sglang:v1');
    const d1 = routerDeployment(v1.objects, v1.revision!);
    // The ports the rendered objects give the router: the workers listen exactly there.
    const port = flagValue(d1, '--service-discovery-port');
    const prefillTemplate = ((v1.objects.find((o) => o.kind === 'RoleBasedGroup')!.spec as any).roles as any[]).find((r) => r.name === 'prefill').standalonePattern.template;
    const bootstrapPort = Number(prefillTemplate.metadata.annotations[SGLANG_BOOTSTRAP_PORT_ANNOTATION]);
    workers = startPdWorkersAtPodIps(ctx.admin, { namespace: NS, group: NAME, prefillRole: 'prefill', decodeRole: 'decode', port: Number(port), bootstrapPort, device: 'rs-pd35', podNetwork: `${POD_NETWORK}.0.0/16` }, served);
    const urls: Record<string, string> = {};
    const revisions: Record<string, string> = { [v1.revision!]: 'v1' };
    // The router Pods are Ready only while the real router of their release passes the rendered probe.
    probes = startSimulatedRouterProbes(ctx.admin, NS, { [ROUTER_FOR_LABEL]: NAME }, (revision) => urls[revisions[revision]]);
    for (const o of gated(v1.objects)) await ctx.gitops.apply(o, { force: true });
    const armed = await coordinationWhen(ctx, NAME, 'armed with one router at 100', (c) => c?.phase === 'Complete' && c.router?.releases[0]?.weight === 100);

    urls.v1 = await startRenderedSglangRouter(supervisor, dir, 'router-v1', d1, NS, cluster.cp.kubeconfigPath, routers);
    const atStart = await discovered('router-v1', urls.v1, v1.revision!, port, bootstrapPort);
    expect(atStart.map(([, role]) => role).sort()).toEqual(['decode', 'decode', 'prefill', 'prefill', 'prefill', 'prefill']);

    const v2 = synthesizeRoutedGroup(SHAPE, 'sglang:v2', v1.revision);
    urls.v2 = await startRenderedSglangRouter(supervisor, dir, 'router-v2', routerDeployment(v2.objects, v2.revision!), NS, cluster.cp.kubeconfigPath, routers);
    const route = followRouteWeight(ctx.admin, NS, ROUTE, `${ROUTE}-${v2.revision}`);
    ctx.watches.push(route);
    // Bounded load, two requests in flight, to the router the simulated Gateway picks from the live weight.
    const load = startLoad((i) => {
      const release = i % 100 < route.current() ? 'v2' : 'v1';
      return { label: release, url: urls[release] };
    }, 2);
    revisions[v2.revision!] = 'v2';
    for (const o of gated(v2.objects)) await ctx.gitops.apply(o, { force: true });
    const done = await coordinationWhen(ctx, NAME, 'the v2 rollout Complete with the new router at 100', (c) => c?.phase === 'Complete' && c.revision !== armed.revision && c.router?.releases.find((r) => r.current)?.weight === 100);
    // The rollout's length as the operator recorded it: from the new revision seen to its last progress.
    const rolloutMs = Date.parse(done.lastProgressAt) - Date.parse(done.startedAt);
    await route.full;
    const { statuses, sent, failed } = await load.stop();

    // At the end each router lists exactly its release's Ready Pods: the new one all six, the old one none.
    const atEnd = { v1: await discovered('router-v1', urls.v1, v1.revision!, port, bootstrapPort), v2: await discovered('router-v2', urls.v2, v2.revision!, port, bootstrapPort) };
    const mixed = served.filter((p) => p.prefillRelease !== p.decodeRelease).length;
    const byRelease = (r: string) => served.filter((p) => p.decodeRelease === r).length;
    process.stdout.write(
      `routed 4/2 with the routers' own discovery: weights ${route.weights.map((w) => w.weight).join(' → ')}; ${statuses.length} requests (${sent.v1 ?? 0} to v1, ${sent.v2 ?? 0} to v2), served ${byRelease('v1')} by v1 and ${byRelease('v2')} by v2, ${mixed} by a mixed pair, failed ${JSON.stringify(failed)}; rollout ${rolloutMs} ms (status startedAt → lastProgressAt); routers at the end: v1 ${atEnd.v1.length} workers, v2 ${atEnd.v2.length}\n`,
    );
    process.stdout.write(`simulated router probes: ${probes!.transitions.join(', ')}\n`);
    probes!.check();
    // The new router's Pod turned Ready through its real /readiness (the executor waited for it).
    expect(probes!.transitions.some((t) => t.endsWith(`${v2.revision} True`))).toBe(true);
    expect(failed).toEqual({});
    expect(mixed).toBe(0);
    expect(served.length).toBe(statuses.length);
    expect(byRelease('v1')).toBeGreaterThan(0);
    expect(byRelease('v2')).toBeGreaterThan(0);
    expect(atEnd.v1).toEqual([]);
    expect(atEnd.v2.map(([, role]) => role).sort()).toEqual(['decode', 'decode', 'prefill', 'prefill', 'prefill', 'prefill']);
    await ctx.admin.delete(RBG_V1ALPHA2_TYPE, NAME, NS);
  }), 300_000);
