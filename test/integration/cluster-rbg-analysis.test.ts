/**
 * Metric-gated coordinated rollouts against RBG's real workloads (issue 18, beside issue 16's test
 * cluster): RBG's controller (v0.7.0) turns a group synthesized by the `RoleBasedGroup` construct
 * with `executor: 'operator'` and an `analysis` into RoleInstanceSets and Pods, which
 * kube-scheduler and kwok run to Ready; rayshift's RBG controller moves the partitions round by
 * round and gates each round after the first on a real Prometheus. The pods run no server, so their
 * serving metrics are TEST-ONLY simulated per Ready pod and labelled as a PodMonitor would
 * (test/support/simulated-pod-metrics.ts): the queries select the new release by the version label
 * of the role template, which RBG's in-place update carries onto the pods. Needs
 * `npm run controlplane:build`, `bash scripts/build-cluster.sh kwok rbg` and `npm run prometheus:build`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes, KubeObject } from '../../lib/runtime/kube/types';
import { CoordinationStatus, readRolloutStatus } from '../../lib/runtime/rbg/status';
import type { UpgradeAnalysis } from '../../lib/spec/analysis';
import { RBG_V1ALPHA2_TYPE } from '../../lib/spec/object-names';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { startTestCluster, TestCluster } from '../support/cluster';
import { RunningPrometheus, startPrometheus } from '../support/prometheus';
import { SimulatedPodMetrics, VERSION_LABEL, startSimulatedPodMetrics } from '../support/simulated-pod-metrics';
import { waitFor } from '../support/wait-at-most';

const NS = 'default';
const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
const REPLICAS = { prefill: 4, decode: 2 };
/** The share of requests each release fails (simulated). */
const ERROR_RATIO: Record<string, number> = { v1: 0, v2: 0.001, v3: 0.4 };

let cluster: TestCluster;
let admin: KubeClient;
let controller: RbgRolloutController | undefined;
let metrics: SimulatedPodMetrics;
let prometheus: RunningPrometheus;

beforeAll(async () => {
  cluster = await startTestCluster({ rbg: true, nodes: 2 });
  admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  metrics = await startSimulatedPodMetrics(admin, { namespace: NS, requestsPerSecond: 20, errorRatio: (v) => ERROR_RATIO[v] ?? 0 });
  prometheus = await startPrometheus({ targets: { pods: [metrics.target] }, scrapeInterval: '500ms' });
  controller = new RbgRolloutController({ client: admin, log: SILENT });
  await controller.start();
}, 300_000);

afterAll(async () => {
  await controller?.stop();
  await prometheus?.stop();
  await metrics?.close();
  admin?.close();
  await cluster?.stop();
}, 60_000);

/** The new release's error ratio, selected by its template's version label. */
function analysis(release: string): UpgradeAnalysis {
  const select = `namespace="{{namespace}}",group="{{service}}",app_kubernetes_io_version="${release}"`;
  return {
    prometheusUrl: prometheus.address,
    metrics: [{
      name: 'error-ratio',
      query: `sum(rate(simulated_pod_errors_total{${select}}[{{window}}])) / sum(rate(simulated_pod_requests_total{${select}}[{{window}}]))`,
      successCondition: { maximum: 0.05 },
      intervalSeconds: 2,
      windowSeconds: 3,
      count: 2,
    }],
    onFailure: 'rollback',
  };
}

/**
 * The group at `release` as the construct synthesizes it: executor `operator`, the roles kept at
 * the same share (maxSkew 1%: rounds of 2 prefill and 1 decode), gated from v2 on. A looser skew
 * lets the first round release every replica (each workload's own maxUnavailable paces it), and
 * once every pod is updated RBG makes the new revision current: nothing is left to gate or to roll
 * back to.
 */
function synthesize(name: string, release: string): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace: NS },
    executor: 'operator',
    roles: Object.entries(REPLICAS).map(([role, n]) => ({
      name: role,
      replicas: n,
      template: { metadata: { labels: { [VERSION_LABEL]: release } }, spec: { containers: [{ name: role, image: `sglang:${release}` }] } },
    })),
    coordination: [{ name: 'pd', roles: Object.keys(REPLICAS), rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 }, progressDeadlineSeconds: 180 }],
    ...(release === 'v1' ? {} : { analysis: analysis(release) }),
  });
  return (Testing.synth(chart) as KubeObject[])[0];
}

/** Polls the group's coordination status until `done` holds; returns every distinct status seen. */
async function until(name: string, what: string, done: (c: CoordinationStatus) => boolean, timeoutMs = 180_000): Promise<CoordinationStatus[]> {
  const seen: CoordinationStatus[] = [];
  await waitFor(async () => {
    const c = readRolloutStatus(await admin.get(RBG_V1ALPHA2_TYPE, name, NS))?.coordinations[0];
    if (c && JSON.stringify(c) !== JSON.stringify(seen[seen.length - 1])) seen.push(c);
    return (c !== undefined && done(c)) || `last status ${JSON.stringify(c)}`;
  }, `${name}: ${what}`, { timeoutMs, everyMs: 250 });
  return seen;
}

/** The releases the group's Ready pods carry, as `<version label>/<image tag>`, counted (`v1/v1: 6`). */
async function podReleases(name: string): Promise<Record<string, number>> {
  const pods = await admin.list(KnownTypes.Pod, { namespace: NS });
  const counts: Record<string, number> = {};
  for (const p of pods.items) {
    if (!String(p.metadata.name).startsWith(`${name}-`) || p.metadata.deletionTimestamp) continue;
    const ready = ((p.status as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    if (!ready) continue;
    const image = String(((p.spec as { containers?: { image?: string }[] })?.containers ?? [])[0]?.image ?? '?').replace('sglang:', '');
    const v = `${p.metadata.labels?.[VERSION_LABEL] ?? '?'}/${image}`;
    counts[v] = (counts[v] ?? 0) + 1;
  }
  return counts;
}

/** Creates the group at v1 and waits until the operator armed it and every pod serves v1. */
async function createAtV1(name: string): Promise<string> {
  await admin.apply(synthesize(name, 'v1'), { force: true });
  const armed = await until(name, 'armed at v1', (c) => c.phase === 'Complete');
  const all = REPLICAS.prefill + REPLICAS.decode;
  await waitFor(async () => {
    const releases = JSON.stringify(await podReleases(name));
    return releases === JSON.stringify({ 'v1/v1': all }) || `pods ${releases}`;
  }, `${name}: ${all} pods Ready at v1`, { timeoutMs: 120_000, everyMs: 500 });
  return armed[armed.length - 1].revision;
}

test('a good release completes on the real workloads; every round after the first waited for a passed measurement of its pods', () =>
  cluster.printLogsOnFailure(async () => {
    const first = await createAtV1('good');
    await admin.apply(synthesize('good', 'v2'), { force: true });
    const seen = await until('good', 'the v2 rollout to complete', (c) => c.phase === 'Complete' && c.revision !== first);
    const done = seen[seen.length - 1];
    process.stdout.write(`[cluster-rbg-analysis] good: ${JSON.stringify(seen.map((c) => [c.phase, c.reason, c.rounds, c.roles.map((r) => `${r.name}:${r.partition}/${r.updated}`).join(' ')]))}\n`);
    expect(done.rounds).toBeGreaterThan(1);
    expect(seen.some((c) => c.reason === 'WaitingForAnalysis')).toBe(true);
    const verdicts = done.analysis!.verdicts.map((v) => `${v.pendingWeight}:${v.phase}`);
    expect(verdicts.length).toBeGreaterThanOrEqual(done.rounds);
    expect(done.analysis!.verdicts.every((v) => v.phase === 'Successful')).toBe(true);
    expect(verdicts[verdicts.length - 1]).toBe('100:Successful');
    expect(await podReleases('good')).toEqual({ 'v2/v2': REPLICAS.prefill + REPLICAS.decode });
  }));

test('a bad release fails its first gate on its own pods\' errors: every partition raised to replicas, and RBG v0.7 keeps the first round\'s pods on it', () =>
  cluster.printLogsOnFailure(async () => {
    const first = await createAtV1('bad');
    await admin.apply(synthesize('bad', 'v3'), { force: true });
    const seen = await until('bad', 'the rollback', (c) => c.phase === 'RolledBack' && c.revision !== first);
    const back = seen[seen.length - 1];
    expect(back).toMatchObject({ reason: 'AnalysisFailed', rounds: 1 });
    expect(back.roles.map((r) => [r.name, r.partition, r.phase])).toEqual([['prefill', REPLICAS.prefill, 'RolledBack'], ['decode', REPLICAS.decode, 'RolledBack']]);
    const failed = back.analysis!.verdicts.find((v) => v.phase === 'Failed')!;
    expect(failed.message).toMatch(/error-ratio failed .*> maximum 0\.05/);
    // What RBG v0.7.0's RoleInstanceSets do with a partition raised to replicas: no further pod
    // moves to the bad release, but the pods the first round updated (2 prefill, 1 decode) stay on
    // it (unlike a Kruise CloneSet, they are not rolled back). Reverting the template does not
    // bring them back either: the operator releases every partition, but the RoleInstanceSet,
    // whose update revision is its current one again, leaves them (docs/analysis.md, the open
    // gap), so this asserts the state the rollback leaves.
    const round = { prefill: 2, decode: 1 };
    const updated = round.prefill + round.decode;
    const all = REPLICAS.prefill + REPLICAS.decode;
    let releases: Record<string, number> = {};
    await waitFor(async () => {
      releases = await podReleases('bad');
      return releases['v3/v3'] === updated && releases['v1/v1'] === all - updated;
    }, 'the pods to settle after the rollback', { timeoutMs: 10_000, everyMs: 500 }).catch(() => undefined); // the assertion below shows what they carry
    process.stdout.write(`[cluster-rbg-analysis] after the rollback the Ready pods carry ${JSON.stringify(releases)}\n`);
    expect(releases).toEqual({ 'v1/v1': all - updated, 'v3/v3': updated });
  }));
