/**
 * Traffic-step lateness of the operator on the test cluster (real KubeRay; TEST-ONLY Gateway
 * status writer and Serve fleet), against a 2-second polling executor (KubeRay's requeue)
 * running the same reconciler on the same workload. Prints figures; never asserts.
 *
 * Workload: SERVICES services per executor, maxSurge 100, steps of 4–5 %, interval 1 s, all
 * upgraded at once (≥ 100 interval-bound traffic steps per executor). Lateness = the bench's route
 * watch seeing the new weight − (previous step's lastTrafficMigratedTime + interval).
 *
 *   npx tsx bench/operator-lateness.bench.ts [--steps 4,5,4,5,4,5] [--no-poll]
 */
import pino from 'pino';
import { RayServiceReconciler } from '../lib/runtime/rayservice/reconciler';
import { ServeDashboardClient } from '../lib/runtime/serve/client';
import { templateDashboardResolver } from '../lib/runtime/serve/resolver';
import { Operator } from '../operator/operator';
import { RAYSHIFT_RAYSERVICE, createNamespace, rayClusterConfig, rayService, startOperatorEnv } from '../test/support/operator-env';
import { LatenessStats, StepRecorder, countingClient, fmt, formatCounts, histogramCountSum, histogramQuantile, latenessStats, printTable, since, summarizeCounts } from './operator-harness';

const GOAL_P99_MS = 50;
/** Step size of each service, one service per entry (25 or 20 traffic steps each); `--steps 1` runs one 100-step upgrade. */
const STEPS = (argValue('steps') ?? '4,5,4,5,4,5').split(',').map(Number);
/** `--no-poll` skips the polling baseline. */
const POLL = !process.argv.includes('--no-poll');
const INTERVAL_S = 1;
const POLL_MS = 2000;
const OP_NS = 'lat-op';
const POLL_NS = 'lat-poll';

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const log = pino({ level: 'silent' });
  console.log('starting kube-apiserver + etcd and the simulators …');
  const env = await startOperatorEnv();
  console.log(`  control plane up (${since(t0)})`);
  const resolver = templateDashboardResolver(env.fleet.template);
  const opClient = countingClient(env.cp.kubeconfigPath);
  const operator = new Operator({ client: opClient.client, resolver, log, capacityPollMs: 100 });
  await operator.start();

  const names = STEPS.map((_, i) => `svc-${i}`);
  const recorder = new StepRecorder(env.admin, () => INTERVAL_S);
  await recorder.start();
  const running = (ns: string) => names.every((n) => {
    const s = recorder.state(`${ns}/${n}`);
    return s?.phase === 'Running' && s.pendingClusterName === undefined && s.activeClusterName !== undefined && s.trafficConfirmed === true && recorder.hasRoute(`${ns}/${n}`);
  });
  const namespaces = POLL ? [OP_NS, POLL_NS] : [OP_NS];
  for (const ns of namespaces) {
    await createNamespace(env.admin, ns);
    await Promise.all(names.map((n, i) => env.admin.create(rayService(ns, n, { maxSurge: 100, step: STEPS[i], interval: INTERVAL_S }))));
  }
  await recorder.until(() => namespaces.every(running), 'all services to run', 120_000);
  await new Promise((r) => setTimeout(r, 1000)); // let the last Service writes settle
  console.log(`  ${names.length * namespaces.length} services running (${since(t0)})`);

  const upgrade = async (ns: string, timeoutMs: number) => {
    const first = new Map(names.map((n) => [n, recorder.state(`${ns}/${n}`)!.activeClusterName as string]));
    const started = Date.now();
    await Promise.all(names.map((n) => env.admin.patchMerge(RAYSHIFT_RAYSERVICE, n, ns, { spec: { rayClusterConfig: rayClusterConfig('2') } })));
    await recorder.until(() => names.every((n) => {
      const s = recorder.state(`${ns}/${n}`);
      return s?.phase === 'Running' && s.pendingClusterName === undefined && s.activeClusterName !== first.get(n);
    }), `the upgrades in ${ns} to complete`, timeoutMs);
    return Date.now() - started;
  };

  // --- the operator -----------------------------------------------------------------------------
  opClient.reset();
  const writesBefore = (await operator.metrics.writes.get()).values[0]?.value ?? 0;
  const reconcilesBefore = histogramCountSum(await operator.metrics.reconcileSeconds.get());
  console.log(`upgrading ${names.length} services under the operator …`);
  const opWall = await upgrade(OP_NS, 180_000);
  await new Promise((r) => setTimeout(r, 300));
  const opWrites = ((await operator.metrics.writes.get()).values[0]?.value ?? 0) - writesBefore;
  const reconciles = histogramCountSum(await operator.metrics.reconcileSeconds.get());
  const opReconciles = reconciles.count - reconcilesBefore.count;
  const opReconcileMs = ((reconciles.sum - reconcilesBefore.sum) / Math.max(1, opReconciles)) * 1000;
  const opCounts = summarizeCounts(opClient.counts);
  const histogram = await operator.metrics.stepLateness.get();
  const histo = { p50: histogramQuantile(histogram, 0.5) * 1000, p99: histogramQuantile(histogram, 0.99) * 1000, n: histogramCountSum(histogram).count };
  console.log(`  done in ${(opWall / 1000).toFixed(1)} s (${since(t0)}); stopping the operator`);
  await operator.stop();

  // --- the 2-second polling executor --------------------------------------------------------------
  const pollClient = countingClient(env.cp.kubeconfigPath);
  const reconciler = new RayServiceReconciler({ client: pollClient.client, serve: new ServeDashboardClient({ resolver }), capacityPollMs: 100, log });
  let pollWrites = 0;
  let pollPasses = 0;
  const timers: NodeJS.Timeout[] = [];
  for (const n of POLL ? names : []) {
    let busy = false;
    const tick = async () => {
      if (busy) return;
      busy = true;
      try {
        pollWrites += (await reconciler.reconcile(POLL_NS, n)).writes;
        pollPasses++;
      } catch {
        // retried on the next tick, as a requeue would
      } finally {
        busy = false;
      }
    };
    // random phase per service, like independent requeues
    timers.push(setTimeout(() => { timers.push(setInterval(() => void tick(), POLL_MS)); void tick(); }, Math.random() * POLL_MS));
  }
  if (POLL) console.log(`upgrading ${names.length} services under a ${POLL_MS / 1000}-second polling loop …`);
  const pollWall = POLL ? await upgrade(POLL_NS, 400_000) : NaN;
  for (const t of timers) clearTimeout(t);
  for (const t of timers) clearInterval(t);
  if (POLL) console.log(`  done in ${(pollWall / 1000).toFixed(1)} s (${since(t0)})`);

  await recorder.stop();
  const op = latenessStats(recorder.stepsOf(`${OP_NS}/`));
  const poll = latenessStats(recorder.stepsOf(`${POLL_NS}/`));
  const opSteps = op.steps;

  console.log('');
  console.log(`Traffic-step lateness (route write seen by a watch − due time), interval ${INTERVAL_S} s, ${names.length} services each, steps ${[...new Set(STEPS)].join('/')} %, maxSurge 100`);
  const row = (label: string, s: LatenessStats, wall: number) => [label, s.steps, s.intervalBound, s.unmatched, s.p50, s.p99, s.max, s.decideP50, s.decideP99, s.early, s.minMargin, wall / 1000];
  printTable([
    ['executor', 'steps', 'timed', 'unseen', 'p50 ms', 'p99 ms', 'max ms', 'decide p50', 'decide p99', 'EARLY', 'min margin ms', 'wall s'],
    row('operator (watch + exact wake-up)', op, opWall),
    ...(POLL
      ? [row(`poll every ${POLL_MS / 1000} s`, poll, pollWall), ['ratio poll / operator', '', '', '', poll.p50 / op.p50, poll.p99 / op.p99, poll.max / op.max, '', '', '', '', pollWall / opWall]]
      : []),
  ]);
  console.log('(timed = interval-bound steps, which directly follow another traffic step with no capacity move between; p50/p99/max and decide = engine decision − due are over those; EARLY and min margin over all steps)');
  const worst = recorder.stepsOf(`${OP_NS}/`).filter((x) => x.followsStep && x.landedAt !== undefined && x.due !== undefined).sort((a, b) => b.landedAt! - b.due! - (a.landedAt! - a.due!)).slice(0, 3);
  console.log(`operator's latest steps: ${worst.map((x) => `${x.service} →${x.weight}% ${fmt(x.landedAt! - x.due!)} ms (decided +${fmt(x.decidedAt - x.due!)} ms)`).join('; ')}`);
  console.log('');
  console.log(`operator histogram rayshift_step_lateness_seconds (pass done − due, bucket bounds): n=${histo.n} p50 ≤ ${fmt(histo.p50)} ms, p99 ≤ ${fmt(histo.p99)} ms`);
  console.log(`operator: ${opReconciles} reconciles (mean ${fmt(opReconcileMs)} ms), ${opWrites} writes (metric) = ${fmt(opWrites / opSteps)} per traffic step, ${fmt(opWrites / (opSteps + recorder.capacityStepsOf(`${OP_NS}/`)))} per migration step (traffic or capacity); API requests ${opCounts.reads} reads (${opCounts.lists} lists), ${opCounts.writes} writes`);
  console.log(`  requests by kind (count, mean ms): ${Object.entries(opClient.counts).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n} (${fmt((opClient.millis[k] ?? 0) / n)})`).join(', ')}`);
  console.log(`  status writes by phase/reason: ${formatCounts(opClient.statusReasons)}`);
  const pc = summarizeCounts(pollClient.counts);
  if (POLL) console.log(`poller: ${pollPasses} passes, ${pollWrites} writes = ${fmt(pollWrites / Math.max(1, poll.steps))} per traffic step; API requests ${pc.reads} reads (${pc.lists} lists), ${pc.writes} writes`);
  console.log(`goal: p99 ≤ ${GOAL_P99_MS} ms and never early → operator p99 ${fmt(op.p99)} ms (${op.p99 <= GOAL_P99_MS ? 'met' : 'NOT met'}), early steps ${op.early} (poller ${poll.early})`);

  opClient.client.close();
  pollClient.client.close();
  await env.stop();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
