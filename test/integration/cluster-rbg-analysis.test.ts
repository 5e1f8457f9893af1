/**
 * Metric-gated coordinated rollouts against RBG's real workloads (issue 18, beside issue 16's test
 * cluster), once per release: RBG's controller (v0.7.0; v0.6.0 with a `v1alpha1` group) turns a
 * group synthesized by the `RoleBasedGroup` construct with `executor: 'operator'` and an `analysis`
 * into RoleInstanceSets (v0.6.0: StatefulSets) and Pods, which
 * kube-scheduler and kwok run to Ready; rayshift's RBG controller moves the partitions round by
 * round and gates each round after the first on a real Prometheus. The pods run no server, so their
 * serving metrics are TEST-ONLY simulated per Ready pod and labelled as a PodMonitor would
 * (test/support/simulated-pod-metrics.ts): the queries select the new release by the version label
 * of the role template, which RBG's in-place update carries onto the pods. Needs
 * `npm run controlplane:build`, `bash scripts/build-cluster.sh kwok rbg rbg-v06` and `npm run prometheus:build`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes, KubeObject, ResourceType } from '../../lib/runtime/kube/types';
import type { CoordinationStatus } from '../../lib/runtime/rbg/status';
import type { UpgradeAnalysis } from '../../lib/spec/analysis';
import { RBG_V1ALPHA1_TYPE, RBG_V1ALPHA2_TYPE, ROLE_INSTANCE_SET_TYPE, RbgResourceType } from '../../lib/spec/object-names';
import type { RbgRelease, RoleBasedGroupVersion } from '../../lib/spec/rbg';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { ClusterRbg, startTestCluster, TestCluster } from '../support/cluster';
import { coordinationStatuses } from '../support/rbg-operator-group';
import { RunningPrometheus, startPrometheus } from '../support/prometheus';
import { SimulatedPodMetrics, VERSION_LABEL, startSimulatedPodMetrics } from '../support/simulated-pod-metrics';
import { rbgSkewCheck } from '../support/rbg-skew-check';
import { WorkloadRecorder } from '../support/rbg-workload-recorder';
import { waitFor } from '../support/wait-at-most';

const NS = 'default';
const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
/** Each group's roles: 4 prefill / 2 decode, or 40 / 20 for the groups named so. */
const sizesOf = (name: string): Record<'prefill' | 'decode', number> => (name.endsWith('-40-20') ? { prefill: 40, decode: 20 } : { prefill: 4, decode: 2 });
/** The share of requests each release fails (simulated); v4 and v5 start failing when the test says so. */
const ERROR_RATIO: Record<string, number> = { v1: 0, v2: 0.001, v3: 0.4, v4: 0, v5: 0 };

/** One RBG release under test: its build, its group API version, and the kinds of its group and workloads. */
interface Release {
  readonly name: string;
  readonly rbg: ClusterRbg;
  readonly rbgVersion: RbgRelease;
  readonly version: RoleBasedGroupVersion;
  readonly groupType: RbgResourceType;
  readonly workloadType: ResourceType;
}

const STATEFUL_SET_TYPE: ResourceType = { apiVersion: 'apps/v1', kind: 'StatefulSet', plural: 'statefulsets', namespaced: true };
const RELEASES: readonly Release[] = [
  { name: 'v0.7.0', rbg: 'v0.7', rbgVersion: 'v0.7', version: 'v1alpha2', groupType: RBG_V1ALPHA2_TYPE, workloadType: ROLE_INSTANCE_SET_TYPE },
  { name: 'v0.6.0', rbg: 'v0.6', rbgVersion: 'v0.6', version: 'v1alpha1', groupType: RBG_V1ALPHA1_TYPE, workloadType: STATEFUL_SET_TYPE },
];

describe.each(RELEASES)('RBG $name', (release) => {
  let cluster: TestCluster;
  let admin: KubeClient;
  let controller: RbgRolloutController | undefined;
  let metrics: SimulatedPodMetrics;
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    // The releases that turn bad start good again for each RBG release (one process runs them all).
    Object.assign(ERROR_RATIO, { v4: 0, v5: 0 });
    cluster = await startTestCluster({ rbg: release.rbg, nodes: 2 });
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
   * The group at `tag` as the construct synthesizes it: executor `operator`, the roles kept at
   * the same share (maxSkew 1%: rounds of 2 prefill and 1 decode), gated from v2 on. A looser skew
   * lets the first round release every replica (each workload's own maxUnavailable paces it), and
   * once every pod is updated RBG makes the new revision current: nothing is left to gate or to roll
   * back to.
   */
  function synthesize(name: string, tag: string): KubeObject {
    const chart = Testing.chart();
    new RoleBasedGroup(chart, 'g', {
      metadata: { name, namespace: NS },
      version: release.version,
      rbgVersion: release.rbgVersion,
      executor: 'operator',
      roles: Object.entries(sizesOf(name)).map(([role, n]) => ({
        name: role,
        replicas: n,
        template: { metadata: { labels: { [VERSION_LABEL]: tag } }, spec: { containers: [{ name: role, image: `sglang:${tag}` }] } },
      })),
      coordination: [{ name: 'pd', roles: Object.keys(sizesOf(name)), rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 }, progressDeadlineSeconds: 180 }],
      ...(tag === 'v1' ? {} : { analysis: analysis(tag) }),
    });
    return (Testing.synth(chart) as KubeObject[])[0];
  }

  /** Polls the group's coordination status until `done` holds; returns every distinct status seen. */
  function until(name: string, what: string, done: (c: CoordinationStatus) => boolean, timeoutMs = 180_000): Promise<CoordinationStatus[]> {
    return coordinationStatuses(admin, release.groupType, NS, name, what, done, timeoutMs);
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
    const all = sizesOf(name).prefill + sizesOf(name).decode;
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
      expect(await podReleases('good')).toEqual({ 'v2/v2': sizesOf('good').prefill + sizesOf('good').decode });
    }));

  /**
   * Group `name` at v1, then `tag`, which fails its gate after `rounds` rounds (`turnBad` makes it
   * fail then, when it does not from the start): the rollback returns every replica to v1, every state
   * of the RoleInstanceSets from a watch within the skew check and maxUnavailable.
   */
  async function rolledBack(name: string, tag: string, rounds: number, turnBad?: () => void): Promise<void> {
    const REPLICAS = sizesOf(name);
      const first = await createAtV1(name);
      const v1Revision = Object.fromEntries(await Promise.all(Object.keys(REPLICAS).map(async (r) => [r, String(((await admin.get(release.workloadType, `${name}-${r}`, NS)).status as any)?.updateRevision)])));
      const recorder = new WorkloadRecorder(admin, NS, name, Object.keys(REPLICAS), { workload: release.workloadType, group: release.groupType });
      try {
        const t0 = Date.now();
        await admin.apply(synthesize(name, tag), { force: true });
        if (turnBad) {
          await until(name, `round ${rounds} to be written`, (c) => c.revision !== first && c.rounds >= rounds);
          turnBad();
        }
        const rolling = await until(name, 'the rollback to start', (c) => c.revision !== first && c.rollback !== undefined);
        const t1 = Date.now();
        const seen = await until(name, 'the rollback to end', (c) => c.phase === 'RolledBack' && c.revision !== first);
        const back = seen[seen.length - 1];
        const wall = Date.now() - t1;
        expect(back).toMatchObject({ reason: 'AnalysisFailed', rounds });
        expect(back.rollback!.rounds).toBeGreaterThan(0);
        expect(back.roles.map((r) => [r.name, r.phase, r.replicasByRevision])).toEqual([
          ['prefill', 'RolledBack', { abandoned: 0, previous: REPLICAS.prefill }],
          ['decode', 'RolledBack', { abandoned: 0, previous: REPLICAS.decode }],
        ]);
        expect(back.conditions).toEqual([expect.objectContaining({ type: 'RolledBack', status: 'True' })]);
        const failed = back.analysis!.verdicts.find((v) => v.phase === 'Failed')!;
        expect(failed.message).toMatch(/error-ratio failed .*> maximum 0\.05/);
        // Every rollback round went out as an Event on the group.
        const events = await admin.list({ apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true }, { namespace: NS });
        const roundEvents = events.items.filter((e) => (e as any).regarding?.name === name && (e as any).reason === 'RollbackRound');
        expect(roundEvents).toHaveLength(back.rollback!.rounds);
        // Every Ready pod runs v1 again: none is left on the abandoned release.
        const all = REPLICAS.prefill + REPLICAS.decode;
        await waitFor(async () => {
          const releases = await podReleases(name);
          return JSON.stringify(releases) === JSON.stringify({ 'v1/v1': all }) || `Ready pods carry ${JSON.stringify(releases)}`;
        }, `${name}: every Ready pod back on v1`, { timeoutMs: 60_000, everyMs: 500 });
        // Every state of the RoleInstanceSets seen from the watch from the new release's apply on (the
        // rollout's rounds and the way back): the roles' shares on the new release within RBG's skew
        // check, at most maxUnavailable (1) down. A workload still on v1's template has none on the
        // new release (RBG writes the template into one workload after the other); one that has not
        // observed its latest spec counts against its previous template and says nothing.
        const recorded = recorder.since(0);
        const from = recorded.findIndex((st) => Object.keys(REPLICAS).some((r) => st[r] !== undefined && st[r].updateRevision !== v1Revision[r]));
        const states = recorded
          .slice(from)
          .filter((st) => Object.keys(REPLICAS).every((r) => st[r] !== undefined && st[r].observed))
          .map((st) => Object.fromEntries(Object.keys(REPLICAS).map((r) => [r, { ...st[r], updated: st[r].updateRevision === v1Revision[r] ? 0 : st[r].updated }])));
        const brief = (st: (typeof states)[number]) => Object.keys(REPLICAS).map((r) => `${r} p${st[r].partition}${st[r].paused ? 'P' : ''} u${st[r].updated} r${st[r].ready}/${st[r].replicas}${st[r].observed ? '' : ' (unobserved)'}`).join(', ');
        const over = states.flatMap((st, i) => {
          const roles = Object.keys(REPLICAS).map((r) => ({ name: r, desired: st[r].replicas, updatedReplicas: st[r].updated }));
          const skew = rbgSkewCheck(1, roles).ok ? [] : [`state ${i} over the skew bound: ${brief(st)}`];
          const down = Object.keys(REPLICAS).filter((r) => st[r].replicas - st[r].ready > 1).map((r) => `state ${i}: ${r} has ${st[r].replicas - st[r].ready} down: ${brief(st)}`);
          return [...skew, ...down];
        });
        if (over.length > 0) process.stdout.write(`[cluster-rbg-analysis] states:\n${states.map((st, i) => `  ${i} ${brief(st)}`).join('\n')}\n`);
        expect(over).toEqual([]);
        process.stdout.write(`[cluster-rbg-analysis] ${release.name} ${name}: rollback after round ${rounds}: ${back.rollback!.rounds} rollback round(s) in ${wall} ms (gate failed ${t1 - t0} ms after the template change); ${states.length} workload states checked; statuses ${JSON.stringify(seen.map((c) => [c.phase, c.rollback?.rounds, c.roles.map((r) => `${r.name}:${r.partition}/${r.replicasByRevision?.abandoned ?? r.updated}`).join(' ')]))}\n`);
        expect(rolling.length).toBeGreaterThan(0);
      } finally {
        recorder.stop();
      }
  }

  test('a bad release fails its first gate on its own pods\' errors and is rolled back in tandem: every replica returns to v1, each state within maxSkew and maxUnavailable', () =>
    cluster.printLogsOnFailure(() => rolledBack('bad', 'v3', 1)));

  test('a release that turns bad after its second round fails its second gate and is rolled back in tandem the same way', () =>
    cluster.printLogsOnFailure(() => rolledBack('late', 'v4', 2, () => (ERROR_RATIO.v4 = 0.4))));

  test('40 prefill / 20 decode: a release that turns bad after its second round is rolled back in tandem the same way', () =>
    cluster.printLogsOnFailure(() => rolledBack('late-40-20', 'v5', 2, () => (ERROR_RATIO.v5 = 0.4))), 300_000);

});
