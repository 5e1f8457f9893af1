/**
 * The three rollback triggers under executor `pulumi` (issue 33), once per RBG release (v0.7.0;
 * v0.6.0 with a `v1alpha1` group and StatefulSets; v0.8.0-alpha.5 with its real validating webhook,
 * which admits every write of the rollout and the rollback): the provider operations of
 * `RoleBasedGroupRollout` (what its dynamic provider runs during `pulumi up`; no Pulumi CLI, as in
 * cluster-pulumi-rbg-rollout.test.ts) drive the same `RbgRolloutReconciler` and engine as the
 * operator, on the test cluster with the release's real controller. The triggers: a release whose
 * pods start failing after its second round fails its second gate on a real Prometheus (the pods'
 * serving metrics are TEST-ONLY simulated per Ready pod, test/support/simulated-pod-metrics.ts); a
 * decode image the (kwok) kubelet cannot pull stalls the rollout until the coordination's progress
 * deadline rolls it back (`rollbackOnDeadline`; the Pulumi run's own `deadlineSeconds` is longer);
 * a person's `rayshift rollback rbg/NAME` while `update` runs; each at 4 prefill / 2 decode and at
 * 40 / 20 (kwok pods; maxSkew 10%, maxUnavailable 10%). Each time `update` goes on through
 * the rollback rounds, printing one line per round, then fails the deployment naming `RolledBack`,
 * with no replica left on the bad revision, every Ready pod back on v1, and every watched workload
 * state within maxSkew and maxUnavailable. Needs `npm run controlplane:build`,
 * `bash scripts/build-cluster.sh kwok rbg rbg-v06 rbg-v08` and `npm run prometheus:build`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import * as rollout from '../../lib/pulumi/rbg-rollout-operations';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { CoordinationStatus, readRolloutStatus } from '../../lib/runtime/rbg/status';
import { clusterStartTimeoutMs, TestCluster } from '../support/cluster';
import { PulumiRbgCluster, startPulumiRbgCluster } from '../support/pulumi-rbg-cluster';
import { RunningPrometheus, startPrometheus } from '../support/prometheus';
import { LARGE_PD, SMALL_PD, type PdShape } from '../support/rbg-pd-shapes';
import { checkRolloutStates } from '../support/rbg-rollback-states';
import { coordinationStatuses } from '../support/rbg-operator-group';
import { readyPodReleases } from '../support/rbg-pod-releases';
import { RBG_RELEASES } from '../support/rbg-releases';
import { WorkloadRecorder } from '../support/rbg-workload-recorder';
import { SimulatedPodMetrics, VERSION_LABEL, startSimulatedPodMetrics } from '../support/simulated-pod-metrics';
import { waitFor } from '../support/wait-at-most';
import { rayshiftIn } from '../cli/cli-io';

const NS = 'default';
/** The share of requests each release fails (simulated): a gate case's release starts failing when the test says so (v2, v5); the others are good. */
const ERROR_RATIO: Record<string, number> = { v1: 0, v2: 0, v3: 0, v4: 0, v5: 0, v6: 0, v7: 0 };
/** The coordination's progress deadline with `rollbackOnDeadline` (trigger `deadline`), seconds. */
const PROGRESS_DEADLINE_SECONDS = 20;
/**
 * What starts the rollback: the gate failing after round 2 (its release turns bad then), the
 * progress deadline (decode's new image cannot be pulled, so its updated replica never becomes
 * ready), or a person's `rayshift rollback rbg/NAME` while round 1 waits for its (hourly) gate.
 */
type Trigger = 'gate' | 'deadline' | 'verb';
/** Per trigger: the release rolled out at 4 / 2 and at 40 / 20, the coordination's failure reason, and the rounds written before the rollback (the deadline's depend on when the stuck decode replicas hold the rollout). */
const CASES: Record<Trigger, { readonly tags: readonly [small: string, large: string]; readonly reason: string; readonly rounds?: number }> = {
  gate: { tags: ['v2', 'v5'], reason: 'AnalysisFailed', rounds: 2 },
  deadline: { tags: ['v3', 'v6'], reason: 'ProgressDeadlineExceeded' },
  verb: { tags: ['v4', 'v7'], reason: 'RollbackRequested', rounds: 1 },
};

describe.each(RBG_RELEASES)('RBG $name', (release) => {
  let env: PulumiRbgCluster;
  let cluster: TestCluster;
  let admin: KubeClient;
  let applier: KubeClient;
  let kubeconfig: string;
  let metrics: SimulatedPodMetrics;
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    // The gate cases' releases start good again for each RBG release (one process runs them all).
    Object.assign(ERROR_RATIO, { v2: 0, v5: 0 });
    env = await startPulumiRbgCluster({ rbg: release.rbg, nodes: 2 });
    ({ cluster, admin, applier, kubeconfig } = env);
    metrics = await startSimulatedPodMetrics(admin, { namespace: NS, requestsPerSecond: 20, errorRatio: (v) => ERROR_RATIO[v] ?? 0 });
    prometheus = await startPrometheus({ targets: { pods: [metrics.target] }, scrapeInterval: '500ms' });
  }, clusterStartTimeoutMs(release.rbg));

  afterAll(async () => {
    await prometheus?.stop();
    await metrics?.close();
    await env?.stop();
  }, 60_000);

  /**
   * Group `name` of `shape` at `tag` as the construct synthesizes it for executor `pulumi`. From v2
   * on gated (the verb's gate measures only once an hour), except for trigger `deadline`: ungated,
   * decode's image unpullable, the progress deadline rolling it back.
   */
  function group(name: string, tag: string, trigger: Trigger, shape: PdShape): KubeObject {
    const select = `namespace="{{namespace}}",group="{{service}}",app_kubernetes_io_version="${tag}"`;
    const stuck = trigger === 'deadline' && tag !== 'v1';
    const chart = Testing.chart();
    new RoleBasedGroup(chart, 'g', {
      metadata: { name, namespace: NS },
      version: release.version,
      rbgVersion: release.rbgVersion,
      executor: 'pulumi',
      roles: Object.entries(shape.replicas).map(([role, n]) => ({
        name: role,
        replicas: n,
        template: { metadata: { labels: { [VERSION_LABEL]: tag } }, spec: { containers: [{ name: role, image: `sglang:${tag}${stuck && role === 'decode' ? '-unpullable' : ''}` }] } },
      })),
      coordination: [{ name: 'pd', roles: Object.keys(shape.replicas), rollingUpdate: { maxSkew: `${shape.maxSkewPercent}%`, maxUnavailable: shape.maxUnavailableSpec }, ...(trigger === 'deadline' ? { progressDeadlineSeconds: PROGRESS_DEADLINE_SECONDS, rollbackOnDeadline: true } : { progressDeadlineSeconds: 180 }) }],
      ...(tag === 'v1' || stuck
        ? {}
        : {
            analysis: {
              prometheusUrl: prometheus.address,
              metrics: [{ name: 'error-ratio', query: `sum(rate(simulated_pod_errors_total{${select}}[{{window}}])) / sum(rate(simulated_pod_requests_total{${select}}[{{window}}]))`, successCondition: { maximum: 0.05 }, intervalSeconds: trigger === 'verb' ? 3600 : 2, windowSeconds: 3, count: 2 }],
              onFailure: 'rollback' as const,
            },
          }),
    });
    return (Testing.synth(chart) as KubeObject[])[0];
  }

  /** The provider's inputs: the Pulumi run's own deadline (240 s) is well past the coordination's progress deadline. */
  function inputs(name: string, specHash: string): rollout.RbgRolloutInputs {
    return { apiVersion: release.groupType.apiVersion, name, namespace: NS, specHash, deadlineSeconds: 240, pollMs: 100, kubeconfig };
  }

  /** One `update` whose run deadline (`deadlineSeconds` 0) passes right after its first pass: its error message. */
  const onePass = (name: string, tag: string) => rollout.update({}, { ...inputs(name, tag), deadlineSeconds: 0 }).then(() => 'settled', (e: Error) => e.message);

  /**
   * Group `name` of `shape` created at v1 by `create`, then `update` to the trigger's release, which `trigger`
   * rolls back: `update` fails naming `RolledBack`, no replica is left on the new revision, every
   * watched state is within maxSkew and maxUnavailable, and every rollback round was printed once, in
   * order. With `cut` (trigger `verb`), the rollout runs as one-pass `pulumi up`s (each ended by its
   * run deadline), the one after the verb ends with the rollback under way, and the next `update`
   * resumes it.
   */
  async function rolledBack(name: string, trigger: Trigger, shape: PdShape, cut = false): Promise<void> {
    const { reason, rounds } = CASES[trigger];
    const tag = CASES[trigger].tags[shape === SMALL_PD ? 0 : 1];
    const roles = Object.keys(shape.replicas);
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await applier.apply(group(name, 'v1', trigger, shape), { force: true });
      await rollout.create({}, inputs(name, 'v1'));
      const v1Revision = Object.fromEntries(await Promise.all(roles.map(async (r) => [r, String(((await admin.get(release.workloadType, `${name}-${r}`, NS)).status as any)?.updateRevision)])));
      const first = readRolloutStatus(await admin.get(release.groupType, name, NS))!.coordinations[0].revision;
      const recorder = new WorkloadRecorder(admin, NS, name, roles, { workload: release.workloadType, group: release.groupType });
      try {
        await applier.apply(group(name, tag, trigger, shape), { force: true });
        const t0 = Date.now();
        let outcome = cut ? undefined : rollout.update({}, inputs(name, tag)).then(() => 'settled', (e: Error) => e.message);
        if (trigger === 'gate') {
          // The release turns bad once its second round is written: the second gate fails on its pods' errors.
          await coordinationStatuses(admin, release.groupType, NS, name, 'round 2 to be written', (c) => c.revision !== first && c.rounds >= 2);
          ERROR_RATIO[tag] = 0.4;
        } else if (trigger === 'verb') {
          // Round 1 waits for its hourly gate, every replica of the round updated and ready: a person rolls it back from there, between two of update's passes.
          const steady = (c: CoordinationStatus) => c.revision !== first && c.rounds >= 1 && c.reason === 'WaitingForAnalysis' && c.roles.every((r) => r.ready === r.desired && r.updated === r.desired - r.partition);
          if (cut) {
            // Each `pulumi up` makes one pass, then its run deadline passes: the rollout moves only between them.
            await waitFor(async () => {
              const ended = await onePass(name, tag);
              // Named as the run's deadline, not the coordination's progress deadline (an unexpected ending fails at once);
              // a pass whose status write met a conflict names the group's last written status, v1's until round 1.
              expect(ended).toMatch(new RegExp(`^RoleBasedGroup ${NS}/${name}: the Pulumi run's deadline \\(deadlineSeconds 0\\) passed before the rollout completed: pd (Progressing|Complete) `));
              const c = readRolloutStatus(await admin.get(release.groupType, name, NS))?.coordinations[0];
              return (c !== undefined && steady(c)) || `at ${c ? JSON.stringify([c.phase, c.reason, c.rounds]) : 'no status'}`;
            }, `${name}: round 1 to wait for its analysis, one pass per run`, { timeoutMs: 120_000, everyMs: 200 });
          } else {
            await coordinationStatuses(admin, release.groupType, NS, name, 'round 1 to wait for its analysis', steady);
          }
          const cli = await rayshiftIn(['rollback', `rbg/${name}`, '-n', NS, '--kubeconfig', cluster.cp.kubeconfigPath]);
          expect(cli).toMatchObject({ code: 0, stdout: `RoleBasedGroup ${NS}/${name} rolling back: every coordinated role returns to the revision before the rollout, in tandem\n` });
          if (cut) {
            // The run after the verb writes the first rollback round and ends there, saying so (after runs whose pass met a
            // conflicting write, which say where the rollout stood); the next one resumes the rollback.
            let ended = '';
            await waitFor(async () => {
              ended = await onePass(name, tag);
              return !ended.includes('passed before the rollout completed: pd Progressing (round 1)') || ended;
            }, `${name}: a run to start the rollback`, { timeoutMs: 60_000, everyMs: 200 });
            expect(ended).toMatch(new RegExp(`^RoleBasedGroup ${NS}/${name}: the Pulumi run's deadline \\(deadlineSeconds 0\\) passed while a rollback was under way, which stops here with replicas still on the abandoned revision: pd RollingBack \\(round 1, rollback round 1\\): .*; the next \`pulumi up\` resumes the rollback`));
            expect(readRolloutStatus(await admin.get(release.groupType, name, NS))!.coordinations[0]).toMatchObject({ phase: 'RollingBack', rollback: { rounds: 1 } });
            outcome = rollout.update({}, inputs(name, tag)).then(() => 'settled', (e: Error) => e.message);
          }
        }
        const message = await outcome;
        const end = Date.now();
        expect(message).toMatch(new RegExp(`^RoleBasedGroup ${NS}/${name}: ${reason}: pd RolledBack \\(round ${rounds ?? '\\d+'}, rollback round \\d+\\): prefill 0/${shape.replicas.prefill}, decode 0/${shape.replicas.decode} on the abandoned revision`));
        const back = readRolloutStatus(await admin.get(release.groupType, name, NS))!.coordinations[0];
        expect(back).toMatchObject({ phase: 'RolledBack', reason, ...(rounds !== undefined ? { rounds } : {}) });
        expect(back.rollback!.rounds).toBeGreaterThan(0);
        if (trigger === 'deadline') expect(back.rollback!.cause).toMatch(new RegExp(`^no progress for ${PROGRESS_DEADLINE_SECONDS}s, blocked by decode`));
        if (trigger === 'verb') expect(back.rollback!.cause).toMatch(/^rollback requested by /);
        expect(back.roles.map((r) => [r.name, r.replicasByRevision])).toEqual(roles.map((r) => [r, { abandoned: 0, previous: shape.replicas[r as 'prefill' | 'decode'] }]));
        // The rollback rounds were printed as the rounds are, one line each, in order (with `cut`, over both runs: none skipped or repeated).
        const printed = log.mock.calls.map((c) => new RegExp(` RollingBack \\(round ${back.rounds}, rollback round (\\d+)\\)`).exec(String(c[0]))?.[1]).filter((n) => n !== undefined).map(Number);
        expect(printed).toEqual(Array.from({ length: back.rollback!.rounds }, (_, i) => i + 1));
        // Every state of the workloads from the new release's apply on, out and back: in tandem and within maxUnavailable.
        const { states, over, lines } = checkRolloutStates(recorder.since(0), roles, v1Revision, shape.maxSkewPercent, shape.maxUnavailable);
        if (over.length > 0) process.stdout.write(`[cluster-pulumi-rbg-rollback] states:\n${lines}\n`);
        expect(over).toEqual([]);
        expect(states.length).toBeGreaterThan(0);
        // Every Ready pod runs v1 again (v0.8: the last ordinals were reverted in place, not recreated).
        const all = shape.replicas.prefill + shape.replicas.decode;
        await waitFor(async () => {
          const releases = await readyPodReleases(admin, NS, name);
          return JSON.stringify(releases) === JSON.stringify({ 'v1/v1': all }) || `Ready pods carry ${JSON.stringify(releases)}`;
        }, `${name}: every Ready pod back on v1`, { timeoutMs: 60_000, everyMs: 500 });
        process.stdout.write(`[cluster-pulumi-rbg-rollback] ${release.name} ${trigger} ${shape.replicas.prefill}/${shape.replicas.decode}${cut ? ' (run cut mid-rollback)' : ''}: ${back.rollback!.rounds} rollback round(s) after round ${back.rounds}; update ran ${end - t0} ms from the ${tag} apply to RolledBack, the rollback ${end - Date.parse(back.rollback!.startedAt)} ms of it; ${states.length} workload states checked\n`);
      } finally {
        recorder.stop();
      }
    } finally {
      log.mockRestore();
    }
  }

  test('a gate failing at the second round: `update` runs the rollback rounds, then fails naming RolledBack; no replica is left on v2, every state within maxSkew and maxUnavailable', () =>
    cluster.printLogsOnFailure(() => rolledBack('pd-gate', 'gate', SMALL_PD)), 300_000);

  test('a decode image that cannot be pulled stalls the rollout; at the progress deadline `rollbackOnDeadline` makes `update` run the rollback rounds, then fail naming RolledBack, every state within maxSkew and maxUnavailable', () =>
    cluster.printLogsOnFailure(() => rolledBack('pd-deadline', 'deadline', SMALL_PD)), 300_000);

  test('a person\'s `rayshift rollback rbg/NAME` while `update` runs: `update` runs the same rollback rounds, then fails naming RolledBack, every state within maxSkew and maxUnavailable', () =>
    cluster.printLogsOnFailure(() => rolledBack('pd-verb', 'verb', SMALL_PD)), 300_000);

  test('the Pulumi run\'s deadline passing during the verb\'s rollback: that run fails saying the rollback stops under way, the next `update` resumes it without skipping or repeating a round and fails naming RolledBack', () =>
    cluster.printLogsOnFailure(() => rolledBack('pd-verb-cut', 'verb', SMALL_PD, true)), 300_000);

  test('40 prefill / 20 decode, maxSkew 10%, maxUnavailable 10%: the gate failing at the second round, rolled back in tandem under `update`', () =>
    cluster.printLogsOnFailure(() => rolledBack('large-gate', 'gate', LARGE_PD)), 300_000);

  test('40 prefill / 20 decode: the progress deadline with `rollbackOnDeadline`, rolled back in tandem under `update`', () =>
    cluster.printLogsOnFailure(() => rolledBack('large-deadline', 'deadline', LARGE_PD)), 300_000);

  test('40 prefill / 20 decode: a person\'s `rayshift rollback rbg/NAME` while `update` runs, rolled back in tandem rounds of at most 4 prefill and 2 decode', () =>
    cluster.printLogsOnFailure(() => rolledBack('large-verb', 'verb', LARGE_PD)), 300_000);
});
