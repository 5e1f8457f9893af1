/**
 * End to end with real parts, executed by `pulumi up` (issue 8): the `RayService` component with
 * executor `pulumi`, run by the real Pulumi CLI through the Automation API (test/support/pulumi.ts,
 * as the integration tests do). Its dynamic provider, in the CLI's provider process, drives the
 * stepwise migration across two real Ray heads, through a real Traefik honouring the route weights,
 * under steady HTTP load, and the run must pass the same checks as the operator's upgrades
 * (support/assertions.ts). KubeRay runs for real on the test cluster; only the pod network that makes
 * a head Pod's IP reach a real Ray head is simulated (support/e2e-env.ts, support/pod-network.ts); the
 * provider reaches the heads' dashboards through a URL template, as
 * through `kubectl proxy` (support/dashboard-proxy.ts). No operator runs.
 * Needs `npm run e2e:setup` and `npm run pulumi:build`.
 */
import * as fs from 'node:fs';
import { RayService } from '../../lib/pulumi';
import { recordName } from '../../lib/pulumi/record-name';
import { KnownTypes } from '../../lib/runtime/kube/types';
import { RayClusterConfig } from '../../lib/spec/raycluster';
import { RayServiceSpec } from '../../lib/spec/rayservice';
import { PulumiTestStack, startPulumiStack } from '../support/pulumi';
import { expectForwardUpgrade, summary, windowReport } from './support/assertions';
import { DashboardProxy, startDashboardProxy } from './support/dashboard-proxy';
import { backgroundUp } from './support/pulumi-up';
import { E2EEnv, E2E_NAMESPACE, startE2EEnv } from './support/e2e-env';
import { E2E_RATE, EngineStateReader, UpgradeParameters, e2eRayService, runUnderLoad, waitServingThroughGateway } from './support/scenario';

/** Offered load, requests/s (`RAYSHIFT_E2E_RATE`, see docs/e2e.md). */
const RATE = E2E_RATE;
const REPLICAS = 4;
const SERVICE = 'pweb';
/** One of KubeRay's parameter sets: the one with intermediate weights and a capacity surge. */
const PARAMS: UpgradeParameters = { step: 25, interval: 5, maxSurge: 50 };

let env: E2EEnv;
let proxy: DashboardProxy;
let stack: PulumiTestStack;
/** Program input: app version and worker CPU (a CPU change means a new cluster, an upgrade). */
let version = 'v1';
let cpu = '1';
const cliOutput: string[] = [];
const onOutput = (line: string) => void cliOutput.push(line);

/** The same RayService as the operator's tests, as `RayService` component arguments. */
function spec(): RayServiceSpec {
  return e2eRayService(SERVICE, { version, cpu, replicas: REPLICAS, ...PARAMS }).spec as unknown as RayServiceSpec;
}

/** The engine state the provider checkpoints in the service's record (a ConfigMap). */
const recordState: EngineStateReader = async () => {
  const record = await env.admin.tryGet(KnownTypes.ConfigMap, recordName(SERVICE), E2E_NAMESPACE);
  const status = (record?.data as Record<string, string> | undefined)?.status;
  return status ? ((JSON.parse(status) as { engineState?: Record<string, any> }).engineState ?? {}) : {};
};

beforeAll(async () => {
  env = await startE2EEnv({ operator: false });
  proxy = await startDashboardProxy(env.pool.resolver);
  const kubeconfig = fs.readFileSync(env.cp.kubeconfigPath, 'utf8');
  stack = await startPulumiStack({
    projectName: 'rayshift-e2e',
    stackName: 'pulumi-executor-e2e',
    kubeconfig: env.cp.kubeconfigPath,
    program: async () => {
      const s = spec();
      const service = new RayService(SERVICE, {
        executor: 'pulumi',
        metadata: { name: SERVICE, namespace: E2E_NAMESPACE },
        rayClusterConfig: s.rayClusterConfig as unknown as RayClusterConfig,
        serveConfig: s.serveConfigV2 as string,
        upgradeStrategy: s.upgradeStrategy,
        rayClusterDeletionDelaySeconds: 0,
        rayshift: s.rayshift,
        kubeconfig,
        dashboardAddressTemplate: proxy.template,
        capacityPollMs: 500,
        deadlineSeconds: 1200,
      });
      return { active: service.activeClusterName };
    },
  });
  env.note(`Pulumi stack in ${stack.workDir}; dashboards through ${proxy.template}`);
  const created = await stack.stack.up({ onOutput });
  if (created.summary.result !== 'succeeded') throw new Error(`the first pulumi up did not succeed:\n${cliOutput.join('')}`);
  await waitServingThroughGateway('v1', 600_000);
}, 1_200_000);

afterAll(async () => {
  fs.writeFileSync(`${env?.logDir ?? '/tmp'}/pulumi-cli.log`, cliOutput.join(''));
  await proxy?.close();
  await env?.stop();
  await stack?.dispose();
});

test(`pulumi up executes an incremental upgrade {step ${PARAMS.step}, interval ${PARAMS.interval} s, maxSurge ${PARAMS.maxSurge}} under load through Traefik: zero failures, v2 share never decreasing and within ±5 points of the weight, 100 % v2 at the end, Serve replicas following target_capacity`, async () => {
  const before = (await recordState()).activeClusterName as string;
  const up = backgroundUp(stack.stack, cliOutput);
  const run = await runUnderLoad(
    env,
    SERVICE,
    RATE,
    async () => {
      version = 'v2';
      cpu = '2';
      await up.start();
    },
    () => up.done(),
    { what: `pulumi up v1 → v2 {${PARAMS.step},${PARAMS.interval},${PARAMS.maxSurge}}`, state: recordState },
  );
  const finished = await up.outcome();
  const after = await recordState();
  process.stdout.write(`${summary(`pulumi up {${PARAMS.step},${PARAMS.interval},${PARAMS.maxSurge}} v1→v2`, run, RATE)}\n`);
  process.stdout.write(`${windowReport('pulumi up', run, 'v2', after.activeClusterName as string)}\n`);
  // pulumi up itself: succeeded, reported the new cluster, printed the steps it took
  expect({ ok: finished?.ok, active: finished?.active, phase: after.phase, pending: after.pendingClusterName, upgraded: after.activeClusterName !== before }).toEqual({
    ok: true,
    active: after.activeClusterName,
    phase: 'Running',
    pending: undefined,
    upgraded: true,
  });
  // the provider printed its steps into pulumi up's output, among them the first traffic step
  expect(cliOutput.join('')).toMatch(new RegExp(`${SERVICE} [\\w+]*setTrafficWeights[\\w+]*: weights ${SERVICE}-\\w{5} 75 / ${SERVICE}-\\w{5} 25,`));
  expect(proxy.forwarded).toBeGreaterThan(0);
  expectForwardUpgrade(run, { oldVersion: 'v1', newVersion: 'v2', newCluster: after.activeClusterName as string, replicas: REPLICAS });
}, 1_800_000);
