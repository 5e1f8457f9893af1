/**
 * Metric-gated upgrades executed by the rayshift operator on the test cluster (real KubeRay, kwok
 * Pods; TEST-ONLY Serve dashboards and Gateway status writer, test/support/operator-env.ts)
 * with a real Prometheus (built from Go modules, test/support/prometheus.ts) scraping TEST-ONLY
 * simulated Ray Serve metrics whose load follows the route's weights as the API server reports
 * them (test/support/simulated-serve-metrics.ts; no Ray process runs in this suite). The operator
 * runs the `ray-serve-error-ratio` template against Prometheus' HTTP API: a new version failing a
 * fifth of its requests is rolled back at its first gate, a healthy one is promoted after every
 * gate passed, an unreachable Prometheus is never a pass, and `onFailure: pause` holds the weights
 * until `rayshift resume` measures the failed run again. The Pulumi executor's provider
 * operations (in this process, no Pulumi CLI) run the same analysis and print its verdicts in
 * `pulumi up`'s output.
 */
import * as fs from 'node:fs';
import { rayshiftIn } from '../cli/cli-io';
import { queryPrometheus } from '../../lib/runtime/prometheus/client';
import * as migration from '../../lib/pulumi/migration-operations';
import type { MigrationInputs } from '../../lib/pulumi/migration-inputs';
import { KnownTypes } from '../../lib/runtime/kube/types';
import type { RayServiceSpec } from '../../lib/spec/rayservice';
import { startOperatorHarness, OperatorEnv, OperatorHarness, RAYSHIFT_RAYSERVICE, createNamespace, engineState, operatorPassNow, rayClusterConfig, rayService, recordRouteWeights, recordedPendingWeights, waitFor } from '../support/operator-env';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus';
import { startSimulatedServeMetrics, type SimulatedServeMetrics } from '../support/simulated-serve-metrics';

let harness: OperatorHarness;
let env: OperatorEnv;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  harness = await startOperatorHarness();
  env = harness.env;
}, 300_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await harness?.stop();
});

/** The analysis of these tests: the new cluster's error ratio below 5 %, measured twice 2 s apart over a 3 s window. */
function analysis(prometheusUrl: string): Record<string, unknown> {
  return {
    prometheusUrl,
    metrics: [{ name: 'errors', template: 'ray-serve-error-ratio', successCondition: { maximum: 0.05 }, intervalSeconds: 2, windowSeconds: 3, count: 2 }],
    queryTimeoutSeconds: 2,
  };
}

/** What one case runs against: its simulated metrics and a Prometheus scraping them. */
interface Case {
  readonly metrics: SimulatedServeMetrics;
  readonly prometheus: RunningPrometheus;
  /** Names the serving cluster before the upgrade (its requests never fail). */
  setFirst(name: string): void;
}

/** A namespace with the simulated metrics of its service's route (the new version failing `newVersionErrorRatio`) and a Prometheus scraping them. */
async function setUp(ns: string, newVersionErrorRatio: number): Promise<Case> {
  await createNamespace(env.admin, ns);
  let first = '';
  const metrics = await startSimulatedServeMetrics(env.admin, {
    namespace: ns,
    routeName: 'svc-httproute',
    requestsPerSecond: 200,
    errorRatio: (cluster) => (cluster === first ? 0 : newVersionErrorRatio),
  });
  const prometheus = await startPrometheus({ targets: { ray: [metrics.target] }, scrapeInterval: '500ms' });
  cleanups.push(() => prometheus.stop(), () => metrics.close());
  return { metrics, prometheus, setFirst: (name) => (first = name) };
}

/** The analysis Events recorded on the namespace's RayService. */
async function analysisEvents(ns: string): Promise<Record<string, string>[]> {
  const list = await env.admin.list(KnownTypes.Event, { namespace: ns });
  return list.items
    .filter((e: any) => e.action === 'Analysis')
    .map((e: any) => ({ type: e.type, reason: e.reason, note: e.note, controller: e.reportingController, regarding: `${e.regarding.kind}/${e.regarding.name}` }));
}

async function upgrade(ns: string, prometheusUrl: string, extra: Record<string, unknown> = {}): Promise<{ first: string; recorder: Awaited<ReturnType<typeof recordRouteWeights>> }> {
  await env.admin.create(rayService(ns, 'svc', { maxSurge: 50, step: 25, interval: 1, extensions: { analysis: { ...analysis(prometheusUrl), ...extra } } }));
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'svc', ns)).phase === 'Running', 'the first cluster to serve', 120_000);
  const first = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'svc', ns)).activeClusterName as string;
  const recorder = await recordRouteWeights(env.admin, ns, 'svc-httproute');
  const current = (await env.admin.get(RAYSHIFT_RAYSERVICE, 'svc', ns))!;
  await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: rayClusterConfig('2') } });
  return { first, recorder };
}

/** The engine state once the upgrade away from `first` ended: promoted, or rolled back by the analysis. */
async function settled(ns: string, first: string): Promise<Record<string, any>> {
  let s: Record<string, any> = {};
  await waitFor(async () => {
    s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'svc', ns));
    const ended = (s.reason === 'Promoted' && s.activeClusterName !== first) || s.reason === 'AnalysisFailed';
    return s.phase === 'Running' && s.pendingClusterName === undefined && ended;
  }, `${ns}/svc to settle`, 150_000);
  return s;
}

test('a new version failing a fifth of its requests is rolled back at its first gate, measured by the real Prometheus', async () => {
  const ns = 'analysis-bad';
  const ctx = await setUp(ns, 0.2);
  const { first, recorder } = await upgrade(ns, ctx.prometheus.address);
  ctx.setFirst(first);
  const s = await settled(ns, first);
  recorder.stop();
  expect(s.reason).toBe('AnalysisFailed');
  expect(s.activeClusterName).toBe(first);
  const failed = s.analysis.verdicts.at(-1);
  expect(failed).toMatchObject({ kind: 'step', phase: 'Failed', pendingWeight: 25, dryRun: false });
  // The measured ratio is the simulated one (Prometheus' rate over the window; the two clusters' counters are apart).
  // Prometheus' ratio of the two counters' rates is the simulated 20 %.
  expect(failed.message).toBe('errors failed (1 failed, 0 inconclusive of 1; last: 0.2 > maximum 0.05)');
  const pending = recorder.history.flatMap((h) => h.weights).filter((w) => w.name !== `${first}-serve-svc`).map((w) => w.weight);
  expect(Math.max(...pending)).toBe(25);
  // The verdict is an Event on the RayService, as kubectl events shows it.
  await waitFor(async () => (await analysisEvents(ns)).length > 0, 'the verdict\'s Event');
  expect(await analysisEvents(ns)).toEqual([{ type: 'Warning', reason: 'AnalysisFailed', note: `step gate at 25% failed: ${failed.message}`, controller: 'rayshift.dev/rayservice-operator', regarding: 'RayService/svc' }]);
}, 240_000);

test('a healthy new version is promoted after a passed gate at every weight', async () => {
  const ns = 'analysis-good';
  const ctx = await setUp(ns, 0);
  const { first, recorder } = await upgrade(ns, ctx.prometheus.address);
  ctx.setFirst(first);
  const s = await settled(ns, first);
  recorder.stop();
  expect(s.reason).toBe('Promoted');
  expect(s.analysis.verdicts.map((v: { pendingWeight: number; phase: string }) => `${v.pendingWeight}:${v.phase}`)).toEqual(['25:Successful', '50:Successful', '75:Successful', '100:Successful']);
  expect(recordedPendingWeights(recorder.history, s.activeClusterName)).toEqual([0, 25, 50, 75, 100]);
  expect(ctx.metrics.counted(s.activeClusterName).errors).toBe(0);
}, 240_000);

test('onFailure pause holds the weights until rayshift resume measures the failed run again', async () => {
  const ns = 'analysis-pause';
  let failing = true;
  await createNamespace(env.admin, ns);
  let first = '';
  const metrics = await startSimulatedServeMetrics(env.admin, { namespace: ns, routeName: 'svc-httproute', requestsPerSecond: 200, errorRatio: (c) => (c !== first && failing ? 0.2 : 0) });
  const prometheus = await startPrometheus({ targets: { ray: [metrics.target] }, scrapeInterval: '500ms' });
  cleanups.push(() => prometheus.stop(), () => metrics.close());
  const started = await upgrade(ns, prometheus.address, { onFailure: 'pause' });
  first = started.first;
  const state = async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'svc', ns));
  await waitFor(async () => (await state()).reason === 'AnalysisFailed', 'the analysis to pause the upgrade', 120_000);
  const held = await state();
  expect(held).toMatchObject({ phase: 'Paused', pendingWeight: 25 });
  // Held: a pass of the operator now keeps the weights.
  expect(await operatorPassNow(env.admin, ns, 'svc')).toMatchObject({ phase: 'Paused', reason: 'AnalysisFailed', pendingWeight: 25 });
  failing = false;
  // Resume once Prometheus' window no longer holds the failures (else the retried run could still see them).
  const pending = held.pendingClusterName as string;
  await waitFor(async () => (await queryPrometheus(prometheus.address, `sum(rate(ray_serve_num_http_error_requests_total{ray_io_cluster="${pending}"}[3s]))`, 2000)) === 0, 'the new version\'s error rate to reach 0 in Prometheus', 30_000, 250);
  expect(await rayshiftIn(['resume', 'svc', '-n', ns, '--kubeconfig', env.cp.kubeconfigPath])).toMatchObject({ code: 0, stderr: '' });
  const s = await settled(ns, first);
  started.recorder.stop();
  expect(s.reason).toBe('Promoted');
  expect(s.analysis.verdicts.map((v: { pendingWeight: number; phase: string }) => `${v.pendingWeight}:${v.phase}`)).toEqual(['25:Failed', '25:Successful', '50:Successful', '75:Successful', '100:Successful']);
}, 240_000);

test('an unreachable Prometheus is inconclusive: the upgrade rolls back, never passes', async () => {
  const ns = 'analysis-unreachable';
  await createNamespace(env.admin, ns);
  // A port nothing listens on (the Prometheus of this case is stopped before the upgrade).
  const prometheus = await startPrometheus({ targets: {} });
  const address = prometheus.address;
  await prometheus.stop();
  const { first, recorder } = await upgrade(ns, address);
  const s = await settled(ns, first);
  recorder.stop();
  expect(s.reason).toBe('AnalysisFailed');
  expect(s.activeClusterName).toBe(first);
  expect(s.analysis.verdicts.at(-1)).toMatchObject({ phase: 'Inconclusive', pendingWeight: 25 });
  expect(s.analysis.verdicts.at(-1).message).toContain('ECONNREFUSED');
}, 240_000);

test('the Pulumi executor runs the same analysis: pulumi up prints each verdict and fails naming the analysis', async () => {
  const ns = 'analysis-pulumi';
  const ctx = await setUp(ns, 0.2);
  const lines: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    const inputs = (cpu: string): MigrationInputs => {
      const spec = { ...(rayService(ns, 'svc', { maxSurge: 50, step: 25, interval: 1, extensions: { analysis: analysis(ctx.prometheus.address) } }).spec as object), rayClusterConfig: rayClusterConfig(cpu) } as RayServiceSpec;
      return { name: 'svc', namespace: ns, spec, labels: {}, kubeconfig: fs.readFileSync(env.cp.kubeconfigPath, 'utf8'), dashboardAddressTemplate: env.fleet.template, deadlineSeconds: 120, onDeadline: 'rollback', capacityPollMs: 50 };
    };
    const created = await migration.create({}, inputs('1'));
    ctx.setFirst(created.outs!.activeClusterName!);
    await expect(migration.update({}, inputs('2'))).rejects.toThrow(/the upgrade was given up \(AnalysisFailed\) and rolled back/);
  } finally {
    log.mockRestore();
  }
  expect(lines.filter((l) => / AnalysisFailed: /.test(l)).map((l) => l.slice(9))).toEqual(['svc AnalysisFailed: step gate at 25% failed: errors failed (1 failed, 0 inconclusive of 1; last: 0.2 > maximum 0.05)']);
  expect(lines.some((l) => / measureAnalysis/.test(l))).toBe(false);
}, 240_000);
