/**
 * Metric-gated coordinated RoleBasedGroup rollouts, end to end without a cluster: a real
 * kube-apiserver with RBG v0.7.0's CRDs, the operator's RBG controller (rayshift moves the
 * partitions), the TEST-ONLY simulated RBG controller (test/support/simulated-rbg.ts) in upstream's
 * place, and a real Prometheus scraping TEST-ONLY simulated serving metrics per group and revision
 * (test/support/simulated-rbg-metrics.ts). A revision whose error ratio is over the bound is rolled
 * back to the old revision after its first round; a good one completes, each round after the first
 * gated by a passed measurement. Needs `npm run controlplane:build` and `npm run prometheus:build`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { crdsOf } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-types';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes, KubeObject } from '../../lib/runtime/kube/types';
import { readRolloutStatus } from '../../lib/runtime/rbg/status';
import type { UpgradeAnalysis } from '../../lib/spec/analysis';
import { RBG_V1ALPHA2_TYPE } from '../../lib/spec/object-names';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { ControlPlane, startControlPlane } from '../support/controlplane';
import { RunningPrometheus, startPrometheus } from '../support/prometheus';
import { SimulatedRbgController, simulateRbgController } from '../support/simulated-rbg';
import { SimulatedRbgMetrics, startSimulatedRbgMetrics } from '../support/simulated-rbg-metrics';

const NS = 'pd';
const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
const SELECT = 'namespace="{{namespace}}",group="{{service}}",revision=~"{{cluster}}"';
/** The new revision's error ratio in this group, per the simulated metrics. */
const ERROR_RATIO: Record<string, number> = { good: 0.001, bad: 0.4 };

let cp: ControlPlane;
let admin: KubeClient;
let simulator: SimulatedRbgController;
let metrics: SimulatedRbgMetrics;
let prom: RunningPrometheus;
let controller: RbgRolloutController;

beforeAll(async () => {
  const crds = await Promise.all(crdsOf('rbg', 'v0.7.0').map((c) => resolveCrdFile(c)));
  cp = await startControlPlane({ crds });
  admin = KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  simulator = simulateRbgController(admin, { type: RBG_V1ALPHA2_TYPE, readyDelayMs: () => 50 });
  metrics = await startSimulatedRbgMetrics(admin, { type: RBG_V1ALPHA2_TYPE, namespace: NS, requestsPerSecond: 200, errorRatio: (g) => ERROR_RATIO[g] ?? 0 });
  prom = await startPrometheus({ targets: { rbg: [metrics.target] }, scrapeInterval: '1s' });
  await prom.waitForScrape('rbg');
  controller = new RbgRolloutController({ client: admin, log: SILENT, apiVersion: 'v1alpha2' });
  await controller.start();
}, 300_000);

afterAll(async () => {
  await controller?.stop();
  await simulator?.stop();
  await metrics?.close();
  await prom?.stop();
  admin?.close();
  await cp?.stop();
}, 60_000);

function analysis(): UpgradeAnalysis {
  return {
    prometheusUrl: prom.address,
    metrics: [
      {
        name: 'error-ratio',
        query: `sum(rate(simulated_rbg_errors_total{${SELECT}}[{{window}}])) / sum(rate(simulated_rbg_requests_total{${SELECT}}[{{window}}]))`,
        successCondition: { maximum: 0.05 },
        intervalSeconds: 3,
        windowSeconds: 3,
      },
    ],
    onFailure: 'rollback',
    queryTimeoutSeconds: 5,
  };
}

function synthesize(name: string, image: string): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace: NS },
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: 4, template: { spec: { containers: [{ name: 'prefill', image }] } } },
      { name: 'decode', replicas: 2, template: { spec: { containers: [{ name: 'decode', image }] } } },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '30%', maxUnavailable: 1 }, progressDeadlineSeconds: 120 }],
    analysis: analysis(),
  });
  return Testing.synth(chart)[0] as KubeObject;
}

/** Polls the group's coordination status until `done` holds; returns every distinct status seen. */
async function until(name: string, what: string, done: (c: CoordinationStatus, group: KubeObject) => boolean, timeoutMs = 120_000): Promise<CoordinationStatus[]> {
  const seen: CoordinationStatus[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const group = await admin.get(RBG_V1ALPHA2_TYPE, name, NS);
    const c = readRolloutStatus(group)?.coordinations[0];
    if (c && JSON.stringify(c) !== JSON.stringify(seen[seen.length - 1])) seen.push(c);
    if (c && done(c, group)) return seen;
    if (Date.now() > deadline) throw new Error(`${name}: no ${what} within ${timeoutMs} ms; last status ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function rollOut(name: string): Promise<string> {
  await admin.apply(synthesize(name, 'sglang:v1'), { force: true });
  const armed = await until(name, 'armed v1', (c) => c.phase === 'Complete');
  await admin.apply(synthesize(name, 'sglang:v2'), { force: true });
  return armed[armed.length - 1].revision;
}

async function eventReasons(name: string): Promise<string[]> {
  const list = await admin.list(KnownTypes.Event, { namespace: NS });
  return list.items.filter((e) => (e.regarding as { name?: string }).name === name).map((e) => String(e.reason));
}

test('a good revision completes; every round after the first waited for a passed measurement of the real Prometheus', async () => {
  const v1 = await rollOut('good');
  const seen = await until('good', 'the v2 rollout to complete', (c) => c.phase === 'Complete' && c.revision !== v1);
  const done = seen[seen.length - 1];
  expect(done.roles.map((r) => [r.name, r.updated])).toEqual([['prefill', 4], ['decode', 2]]);
  expect(done.rounds).toBeGreaterThan(1);
  const verdicts = done.analysis!.verdicts;
  expect(verdicts.length).toBeGreaterThanOrEqual(done.rounds);
  expect(verdicts.every((v) => v.phase === 'Successful' && v.kind === 'step')).toBe(true);
  expect(verdicts[verdicts.length - 1].pendingWeight).toBe(100);
  expect(seen.some((c) => c.reason === 'WaitingForAnalysis')).toBe(true);
  expect(await eventReasons('good')).toEqual(expect.arrayContaining(['RolloutRound', 'AnalysisSuccessful', 'RolloutComplete']));
}, 180_000);

test('a bad revision is rolled back after its first round: every partition back to replicas, nothing left on v2', async () => {
  const v1 = await rollOut('bad');
  const seen = await until('bad', 'the rollback', (c, g) => c.phase === 'RolledBack' && c.revision !== v1 && asUpdated(g) === 0);
  const back = seen[seen.length - 1];
  expect(back).toMatchObject({ reason: 'AnalysisFailed', rounds: 1 });
  expect(back.roles.map((r) => [r.name, r.partition, r.phase])).toEqual([['prefill', 4, 'RolledBack'], ['decode', 2, 'RolledBack']]);
  const failed = back.analysis!.verdicts.find((v) => v.phase === 'Failed')!;
  expect(failed.message).toMatch(/error-ratio failed .*> maximum 0\.05/);
  expect(await eventReasons('bad')).toEqual(expect.arrayContaining(['RolloutRound', 'AnalysisFailed', 'RolledBack']));
}, 180_000);

/** Updated replicas of every role, per the group's status. */
function asUpdated(group: KubeObject): number {
  return ((group.status as { roleStatuses?: { updatedReplicas?: number }[] })?.roleStatuses ?? []).reduce((s, r) => s + (r.updatedReplicas ?? 0), 0);
}
