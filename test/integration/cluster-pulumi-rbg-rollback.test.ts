/**
 * A failed gate rolls a RoleBasedGroup back under executor `pulumi` (issue 33), once per RBG release
 * (v0.7.0; v0.6.0 with a `v1alpha1` group and StatefulSets; v0.8.0-alpha.5 with its real validating
 * webhook, which admits every write of the rollout and the rollback): the provider operations of
 * `RoleBasedGroupRollout` (what its dynamic provider runs during `pulumi up`; no Pulumi CLI, as in
 * cluster-pulumi-rbg-rollout.test.ts) drive the same `RbgRolloutReconciler` and engine as the
 * operator, on the test cluster with the release's real controller. A release whose pods start
 * failing after its second round fails its second gate on a real Prometheus (the pods' serving
 * metrics are TEST-ONLY simulated per Ready pod, test/support/simulated-pod-metrics.ts); `update`
 * goes on through the rollback rounds, then fails the deployment naming `RolledBack`, with no
 * replica left on the bad revision, every Ready pod back on v1, and every watched workload state
 * within maxSkew and maxUnavailable. Needs `npm run controlplane:build`,
 * `bash scripts/build-cluster.sh kwok rbg rbg-v06 rbg-v08` and `npm run prometheus:build`.
 */
import * as fs from 'node:fs';
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import * as rollout from '../../lib/pulumi/rbg-rollout-operations';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { readRolloutStatus } from '../../lib/runtime/rbg/status';
import { startTestCluster, TestCluster } from '../support/cluster';
import { RunningPrometheus, startPrometheus } from '../support/prometheus';
import { checkRolloutStates } from '../support/rbg-rollback-states';
import { coordinationStatuses } from '../support/rbg-operator-group';
import { readyPodReleases } from '../support/rbg-pod-releases';
import { RBG_RELEASES } from '../support/rbg-releases';
import { WorkloadRecorder } from '../support/rbg-workload-recorder';
import { SimulatedPodMetrics, VERSION_LABEL, startSimulatedPodMetrics } from '../support/simulated-pod-metrics';
import { waitFor } from '../support/wait-at-most';

const NS = 'default';
const NAME = 'pd-pulumi';
const REPLICAS = { prefill: 4, decode: 2 };
/** The share of requests each release fails (simulated): v2 starts failing when the test says so. */
const ERROR_RATIO: Record<string, number> = { v1: 0, v2: 0 };

describe.each(RBG_RELEASES)('RBG $name', (release) => {
  let cluster: TestCluster;
  let admin: KubeClient;
  let applier: KubeClient;
  let kubeconfig: string;
  let metrics: SimulatedPodMetrics;
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    // v2 starts good again for each RBG release (one process runs them all).
    ERROR_RATIO.v2 = 0;
    cluster = await startTestCluster({ rbg: release.rbg, nodes: 2 });
    admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
    applier = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'pulumi-kubernetes-test' });
    kubeconfig = fs.readFileSync(cluster.cp.kubeconfigPath, 'utf8');
    metrics = await startSimulatedPodMetrics(admin, { namespace: NS, requestsPerSecond: 20, errorRatio: (v) => ERROR_RATIO[v] ?? 0 });
    prometheus = await startPrometheus({ targets: { pods: [metrics.target] }, scrapeInterval: '500ms' });
  }, 300_000);

  afterAll(async () => {
    await prometheus?.stop();
    await metrics?.close();
    admin?.close();
    applier?.close();
    await cluster?.stop();
  }, 60_000);

  /** The group at `tag` as the construct synthesizes it for executor `pulumi`: rounds of 2 prefill and 1 decode (maxSkew 1%), gated from v2 on. */
  function group(tag: string): KubeObject {
    const select = `namespace="{{namespace}}",group="{{service}}",app_kubernetes_io_version="${tag}"`;
    const chart = Testing.chart();
    new RoleBasedGroup(chart, 'g', {
      metadata: { name: NAME, namespace: NS },
      version: release.version,
      rbgVersion: release.rbgVersion,
      executor: 'pulumi',
      roles: Object.entries(REPLICAS).map(([role, n]) => ({
        name: role,
        replicas: n,
        template: { metadata: { labels: { [VERSION_LABEL]: tag } }, spec: { containers: [{ name: role, image: `sglang:${tag}` }] } },
      })),
      coordination: [{ name: 'pd', roles: Object.keys(REPLICAS), rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 }, progressDeadlineSeconds: 180 }],
      ...(tag === 'v1'
        ? {}
        : {
            analysis: {
              prometheusUrl: prometheus.address,
              metrics: [{ name: 'error-ratio', query: `sum(rate(simulated_pod_errors_total{${select}}[{{window}}])) / sum(rate(simulated_pod_requests_total{${select}}[{{window}}]))`, successCondition: { maximum: 0.05 }, intervalSeconds: 2, windowSeconds: 3, count: 2 }],
              onFailure: 'rollback' as const,
            },
          }),
    });
    return (Testing.synth(chart) as KubeObject[])[0];
  }

  function inputs(specHash: string): rollout.RbgRolloutInputs {
    return { apiVersion: release.groupType.apiVersion, name: NAME, namespace: NS, specHash, deadlineSeconds: 240, pollMs: 100, kubeconfig };
  }

  test('a gate failing at the second round: `update` runs the rollback rounds, then fails naming RolledBack; no replica is left on v2, every state within maxSkew and maxUnavailable', () =>
    cluster.printLogsOnFailure(async () => {
      const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      try {
        await applier.apply(group('v1'), { force: true });
        await rollout.create({}, inputs('v1'));
        const v1Revision = Object.fromEntries(await Promise.all(Object.keys(REPLICAS).map(async (r) => [r, String(((await admin.get(release.workloadType, `${NAME}-${r}`, NS)).status as any)?.updateRevision)])));
        const first = readRolloutStatus(await admin.get(release.groupType, NAME, NS))!.coordinations[0].revision;
        const recorder = new WorkloadRecorder(admin, NS, NAME, Object.keys(REPLICAS), { workload: release.workloadType, group: release.groupType });
        try {
          await applier.apply(group('v2'), { force: true });
          const t0 = Date.now();
          const update = rollout.update({}, inputs('v2'));
          const outcome = update.then(() => 'settled', (e: Error) => e.message);
          // v2 turns bad once its second round is written: the second gate fails on its pods' errors.
          await coordinationStatuses(admin, release.groupType, NS, NAME, 'round 2 to be written', (c) => c.revision !== first && c.rounds >= 2);
          ERROR_RATIO.v2 = 0.4;
          const message = await outcome;
          const wall = Date.now() - t0;
          expect(message).toMatch(new RegExp(`^RoleBasedGroup ${NS}/${NAME}: AnalysisFailed: pd RolledBack \\(round 2, rollback round \\d+\\): prefill 0/4, decode 0/2 on the abandoned revision`));
          const back = readRolloutStatus(await admin.get(release.groupType, NAME, NS))!.coordinations[0];
          expect(back).toMatchObject({ phase: 'RolledBack', reason: 'AnalysisFailed', rounds: 2 });
          expect(back.roles.map((r) => [r.name, r.replicasByRevision])).toEqual([['prefill', { abandoned: 0, previous: 4 }], ['decode', { abandoned: 0, previous: 2 }]]);
          // The rollback rounds were printed as the rounds are, one line each.
          const printed = log.mock.calls.map((c) => String(c[0])).filter((l) => / RollingBack \(round 2, rollback round \d+\)/.test(l));
          expect(printed.length).toBe(back.rollback!.rounds);
          // Every state of the workloads from the v2 apply on, out and back: in tandem and within maxUnavailable.
          const { states, over, lines } = checkRolloutStates(recorder.since(0), Object.keys(REPLICAS), v1Revision, 1, 1);
          if (over.length > 0) process.stdout.write(`[cluster-pulumi-rbg-rollback] states:\n${lines}\n`);
          expect(over).toEqual([]);
          expect(states.length).toBeGreaterThan(0);
          // Every Ready pod runs v1 again (v0.8: the last ordinals were reverted in place, not recreated).
          const all = REPLICAS.prefill + REPLICAS.decode;
          await waitFor(async () => {
            const releases = await readyPodReleases(admin, NS, NAME);
            return JSON.stringify(releases) === JSON.stringify({ 'v1/v1': all }) || `Ready pods carry ${JSON.stringify(releases)}`;
          }, `${NAME}: every Ready pod back on v1`, { timeoutMs: 60_000, everyMs: 500 });
          process.stdout.write(`[cluster-pulumi-rbg-rollback] ${release.name}: ${back.rollback!.rounds} rollback round(s) after round 2; update ran ${wall} ms from the v2 apply to RolledBack; ${states.length} workload states checked\n`);
        } finally {
          recorder.stop();
        }
      } finally {
        log.mockRestore();
      }
    }), 300_000);
});
