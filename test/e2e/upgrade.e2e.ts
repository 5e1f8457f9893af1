/**
 * End to end with real parts (issue 8): the rayshift operator executes incremental upgrades of a
 * real Ray Serve app across two real Ray heads, through a real Traefik honouring the route weights,
 * under steady HTTP load, for each of KubeRay's e2e parameter sets. KubeRay runs for real on the test
 * cluster; only the pod network that makes a head Pod's IP reach a real Ray head is simulated
 * (support/e2e-env.ts, support/pod-network.ts). Needs `npm run e2e:setup`.
 */
import { expectForwardUpgrade, summary, windowReport } from './support/assertions';
import { E2EEnv, startE2EEnv } from './support/e2e-env';
import { E2E_RATE, KUBERAY_PARAMETER_SETS, deployAndWaitServing, e2eRayService, runUnderLoad, upgradedAwayFrom, updateSpec, e2eServeConfig, getService } from './support/scenario';
import { engineState } from '../support/operator-env';

const RATE = E2E_RATE;
const REPLICAS = 4;
const SERVICE = 'web';

let env: E2EEnv;
let active: string;
let version = 1;

beforeAll(async () => {
  env = await startE2EEnv();
  active = await deployAndWaitServing(env, e2eRayService(SERVICE, { version: 'v1', cpu: '1', replicas: REPLICAS, ...KUBERAY_PARAMETER_SETS[0] }), 'v1');
}, 1_200_000);

afterAll(async () => {
  await env?.stop();
});

describe.each(KUBERAY_PARAMETER_SETS)('incremental upgrade {step $step, interval $interval s, maxSurge $maxSurge} under load through Traefik', (params) => {
  test('zero failures, v2 share never decreasing and within ±5 points of the weight, 100 % v2 at the end, Serve replicas following target_capacity', async () => {
    const oldVersion = `v${version}`;
    const newVersion = `v${version + 1}`;
    const old = active;
    const run = await runUnderLoad(
      env,
      SERVICE,
      RATE,
      () => updateSpec(env, SERVICE, (spec) => {
        spec.serveConfigV2 = e2eServeConfig(newVersion, REPLICAS);
        spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu = String(version + 1);
        spec.upgradeStrategy.clusterUpgradeOptions = { ...spec.upgradeStrategy.clusterUpgradeOptions, stepSizePercent: params.step, intervalSeconds: params.interval, maxSurgePercent: params.maxSurge };
        return spec;
      }),
      () => upgradedAwayFrom(env, SERVICE, old),
      { what: `upgrade ${oldVersion} → ${newVersion} {${params.step},${params.interval},${params.maxSurge}}` },
    );
    const now = engineState(await getService(env, SERVICE)).activeClusterName as string;
    active = now;
    version++;
    process.stdout.write(`${summary(`{${params.step},${params.interval},${params.maxSurge}} ${oldVersion}→${newVersion}`, run, RATE)}\n${windowReport(`{${params.step},${params.interval},${params.maxSurge}}`, run, newVersion, now)}\n`);
    expectForwardUpgrade(run, { oldVersion, newVersion, newCluster: now, replicas: REPLICAS });
  }, 1_800_000);
});
