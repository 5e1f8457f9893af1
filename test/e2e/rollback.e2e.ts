/**
 * Rollbacks executed by the rayshift operator with real Ray heads and a real Traefik, under steady
 * HTTP load (issue 8): A→B→A (spec reverted mid-upgrade), A→B→A→B (reverted, then re-applied while
 * rolling back), and a progress-deadline rollback caused by a pending cluster whose Serve app cannot
 * start (bad import path). Zero failed requests in each. KubeRay runs for real on the test cluster;
 * only the pod network that makes a head Pod's IP reach a real Ray head is simulated
 * (support/e2e-env.ts, support/pod-network.ts). Needs `npm run e2e:setup`.
 */
import { engineState, waitFor } from '../support/operator-env';
import { failureCounts, summary, tailNotFrom } from './support/assertions';
import { E2EEnv, startE2EEnv } from './support/e2e-env';
import { E2E_RATE, deployAndWaitServing, e2eRayService, e2eServeConfig, getService, runUnderLoad, updateSpec, upgradedAwayFrom } from './support/scenario';

const RATE = E2E_RATE;
const REPLICAS = 2;
const SERVICE = 'rb';
const PARAMS = { step: 25, interval: 3, maxSurge: 50 };

let env: E2EEnv;

beforeAll(async () => {
  env = await startE2EEnv();
  await deployAndWaitServing(env, e2eRayService(SERVICE, { version: 'v1', cpu: '1', replicas: REPLICAS, ...PARAMS }), 'v1');
}, 1_200_000);

afterAll(async () => {
  await env?.stop();
});

/** Sets the app version, the worker CPU (a new cluster) and optionally the import path and deadline. */
function specFor(version: string, cpu: string, extra: { importPath?: string; progressDeadlineSeconds?: number } = {}) {
  return (spec: Record<string, any>) => {
    spec.serveConfigV2 = e2eServeConfig(version, REPLICAS, extra.importPath);
    spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu = cpu;
    if (extra.progressDeadlineSeconds !== undefined) spec.rayshift = { ...spec.rayshift, progressDeadlineSeconds: extra.progressDeadlineSeconds };
    return spec;
  };
}

async function state() {
  return engineState(await getService(env, SERVICE));
}

/** True when the service runs only `cluster`, with no upgrade in flight. */
async function settledOn(cluster: string): Promise<boolean> {
  const s = await state();
  return s.phase === 'Running' && s.activeClusterName === cluster && s.pendingClusterName === undefined;
}

test('A→B→A: the spec is reverted after traffic reached B; traffic returns to A with zero failures', async () => {
  const a = (await state()).activeClusterName as string;
  const run = await runUnderLoad(
    env,
    SERVICE,
    RATE,
    async () => {
      await updateSpec(env, SERVICE, specFor('v2', '2'));
      await waitFor(async () => ((await state()).pendingWeight ?? 0) > 0, 'the first traffic step onto B', 600_000, 250);
      env.note('A→B→A: reverting the spec');
      await updateSpec(env, SERVICE, specFor('v1', '1'));
    },
    () => settledOn(a),
    { what: 'A→B→A' },
  );
  process.stdout.write(`${summary('rollback A→B→A', run, RATE)}\n`);
  const tail = tailNotFrom(run, 'v1');
  expect({ ...failureCounts(run), v2Answered: (run.totals.versions.v2 ?? 0) > 0, finalWeights: run.history[run.history.length - 1].weights, tailAnswers: tail.answers > 0, tailFromOthers: tail.others }).toEqual({
    failures: 0, timeouts: 0, skipped: 0, failureDetails: {}, unanswered: 0,
    v2Answered: true,
    finalWeights: [{ name: `${a}-serve-svc`, weight: 100 }],
    tailAnswers: true,
    tailFromOthers: 0,
  });
}, 1_800_000);

test('A→B→A→B: reverted, then re-applied while rolling back; the upgrade to B completes with zero failures', async () => {
  const a = (await state()).activeClusterName as string;
  const run = await runUnderLoad(
    env,
    SERVICE,
    RATE,
    async () => {
      await updateSpec(env, SERVICE, specFor('v2', '2'));
      await waitFor(async () => ((await state()).pendingWeight ?? 0) > 0, 'the first traffic step onto B', 600_000, 250);
      env.note('A→B→A→B: reverting the spec');
      await updateSpec(env, SERVICE, specFor('v1', '1'));
      await waitFor(async () => (await state()).phase === 'RollingBack', 'the rollback to start', 120_000, 100);
      env.note('A→B→A→B: re-applying B');
      await updateSpec(env, SERVICE, specFor('v2', '2'));
    },
    () => upgradedAwayFrom(env, SERVICE, a),
    { what: 'A→B→A→B' },
  );
  process.stdout.write(`${summary('rollback A→B→A→B', run, RATE)}\n`);
  const b = (await state()).activeClusterName as string;
  const tail = tailNotFrom(run, 'v2');
  expect({ ...failureCounts(run), v1Answered: (run.totals.versions.v1 ?? 0) > 0, finalWeights: run.history[run.history.length - 1].weights, tailAnswers: tail.answers > 0, tailFromOthers: tail.others }).toEqual({
    failures: 0, timeouts: 0, skipped: 0, failureDetails: {}, unanswered: 0,
    v1Answered: true,
    finalWeights: [{ name: `${b}-serve-svc`, weight: 100 }],
    tailAnswers: true,
    tailFromOthers: 0,
  });
}, 1_800_000);

test('progress deadline: a pending cluster whose Serve app cannot start (bad import path) is rolled back automatically, zero failures', async () => {
  const a = (await state()).activeClusterName as string;
  const activeVersion = 'v2';
  const run = await runUnderLoad(
    env,
    SERVICE,
    RATE,
    () => updateSpec(env, SERVICE, specFor('v3', '3', { importPath: 'rayshift_testapp.no_such_module:build', progressDeadlineSeconds: 60 })),
    async () => (await settledOn(a)) && (await state()).reason === 'ProgressDeadlineExceeded',
    { what: 'progress-deadline rollback', timeoutMs: 900_000 },
  );
  process.stdout.write(`${summary('progress-deadline rollback', run, RATE)}\n`);
  // zero failures, the broken version never answered, the route ends on A alone, the spec is marked rejected
  const s = await state();
  expect({ ...failureCounts(run), versions: Object.keys(run.totals.versions), finalWeights: run.history[run.history.length - 1].weights, rejected: s.rejectedSpecHash !== undefined }).toEqual({
    failures: 0, timeouts: 0, skipped: 0, failureDetails: {}, unanswered: 0,
    versions: [activeVersion],
    finalWeights: [{ name: `${a}-serve-svc`, weight: 100 }],
    rejected: true,
  });
  // the pending cluster was deleted and its head returned to the pool
  await waitFor(() => env.pool.freeHeads().length === 1, 'the pending cluster\'s head to be free again', 180_000, 500);
}, 1_800_000);
