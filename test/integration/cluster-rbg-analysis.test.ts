/**
 * Metric-gated coordinated rollouts against RBG's real workloads (issue 18, beside issue 16's test
 * cluster), once per release: RBG's controller (v0.7.0; v0.6.0 with a `v1alpha1` group; v0.8.0-alpha.5
 * with its real validating webhook, which admits every write of the rollouts and rollbacks) turns a
 * group synthesized by the `RoleBasedGroup` construct with `executor: 'operator'` and an `analysis`
 * into RoleInstanceSets (v0.6.0: StatefulSets) and Pods, which
 * kube-scheduler and kwok run to Ready; rayshift's RBG controller moves the partitions round by
 * round and gates each round after the first on a real Prometheus. The pods run no server, so their
 * serving metrics are TEST-ONLY simulated per Ready pod and labelled as a PodMonitor would
 * (test/support/simulated-pod-metrics.ts): the queries select the new release by the version label
 * of the role template, which RBG's in-place update carries onto the pods. Needs
 * `npm run controlplane:build`, `bash scripts/build-cluster.sh kwok rbg rbg-v06 rbg-v08` and `npm run prometheus:build`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import type { CoordinationStatus } from '../../lib/runtime/rbg/status';
import type { UpgradeAnalysis } from '../../lib/spec/analysis';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { clusterStartTimeoutMs, startTestCluster, TestCluster } from '../support/cluster';
import { RBG_RELEASES } from '../support/rbg-releases';
import { coordinationStatuses } from '../support/rbg-operator-group';
import { RunningPrometheus, startPrometheus } from '../support/prometheus';
import { SimulatedPodMetrics, VERSION_LABEL, startSimulatedPodMetrics } from '../support/simulated-pod-metrics';
import { LARGE_PD, SMALL_PD, type PdShape } from '../support/rbg-pd-shapes';
import { checkRolloutStates } from '../support/rbg-rollback-states';
import { WorkloadRecorder } from '../support/rbg-workload-recorder';
import { readyPodReleases } from '../support/rbg-pod-releases';
import { waitFor } from '../support/wait-at-most';
import { rayshiftIn } from '../cli/cli-io';

const NS = 'default';
const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
/** The share of requests each release fails (simulated); v4 and v6 start failing when the test says so; v5 is good, and a person rolls it back. */
const ERROR_RATIO: Record<string, number> = { v1: 0, v2: 0.001, v3: 0.4, v4: 0, v5: 0, v6: 0 };
/** Releases whose gate measures only once an hour: the rollout waits for its analysis after its first round. */
const SLOW_GATE = new Set(['v5']);
/**
 * What starts the rollback: the release's gate failing (`turnBad` makes it fail after the rounds,
 * when it does not from the start), a person's `rayshift rollback rbg/NAME` after them, or the
 * progress deadline with `rollbackOnDeadline` (the new decode image cannot be pulled, so decode's
 * updated replicas never become ready and the rollout stops making progress).
 */
type Trigger = { readonly by: 'gate'; readonly turnBad?: () => void } | { readonly by: 'verb' } | { readonly by: 'deadline' };
/** The reason of a rollback each trigger starts. */
const REASON: Record<Trigger['by'], string> = { gate: 'AnalysisFailed', verb: 'RollbackRequested', deadline: 'ProgressDeadlineExceeded' };

describe.each(RBG_RELEASES)('RBG $name', (release) => {
  let cluster: TestCluster;
  let admin: KubeClient;
  let controller: RbgRolloutController | undefined;
  let metrics: SimulatedPodMetrics;
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    // The releases that turn bad start good again for each RBG release (one process runs them all).
    Object.assign(ERROR_RATIO, { v4: 0, v6: 0 });
    cluster = await startTestCluster({ rbg: release.rbg, nodes: 2 });
    admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
    metrics = await startSimulatedPodMetrics(admin, { namespace: NS, requestsPerSecond: 20, errorRatio: (v) => ERROR_RATIO[v] ?? 0 });
    prometheus = await startPrometheus({ targets: { pods: [metrics.target] }, scrapeInterval: '500ms' });
    controller = new RbgRolloutController({ client: admin, log: SILENT });
    await controller.start();
  }, clusterStartTimeoutMs(release.rbg));

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
        intervalSeconds: SLOW_GATE.has(release) ? 3600 : 2,
        windowSeconds: 3,
        count: 2,
      }],
      onFailure: 'rollback',
    };
  }

  /**
   * The group at `tag` as the construct synthesizes it: executor `operator`, the roles kept at the
   * same share (`shape`), gated from v2 on; with `stuck`, ungated, decode's image unpullable and a
   * 20 s progress deadline with `rollbackOnDeadline`.
   */
  function synthesize(name: string, tag: string, shape: PdShape = SMALL_PD, stuck = false): KubeObject {
    const chart = Testing.chart();
    new RoleBasedGroup(chart, 'g', {
      metadata: { name, namespace: NS },
      version: release.version,
      rbgVersion: release.rbgVersion,
      executor: 'operator',
      roles: Object.entries(shape.replicas).map(([role, n]) => ({
        name: role,
        replicas: n,
        template: { metadata: { labels: { [VERSION_LABEL]: tag } }, spec: { containers: [{ name: role, image: `sglang:${tag}${stuck && role === 'decode' ? '-unpullable' : ''}` }] } },
      })),
      coordination: [{ name: 'pd', roles: Object.keys(shape.replicas), rollingUpdate: { maxSkew: `${shape.maxSkewPercent}%`, maxUnavailable: shape.maxUnavailableSpec }, ...(stuck ? { progressDeadlineSeconds: 20, rollbackOnDeadline: true } : { progressDeadlineSeconds: 180 }) }],
      ...(tag === 'v1' || stuck ? {} : { analysis: analysis(tag) }),
    });
    return (Testing.synth(chart) as KubeObject[])[0];
  }

  /** Polls the group's coordination status until `done` holds; returns every distinct status seen. */
  function until(name: string, what: string, done: (c: CoordinationStatus) => boolean, timeoutMs = 180_000): Promise<CoordinationStatus[]> {
    return coordinationStatuses(admin, release.groupType, NS, name, what, done, timeoutMs);
  }

  const podReleases = (name: string) => readyPodReleases(admin, NS, name);

  /** Creates the group at v1 and waits until the operator armed it and every pod serves v1. */
  async function createAtV1(name: string, shape: PdShape = SMALL_PD): Promise<string> {
    await admin.apply(synthesize(name, 'v1', shape), { force: true });
    const armed = await until(name, 'armed at v1', (c) => c.phase === 'Complete');
    const all = shape.replicas.prefill + shape.replicas.decode;
    await waitFor(async () => {
      const releases = JSON.stringify(await podReleases(name));
      return releases === JSON.stringify({ 'v1/v1': all }) || `pods ${releases}`;
    }, `${name}: ${all} pods Ready at v1`, { timeoutMs: 120_000, everyMs: 500 });
    // The workloads' own counts lag their Pods (a RoleInstanceSet counts its instances' readiness):
    // the rollout starts from a group whose workloads say every replica is ready, as the operator
    // reads them, so the states checked from the new release on are the rollout's own.
    await waitFor(async () => {
      const counts = await Promise.all(Object.entries(shape.replicas).map(async ([r, n]) => [r, Number(((await admin.get(release.workloadType, `${name}-${r}`, NS)).status as any)?.readyReplicas ?? 0), n] as const));
      return counts.every(([, ready, n]) => ready === n) || `workloads report ${counts.map(([r, ready, n]) => `${r} ${ready}/${n}`).join(', ')} ready`;
    }, `${name}: workloads report every replica ready at v1`, { timeoutMs: 120_000, everyMs: 500 });
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
      expect(await podReleases('good')).toEqual({ 'v2/v2': SMALL_PD.replicas.prefill + SMALL_PD.replicas.decode });
    }));

  /**
   * Group `name` at v1, then `tag`, which is rolled back after `rounds` rounds (its gate fails, or a
   * person rolls it back): the rollback returns every replica to v1, every state of the workloads
   * from a watch within the skew check and maxUnavailable.
   */
  async function rolledBack(name: string, tag: string, rounds: number | undefined, trigger: Trigger, shape: PdShape = SMALL_PD): Promise<void> {
    const replicas = shape.replicas;
    const first = await createAtV1(name, shape);
    const v1Revision = Object.fromEntries(await Promise.all(Object.keys(replicas).map(async (r) => [r, String(((await admin.get(release.workloadType, `${name}-${r}`, NS)).status as any)?.updateRevision)])));
    const recorder = new WorkloadRecorder(admin, NS, name, Object.keys(replicas), { workload: release.workloadType, group: release.groupType });
    try {
      const t0 = Date.now();
      await admin.apply(synthesize(name, tag, shape, trigger.by === 'deadline'), { force: true });
      if (trigger.by === 'verb') {
        // The rollout waits for its (slow) gate after round 1, every replica of the round updated and
        // ready: a person rolls it back from there.
        const steady = (c: CoordinationStatus) => c.roles.every((r) => r.ready === r.desired && r.updated === r.desired - r.partition);
        await until(name, `round ${rounds} to wait for its analysis`, (c) => c.revision !== first && c.rounds >= (rounds ?? 1) && c.reason === 'WaitingForAnalysis' && steady(c));
        const cli = await rayshiftIn(['rollback', `rbg/${name}`, '-n', NS, '--kubeconfig', cluster.cp.kubeconfigPath]);
        expect(cli).toMatchObject({ code: 0, stdout: `RoleBasedGroup ${NS}/${name} rolling back: every coordinated role returns to the revision before the rollout, in tandem\n` });
      } else if (trigger.by === 'gate' && trigger.turnBad) {
        await until(name, `round ${rounds} to be written`, (c) => c.revision !== first && c.rounds >= (rounds ?? 1));
        trigger.turnBad();
      }
      const rolling = await until(name, 'the rollback to start', (c) => c.revision !== first && c.rollback !== undefined);
      const t1 = Date.now();
      const seen = await until(name, 'the rollback to end', (c) => c.phase === 'RolledBack' && c.revision !== first);
      const back = seen[seen.length - 1];
      const wall = Date.now() - t1;
      // At the deadline the rollout's rounds are those it made before decode's unready replicas held it.
      expect(back).toMatchObject({ reason: REASON[trigger.by], ...(rounds !== undefined ? { rounds } : {}) });
      expect(back.rounds).toBeGreaterThanOrEqual(1);
      expect(back.rollback!.rounds).toBeGreaterThan(0);
      expect(back.roles.map((r) => [r.name, r.phase, r.replicasByRevision])).toEqual([
        ['prefill', 'RolledBack', { abandoned: 0, previous: replicas.prefill }],
        ['decode', 'RolledBack', { abandoned: 0, previous: replicas.decode }],
      ]);
      expect(back.conditions).toEqual([expect.objectContaining({ type: 'RolledBack', status: 'True' })]);
      if (trigger.by === 'gate') {
        const failed = back.analysis!.verdicts.find((v) => v.phase === 'Failed')!;
        expect(failed.message).toMatch(/error-ratio failed .*> maximum 0\.05/);
      } else if (trigger.by === 'deadline') {
        expect(back.rollback!.cause).toMatch(/^no progress for 20s, blocked by decode/);
      } else {
        expect(back.rollback!.cause).toMatch(/^rollback requested by /);
        // A second rollback of the same group is refused: nothing is in flight any more.
        const again = await rayshiftIn(['rollback', `rbg/${name}`, '-n', NS, '--kubeconfig', cluster.cp.kubeconfigPath]);
        expect(again).toMatchObject({ code: 1, stderr: `error: cannot rollback RoleBasedGroup ${NS}/${name}: nothing to rollback: no rollout is in flight (pd RolledBack)\n` });
      }
      // Every rollback round went out as an Event on the group.
      const events = await admin.list({ apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true }, { namespace: NS });
      const roundEvents = events.items.filter((e) => (e as any).regarding?.name === name && (e as any).reason === 'RollbackRound');
      expect(roundEvents).toHaveLength(back.rollback!.rounds);
      // Every Ready pod runs v1 again: none is left on the abandoned release.
      const all = replicas.prefill + replicas.decode;
      await waitFor(async () => {
        const releases = await podReleases(name);
        return JSON.stringify(releases) === JSON.stringify({ 'v1/v1': all }) || `Ready pods carry ${JSON.stringify(releases)}`;
      }, `${name}: every Ready pod back on v1`, { timeoutMs: 60_000, everyMs: 500 });
      // Every state of the workloads seen from the watch from the new release's apply on (the
      // rollout's rounds and the way back): within RBG's skew check at maxSkew, at most maxUnavailable down.
      const { states, over, lines } = checkRolloutStates(recorder.since(0), Object.keys(replicas), v1Revision, shape.maxSkewPercent, shape.maxUnavailable);
      if (over.length > 0) process.stdout.write(`[cluster-rbg-analysis] states:\n${lines}\n`);
      expect(over).toEqual([]);
      process.stdout.write(`[cluster-rbg-analysis] ${release.name} ${name}: rollback after round ${back.rounds}: ${back.rollback!.rounds} rollback round(s) in ${wall} ms (${REASON[trigger.by]} ${t1 - t0} ms after the template change); ${states.length} workload states checked; statuses ${JSON.stringify(seen.map((c) => [c.phase, c.rollback?.rounds, c.roles.map((r) => `${r.name}:${r.partition}/${r.replicasByRevision?.abandoned ?? r.updated}`).join(' ')]))}\n`);
      expect(rolling.length).toBeGreaterThan(0);
    } finally {
      recorder.stop();
    }
  }

  test('a bad release fails its first gate on its own pods\' errors and is rolled back in tandem: every replica returns to v1, each state within maxSkew and maxUnavailable', () =>
    cluster.printLogsOnFailure(() => rolledBack('bad', 'v3', 1, { by: 'gate' })));

  test('a release that turns bad after its second round fails its second gate and is rolled back in tandem the same way', () =>
    cluster.printLogsOnFailure(() => rolledBack('late', 'v4', 2, { by: 'gate', turnBad: () => (ERROR_RATIO.v4 = 0.4) })));

  test('40 prefill / 20 decode, maxSkew 10%, maxUnavailable 10%: a release that turns bad after its second round is rolled back in tandem the same way', () =>
    cluster.printLogsOnFailure(() => rolledBack('late-large', 'v6', 2, { by: 'gate', turnBad: () => (ERROR_RATIO.v6 = 0.4) }, LARGE_PD)), 300_000);

  test('a person\'s `rayshift rollback rbg/NAME` mid-rollout starts the same tandem rollback rounds: every replica returns to v1, each state within maxSkew and maxUnavailable', () =>
    cluster.printLogsOnFailure(() => rolledBack('steered', 'v5', 1, { by: 'verb' })));

  test('the verb at 40 prefill / 20 decode, maxSkew 10%, maxUnavailable 10%: every replica returns to v1 in tandem rounds of at most 4 prefill and 2 decode', () =>
    cluster.printLogsOnFailure(() => rolledBack('steered-large', 'v5', 1, { by: 'verb' }, LARGE_PD)), 300_000);

  test('a decode image that cannot be pulled stalls the rollout; at the progress deadline `rollbackOnDeadline` rolls both roles back in tandem: every replica returns to v1, each state within maxSkew and maxUnavailable', () =>
    cluster.printLogsOnFailure(() => rolledBack('stuck', 'v7', undefined, { by: 'deadline' })));

  test('the deadline at 40 prefill / 20 decode, maxSkew 10%, maxUnavailable 10%: the same tandem rollback', () =>
    cluster.printLogsOnFailure(() => rolledBack('stuck-large', 'v7', undefined, { by: 'deadline' }, LARGE_PD)), 300_000);
});
