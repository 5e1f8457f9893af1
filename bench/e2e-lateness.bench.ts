/**
 * Traffic-step lateness of the rayshift operator against the REAL end-to-end stack (two real Ray
 * heads, a real Traefik honouring the weights, the test cluster with KubeRay's real operator; only
 * the pod network is simulated), under steady HTTP load, and the upgrade's wall time over
 * `steps × interval` (the floor any executor must respect). Prints figures; never asserts.
 *
 * Lateness = the bench's route watch seeing the new weight − (previous step's
 * lastTrafficMigratedTime + interval), over interval-bound steps (bench/operator-harness.ts).
 * Needs `npm run controlplane:build`, `npm run cluster:build` and `npm run e2e:setup`.
 *
 * Before the upgrade it offers steady load at each `--probe-rates` rate for `--probe-seconds` and
 * prints what came back, to find the highest rate this machine sustains with zero failures.
 *
 *   npx tsx bench/e2e-lateness.bench.ts [--step 10] [--interval 2] [--max-surge 100] [--rate 50]
 *                                       [--probe-rates 50,100,200] [--probe-seconds 15]
 */
import { E2E_NAMESPACE, startE2EEnv } from '../test/e2e/support/e2e-env';
import { E2E_HTTP_PORT } from '../test/e2e/support/e2e-env';
import { httpSender, startLoad } from '../test/e2e/support/load';
import { deployAndWaitServing, e2eRayService, e2eServeConfig, getService, runUnderLoad, updateSpec, upgradedAwayFrom } from '../test/e2e/support/scenario';
import { windowReport } from '../test/e2e/support/assertions';
import { engineState } from '../test/support/operator-env';
import { StepRecorder, fmt, latenessStats, printTable, since } from './operator-harness';

function argNumber(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const STEP = argNumber('step', 10);
const INTERVAL_S = argNumber('interval', 2);
const MAX_SURGE = argNumber('max-surge', 100);
const RATE = argNumber('rate', 50);
const PROBE_RATES = (process.argv.includes('--probe-rates') ? process.argv[process.argv.indexOf('--probe-rates') + 1] : '50,100,200').split(',').filter(Boolean).map(Number);
const PROBE_SECONDS = argNumber('probe-seconds', 15);
const REPLICAS = 2;
const SERVICE = 'bench';

async function main(): Promise<void> {
  const t0 = Date.now();
  console.log('starting two Ray heads, the test cluster with KubeRay, Traefik and the operator …');
  const env = await startE2EEnv();
  try {
    console.log(`  stack up (${since(t0)}); logs ${env.logDir}`);
    const params = { step: STEP, interval: INTERVAL_S, maxSurge: MAX_SURGE };
    const first = await deployAndWaitServing(env, e2eRayService(SERVICE, { version: 'v1', cpu: '1', replicas: REPLICAS, ...params }), 'v1');
    console.log(`  v1 serving through Traefik (${since(t0)})`);
    const probes: (string | number)[][] = [['offered /s', 'sent', 'answered', 'failures', 'timeouts', 'skipped', 'answered /s']];
    for (const rate of PROBE_RATES) {
      const sender = httpSender('127.0.0.1', E2E_HTTP_PORT, { maxSockets: Math.max(16, Math.ceil(rate * 4)) });
      const load = startLoad(sender.send, { ratePerSecond: rate, timeoutMs: 10_000, durationMs: PROBE_SECONDS * 1000 });
      await new Promise((r) => setTimeout(r, PROBE_SECONDS * 1000));
      const t = await load.stop();
      sender.close();
      probes.push([rate, t.sent, t.ok, t.failures, t.timeouts, t.skipped, fmt(t.achievedRate)]);
      console.log(`  steady ${rate}/s for ${PROBE_SECONDS} s: ${t.ok}/${t.sent} answered, failures ${t.failures}, timeouts ${t.timeouts}, skipped ${t.skipped}`);
    }
    const recorder = new StepRecorder(env.admin, () => INTERVAL_S);
    await recorder.start();
    console.log(`upgrading v1 → v2 {step ${STEP}, interval ${INTERVAL_S} s, maxSurge ${MAX_SURGE}} under ${RATE}/s …`);
    const run = await runUnderLoad(
      env,
      SERVICE,
      RATE,
      () => updateSpec(env, SERVICE, (spec) => {
        spec.serveConfigV2 = e2eServeConfig('v2', REPLICAS);
        spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu = '2';
        return spec;
      }),
      () => upgradedAwayFrom(env, SERVICE, first),
      { what: 'bench upgrade', warmMs: 2000, cooldownMs: 1000 },
    );
    await recorder.stop();
    const stats = latenessStats(recorder.stepsOf(`${E2E_NAMESPACE}/`));
    const trafficSteps = Math.ceil(100 / STEP);
    const floorMs = trafficSteps * INTERVAL_S * 1000;
    const wallMs = run.doneAt - run.changedAt;
    console.log('');
    console.log(`Traffic-step lateness on the real stack (route write seen by a watch − due time), interval ${INTERVAL_S} s, step ${STEP} %, maxSurge ${MAX_SURGE}`);
    printTable([
      ['steps', 'timed', 'unseen', 'p50 ms', 'p99 ms', 'max ms', 'decide p50', 'decide p99', 'EARLY', 'min margin ms'],
      [stats.steps, stats.intervalBound, stats.unmatched, stats.p50, stats.p99, stats.max, stats.decideP50, stats.decideP99, stats.early, stats.minMargin],
    ]);
    console.log(`upgrade wall time (spec change → one cluster serving): ${fmt(wallMs / 1000)} s = ${fmt(wallMs / floorMs)} × steps × interval (${trafficSteps} × ${INTERVAL_S} s = ${fmt(floorMs / 1000)} s); the rest is cluster creation, Serve start-up and capacity moves`);
    const t = run.totals;
    console.log(`load: offered ${RATE}/s, answered ${t.ok}/${t.sent}, failures ${t.failures}, timeouts ${t.timeouts}, skipped ${t.skipped}, versions ${JSON.stringify(t.versions)}`);
    console.log(windowReport('route-weight windows (the e2e ±5-point check)', run, 'v2', engineState(await getService(env, SERVICE)).activeClusterName as string));
    if (PROBE_RATES.length > 0) {
      console.log('');
      console.log(`Steady load through Traefik to one real Ray cluster (${REPLICAS} replicas), ${PROBE_SECONDS} s per rate, no upgrade:`);
      printTable(probes);
    }
    console.log(`total bench time ${since(t0)}`);
  } finally {
    await env.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
