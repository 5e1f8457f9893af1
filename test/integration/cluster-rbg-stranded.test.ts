/**
 * A template applied again mid-rollout, under rayshift's operator, on RBG's real controllers
 * (v0.7.0 and v0.8.0-alpha.5, whose RoleInstanceSets roll only while their update revision differs
 * from their current one). A prefill/decode group (4/2) is applied at v1 by a "gitops" field
 * manager, armed, applied at v2, and once the operator's first round has updated some replicas but
 * not all, applied at v1 again (a `git revert` while the rollout runs). Each RoleInstanceSet then
 * reports v1 as both its current and its update revision while replicas already updated stay on v2
 * (measured without rayshift: for minutes, at any partition). The operator replaces them within
 * maxUnavailable (lib/engine/rbg-stranded.ts) and the coordination completes with every
 * RoleInstance on v1. Needs `npm run cluster:build`.
 */
import { KubeObject } from '../../lib/runtime/kube/types';
import { CONTROLLER_REVISION_LABEL, ROLE_INSTANCE_SET_TYPE, ROLE_INSTANCE_TYPE } from '../../lib/spec/object-names';
import { eventReasons } from '../support/event-reasons';
import { RBG_RELEASES } from '../support/rbg-releases';
import { clusterStartTimeoutMs } from '../support/cluster';
import { coordinationWhen, expectCurrentRevisionsRecorded, GroupContext, Rule, synthesizeOperatorGroup } from '../support/rbg-operator-group';
import { RbgOperatorCluster, startRbgOperatorCluster } from '../support/rbg-operator-group';
import { WorkloadRecorder } from '../support/rbg-workload-recorder';

const NS = 'default';
const REPLICAS = { prefill: 4, decode: 2 };
const RULE: Rule = { rollingUpdate: { maxSkew: '50%', maxUnavailable: 1 } };

describe.each(RBG_RELEASES.filter((r) => r.workloadType === ROLE_INSTANCE_SET_TYPE))('RBG $name', (release) => {
  let env: RbgOperatorCluster;
  let ctx: GroupContext;
  const watches: { stop(): void }[] = [];

  beforeAll(async () => {
    env = await startRbgOperatorCluster(release.rbg);
    ctx = { cluster: env.cluster, admin: env.admin, gitops: env.gitops, namespace: NS, watches, release };
  }, clusterStartTimeoutMs(release.rbg));

  afterAll(async () => {
    for (const w of watches) w.stop();
    await env?.stop();
  });

  test('v2 applied, then v1 again mid-rollout: the replicas already on v2 are replaced within maxUnavailable and the rollout completes on v1', () =>
    env.cluster.printLogsOnFailure(async () => {
      const name = 'revert';
      const apply = (image: string) => ctx.gitops.apply(synthesizeOperatorGroup(NS, name, { default: image }, REPLICAS, RULE, release), { force: true });
      await apply('sglang:v1');
      const armed = await coordinationWhen(ctx, name, 'armed at v1', (c) => c?.phase === 'Complete');
      const recorder = new WorkloadRecorder(ctx.admin, NS, name, Object.keys(REPLICAS), { workload: release.workloadType, group: release.groupType });
      watches.push(recorder);
      const v1 = await recorder.until('every workload at v1, ready', (s) => Object.entries(REPLICAS).every(([r, n]) => s[r]?.observed && s[r].updated === n && s[r].ready === n));
      const v1Revision = Object.fromEntries(Object.keys(REPLICAS).map((r) => [r, v1[r].updateRevision]));

      const v2From = recorder.history.length - 1;
      await apply('sglang:v2');
      // Some replicas on v2, not all: each set still has v1 as its current revision.
      await recorder.until(
        'a round updated some replicas to v2, not all',
        (s) => {
          const onV2 = Object.keys(REPLICAS).map((r) => (s[r].updateRevision !== v1Revision[r] ? s[r].updated : 0));
          return onV2.some((n) => n > 0) && Object.entries(REPLICAS).some(([r, n]) => s[r].updateRevision !== v1Revision[r] && s[r].updated < n);
        },
        180_000,
        v2From,
      );
      const events = eventReasons(ctx.admin, NS, name, ['StrandedReplicasReplaced', 'RolloutComplete']);
      const from = recorder.history.length - 1;
      await apply('sglang:v1');

      const done = await coordinationWhen(ctx, name, 'back on v1 Complete', (c) => c?.phase === 'Complete' && c.revision === armed.revision);
      expect(done.roles.map((r) => [r.name, r.updated])).toEqual(Object.entries(REPLICAS));
      await expectCurrentRevisionsRecorded(ctx, name, Object.keys(REPLICAS));
      // Every RoleInstance on its set's revision: v1's.
      const off: string[] = [];
      for (const role of Object.keys(REPLICAS)) {
        const set = await ctx.admin.get(ROLE_INSTANCE_SET_TYPE, `${name}-${role}`, NS);
        const revision = (set.status as { updateRevision?: string }).updateRevision;
        expect(revision).toBe(v1Revision[role]);
        const instances = (await ctx.admin.list(ROLE_INSTANCE_TYPE, { namespace: NS })).items.filter((i: KubeObject) => (i.metadata.ownerReferences ?? []).some((o) => o.uid === set.metadata.uid));
        off.push(...instances.filter((i) => i.metadata.labels?.[CONTROLLER_REVISION_LABEL] !== revision).map((i) => String(i.metadata.name)));
      }
      expect(off).toEqual([]);
      expect(await events).toEqual(expect.arrayContaining(['StrandedReplicasReplaced', 'RolloutComplete']));
      // No more than maxUnavailable replicas of a role down at once while they were replaced.
      const states = recorder.since(from);
      const worst = Object.fromEntries(Object.entries(REPLICAS).map(([r, n]) => [r, Math.max(...states.map((s) => n - s[r].ready))]));
      process.stdout.write(`[cluster-rbg-stranded] ${release.name}: ${states.length} workload states after the revert; most replicas down at once ${JSON.stringify(worst)}\n`);
      expect(Object.values(worst).every((d) => d <= 1)).toBe(true);
    }), 400_000);
});
