/**
 * Version-matched routing driven by the operator, on the test cluster (test/support/cluster.ts): RBG
 * v0.7.0's real controller rolls a routed prefill/decode group (4/2) synthesized by the
 * `RoleBasedGroup` construct with a `router`, kwok runs its Pods, and rayshift's operator (its RBG
 * controller, in this process) moves the partitions round by round AND the weights of the rendered
 * HTTPRoute between the two releases' routers. A watch records every weight the route carries and
 * every state of the RoleInstanceSets; each new-release weight must be covered by ready new-release
 * replicas of the slowest routed role (the rule, computed here from the recorded counts), or by
 * every replica being on the new release, or by the route hold's release (a role down to its last
 * old replica, the rest new and ready), and the weight must end at 100 without falling back from it.
 *
 * Requests: the REAL sglang-router binary, one per release, over SIMULATED prefill and decode
 * workers of that release (test/support/simulated-pd-worker.ts; kwok's Pods run no process). The
 * Gateway is SIMULATED by the client: it sends request i to the new release's router when
 * i mod 100 < the route's current new-release weight, as read from the route's watch. No request
 * may be served by a prefill and a decode of different releases, and none may fail. The rollback
 * case also re-applies the rendered route mid-rollout as Argo CD would (a forced server-side apply
 * of 100 / 0): the operator's route watch must put the rule's weight back with no group change. The
 * scale case checks the old release's router Deployment goes to 0 replicas after the rollout, and
 * that a rollout back to that release scales it back and gives it no weight before it is ready. Needs
 * `npm run controlplane:build`, `bash scripts/build-cluster.sh kwok rbg` and
 * `bash scripts/install-sglang-router.sh`.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { rbgRollbackPatch } from '../../lib/engine/rbg-steering';
import { describeRouter } from '../../lib/runtime/rbg/status';
import type { UpgradeAnalysis } from '../../lib/spec/analysis';
import { DEPLOYMENT_TYPE, HTTPROUTE, RBG_V1ALPHA2_TYPE } from '../../lib/spec/object-names';
import type { RbgRolloutController } from '../../operator/rbg-controller';
import type { TestCluster } from '../support/cluster';
import { eventReasons } from '../support/event-reasons';
import { Proc, Supervisor } from '../support/processes';
import { coordinationWhen, expectCurrentRevisionsRecorded, GroupContext } from '../support/rbg-operator-group';
import { WorkloadRecorder } from '../support/rbg-workload-recorder';
import { RoutedGroupSuite, startRoutedGroupSuite } from '../support/routed-group-suite';
import { startSglangRouter } from '../support/sglang-router';
import { ServedPair, SimulatedWorker, startSimulatedDecode, startSimulatedPrefill } from '../support/simulated-pd-worker';
import { startStubPrometheus, StubPrometheus } from '../ui/support/stub-prometheus';
import { waitFor } from '../support/wait-at-most';
import { backendWeights } from '../support/route-weights';
import { followRouteWeight, startLoad, synthesizeRoutedGroup } from '../support/rbg-routed-group';
import { expectRouteWeightsCovered } from '../support/rbg-router-coverage';

const NS = 'default';
const NAME = 'pd-routed';
const ROUTE = `${NAME}-pd-router`;
const REPLICAS = { prefill: 4, decode: 2 };
let suite: RoutedGroupSuite;
let cluster: TestCluster;
let admin: KubeClient;
let gitops: KubeClient;
let controller: RbgRolloutController;
let ctx: GroupContext;
let dir: string;
let supervisor: Supervisor;
let watches: { stop(): void }[];
const routers: Proc[] = [];
const workers: SimulatedWorker[] = [];
const served: ServedPair[] = [];

beforeAll(async () => {
  suite = await startRoutedGroupSuite('router-operator', NS);
  ({ ctx, controller, dir, supervisor } = suite);
  ({ cluster, admin, gitops, watches } = ctx);
}, 300_000);

afterAll(async () => {
  for (const proc of routers.splice(0)) await supervisor.kill(proc, 'SIGTERM', 5_000);
  await Promise.all(workers.map((w) => w.close()));
  await suite?.stop();
}, 60_000);

/** Everything the construct renders for group `name` (`replicas`, maxSkew `maxSkew`) at `image`, routed, and the release it makes. */
function synthesize(image: string, previousRevision?: string, name = NAME, replicas: Record<string, number> = REPLICAS, maxSkew = '50%', analysis?: UpgradeAnalysis): { objects: KubeObject[]; revision: string } {
  const { objects, revision } = synthesizeRoutedGroup({ name, namespace: NS, replicas, maxSkew, analysis }, image, previousRevision);
  return { objects, revision: revision! };
}

test('the operator moves the router route with the ready new-release replicas, round by round, and no request is served by a mixed pair', () =>
  cluster.printLogsOnFailure(async () => {
    const v1 = synthesize('sglang:v1');
    expect(v1.objects.map((o) => o.kind)).toEqual(['RoleBasedGroup', 'ServiceAccount', 'Role', 'RoleBinding', 'Deployment', 'Service', 'HTTPRoute']);
    for (const o of v1.objects) await gitops.apply(o, { force: true });
    const recorder = new WorkloadRecorder(admin, NS, NAME, Object.keys(REPLICAS));
    watches.push(recorder);
    const armed = await coordinationWhen(ctx, NAME, 'armed with one router at 100', (c) => c?.phase === 'Complete' && c.router?.releases.length === 1 && c.router.releases[0].weight === 100);
    expect(armed.router).toEqual({ route: ROUTE, removeOld: false, releases: [{ revision: v1.revision, service: `${ROUTE}-${v1.revision}`, weight: 100, current: true }] });
    const ready = await recorder.until('every workload ready at v1', (s) => Object.entries(REPLICAS).every(([r, n]) => s[r]?.observed && s[r].updated === n && s[r].ready === n));
    const v1Revision = Object.fromEntries(Object.keys(REPLICAS).map((r) => [r, ready[r].updateRevision]));

    // The route's new-release weight, and how many workload states had been recorded when each arrived.
    const v2 = synthesize('sglang:v2', v1.revision);
    const newBackend = `${ROUTE}-${v2.revision}`;
    const route = followRouteWeight(admin, NS, ROUTE, newBackend, () => recorder.history.length);
    watches.push(route);
    const weights = route.weights;

    // One real router per release over that release's simulated workers: 2 prefills and 1 decode each.
    const urls: Record<string, string> = {};
    for (const release of ['v1', 'v2']) {
      const p = [await startSimulatedPrefill(`prefill-${release}-0`, release), await startSimulatedPrefill(`prefill-${release}-1`, release)];
      const d = [await startSimulatedDecode(`decode-${release}-0`, release, served)];
      workers.push(...p, ...d);
      urls[release] = await startSglangRouter(supervisor, dir, `router-${release}`, p, d, routers);
    }
    // Bounded load: one request at a time until the rollout is done (the simulated Gateway reads the live weight).
    const load = startLoad((i) => {
      const release = i % 100 < route.current() ? 'v2' : 'v1';
      return { label: release, url: urls[release] };
    });

    const from = recorder.history.length;
    for (const o of v2.objects) await gitops.apply(o, { force: true });
    const events = eventReasons(admin, NS, NAME, ['RouterWeights', 'RolloutComplete']);
    const t0 = Date.now();
    const complete = await coordinationWhen(ctx, NAME, 'the v2 rollout Complete with the new router at 100', (c) => c?.phase === 'Complete' && c.revision !== armed.revision && c.router?.releases.find((r) => r.current)?.weight === 100);
    const wallMs = Date.now() - t0;
    // The status lands after the route's write; its watch event may come later.
    await route.full;
    const { statuses, sent } = await load.stop();

    // The pass after this status may already have scaled the old router down (the last case checks that).
    const { scaledDown: _later, ...atComplete } = complete.router!;
    expect(atComplete).toEqual({
      route: ROUTE,
      removeOld: true,
      releases: [
        { revision: v1.revision, service: `${ROUTE}-${v1.revision}`, weight: 0, current: false },
        { revision: v2.revision, service: newBackend, weight: 100, current: true },
      ],
    });
    expect(describeRouter(atComplete)).toBe(`route ${ROUTE}: old ${v1.revision} 0%, new ${v2.revision} 100% (old router may go)`);
    // From 0 to 100 (it may fall back when the counts of ready new replicas do: the rule follows them).
    // Whether a split comes between depends on the states the passes see: the rule gives 100 once a
    // routed role has no ready old replica, and with 2 decodes that can come before any new prefill
    // is ready (stop 44's pre-check went 0 → 100). Coverage below holds either way; the splits of a
    // 40/20 rollout are printed by cluster-rbg-router-pods and measured by bench/rbg-router-mixed.
    const seq = expectRouteWeightsCovered(weights, recorder.history, from, v1Revision, REPLICAS);
    expect(await events).toEqual(expect.arrayContaining(['RouterWeights', 'RolloutComplete']));
    const mixed = served.filter((p) => p.prefillRelease !== p.decodeRelease).length;
    process.stdout.write(`routed 4/2 rollout under the operator: new-release weights ${seq.join(' → ')}; ${statuses.length} requests (${sent.v1} to v1, ${sent.v2} to v2), ${statuses.filter((s) => s !== 200).length} failed, ${mixed} by a mixed pair; rollout ${wallMs} ms\n`);
    expect([statuses.filter((s) => s !== 200).length, mixed, served.length]).toEqual([0, 0, statuses.length]);
    expect(sent.v2).toBeGreaterThan(0);
  }), 400_000);

test('a rollback sends the new release nothing before any replica returns: the route\'s 0 is written before the first raised partition', () =>
  cluster.printLogsOnFailure(async () => {
    const name = 'pd-back';
    const route = `${name}-pd-router`;
    // TEST-ONLY Prometheus stand-in: every gate measures 0 (passing), but a measurement an hour
    // apart holds the rollout after round 1, where the test asks for the rollback (no timing race
    // with a rollout that would otherwise complete in seconds).
    const stub: StubPrometheus = await startStubPrometheus(() => 0);
    try {
      const slowGate: UpgradeAnalysis = { prometheusUrl: stub.url, metrics: [{ name: 'errors', query: 'vector(0)', successCondition: { maximum: 0.05 }, intervalSeconds: 3600, count: 2 }], onFailure: 'rollback' };
      const v1 = synthesize('sglang:v1', undefined, name);
      for (const o of v1.objects) await gitops.apply(o, { force: true });
      await coordinationWhen(ctx, name, 'armed with one router at 100', (c) => c?.phase === 'Complete' && c.router?.releases[0]?.weight === 100);
      const recorder = new WorkloadRecorder(admin, NS, name, Object.keys(REPLICAS));
      watches.push(recorder);
      await recorder.until('every workload ready at v1', (s) => Object.entries(REPLICAS).every(([r, n]) => s[r]?.observed && s[r].updated === n && s[r].ready === n));

      // Every write of the route and of the group's partitions, with its resourceVersion: this
      // cluster's one etcd revision counter orders writes to different objects, where the arrival
      // order of two watches would not.
      const v2 = synthesize('sglang:v2', v1.revision, name, REPLICAS, '50%', slowGate);
      const newBackend = `${route}-${v2.revision}`;
      const weights: { rv: number; weight: number }[] = [];
      watches.push(admin.watch(HTTPROUTE, NS, (e) => {
        if (e.object.metadata.name !== route || e.type === 'delete') return;
        const [w] = backendWeights(e.object, [newBackend]);
        if (typeof w === 'number') weights.push({ rv: Number(e.object.metadata.resourceVersion), weight: w });
      }));
      const partitions: { rv: number; byRole: number[] }[] = [];
      watches.push(admin.watch(RBG_V1ALPHA2_TYPE, NS, (e) => {
        if (e.object.metadata.name !== name || e.type === 'delete') return;
        const byRole = ((e.object.spec as any).roles as any[]).map((r) => Number(r.rolloutStrategy?.rollingUpdate?.partition ?? 0));
        partitions.push({ rv: Number(e.object.metadata.resourceVersion), byRole });
      }));
      for (const o of v2.objects) await gitops.apply(o, { force: true });
      const held = await coordinationWhen(ctx, name, 'round 1 held by its gate with the new release above 0 on the route', (c) =>
        c?.phase === 'Progressing' && c.rounds >= 1 && c.reason === 'WaitingForAnalysis' && (c.router?.releases.find((r) => r.current)?.weight ?? 0) > 0);
      const heldWeight = held.router!.releases.find((r) => r.current)!.weight;

      // A GitOps re-apply of the rendered route while the rollout is held (Argo CD's sync: a forced
      // server-side apply under its field manager) puts back 100 / 0. Nothing of the group changes,
      // and its gate wakes it only in an hour: only the route's own event can bring the weight back.
      // First the held round settles (every replica its partition allows updated, all ready) and the
      // operator's status shows those counts: no workload event is left to wake a pass.
      const quiet = await coordinationWhen(ctx, name, 'the held round settled: the partitions\' replicas updated, all ready', (c) => c?.reason === 'WaitingForAnalysis' && c.roles.every((r) => r.updated === r.desired - r.partition && r.ready === r.desired));
      await recorder.until('the workloads at the settled counts', (s) => quiet.roles.every((r) => s[r.name]?.observed && s[r.name].partition === r.partition && s[r.name].updated === r.updated && s[r.name].ready === r.desired));
      await controller.idle();
      const settled = recorder.history.length;
      const rendered = v2.objects.find((o) => o.kind === 'HTTPRoute')!;
      const reset = await admin.apply(rendered, { force: true, fieldManager: 'argocd-controller' });
      const resetRv = Number(reset.metadata.resourceVersion);
      expect(backendWeights(reset, [newBackend])).toEqual([0]);
      await waitFor(() => weights.some((w) => w.rv > resetRv && w.weight > 0) || `route writes since the reset: ${JSON.stringify(weights.filter((w) => w.rv >= resetRv))}`, `${name}: the reset route corrected on its own event`, { timeoutMs: 120_000, everyMs: 250 });
      const corrected = weights.find((w) => w.rv > resetRv && w.weight > 0)!;
      const status = (await coordinationWhen(ctx, name, 'the status after the correction', (c) => c !== undefined)).router!;
      process.stdout.write(`routed reset: route re-applied at 100/0 (rv ${resetRv}), corrected to ${corrected.weight}% at rv ${corrected.rv}; group writes between: ${partitions.filter((p) => p.rv > resetRv && p.rv < corrected.rv).length}\n`);
      // Back to the rule's weight, which the status carries, with no write of the group and no workload change between.
      expect(corrected.weight).toBe(status.releases.find((r) => r.current)!.weight);
      expect(partitions.filter((p) => p.rv > resetRv && p.rv < corrected.rv)).toEqual([]);
      expect(recorder.history.length).toBe(settled);
      const asked = await admin.patchMerge(RBG_V1ALPHA2_TYPE, name, NS, rbgRollbackPatch([held], { verb: 'rollback', user: 'test', reason: 'ordering', time: new Date().toISOString() }));
      const askedRv = Number(asked.metadata.resourceVersion);
      const back = await coordinationWhen(ctx, name, 'RolledBack', (c) => c?.phase === 'RolledBack');
      // Once RolledBack is read, both watches have delivered what came before it (each in its own order).
      const backRv = Number((await admin.get(RBG_V1ALPHA2_TYPE, name, NS)).metadata.resourceVersion);
      await waitFor(() => (partitions[partitions.length - 1]?.rv ?? 0) >= backRv || `the group watch last saw rv ${partitions[partitions.length - 1]?.rv}`, `${name}: the group watch caught up with rv ${backRv}`, { timeoutMs: 60_000, everyMs: 250 });

      // The first raised partition after the ask (a pass that read the group before it may still
      // write the route's forward weight), and what the route carried when it was written.
      const rise = partitions.find((p, i) => p.rv > askedRv && i > 0 && p.byRole.some((v, r) => v > partitions[i - 1].byRole[r]));
      const atRise = weights.filter((w) => w.rv < (rise?.rv ?? 0)).pop();
      const after = weights.filter((w) => w.rv > askedRv);
      process.stdout.write(`routed rollback: new release at ${heldWeight}% when asked (rv ${askedRv}); route writes since: ${JSON.stringify(after)}; first raised partitions ${JSON.stringify(rise)}, the route then ${JSON.stringify(atRise)}; ${back.rollback?.rounds} rollback round(s)\n`);
      expect(heldWeight).toBeGreaterThan(0);
      expect(back.rollback!.rounds).toBeGreaterThan(0);
      expect(rise).toBeDefined();
      expect(atRise?.weight).toBe(0);
      // And it stays at 0 through the way back.
      expect(weights.filter((w) => w.rv > rise!.rv).map((w) => w.weight).every((w) => w === 0)).toBe(true);
      expect(back.router?.releases.find((r) => r.current)?.weight).toBe(0);
    } finally {
      await stub.close();
    }
  }), 400_000);

test('after the rollout the old release\'s router goes to 0 replicas; a rollout back to it scales it back, and no weight moves to it before it is ready', () =>
  cluster.printLogsOnFailure(async () => {
    const name = 'pd-scale';
    const route = `${name}-pd-router`;
    const v1 = synthesize('sglang:v1', undefined, name);
    for (const o of v1.objects) await gitops.apply(o, { force: true });
    const armed = await coordinationWhen(ctx, name, 'armed with one router at 100', (c) => c?.phase === 'Complete' && c.router?.releases[0]?.weight === 100);
    const v1Router = `${route}-${v1.revision}`;
    const v2 = synthesize('sglang:v2', v1.revision, name);
    const v2Router = `${route}-${v2.revision}`;
    const events = eventReasons(admin, NS, name, ['RouterScaled']);
    for (const o of v2.objects) await gitops.apply(o, { force: true });
    const done = await coordinationWhen(ctx, name, `v2 Complete and ${v1Router} scaled to 0`, (c) => c?.phase === 'Complete' && c.revision !== armed.revision && (c.router?.scaledDown ?? []).some((d) => d.deployment === v1Router));
    expect(done.router!.scaledDown).toEqual([{ deployment: v1Router, replicas: 1 }]);
    await expectCurrentRevisionsRecorded(ctx, name, Object.keys(REPLICAS));
    expect(done.router!.releases.map((r) => [r.service, r.weight])).toEqual([[v1Router, 0], [v2Router, 100]]);
    await waitFor(async () => ((await admin.get(DEPLOYMENT_TYPE, v1Router, NS)).spec as any)?.replicas === 0 || 'not yet at 0', `${v1Router} at 0 replicas`, { timeoutMs: 60_000, everyMs: 250 });
    expect(((await admin.get(DEPLOYMENT_TYPE, v2Router, NS)).spec as any)?.replicas).toBe(1);
    expect(await events).toEqual(expect.arrayContaining(['RouterScaled']));

    // Every state of the v1 router's Deployment and every weight the route gives it, by resourceVersion
    // (one etcd revision counter orders writes to different objects).
    const states: { rv: number; replicas: number; ready: number; observed: boolean }[] = [];
    watches.push(admin.watch(DEPLOYMENT_TYPE, NS, (e) => {
      if (e.object.metadata.name !== v1Router || e.type === 'delete') return;
      const st = (e.object.status ?? {}) as { readyReplicas?: number; observedGeneration?: number };
      states.push({ rv: Number(e.object.metadata.resourceVersion), replicas: Number((e.object.spec as any)?.replicas ?? 0), ready: st.readyReplicas ?? 0, observed: (st.observedGeneration ?? 0) >= (e.object.metadata.generation ?? 0) });
    }));
    const weights: { rv: number; weight: number }[] = [];
    watches.push(admin.watch(HTTPROUTE, NS, (e) => {
      if (e.object.metadata.name !== route || e.type === 'delete') return;
      const [w] = backendWeights(e.object, [v1Router]);
      if (typeof w === 'number') weights.push({ rv: Number(e.object.metadata.resourceVersion), weight: w });
    }));

    // A rollout back to v1's templates (release v1 again, v2 the one rolled from), applied by server-side
    // apply as rendered (as a GitOps sync or Pulumi would): the router Deployments carry no replicas.
    const back = synthesize('sglang:v1', v2.revision, name);
    expect(back.revision).toBe(v1.revision);
    for (const o of back.objects) {
      if (o.kind === 'Deployment') expect((o.spec as { replicas?: number }).replicas).toBeUndefined();
      const out = await gitops.apply(o as KubeObject, { force: true });
      // The operator's scale took /spec/replicas over from the apply's manager: the apply leaves it at 0.
      if (o.metadata.name === v1Router) expect((out.spec as any).replicas ?? 0).toBe(0);
    }
    const applied = Number((await admin.get(DEPLOYMENT_TYPE, v1Router, NS)).metadata.resourceVersion);
    const home = await coordinationWhen(ctx, name, `back on v1 Complete, ${v1Router} at 100 and ${v2Router} scaled to 0`, (c) =>
      c?.phase === 'Complete' && c.revision !== done.revision && c.router?.releases.find((r) => r.current)?.weight === 100 && (c.router?.scaledDown ?? []).some((d) => d.deployment === v2Router));
    await waitFor(() => weights.some((w) => w.rv > applied && w.weight === 100) || `route writes: ${JSON.stringify(weights)}`, `${name}: the route watch saw 100 for ${v1Router}`, { timeoutMs: 60_000, everyMs: 250 });

    const scaledBack = states.find((s) => s.rv > applied && s.replicas > 0);
    const readyAt = states.find((s) => s.rv > applied && s.replicas > 0 && s.observed && s.ready >= s.replicas);
    const firstWeight = weights.find((w) => w.rv > applied && w.weight > 0);
    process.stdout.write(`routed scale: ${v1Router} scaled back at rv ${scaledBack?.rv}, ready at rv ${readyAt?.rv}, first weight ${firstWeight?.weight}% at rv ${firstWeight?.rv}; route writes since the apply ${JSON.stringify(weights.filter((w) => w.rv > applied))}\n`);
    expect(scaledBack).toEqual(expect.objectContaining({ replicas: 1 }));
    expect(readyAt).toBeDefined();
    expect(firstWeight).toBeDefined();
    // The scale came first, then readiness, then the route's first share for the router.
    expect(scaledBack!.rv).toBeLessThan(firstWeight!.rv);
    expect(readyAt!.rv).toBeLessThan(firstWeight!.rv);
    expect(home.router!.scaledDown).toEqual([{ deployment: v2Router, replicas: 1 }]);
  }), 400_000);
