/**
 * Executor `kuberay` end to end (issue 16, items 3 and 6): the real KubeRay operator v1.7.0 runs the
 * incremental upgrades of a RayService that rayshift's `RayService` construct synthesizes, on the
 * test cluster (kube-apiserver, controller manager, scheduler, kwok Nodes), against real Ray heads,
 * through the Gateway and HTTPRoute KubeRay creates and Traefik programs, under steady HTTP load.
 * The only simulated part is the pod network (support/pod-network.ts). For each of KubeRay's own
 * e2e parameter sets the test records the states KubeRay writes (capacities and weights, in
 * order) and compares them step by step with `rayshift plan` for the same options, while
 * `rayshift status --watch --until-done` follows the upgrade as a user would. Failed and
 * timed-out requests are reported as they are, not asserted. Needs root, `npm run e2e:setup`,
 * `npm run controlplane:build` and `bash scripts/build-cluster.sh kwok kuberay`.
 */
import { Testing } from 'cdk8s';
import { RayService } from '../../lib/cdk8s';
import type { Output } from '../../lib/cli/commands';
import { statusCommand } from '../../lib/cli/status-command';
import { withoutTime } from '../../lib/cli/status-view';
import { styleFor } from '../../lib/cli/style';
import { resolveUpgradeOptions } from '../../lib/spec/rayservice';
import { planRayService } from '../../lib/engine/plan-rayservice';
import type { RayServiceSpec } from '../../lib/spec/rayservice';
import { KubeObject } from '../../lib/runtime/kube/types';
import { waitFor } from '../support/operator-env';
import { failureCounts, summary, tailNotFrom, windowReport } from './support/assertions';
import { E2E_NAMESPACE } from './support/e2e-env';
import { KUBERAY_GATEWAY_PORT, KubeRayE2EEnv, kubeRayServiceProps, startKubeRayE2EEnv } from './support/kuberay-env';
import { KUBERAY_RAYSERVICE, compareWithPlan, kubeRayClusters, kubeRayStateReader, planStates, recordKubeRayStates, stateKey } from './support/kuberay-sequence';
import { httpSender } from './support/load';
import { E2E_RATE, KUBERAY_PARAMETER_SETS, UpgradeParameters, runUnderLoad, updateSpec, waitServingThroughGateway } from './support/scenario';

const RATE = E2E_RATE;
const SERVICE = 'web';

/** The RayService as rayshift's construct synthesizes it for executor `kuberay` (support/kuberay-env.ts). */
function synthesize(version: string, p: UpgradeParameters): KubeObject {
  const chart = Testing.chart();
  new RayService(chart, SERVICE, kubeRayServiceProps(SERVICE, version, p));
  const objects = Testing.synth(chart) as KubeObject[];
  expect(objects.map((o) => `${o.apiVersion}/${o.kind}`)).toEqual(['ray.io/v1/RayService']);
  return objects[0];
}

let env: KubeRayE2EEnv;
let version = 1;
const sender = () => httpSender('127.0.0.1', KUBERAY_GATEWAY_PORT, { maxSockets: Math.max(16, Math.ceil(RATE * 4)) });
const getRayService = () => env.admin.tryGet(KUBERAY_RAYSERVICE, SERVICE, E2E_NAMESPACE);
const conditionTrue = (rs: KubeObject | undefined, type: string) => ((rs?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

beforeAll(async () => {
  env = await startKubeRayE2EEnv();
  await env.admin.create(synthesize('v1', KUBERAY_PARAMETER_SETS[0]));
  await waitFor(async () => {
    const rs = await getRayService();
    return kubeRayClusters(rs).active !== undefined && conditionTrue(rs, 'Ready');
  }, 'KubeRay to report RayService web Ready on its first cluster', 900_000, 500);
  await waitServingThroughGateway('v1', 300_000, httpSender('127.0.0.1', KUBERAY_GATEWAY_PORT, { maxSockets: 1 }));
}, 1_500_000);

afterAll(async () => {
  await env?.stop();
});

describe.each(KUBERAY_PARAMETER_SETS)('KubeRay incremental upgrade {step $step, interval $interval s, maxSurge $maxSurge} under load through Traefik', (params) => {
  test('completes at 100 % new version; the states KubeRay writes compared step by step with rayshift plan', () =>
    env.cluster.printLogsOnFailure(async () => {
      const oldVersion = `v${version}`;
      const newVersion = `v${version + 1}`;
      const label = `{${params.step},${params.interval},${params.maxSurge}}`;
      const old = kubeRayClusters(await getRayService()).active!;
      const goal = synthesize(newVersion, params);
      const recorder = recordKubeRayStates(env.admin, E2E_NAMESPACE, SERVICE, old);
      // `rayshift status web --watch --until-done` through a pipe follows KubeRay's upgrade beside it
      const statusOut: string[] = [];
      let stopStatus = () => undefined as void;
      let status: Promise<number> | undefined;
      let run;
      try {
        run = await runUnderLoad(
          env,
          SERVICE,
          RATE,
          async () => {
            await updateSpec(env, SERVICE, () => goal.spec as Record<string, any>, KUBERAY_RAYSERVICE);
            const pipe = styleFor({ isTTY: false } as NodeJS.WriteStream);
            const io: Output = { out: (t) => void statusOut.push(t), err: (t) => void statusOut.push(`stderr: ${t}`), outStyle: pipe, errStyle: pipe, interactive: false };
            status = statusCommand(SERVICE, { kubeconfig: env.cluster.cp.kubeconfigPath, namespace: E2E_NAMESPACE, watch: true, untilDone: true }, io, new Promise<void>((r) => (stopStatus = r)));
          },
          async () => {
            const rs = await getRayService();
            const c = kubeRayClusters(rs);
            return c.active !== undefined && c.active !== old && c.pending === undefined && !conditionTrue(rs, 'UpgradeInProgress');
          },
          {
            what: `KubeRay upgrade ${oldVersion} → ${newVersion} ${label}`,
            sender: sender(),
            state: kubeRayStateReader(env.admin, E2E_NAMESPACE, SERVICE),
          },
        );
      } finally {
        recorder.stop();
      }
      const now = kubeRayClusters(await getRayService()).active!;
      // it ends on its own once KubeRay promoted the new cluster; the stop only guards a hang
      const statusExit = await Promise.race([status, new Promise<string>((r) => setTimeout(() => r('still watching 60 s after the upgrade'), 60_000).unref())]);
      stopStatus();
      const statusLines = statusOut.join('').trim().split('\n').map(withoutTime);
      version++;

      const plan = planRayService({ kind: 'RayService', name: SERVICE, options: resolveUpgradeOptions(goal.spec as unknown as RayServiceSpec) });
      const comparison = compareWithPlan(recorder.states, planStates(plan));
      const tail = tailNotFrom(run, newVersion);
      process.stdout.write(
        [
          summary(`KubeRay ${label} ${oldVersion}→${newVersion}`, run, RATE),
          windowReport(`KubeRay ${label}`, run, newVersion, now),
          `[e2e] KubeRay ${label}: failures ${JSON.stringify(failureCounts(run))}`,
          `[e2e] KubeRay ${label}: observed states ${comparison.observed.join(', ')}`,
          `[e2e] KubeRay ${label}: plan states ${plan.steps.map((s) => `${s.atSeconds}s ${s.action} ${stateKey(s)}`).join(', ')}`,
          `[e2e] KubeRay ${label}: off plan ${JSON.stringify(comparison.offPlan)}, merged into one write ${JSON.stringify(comparison.merged)}`,
          `[e2e] KubeRay ${label}: rayshift status --watch --until-done printed ${statusLines.length} lines, the first ${JSON.stringify(statusLines[0])}, the last ${JSON.stringify(statusLines[statusLines.length - 1])}`,
          `[e2e] KubeRay ${label}: seconds between traffic steps ${JSON.stringify(comparison.trafficStepGaps)}; old cluster's capacity lowered ${JSON.stringify(comparison.capacityDropsAfterTraffic)} s after traffic last moved (rayshift: ${params.interval} s)`,
          '',
        ].join('\n'),
      );
      env.note(`${label}: observed ${comparison.observed.join(', ')}; off plan ${JSON.stringify(comparison.offPlan)}; merged ${JSON.stringify(comparison.merged)}`);

      expect({
        promotedToANewCluster: now !== old,
        finalWeights: run.history[run.history.length - 1]?.weights,
        answersAfterTheLastStep: tail.answers > 0,
        answersAfterTheLastStepFromOthers: tail.others,
        newVersionAnswered: (run.totals.versions[newVersion] ?? 0) > 0,
        offPlan: comparison.offPlan,
        // KubeRay lowers the old cluster to 0 and promotes the new one in the same reconcile (one
        // status write); rayshift's plan shows them as two steps (docs/e2e.md)
        lastCapacityDropMergedIntoPromotion: comparison.merged.includes('0/100 w0/100'),
        lastState: comparison.observed.length > 0 ? stateKey(recorder.states[recorder.states.length - 1]) : undefined,
        // rayshift status followed KubeRay's upgrade: it saw traffic on both clusters and ended with the new one alone
        statusExit,
        statusSawMigration: statusLines.some((l) => l.startsWith(`${E2E_NAMESPACE}/${SERVICE} Upgrading/Migrating active ${old} `) && l.includes(`| pending ${now} `)),
        statusLastLine: statusLines[statusLines.length - 1],
      }).toEqual({
        promotedToANewCluster: true,
        finalWeights: [{ name: `${now}-serve-svc`, weight: 100 }],
        answersAfterTheLastStep: true,
        answersAfterTheLastStepFromOthers: 0,
        newVersionAnswered: true,
        offPlan: [],
        lastCapacityDropMergedIntoPromotion: true,
        lastState: '100/0 w100/0',
        statusExit: 0,
        statusSawMigration: true,
        statusLastLine: `${E2E_NAMESPACE}/${SERVICE} Running/UpToDate active ${now} w100 cap100 (KubeRay)`,
      });
    }), 1_800_000);
});
