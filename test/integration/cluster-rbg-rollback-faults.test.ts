/**
 * The rollback rounds of a RoleBasedGroup rollout survive the executor dying (issue 33's fault
 * suite), on the test cluster's real RBG controller, once per release (v0.7.0; v0.6.0 with a
 * `v1alpha1` group and StatefulSets; v0.8.0-alpha.5 with its real validating webhook): rayshift's
 * RBG controller runs as a child process (test/support/rbg-child-processes.ts); a 4 prefill / 2
 * decode rollout at maxUnavailable 1 with `rollbackOnDeadline`, whose decode image the kubelet
 * cannot pull (kwok's `pod-image-pull-failure` stage), reaches 3 prefill and 1 decode on v2 (each
 * role's last replica waits while a rollback is possible) and rolls back at its progress deadline;
 * the controller is SIGKILLed as soon as the first rollback round's Event is out, and a new one goes
 * on (or kube-apiserver is restarted then, under the running controller and RBG's). The rounds,
 * read from the Events and from the partitions written on the group, are exactly the three the
 * engine decides: none skipped or repeated. maxSkew is 100% so that the rounds depend on
 * maxUnavailable alone (one prefill replica per round, each once the one before is ready again; the
 * unready decode replica in the first): at 1% whether decode returns with prefill's second replica
 * or in a round of its own depends on when prefill's first returned replica is ready again (a run
 * wrote 4 rounds where a pass over settled workloads writes 3), which is the tandem suites'
 * business (cluster-rbg-analysis.test.ts), not this one's. The rounds are the same on every
 * release; the partitions written are not: v0.8's webhook admits none ≥ replicas, so there each
 * role's partition stops at replicas − 1 and its last ordinal is reverted in place (rounds 1 and 3
 * write 2/1 and 3/1 where the others write 2/2 and 4/2). On v0.6.0 a watch of the roles' Pods also
 * holds the way back to one replica of each role down at once (maxUnavailable 1): a StatefulSet's
 * readyReplicas counts a Pod being deleted while Ready, so only the Pods show two down (a Pod the
 * StatefulSet controller deletes on its own after the restart is reported apart). Needs `npm run controlplane:build` and
 * `bash scripts/build-cluster.sh kwok rbg rbg-v06 rbg-v08`.
 */
import { ChildProcess } from 'node:child_process';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes, KubeObject } from '../../lib/runtime/kube/types';
import { readRolloutStatus } from '../../lib/runtime/rbg/status';
import { clusterStartTimeoutMs, startTestCluster, TestCluster } from '../support/cluster';
import { spawnRbgController } from '../support/rbg-child-processes';
import { coordinationWhen, GroupContext, GroupUnderTest } from '../support/rbg-operator-group';
import { RBG_RELEASES } from '../support/rbg-releases';
import { waitFor } from '../support/wait-at-most';
import { watchStatefulSetPods } from '../support/statefulset-pod-availability';

const NS = 'default';

describe.each(RBG_RELEASES)('RBG $name', (release) => {
  let cluster: TestCluster;
  let admin: KubeClient;
  let gitops: KubeClient;
  let ctx: GroupContext;
  const watches: { stop(): void }[] = [];
  const children = new Set<ChildProcess>();

  beforeAll(async () => {
    // Watches must not hold kube-apiserver's graceful shutdown (the restart case) for 30 s.
    cluster = await startTestCluster({ rbg: release.rbg, nodes: 2, apiserverArgs: ['--shutdown-watch-termination-grace-period=2s'] });
    admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
    gitops = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'gitops' });
    ctx = { cluster, admin, gitops, namespace: NS, watches, release };
  }, clusterStartTimeoutMs(release.rbg));

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const w of watches) w.stop();
    admin?.close();
    gitops?.close();
    await cluster?.stop();
  }, 60_000);

  function spawnController(): ChildProcess {
    const child = spawnRbgController(cluster.cp.kubeconfigPath, release.version);
    children.add(child);
    return child;
  }

  async function kill(child: ChildProcess): Promise<void> {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    children.delete(child);
  }

  /** Each role's raw partition on the group, in role order (`4/2`). */
  function partitionsOf(group: KubeObject): string {
    return ((group.spec as any)?.roles ?? []).map((r: any) => r.rolloutStrategy?.rollingUpdate?.partition ?? 0).join('/');
  }

  /**
   * Group `name` rolled back at its deadline, `fault` striking as soon as the first rollback round's
   * Event is out (it returns the controller running once it is over): the way back ends with exactly
   * the three rounds, none skipped or repeated.
   */
  async function rollbackThrough(name: string, fault: (child: ChildProcess) => Promise<ChildProcess>, { apiServerRestarts = false } = {}): Promise<void> {
    let child = spawnController();
    const g = new GroupUnderTest(ctx, name, { prefill: 4, decode: 2 }, { rollingUpdate: { maxSkew: '100%', maxUnavailable: 1 }, progressDeadlineSeconds: 15, rollbackOnDeadline: true });
    await g.create();
    // The partitions written on the group, paused or not, in order (each role's raw partition).
    const partitions: string[] = [];
    const groupWatch = admin.watch(release.groupType, NS, (e) => {
      if (e.object.metadata.name !== name || e.type === 'delete') return;
      const pair = partitionsOf(e.object);
      if (partitions[partitions.length - 1] !== pair) partitions.push(pair);
    });
    watches.push(groupWatch);
    // StatefulSet roles (v0.6.0): each ordinal's Pod, from the first rollback round on (issue 33: at most maxUnavailable down at once).
    const pods = release.workloadType.kind === 'StatefulSet' ? watchStatefulSetPods(admin, NS, name, { prefill: 4, decode: 2 }) : undefined;
    if (pods) watches.push(pods);
    // Every RollbackRound Event about the group, in the order they are created; the first one brings the fault.
    const rounds: string[] = [];
    let firstRound: () => void = () => undefined;
    const roundOut = new Promise<void>((resolve) => (firstRound = resolve));
    const events = admin.watch(KnownTypes.Event, NS, (e) => {
      if (e.type !== 'add' || (e.object.regarding as { name?: string }).name !== name || e.object.reason !== 'RollbackRound') return;
      rounds.push(String(e.object.note));
      if (rounds.length === 1) pods?.from();
      firstRound();
    });
    watches.push(events);
    await g.changeTemplate({ default: 'sglang:v2', byRole: { decode: 'sglang:v2-unpullable' } });
    await roundOut;
    child = await fault(child);
    const t0 = Date.now();
    const back = await coordinationWhen(ctx, name, 'the rollback to end', (c) => c?.phase === 'RolledBack');
    const wall = Date.now() - t0;
    await kill(child);
    // Once every workload is back on v1 and ready, the Events seen are every round's.
    await g.recorder.until('every workload back on v1 and ready', (s) => g.roles.every((r) => s[r].observed && s[r].updateRevision !== g.v1Revision[r] && s[r].updated === 0 && s[r].ready === g.replicas[r]), 60_000, g.from);
    // After a restart the group watch resumes on its own schedule: the partitions are read once it has
    // seen the group as the server holds it now.
    const final = partitionsOf(await admin.get(release.groupType, name, NS));
    await waitFor(() => partitions[partitions.length - 1] === final || `the group watch last saw ${partitions[partitions.length - 1]}; the group holds ${final}`, `${name}: the group watch caught up`, { timeoutMs: 60_000, everyMs: 250 });
    // After a restart, kube-controller-manager's StatefulSet controller may delete a Pod from a cache
    // still being refilled (docs/rbg-coordination.md): that case holds rayshift's own returns to the bound.
    const down = pods?.worst({ exceptDeletedByOthers: apiServerRestarts });
    const downOfAll = pods?.worst();
    const others = down && JSON.stringify(downOfAll) !== JSON.stringify(down) ? `; with the Pods another actor deleted (*) ${JSON.stringify(downOfAll)}` : '';
    process.stdout.write(`[cluster-rbg-rollback-faults] ${release.name} ${name}: RolledBack ${wall} ms after the fault; partitions ${partitions.join(' → ')}; rounds ${JSON.stringify(rounds)}${down ? `; most Pods down at once on the way back ${JSON.stringify(down)}${others}` : ''}\n`);
    expect(back).toMatchObject({ reason: 'ProgressDeadlineExceeded', rollback: { rounds: 3 } });
    if (down) expect(Object.fromEntries(Object.entries(down).map(([role, w]) => [role, w.down]))).toEqual({ prefill: 1, decode: 1 });
    expect(back.roles.map((r) => [r.name, r.phase, r.replicasByRevision])).toEqual([
      ['prefill', 'RolledBack', { abandoned: 0, previous: 4 }],
      ['decode', 'RolledBack', { abandoned: 0, previous: 2 }],
    ]);
    expect(rounds).toEqual([
      'pd rollback round 1: prefill partition 1→2 (3/4 on the abandoned revision), decode partition 1→2 (1/2 on the abandoned revision)',
      'pd rollback round 2: prefill partition 2→3 (2/4 on the abandoned revision)',
      'pd rollback round 3: prefill partition 3→4 (1/4 on the abandoned revision)',
    ]);
    // From the partitions the rollout stopped at on, the group's partitions went 1/1 → 2/2 → 3/2 → 4/2
    // and nowhere else (v0.8: each capped at replicas − 1, so 1/1 → 2/1 → 3/1, round 3 writing none).
    const expected = release.rbg === 'v0.8' ? ['1/1', '2/1', '3/1'] : ['1/1', '2/2', '3/2', '4/2'];
    const seen = partitions.slice(partitions.lastIndexOf('1/1'));
    // While kube-apiserver restarts the group watch is down, and it resumes from a fresh list: a state
    // written and overwritten meanwhile is never delivered (a stop-44 run saw 1/1 → 2/2 → 4/2). The
    // rounds themselves are the Events above, which a fresh list does deliver (each is an object of its
    // own); the partitions seen must still be the expected ones, in order, from the first to the last.
    expect(seen).toEqual(apiServerRestarts ? expected.filter((p) => seen.includes(p)) : expected);
    expect([seen[0], seen[seen.length - 1]]).toEqual([expected[0], expected[expected.length - 1]]);
  }

  test('the executor SIGKILLed mid-rollback resumes the way back: the rollback rounds are exactly rounds 1, 2 and 3, none skipped or repeated', () =>
    cluster.printLogsOnFailure(() =>
      rollbackThrough('pd-back-crash', async (child) => {
        await kill(child);
        // Round 1 only: round 2 waits for prefill's returned replica, which needs a running executor.
        expect(readRolloutStatus(await admin.get(release.groupType, 'pd-back-crash', NS))?.coordinations[0].rollback?.rounds).toBe(1);
        return spawnController();
      }),
    ), 300_000);

  test('kube-apiserver restarted mid-rollback: the running executor goes on, and the rollback rounds are exactly rounds 1, 2 and 3', () =>
    cluster.printLogsOnFailure(() =>
      rollbackThrough('pd-back-restart', async (child) => {
        expect(readRolloutStatus(await admin.get(release.groupType, 'pd-back-restart', NS))?.coordinations[0].phase).toBe('RollingBack');
        await cluster.cp.restart();
        return child;
      }, { apiServerRestarts: true }),
    ), 300_000);
});
