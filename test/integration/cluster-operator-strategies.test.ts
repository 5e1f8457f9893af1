/**
 * The operator's upgrade strategies and route shapes on the test cluster
 * (test/support/operator-env.ts: the real KubeRay turns the operator's RayClusters into
 * kwok Pods and reports them ready; TEST-ONLY Gateway status writer and Serve dashboards): blue/green (`NewCluster`), `None`, a shared Gateway (`gatewayRef`) with a pre-existing
 * HTTPRoute the operator must only touch the managed weights of, a GRPCRoute, and a concurrent
 * writer editing the route's unmanaged parts while an upgrade moves its weights.
 * One environment and one in-process Operator for the file; one namespace per test.
 */
import { KubeObject } from '../../lib/runtime/kube/types';
import { clusterSpecHash } from '../../lib/engine/cluster-hash';
import { newClusterName } from '../../lib/engine/cluster-name';
import { isStatus } from '../../lib/runtime/kube/errors';
import { HTTPROUTE, OperatorEnv, OperatorHarness, ReportedFailure, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, operatorPassNow, rayClusterConfig, rayService, waitFor, startOperatorHarness } from '../support/operator-env';
import { SERVICE } from '../../lib/spec/object-names';
import { routeBackends } from '../support/route-weights';

const GATEWAY = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', plural: 'gateways', namespaced: true };
const GRPCROUTE = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GRPCRoute', plural: 'grpcroutes', namespaced: true };

let harness: OperatorHarness;
let env: OperatorEnv;
/** Namespaces whose Serve dashboards created from now on hold new replicas in STARTING until released. */
const heldNamespaces = new Set<string>();
/** Reconcile failures the operator reported, per `namespace/name`. */
const failures: ReportedFailure[] = [];

beforeAll(async () => {
  harness = await startOperatorHarness({ serve: (ns) => ({ replicaStartDelayMs: 20, manualReplicaStart: heldNamespaces.has(ns) }), failures });
  env = harness.env;
}, 300_000);

/** Stops this test's watches and writers even when it fails (a live watch would keep jest from exiting). */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

afterAll(async () => {
  await harness?.stop();
});

async function service(ns: string, name: string): Promise<KubeObject | undefined> {
  return env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns);
}

async function selector(ns: string, svc: string): Promise<string | undefined> {
  const s = await env.admin.tryGet(SERVICE, svc, ns);
  return (s?.spec as { selector?: Record<string, string> } | undefined)?.selector?.['ray.io/cluster'];
}

async function clusterNames(ns: string): Promise<string[]> {
  return (await env.admin.list(RAYCLUSTER, { namespace: ns })).items.map((c) => String(c.metadata.name)).sort();
}

/** Changes the goal cluster spec (merge patch: no resourceVersion race with the operator's status writes). */
async function setCpu(ns: string, name: string, cpu: string, extra: KubeObject['spec'] = {}): Promise<void> {
  await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, name, ns, { spec: { rayClusterConfig: rayClusterConfig(cpu), ...(extra as object) } });
}

async function servesFirstCluster(ns: string, name: string): Promise<string> {
  await waitFor(async () => engineState(await service(ns, name)).phase === 'Running', `${ns}/${name} to serve`);
  return engineState(await service(ns, name)).activeClusterName as string;
}

function upgradeDone(first: string) {
  return (s: Record<string, any>) => s.phase === 'Running' && s.activeClusterName !== undefined && s.activeClusterName !== first && s.pendingClusterName === undefined;
}

function failuresOf(ns: string): string[] {
  return failures.filter((f) => f.key.startsWith(`${ns}/`)).map((f) => f.err);
}

test('blue/green (NewCluster): a second cluster at full size; head-svc and serve-svc switch only once its Serve is ready; the old cluster goes after the 2 s delay; no Gateway or route', async () => {
  const ns = 'bluegreen';
  await createNamespace(env.admin, ns);
  const svc = rayService(ns, 'bg', { strategy: 'NewCluster' });
  (svc.spec as Record<string, unknown>).rayClusterDeletionDelaySeconds = 2;
  await env.admin.create(svc);
  const first = await servesFirstCluster(ns, 'bg');
  // The status is written before the pass applies the stable Services, so they may follow it by a moment.
  await waitFor(async () => (await selector(ns, 'bg-head-svc')) === first && (await selector(ns, 'bg-serve-svc')) === first, 'head-svc and serve-svc to select the first cluster');

  // Every selector change of the two stable Services, as a watch reports it.
  const switches: { at: number; svc: string; cluster: string | undefined }[] = [];
  const watch = env.admin.watch(SERVICE, ns, (e) => {
    const name = String(e.object.metadata.name);
    if (e.type === 'delete' || (name !== 'bg-head-svc' && name !== 'bg-serve-svc')) return;
    switches.push({ at: Date.now(), svc: name, cluster: (e.object.spec as { selector?: Record<string, string> }).selector?.['ray.io/cluster'] });
  });
  cleanups.push(() => watch.stop());
  await watch.waitForSync();

  heldNamespaces.add(ns); // the new cluster's Serve replicas stay STARTING until released below
  await setCpu(ns, 'bg', '2');
  let pending = '';
  await waitFor(async () => {
    const s = engineState(await service(ns, 'bg'));
    pending = s.pendingClusterName ?? '';
    const apps = pending === '' ? undefined : (env.fleet.dashboard(ns, pending)?.details().applications as Record<string, { status: string }> | undefined);
    return s.reason === 'WaitingForCapacity' && apps?.app?.status === 'DEPLOYING';
  }, 'the new cluster to wait for its Serve replicas');
  expect(pending).not.toBe(first);
  expect(await clusterNames(ns)).toEqual([first, pending].sort());
  // Blue/green builds the new cluster from the full spec (worker replicas kept), at full Serve capacity.
  const pendingCluster = await env.admin.get(RAYCLUSTER, pending, ns);
  expect((pendingCluster.spec as { workerGroupSpecs: { replicas?: number }[] }).workerGroupSpecs[0].replicas).toBe(1);
  expect(env.fleet.dashboard(ns, pending)!.targetCapacity()).toBeNull();
  // Not ready yet: both Services still select the old cluster.
  expect(await selector(ns, 'bg-head-svc')).toBe(first);
  expect(await selector(ns, 'bg-serve-svc')).toBe(first);

  const releasedAt = Date.now();
  expect(env.fleet.dashboard(ns, pending)!.releaseReplicas()).toBe(4);
  await waitFor(async () => (await selector(ns, 'bg-head-svc')) === pending && (await selector(ns, 'bg-serve-svc')) === pending, 'both Services to select the new cluster');
  const switchedAt = Date.now();
  // The old cluster outlives the switch by the deletion delay, then goes.
  expect(await env.admin.tryGet(RAYCLUSTER, first, ns)).toBeDefined();
  await waitFor(async () => (await env.admin.tryGet(RAYCLUSTER, first, ns)) === undefined, 'the old cluster to be deleted', 20_000);
  const deletedAt = Date.now();
  watch.stop();

  const toPending = switches.filter((s) => s.cluster === pending);
  expect(toPending.map((s) => s.svc).sort()).toEqual(['bg-head-svc', 'bg-serve-svc']);
  for (const s of toPending) expect(s.at).toBeGreaterThanOrEqual(releasedAt);
  expect(deletedAt - switchedAt).toBeGreaterThanOrEqual(1500);
  const s = engineState(await service(ns, 'bg'));
  expect(s).toMatchObject({ phase: 'Running', activeClusterName: pending, activeTargetCapacity: 100 });
  expect(s.pendingClusterName).toBeUndefined();
  expect(await clusterNames(ns)).toEqual([pending]);
  expect((await env.admin.list(HTTPROUTE, { namespace: ns })).items).toEqual([]);
  expect((await env.admin.list(GATEWAY, { namespace: ns })).items).toEqual([]);
  expect(failuresOf(ns)).toEqual([]);
}, 60_000);

test('None: a cluster-spec change creates no new cluster; the service stays Running on its only RayCluster', async () => {
  const ns = 'none';
  await createNamespace(env.admin, ns);
  const seen = new Set<string>();
  const watch = env.admin.watch(RAYCLUSTER, ns, (e) => void seen.add(String(e.object.metadata.name)));
  cleanups.push(() => watch.stop());
  await watch.waitForSync();
  await env.admin.create(rayService(ns, 'plain', { strategy: 'None' }));
  const first = await servesFirstCluster(ns, 'plain');

  await setCpu(ns, 'plain', '2');
  const generation = (await service(ns, 'plain'))!.metadata.generation;
  await waitFor(async () => {
    const svc = await service(ns, 'plain');
    return (svc?.status as { observedGeneration?: number }).observedGeneration === generation && engineState(svc).reason === 'UpgradeDisabled';
  }, 'the operator to see the change and decline it');
  // A pass that upgrades creates the pending cluster before it writes its status: after the pass
  // that declined and one more this test causes, there is still only the first cluster.
  const s = await operatorPassNow(env.admin, ns, 'plain');
  expect(s).toMatchObject({ phase: 'Running', reason: 'UpgradeDisabled', activeClusterName: first });
  expect(s.pendingClusterName).toBeUndefined();
  expect(await clusterNames(ns)).toEqual([first]);
  // No cluster came and went meanwhile: the watch delivered everything up to a sentinel change made now.
  await env.admin.patchMerge(RAYCLUSTER, first, ns, { metadata: { annotations: { 'test.rayshift.dev/sentinel': 'none' } } });
  await waitFor(async () => watch.get(first, ns)?.metadata.annotations?.['test.rayshift.dev/sentinel'] === 'none', 'the RayCluster watch to deliver the sentinel');
  await watch.idle();
  watch.stop();
  expect([...seen]).toEqual([first]);
  const cluster = await env.admin.get(RAYCLUSTER, first, ns);
  expect((cluster.spec as any).workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu).toBe('1');
  const status = (await service(ns, 'plain'))!.status as { conditions: { type: string; status: string }[] };
  expect(status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
  expect(status.conditions.find((c) => c.type === 'UpgradeInProgress')?.status).toBe('False');
  expect(failuresOf(ns)).toEqual([]);
}, 60_000);

const INFRA = 'gw-infra';

/** The shared Gateway a platform team runs in its own namespace (created once). */
async function sharedGateway(): Promise<void> {
  if (await env.admin.tryGet(GATEWAY, 'shared', INFRA)) return;
  await createNamespace(env.admin, INFRA);
  await env.admin.create({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'shared', namespace: INFRA },
    spec: { gatewayClassName: 'simulated', listeners: [{ name: 'http', protocol: 'HTTP', port: 80, allowedRoutes: { namespaces: { from: 'All' } } }] },
  });
}

/** A platform team's HTTPRoute on the shared Gateway: hostnames, a managed rule with matches and a filter, and an unmanaged `/other` rule. */
function platformRoute(ns: string, managedBackends: Record<string, unknown>[]): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'fruit-httproute', namespace: ns, labels: { team: 'platform' }, annotations: { owner: 'platform-team' } },
    spec: {
      parentRefs: [{ name: 'shared', namespace: INFRA, sectionName: 'http' }],
      hostnames: ['fruit.example.com', 'fruit.internal'],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' }, headers: [{ type: 'Exact', name: 'x-tenant', value: 'fruit' }] }],
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-served-by', value: 'rayshift' }] } }],
          ...(managedBackends.length > 0 ? { backendRefs: managedBackends } : {}),
        },
        { matches: [{ path: { type: 'PathPrefix', value: '/other' } }], backendRefs: [{ name: 'other-svc', port: 8080, weight: 7 }] },
      ],
    },
  };
}

const sharedFruit = (ns: string) => rayService(ns, 'fruit', { maxSurge: 50, step: 50, interval: 1, extensions: { gatewayRef: { name: 'shared', namespace: INFRA, sectionName: 'http' } } });

test('gatewayRef: a shared Gateway in another namespace and a pre-existing HTTPRoute whose managed rule names the first cluster\'s Service; after create + a full upgrade only the managed backends changed (unmanaged rule, filter, matches, hostnames, parentRefs JSON-equal); no <name>-gateway', async () => {
  const ns = 'shared-route';
  await createNamespace(env.admin, ns);
  await sharedGateway();
  // Cluster names are deterministic (hash of the spec as the API server stores it, defaults included), so
  // the platform team can name the first cluster's Service up front from a server-side dry run.
  const stored = await env.admin.create(sharedFruit(ns), { dryRun: true });
  const expectedFirst = newClusterName('fruit', clusterSpecHash((stored.spec as { rayClusterConfig: never }).rayClusterConfig), new Set());
  await env.admin.create(platformRoute(ns, [{ name: `${expectedFirst}-serve-svc`, port: 8000 }]));
  const before = (await env.admin.get(HTTPROUTE, 'fruit-httproute', ns)) as KubeObject;

  await env.admin.create(sharedFruit(ns));
  const first = await servesFirstCluster(ns, 'fruit');
  expect(first).toBe(expectedFirst);
  await waitFor(async () => routeBackends(await env.admin.tryGet(HTTPROUTE, 'fruit-httproute', ns))[0]?.weight === 100, 'the operator to weight the first cluster 100');

  await setCpu(ns, 'fruit', '2');
  await waitFor(async () => engineState(await service(ns, 'fruit')).pendingClusterName !== undefined, 'the upgrade to start');
  let sawSplit = false;
  await waitFor(async () => {
    sawSplit ||= routeBackends(await env.admin.tryGet(HTTPROUTE, 'fruit-httproute', ns)).length === 2;
    return upgradeDone(first)(engineState(await service(ns, 'fruit')));
  }, 'the upgrade to complete', 60_000);
  expect(sawSplit).toBe(true);
  const second = engineState(await service(ns, 'fruit')).activeClusterName as string;
  await waitFor(async () => routeBackends(await env.admin.tryGet(HTTPROUTE, 'fruit-httproute', ns)).length === 1, 'the route to drop the old backend');

  const after = (await env.admin.get(HTTPROUTE, 'fruit-httproute', ns)) as KubeObject;
  const b = before.spec as any;
  const a = after.spec as any;
  expect(a.parentRefs).toEqual(b.parentRefs);
  expect(a.hostnames).toEqual(b.hostnames);
  expect(a.rules).toHaveLength(2);
  expect(a.rules[1]).toEqual(b.rules[1]);
  const { backendRefs, ...managedAfter } = a.rules[0];
  const { backendRefs: _old, ...managedBefore } = b.rules[0];
  expect(managedAfter).toEqual(managedBefore);
  expect(backendRefs).toHaveLength(1);
  expect(backendRefs[0]).toMatchObject({ name: `${second}-serve-svc`, namespace: ns, port: 8000, weight: 100 });
  expect(after.metadata.labels).toEqual(before.metadata.labels);
  expect(after.metadata.annotations).toEqual(before.metadata.annotations);
  expect((await env.admin.list(GATEWAY, { namespace: ns })).items).toEqual([]);
  expect((await env.admin.list(GATEWAY, { namespace: INFRA })).items.map((g) => g.metadata.name)).toEqual(['shared']);
  expect(failuresOf(ns)).toEqual([]);
}, 90_000);

test('gatewayRef: a pre-existing HTTPRoute with no rayshift backend in any rule is never guessed at: the operator leaves it JSON-equal and reports the missing managed rule', async () => {
  const ns = 'shared-route-unowned';
  await createNamespace(env.admin, ns);
  await sharedGateway();
  await env.admin.create(platformRoute(ns, []));
  const before = (await env.admin.get(HTTPROUTE, 'fruit-httproute', ns)) as KubeObject;
  await env.admin.create(sharedFruit(ns));
  await servesFirstCluster(ns, 'fruit');
  await waitFor(() => failuresOf(ns).some((f) => f.includes('spec.rules has no rule with a backend rayshift owns')), 'the operator to report the missing managed rule', 20_000);
  await waitFor(async () => {
    const ready = ((((await env.admin.get(RAYSHIFT_RAYSERVICE, 'fruit', ns)).status as any)?.conditions ?? []) as { type: string; status: string; reason: string; message: string }[]).find((c) => c.type === 'Ready');
    return ready?.status === 'False' && ready.reason === 'RouteNotAdoptable' && ready.message.includes('no rule with a backend rayshift owns');
  }, 'status to say the route cannot be adopted (Ready=False, RouteNotAdoptable)', 20_000);
  const after = (await env.admin.get(HTTPROUTE, 'fruit-httproute', ns)) as KubeObject;
  expect(after.spec).toEqual(before.spec);
  expect(after.metadata.generation).toBe(before.metadata.generation);
  expect((await env.admin.list(GATEWAY, { namespace: ns })).items).toEqual([]);
}, 60_000);

test('GRPCRoute (routeKind GRPC, head port serve-grpc 9000): <name>-grpcroute carries the weights through an upgrade on backend port 9000; no HTTPRoute', async () => {
  const ns = 'grpc';
  await createNamespace(env.admin, ns);
  const grpcConfig = (cpu: string) => {
    const c = rayClusterConfig(cpu) as any;
    c.headGroupSpec.template.spec.containers[0].ports.push({ name: 'serve-grpc', containerPort: 9000 });
    return c;
  };
  const serve = 'grpc_options:\n  port: 9000\n  grpc_servicer_functions:\n  - echo_pb2_grpc.add_EchoServicer_to_server\napplications:\n- name: echo\n  import_path: rayshift_testapp.grpc_app:build\n  route_prefix: null\n  deployments:\n  - name: Echo\n    num_replicas: 2\n';
  const svc = rayService(ns, 'echo', { maxSurge: 50, step: 25, interval: 1, extensions: { routeKind: 'GRPC' }, serve });
  (svc.spec as Record<string, unknown>).rayClusterConfig = grpcConfig('1');
  await env.admin.create(svc);
  const first = await servesFirstCluster(ns, 'echo');

  // Each distinct version of the managed rule's backends, with the port of each backendRef.
  const history: { name: string; port?: number; weight: number }[][] = [];
  const watch = env.admin.watch(GRPCROUTE, ns, (e) => {
    if (e.type === 'delete' || e.object.metadata.name !== 'echo-grpcroute') return;
    const ports = ((e.object.spec as { rules?: { backendRefs?: { port?: number }[] }[] }).rules ?? [])[0]?.backendRefs ?? [];
    const w = routeBackends(e.object).map((b, i) => ({ ...b, port: ports[i]?.port }));
    if (JSON.stringify(history[history.length - 1]) !== JSON.stringify(w)) history.push(w);
  });
  cleanups.push(() => watch.stop());
  await watch.waitForSync();
  await waitFor(() => history.length > 0, 'the GRPCRoute to exist');
  await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, 'echo', ns, { spec: { rayClusterConfig: grpcConfig('2') } });
  await waitFor(async () => upgradeDone(first)(engineState(await service(ns, 'echo'))), 'the upgrade to complete', 60_000);
  const second = engineState(await service(ns, 'echo')).activeClusterName as string;
  await waitFor(() => history[history.length - 1].length === 1, 'the route to drop the old backend');
  watch.stop();

  const route = await env.admin.get(GRPCROUTE, 'echo-grpcroute', ns);
  expect((route.spec as any).parentRefs).toEqual([expect.objectContaining({ name: 'echo-gateway', namespace: ns })]);
  const split = history.filter((h) => h.length === 2);
  expect(split.length).toBeGreaterThanOrEqual(4); // 0, 25, 50, 75, 100 on the new cluster
  expect(split.map((h) => h.find((x) => x.name === `${second}-serve-svc`)!.weight)).toEqual([0, 25, 50, 75, 100]);
  for (const h of history) {
    for (const x of h) expect(x.port).toBe(9000);
    if (h.length === 2) expect(h.reduce((sum, x) => sum + x.weight, 0)).toBe(100);
  }
  expect(history[history.length - 1]).toEqual([expect.objectContaining({ name: `${second}-serve-svc`, port: 9000, weight: 100 })]);
  const perCluster = await env.admin.get(SERVICE, `${second}-serve-svc`, ns);
  expect((perCluster.spec as any).ports).toEqual([expect.objectContaining({ name: 'serve-grpc', port: 9000 })]);
  expect((await env.admin.list(HTTPROUTE, { namespace: ns })).items).toEqual([]);
  expect(failuresOf(ns)).toEqual([]);
}, 90_000);

test('a concurrent writer edits hostnames, the managed rule\'s filter and an unmanaged rule every ~200 ms (holding each read ~150 ms) during an upgrade: the upgrade completes and the writer\'s last edit survives', async () => {
  const ns = 'writer';
  await createNamespace(env.admin, ns);
  await env.admin.create(rayService(ns, 'fruit', { maxSurge: 50, step: 25, interval: 1 }));
  const first = await servesFirstCluster(ns, 'fruit');
  await waitFor(async () => (await env.admin.tryGet(HTTPROUTE, 'fruit-httproute', ns)) !== undefined, 'the route');

  let stop = false;
  let last = -1;
  let conflicts = 0;
  const editsAt: number[] = [];
  const writer = (async () => {
    for (let i = 0; !stop; i++) {
      const started = Date.now();
      const route = (await env.admin.get(HTTPROUTE, 'fruit-httproute', ns)) as any;
      route.spec.hostnames = ['fruit.example.com', `edit-${i}.example.com`];
      route.spec.rules[0].filters = [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-managed-edit', value: String(i) }] } }];
      const other = { matches: [{ path: { type: 'PathPrefix', value: '/other' } }], filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-edit', value: String(i) }] } }], backendRefs: [{ name: 'other-svc', port: 8080 }] };
      const at = route.spec.rules.findIndex((r: any) => (r.backendRefs ?? []).some((x: any) => x.name === 'other-svc'));
      if (at < 0) route.spec.rules.push(other);
      else route.spec.rules[at] = other;
      await new Promise((r) => setTimeout(r, 150)); // a slow writer: the operator may move the route meanwhile
      try {
        await env.admin.update(route); // optimistic concurrency: refused (409) if anything changed since the read
        last = i;
        editsAt.push(Date.now());
      } catch (e) {
        if (!isStatus(e, 409)) throw e;
        conflicts++;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, 200 - (Date.now() - started))));
    }
  })();
  cleanups.push(async () => {
    stop = true;
    await writer.catch(() => undefined);
  });

  await waitFor(() => last >= 1, 'the writer to edit the route');
  const upgradeFrom = Date.now();
  await setCpu(ns, 'fruit', '2');
  await waitFor(async () => upgradeDone(first)(engineState(await service(ns, 'fruit'))), 'the upgrade to complete', 60_000);
  const second = engineState(await service(ns, 'fruit')).activeClusterName as string;
  await waitFor(async () => routeBackends(await env.admin.tryGet(HTTPROUTE, 'fruit-httproute', ns)).length === 1, 'the route to drop the old backend');
  const upgradeTo = Date.now();
  stop = true;
  await writer;

  expect(editsAt.filter((t) => t >= upgradeFrom && t <= upgradeTo).length).toBeGreaterThanOrEqual(3);
  expect(conflicts).toBeGreaterThanOrEqual(1); // the two writers really interleaved
  const route = (await env.admin.get(HTTPROUTE, 'fruit-httproute', ns)) as any;
  expect(route.spec.hostnames).toEqual(['fruit.example.com', `edit-${last}.example.com`]);
  expect(route.spec.rules).toHaveLength(2);
  expect(route.spec.rules[0].filters[0].requestHeaderModifier.set).toEqual([{ name: 'x-managed-edit', value: String(last) }]);
  expect(route.spec.rules[0].matches).toEqual([{ path: { type: 'PathPrefix', value: '/' } }]);
  expect(route.spec.rules[1].filters[0].requestHeaderModifier.set).toEqual([{ name: 'x-edit', value: String(last) }]);
  expect(route.spec.rules[1].backendRefs).toEqual([expect.objectContaining({ name: 'other-svc', port: 8080 })]);
  expect(routeBackends(route)).toEqual([expect.objectContaining({ name: `${second}-serve-svc`, weight: 100 })]);
  expect(failuresOf(ns)).toEqual([]);
}, 90_000);
