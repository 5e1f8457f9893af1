/**
 * `pulumi up` with the `RayService` component and executor `kuberay` (issue 16, item 3): Pulumi
 * writes the `ray.io/v1` RayService, the real KubeRay operator v1.7.0 runs the incremental upgrade
 * (on the test cluster, against real Ray heads, through the Gateway and HTTPRoute it creates and
 * Traefik programs, under load), and the component's `UpgradeProgress` follows KubeRay's status
 * during `pulumi up`, printing each move, until KubeRay reports the new cluster serving alone.
 * Same stack as kuberay.e2e.ts (support/kuberay-env.ts; only the pod network is simulated).
 * Needs root, `npm run e2e:setup`, `npm run pulumi:build`, `npm run controlplane:build` and
 * `bash scripts/build-cluster.sh kwok kuberay`.
 */
import * as fs from 'node:fs';
import { RayService } from '../../lib/pulumi';
import { PulumiTestStack, startPulumiStack } from '../support/pulumi';
import { failureCounts, summary, tailNotFrom } from './support/assertions';
import { E2E_NAMESPACE } from './support/e2e-env';
import { KUBERAY_GATEWAY_PORT, KubeRayE2EEnv, kubeRayServiceProps, startKubeRayE2EEnv } from './support/kuberay-env';
import { kubeRayStateReader } from './support/kuberay-sequence';
import { httpSender } from './support/load';
import { backgroundUp } from './support/pulumi-up';
import { E2E_RATE, UpgradeParameters, runUnderLoad, waitServingThroughGateway } from './support/scenario';

const RATE = E2E_RATE;
const SERVICE = 'pweb';
/** One of KubeRay's parameter sets: the one with intermediate weights and a capacity surge. */
const PARAMS: UpgradeParameters = { step: 25, interval: 5, maxSurge: 50 };

let env: KubeRayE2EEnv;
let stack: PulumiTestStack;
/** Program input: the app version, also the image tag (a new cluster spec, so an upgrade). */
let version = 'v1';
const cliOutput: string[] = [];
const onOutput = (line: string) => void cliOutput.push(line);

beforeAll(async () => {
  env = await startKubeRayE2EEnv();
  const kubeconfig = fs.readFileSync(env.cluster.cp.kubeconfigPath, 'utf8');
  stack = await startPulumiStack({
    projectName: 'rayshift-e2e',
    stackName: 'kuberay-executor-e2e',
    kubeconfig: env.cluster.cp.kubeconfigPath,
    program: async () => {
      const { executor: _construct, ...props } = kubeRayServiceProps(SERVICE, version, PARAMS);
      const service = new RayService(SERVICE, {
        ...props,
        executor: 'kuberay',
        kubeconfig,
        progressPollMs: 500,
        deadlineSeconds: 1200,
      });
      return { active: service.activeClusterName };
    },
  });
  env.note(`Pulumi stack in ${stack.workDir}`);
  const created = await stack.stack.up({ onOutput });
  if (created.summary.result !== 'succeeded') throw new Error(`the first pulumi up did not succeed:\n${cliOutput.join('')}`);
  await waitServingThroughGateway('v1', 600_000, httpSender('127.0.0.1', KUBERAY_GATEWAY_PORT, { maxSockets: 1 }));
}, 1_500_000);

afterAll(async () => {
  fs.writeFileSync(`${env?.logDir ?? '/tmp'}/pulumi-cli.log`, cliOutput.join(''));
  await env?.stop();
  await stack?.dispose();
});

test(`pulumi up with executor kuberay follows KubeRay's upgrade {step ${PARAMS.step}, interval ${PARAMS.interval} s, maxSurge ${PARAMS.maxSurge}} under load and returns the new cluster`, () =>
  env.cluster.printLogsOnFailure(async () => {
    const state = kubeRayStateReader(env.admin, E2E_NAMESPACE, SERVICE);
    const before = (await state()).activeClusterName as string;
    const up = backgroundUp(stack.stack, cliOutput);
    const run = await runUnderLoad(
      env,
      SERVICE,
      RATE,
      async () => {
        version = 'v2';
        await up.start();
      },
      () => up.done(),
      { what: `pulumi up (executor kuberay) v1 → v2 {${PARAMS.step},${PARAMS.interval},${PARAMS.maxSurge}}`, sender: httpSender('127.0.0.1', KUBERAY_GATEWAY_PORT, { maxSockets: Math.max(16, Math.ceil(RATE * 4)) }), state },
    );
    const finished = await up.outcome();
    const after = await state();
    const tail = tailNotFrom(run, 'v2');
    process.stdout.write(`${summary(`pulumi up, executor kuberay {${PARAMS.step},${PARAMS.interval},${PARAMS.maxSurge}} v1→v2`, run, RATE)}\n[e2e] failures ${JSON.stringify(failureCounts(run))}\n`);
    const output = cliOutput.join('');
    // pulumi up returned only once KubeRay had promoted the new cluster, and reported it
    expect({ ok: finished?.ok, active: finished?.active, pending: after.pendingClusterName, upgraded: after.activeClusterName !== before, answersAfterTheLastStepFromOthers: tail.others }).toEqual({
      ok: true,
      active: after.activeClusterName,
      pending: undefined,
      upgraded: true,
      answersAfterTheLastStepFromOthers: 0,
    });
    // the follower printed KubeRay's moves into pulumi up's output, among them the first traffic step
    expect(output).toMatch(new RegExp(`${SERVICE} upgrading: weights ${before} 75 / ${SERVICE}-\\w{5} 25, capacity 100% / 50%`));
    expect(output).toMatch(new RegExp(`${SERVICE} serving: weights ${after.activeClusterName} 100 / - 0`));
  }), 1_800_000);
