/**
 * The operator on the test cluster (test/support/operator-env.ts: the real KubeRay turns
 * its RayClusters into kwok Pods and reports them ready; TEST-ONLY Gateway status writer and Serve
 * dashboards): a full incremental upgrade whose every route weight change, seen through a watch,
 * follows the engine's plan.
 */
import { OperatorEnv, OperatorHarness, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, recordRouteWeights, serveConfig, waitFor, recordedPendingWeights, startOperatorHarness } from '../support/operator-env';

let harness: OperatorHarness;
let env: OperatorEnv;

beforeAll(async () => {
  harness = await startOperatorHarness();
  env = harness.env;
}, 300_000);

afterAll(async () => {
  await harness?.stop();
});

async function service(ns: string, name: string) {
  return env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns);
}

test('a full incremental upgrade (maxSurge 50, step 25, interval 1 s): every watched weight change follows the plan, steps ≥ 1 s apart', async () => {
  const ns = 'upgrade';
  await createNamespace(env.admin, ns);
  await env.admin.create(rayService(ns, 'fruit', { maxSurge: 50, step: 25, interval: 1 }));
  await waitFor(async () => engineState(await service(ns, 'fruit')).phase === 'Running', 'the first cluster to serve');
  const first = engineState(await service(ns, 'fruit')).activeClusterName as string;
  const recorder = recordRouteWeights(env.admin, ns, 'fruit-httproute');
  await waitFor(() => recorder.history.length > 0, 'the route to be watched');

  const current = (await service(ns, 'fruit'))!;
  await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: rayClusterConfig('2') } });
  await waitFor(async () => {
    const s = engineState(await service(ns, 'fruit'));
    return s.phase === 'Running' && s.activeClusterName !== first && s.pendingClusterName === undefined;
  }, 'the upgrade to complete', 60_000);
  await waitFor(() => recorder.history[recorder.history.length - 1].weights.length === 1, 'the route to drop the old backend');
  recorder.stop();

  const second = engineState(await service(ns, 'fruit')).activeClusterName as string;
  // maxSurge 50, step 25, written from the rules rather than by the planner under test: 25 and 50 onto
  // the pending cluster's 50 % capacity, then 75 and 100 once the old cluster gave up its half.
  expect(recordedPendingWeights(recorder.history, second)).toEqual([0, 25, 50, 75, 100]);
  const two = recorder.history.filter((h) => h.weights.length === 2);
  for (const h of two) expect(h.weights.reduce((a, w) => a + w.weight, 0)).toBe(100);
  expect(recorder.history[recorder.history.length - 1].weights).toEqual([{ name: `${second}-serve-svc`, weight: 100 }]);
  // consecutive traffic steps at least one interval apart (watch receipt times; never early by more than clock jitter)
  const stepTimes = two.slice(1).map((h) => h.at);
  for (let i = 1; i < stepTimes.length; i++) expect(stepTimes[i] - stepTimes[i - 1]).toBeGreaterThanOrEqual(950);
  // the old cluster is deleted after the (zero) deletion delay
  await waitFor(async () => (await env.admin.tryGet(RAYCLUSTER, first, ns)) === undefined, 'the old cluster to be deleted');
  // the new cluster's Serve runs at full capacity
  expect(env.fleet.dashboard(ns, second)!.targetCapacity()).toBeNull();
}, 120_000);

test('a Serve-config-only change is applied in place to the serving cluster, with no new cluster', async () => {
  const ns = 'serve-in-place';
  await createNamespace(env.admin, ns);
  await env.admin.create(rayService(ns, 'app', { serve: serveConfig(4) }));
  await waitFor(async () => engineState(await service(ns, 'app')).phase === 'Running', 'the service to run');
  const cluster = engineState(await service(ns, 'app')).activeClusterName as string;
  const deployedReplicas = () => (env.fleet.dashboard(ns, cluster)!.config() as any)?.applications?.[0]?.deployments?.[0]?.num_replicas;
  expect(deployedReplicas()).toBe(4);

  const current = (await service(ns, 'app'))!;
  await env.admin.update({ ...current, spec: { ...(current.spec as object), serveConfigV2: serveConfig(2) } });
  await waitFor(() => deployedReplicas() === 2, 'the new Serve config on the serving cluster');
  const clusters = (await env.admin.list(RAYCLUSTER, { namespace: ns })).items.map((c) => c.metadata.name);
  expect(clusters).toEqual([cluster]);
}, 60_000);

test('during an upgrade the old cluster keeps its own Serve config while the new cluster gets the new one', async () => {
  const ns = 'serve-frozen';
  await createNamespace(env.admin, ns);
  await env.admin.create(rayService(ns, 'app', { serve: serveConfig(4), maxSurge: 50, step: 25, interval: 1 }));
  await waitFor(async () => engineState(await service(ns, 'app')).phase === 'Running', 'the service to run');
  const old = engineState(await service(ns, 'app')).activeClusterName as string;
  const replicasOn = (cluster: string) => (env.fleet.dashboard(ns, cluster)?.config() as any)?.applications?.[0]?.deployments?.[0]?.num_replicas;
  const seenOnOld = new Set<number>();
  const watcher = setInterval(() => seenOnOld.add(replicasOn(old)), 20);

  const current = (await service(ns, 'app'))!;
  await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: rayClusterConfig('2'), serveConfigV2: serveConfig(3) } });
  await waitFor(async () => {
    const s = engineState(await service(ns, 'app'));
    return s.phase === 'Running' && s.activeClusterName !== old && s.pendingClusterName === undefined;
  }, 'the upgrade to complete', 60_000);
  clearInterval(watcher);
  const now = engineState(await service(ns, 'app')).activeClusterName as string;
  expect([...seenOnOld]).toEqual([4]);
  expect(env.fleet.dashboard(ns, old)!.targetCapacity()).toBe(0); // scaled down, with its own config
  expect(replicasOn(now)).toBe(3);
}, 90_000);
