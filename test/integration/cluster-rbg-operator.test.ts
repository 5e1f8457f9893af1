/**
 * Executor `operator` against RBG's real workloads, once per release (v0.7.0's RoleInstanceSets of a
 * `v1alpha2` group, v0.6.0's StatefulSets of a `v1alpha1` group; test/support/rbg-releases.ts): RBG's
 * controller (`rbgs` in test/support/cluster.ts) turns each role of a group synthesized by the
 * `RoleBasedGroup` construct with `executor: 'operator'` into a workload and Pods, which
 * kube-scheduler and kwok run to Ready; rayshift's operator (its RBG controller, in this process)
 * moves the roles' partitions round by round and RBG carries them into the workloads. A watch
 * records every state of the workloads (the true counts, which RBG's own `roleStatuses` let go
 * stale; test/support/rbg-operator-group.ts). A role that never becomes ready is a new image the
 * kubelet cannot pull (kwok's `pod-image-pull-failure` stage); AffinityScheduling's batches are
 * placed by the real scheduler. Where the releases differ the assertions say so: a RoleInstanceSet
 * honours `paused`, a StatefulSet ignores it and is held by its partition alone
 * (`workloadHonoursPaused`). Needs `npm run controlplane:build` and
 * `bash scripts/build-cluster.sh kwok rbg rbg-v06`.
 */
import { ChildProcess } from 'node:child_process';
import { KubeClient } from '../../lib/runtime/kube/client';
import { readRolloutStatus } from '../../lib/runtime/rbg/status';
import { workloadHonoursPaused } from '../../lib/spec/rbg-releases';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { getWhen, startTestCluster, TestCluster } from '../support/cluster';
import { eventReasons } from '../support/event-reasons';
import { expectCompleteStatusScreen, spawnRbgController } from '../support/rbg-child-processes';
import { RBG_RELEASES } from '../support/rbg-releases';
import { GroupState, WorkloadState } from '../support/rbg-workload-recorder';
import { coordinationWhen, expectPartitionsNeverRaised, expectSkewWithin, GroupContext, GroupUnderTest, Rule } from '../support/rbg-operator-group';

const NS = 'default';
const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
/**
 * The releases these cases run on: v0.7.0 and v0.6.0. v0.8.0-alpha.5's rollouts under its real webhook
 * run in cluster-rbg-v08-webhook.test.ts (one v0.8 cluster per machine at a time: its webhook port is fixed).
 */
const RELEASES = RBG_RELEASES.filter((r) => r.rbg !== 'v0.8');

describe.each(RELEASES)('RBG $name', (release) => {
  let cluster: TestCluster;
  let admin: KubeClient;
  let gitops: KubeClient;
  let controller: RbgRolloutController | undefined;
  /** Watches to stop after the suite (workload recorders and group watches). */
  const recorders: { stop(): void }[] = [];
  let ctx: GroupContext;
  const children = new Set<ChildProcess>();
  /** The release's workloads honour `paused` (RoleInstanceSets); a StatefulSet is held by its partition alone. */
  const honoursPaused = workloadHonoursPaused(release.workloadType.kind);
  /** A workload that releases nothing more of the new revision: paused, or (a StatefulSet) held at a partition of every replica. */
  const heldAtEvery = (w: WorkloadState) => (honoursPaused ? w.paused : w.partition >= w.replicas);

  beforeAll(async () => {
    cluster = await startTestCluster({ rbg: release.rbg, nodes: 2 });
    admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
    gitops = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'gitops' });
    ctx = { cluster, admin, gitops, namespace: NS, watches: recorders, release };
    controller = new RbgRolloutController({ client: admin, log: SILENT });
    await controller.start();
  }, 300_000);

  /** A group of this suite under the operator (test/support/rbg-operator-group.ts). */
  function group(name: string, replicas: Record<string, number>, rule: Rule, workloads?: Record<string, number>): GroupUnderTest {
    return new GroupUnderTest(ctx, name, replicas, rule, workloads);
  }

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const r of recorders) r.stop();
    await controller?.stop();
    admin?.close();
    gitops?.close();
    await cluster?.stop();
  }, 60_000);

  test('12 prefill / 6 decode at maxSkew 10%: every workload state passes RBG\'s skew check; no partition rises; the rollout completes in rounds', () =>
    cluster.printLogsOnFailure(async () => {
      const g = group('pd-12-6', { prefill: 12, decode: 6 }, { rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%' }, progressDeadlineSeconds: 180 });
      await g.create();
      await g.changeTemplate();
      const done = await g.complete();
      const states = g.rollout();
      const worst = expectSkewWithin(g, states, 10);
      expectPartitionsNeverRaised(g, states);
      expect(worst).toBeGreaterThan(0); // the workloads did move at different times: the bound was exercised
      expect(done.rounds).toBeGreaterThan(1);
      // Whether a round lowers both roles together depends on the counts RBG's workloads report at
      // each wake-up (one CI run wrote 12/6 → 12/5 → 9/5), so it is not asserted here; the engine's
      // rounds are (test/engine).
      expect(g.written.length).toBeGreaterThan(2);
    }));

  test('7 prefill / 3 decode at maxSkew 1% complete within RBG\'s skew check; `rayshift status rbg/NAME` shows it', () =>
    cluster.printLogsOnFailure(async () => {
      const g = group('pd-7-3', { prefill: 7, decode: 3 }, { rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 }, progressDeadlineSeconds: 180 });
      await g.create();
      await g.changeTemplate();
      const done = await g.complete();
      expectSkewWithin(g, g.rollout(), 1);
      expectPartitionsNeverRaised(g, g.rollout());
      expect(done.roles.map((r) => [r.name, r.updated, r.partition, r.phase])).toEqual([
        ['prefill', 7, 0, 'Complete'],
        ['decode', 3, 0, 'Complete'],
      ]);
      expectCompleteStatusScreen(cluster.cp.kubeconfigPath, NS);
    }));

  test('single-replica roles complete (upstream #307 stalled them): held paused when the new revision lands, then released by a round', () =>
    cluster.printLogsOnFailure(async () => {
      const g = group('pd-1-1', { prefill: 1, decode: 1 }, { rollingUpdate: { maxSkew: '10%' }, progressDeadlineSeconds: 180 });
      await g.create();
      await g.changeTemplate();
      await g.complete();
      const states = g.rollout();
      // RBG carried the new template into the held workloads: nothing updated until the operator's round.
      expect(states.some((s) => heldAtEvery(s.prefill) && s.prefill.updateRevision !== g.v1Revision.prefill && s.prefill.updated === 0)).toBe(true);
      expectPartitionsNeverRaised(g, states);
    }));

  /** A new decode image the kubelet cannot pull (kwok's `pod-image-pull-failure` stage): decode never becomes ready at v2. */
  const DECODE_UNPULLABLE = { default: 'sglang:v2', byRole: { decode: 'sglang:v2-unpullable' } };

  test('a decode image the kubelet cannot pull halts prefill within the skew bound; the progress deadline fires, names decode and stops every role', () =>
    cluster.printLogsOnFailure(async () => {
      const g = group('pd-stuck', { prefill: 12, decode: 6 }, { rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%' }, progressDeadlineSeconds: 20 });
      await g.create();
      await g.changeTemplate(DECODE_UNPULLABLE);
      const failed = await coordinationWhen(ctx, g.name, 'the progress deadline', (c) => c?.phase === 'Failed');
      expect(failed).toMatchObject({ reason: 'ProgressDeadlineExceeded', blockingRole: 'decode' });
      expect(failed.message).toMatch(/blocked by decode/);
      // Decode's updated replicas never become ready (the pull fails), and the operator stops every role.
      // A StatefulSet ignores `paused`: there the stop is the paused roles on the group, and no partition lowered after it.
      const stopped = await g.recorder.until('every workload stopped, decode\'s updated replicas not ready', (s) => g.roles.every((r) => !honoursPaused || s[r].paused) && s.decode.updated > 0 && s.decode.ready === 6 - s.decode.updated, 60_000, g.from);
      const stored = await admin.get(release.groupType, g.name, NS);
      expect(((stored.spec as any).roles as any[]).map((r) => [r.name, r.rolloutStrategy.rollingUpdate.paused])).toEqual([['prefill', true], ['decode', true]]);
      const states = g.rollout();
      expect(stopped.prefill.updated).toBeLessThan(12);
      expectSkewWithin(g, states, 10);
      expectPartitionsNeverRaised(g, states);
      const reasons = await eventReasons(admin, NS, g.name, ['RolloutRound', 'ProgressDeadlineExceeded']);
      expect(reasons).toEqual(expect.arrayContaining(['RolloutRound', 'ProgressDeadlineExceeded']));
    }));

  test('with rollbackOnDeadline a stuck rollout is rolled back in tandem: every replica returns to v1, each state within maxSkew and maxUnavailable', () =>
    cluster.printLogsOnFailure(async () => {
      const g = group('pd-rollback', { prefill: 6, decode: 3 }, { rollingUpdate: { maxSkew: '40%', maxUnavailable: 1 }, progressDeadlineSeconds: 20, rollbackOnDeadline: true });
      await g.create();
      await g.changeTemplate(DECODE_UNPULLABLE);
      const started = await coordinationWhen(ctx, g.name, 'the rollback to start', (c) => c?.rollback !== undefined);
      const t1 = Date.now();
      const back = await coordinationWhen(ctx, g.name, 'the rollback to end', (c) => c?.phase === 'RolledBack');
      const wall = Date.now() - t1;
      expect(started).toMatchObject({ reason: 'ProgressDeadlineExceeded', blockingRole: 'decode' });
      expect(back.roles.map((r) => [r.name, r.phase, r.replicasByRevision])).toEqual([
        ['prefill', 'RolledBack', { abandoned: 0, previous: 6 }],
        ['decode', 'RolledBack', { abandoned: 0, previous: 3 }],
      ]);
      // The workloads agree: nothing on v2 (decode's unpullable replicas included), every replica ready.
      const home = (st: GroupState) => g.roles.every((r) => st[r].observed && st[r].updateRevision !== g.v1Revision[r] && st[r].updated === 0 && st[r].ready === g.workloads[r]);
      await g.recorder.until('every workload back on v1 and ready', home, 60_000, g.from);
      const states = g.rollout().filter((st) => g.roles.every((r) => st[r].observed));
      expectSkewWithin(g, states, 40);
      for (const st of states) for (const r of g.roles) expect({ role: r, down: Math.min(st[r].replicas - st[r].ready, 1) }).toEqual({ role: r, down: st[r].replicas - st[r].ready });
      const reasons = await eventReasons(admin, NS, g.name, ['ProgressDeadlineExceeded', 'RollbackRound', 'RolledBack']);
      expect(reasons).toEqual(expect.arrayContaining(['ProgressDeadlineExceeded', 'RollbackRound', 'RolledBack']));
      process.stdout.write(`[cluster-rbg-operator] rollbackOnDeadline: ${back.rollback!.rounds} rollback round(s) in ${wall} ms, ${states.length} workload states checked\n`);
    }));

  /** Node of each Ready pod of group `name`, by its AffinityScheduling batch label. */
  async function nodesByBatch(name: string): Promise<Record<string, string[]>> {
    const pods = await cluster.cp.request('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`rayshift.dev/group=${name}`)}`);
    const byBatch: Record<string, string[]> = {};
    for (const p of pods.body.items as any[]) (byBatch[p.metadata.labels['affinity.rayshift.dev/pd']] ??= []).push(p.spec.nodeName);
    return byBatch;
  }

  const AFFINITY_WORKLOADS = { 'prefill-b0': 2, 'prefill-b1': 2, 'decode-b0': 1, 'decode-b1': 1 };

  test('AffinityScheduling 2:1 Sequential: kube-scheduler places each batch\'s pods on one Node, and batch 1 rolls only once batch 0 is updated and ready', () =>
    cluster.printLogsOnFailure(async () => {
      const g = group('pd-affinity', { prefill: 4, decode: 2 }, { affinityScheduling: { ratios: { prefill: 2, decode: 1 }, batchMode: 'Sequential' }, rollingUpdate: { maxSkew: '50%' }, progressDeadlineSeconds: 180 }, AFFINITY_WORKLOADS);
      await g.create();
      const placed = await nodesByBatch(g.name);
      expect(Object.keys(placed).sort()).toEqual(['b0', 'b1']);
      for (const [batch, nodes] of Object.entries(placed)) expect({ batch, nodes: new Set(nodes).size, pods: nodes.length }).toEqual({ batch, nodes: 1, pods: 3 });
      await g.changeTemplate();
      const done = await g.complete();
      expect(done.wave).toEqual({ current: 2, total: 2 });
      const states = g.rollout();
      const firstOfBatch1 = states.find((s) => s['prefill-b1'].updated + s['decode-b1'].updated > 0);
      expect(firstOfBatch1).toBeDefined();
      for (const r of ['prefill-b0', 'decode-b0']) expect([r, firstOfBatch1![r].updated, firstOfBatch1![r].ready]).toEqual([r, g.workloads[r], g.workloads[r]]);
    }));

  test('AffinityScheduling Parallel: both batches roll at once', () =>
    cluster.printLogsOnFailure(async () => {
      const g = group('pd-affinity-par', { prefill: 4, decode: 2 }, { affinityScheduling: { ratios: { prefill: 2, decode: 1 }, batchMode: 'Parallel' }, rollingUpdate: { maxSkew: '50%' }, progressDeadlineSeconds: 180 }, AFFINITY_WORKLOADS);
      await g.create();
      await g.changeTemplate();
      await g.complete();
      // The operator's first release of v2 (its writes on the group, in the group's role order) lowers batch 1 with batch 0.
      const order: string[] = ((await admin.get(release.groupType, g.name, NS)).spec as any).roles.map((r: any) => r.name);
      const writes = g.written.map((pair) => Object.fromEntries(pair.split('/').map((p, i) => [order[i], Number(p)])));
      const first = writes.find((w) => order.some((r) => w[r] < g.workloads[r]));
      expect(first && order.map((r) => [r, first[r] < g.workloads[r]])).toEqual(order.map((r) => [r, true]));
    }));

  test('the operator killed mid-rollout (SIGKILL of its process) resumes from the group and never moves a partition backwards', () =>
    cluster.printLogsOnFailure(async () => {
      await controller?.stop();
      controller = undefined;
      const g = group('pd-crash', { prefill: 12, decode: 6 }, { rollingUpdate: { maxSkew: '10%', maxUnavailable: 1 }, progressDeadlineSeconds: 180 });
      const spawnController = () => {
        const child = spawnRbgController(cluster.cp.kubeconfigPath, release.version);
        children.add(child);
        return child;
      };
      let child = spawnController();
      await g.create();
      await g.changeTemplate();
      const mid = await coordinationWhen(ctx, g.name, 'round 2 in progress', (c) => (c?.rounds ?? 0) >= 2 && c?.phase === 'Progressing');
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      children.delete(child);
      child = spawnController();
      const done = await g.complete();
      child.kill('SIGKILL');
      children.delete(child);
      expect(done.rounds).toBeGreaterThan(mid.rounds);
      expectPartitionsNeverRaised(g, g.rollout());
      expectSkewWithin(g, g.rollout(), 10);
    }), 300_000);

  test('removing the executor label hands the group back: RBG\'s workloads are unpaused and the status annotation goes', () =>
    cluster.printLogsOnFailure(async () => {
      controller ??= new RbgRolloutController({ client: admin, log: SILENT });
      await controller.start();
      const g = group('pd-handover', { prefill: 4, decode: 2 }, { rollingUpdate: { maxSkew: '10%' }, progressDeadlineSeconds: 180 });
      await g.create();
      const from = g.recorder.history.length - 1;
      await admin.patchJson(release.groupType, g.name, NS, [{ op: 'remove', path: '/metadata/labels/rayshift.dev~1coordination-executor' }]);
      const handed = await getWhen(cluster, `/apis/${release.groupType.apiVersion}/namespaces/${NS}/${release.groupType.plural}/${g.name}`, `${g.name}: the status annotation removed`, (body, status) => (status !== 200 ? `HTTP ${status}` : readRolloutStatus(body) === undefined ? undefined : 'status annotation present'));
      // The roles are handed back unpaused at the user's floor, 0 (for a StatefulSet, lowered from the arming partition = replicas).
      expect(((handed.spec as any).roles as any[]).map((r) => [r.name, r.rolloutStrategy.rollingUpdate.paused, r.rolloutStrategy.rollingUpdate.partition])).toEqual([['prefill', false, 0], ['decode', false, 0]]);
      if (!honoursPaused) return; // v0.6.0 resets its StatefulSets to partition = replicas on that change and lowers them only on a later reconcile (docs/rbg-coordination.md, *Testing*)
      const back = await g.recorder.until('every workload unpaused', (s) => g.roles.every((r) => !s[r].paused), 60_000, from);
      expect(g.roles.map((r) => back[r].partition)).toEqual([0, 0]);
    }));
});
