/**
 * The operator on the test cluster (test/support/operator-env.ts: the real KubeRay turns
 * its RayClusters into kwok Pods and reports them ready; TEST-ONLY Gateway status writer and Serve
 * dashboards): a full incremental upgrade whose every route weight change, seen through a watch,
 * follows the sequence written from the rules (test/support/incremental-upgrade.ts, which the operator image's
 * container runs too: cluster-operator-image.test.ts), and how Serve configs reach the clusters.
 */
import { expectIncrementalUpgradeFollowsPlan } from '../support/incremental-upgrade';
import { OperatorEnv, OperatorHarness, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, serveConfig, waitFor, startOperatorHarness } from '../support/operator-env';

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
  await expectIncrementalUpgradeFollowsPlan(env, 'upgrade');
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
